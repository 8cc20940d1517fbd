# Every target works from nothing: it creates .venv and installs the project first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The tests include a smoke run of the benchmarks, so one install serves every target.
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,postgres,redis,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/swarmgraph demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check graph memory swarmgraph tests benchmarks

# Postgres and Redis for the storage tests are installed (if missing) by
# scripts/ensure_services.sh and started on 127.0.0.1 by tests/conftest.py.
test: $(STAMP)
	$(BIN)/ruff check .
	bash scripts/ensure_services.sh
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .swarmgraph .pytest_cache
