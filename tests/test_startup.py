"""``swarmgraph --help`` / ``--version`` answer without importing LangChain or LangGraph,
and ``import swarmgraph.graph`` leaves the optional heavy dependencies for first use.
(How fast is measured in benchmarks/startup.py, never asserted here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

SWARMGRAPH = Path(sys.executable).parent / "swarmgraph"
HEAVY_FOR_THE_CLI = ("langchain", "langgraph", "langsmith", "pydantic", "sqlalchemy", "yaml")
# Not needed to build and run a swarm: loaded only by the feature that uses them.
DEFERRED_BY_THE_ENGINE = (
    "langchain_openai",
    "sqlalchemy",
    "psycopg",
    "redis",
    "matplotlib",
    "yaml",
    "swarmgraph.memory",
    "swarmgraph.app",
    "swarmgraph.graph.onetoone",
    "swarmgraph.graph.chat_models",
    "langchain_core.tools",  # LangChain's tool classes: only for handoff_tool (a graph member)
    "swarmgraph.graph.features.member_handoff",
)


def imported_modules(*args: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """Run ``python -X importtime ARGS`` and return every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=120
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return modules, done


def _roots(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_cli_flags_import_no_langchain_or_langgraph(flag):
    modules, done = imported_modules("-m", "swarmgraph", flag)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "swarmgraph.app.cli" in modules  # the measurement saw the CLI load
    assert _roots(modules, HEAVY_FOR_THE_CLI) == []
    if flag == "--version":
        assert done.stdout.strip() == "swarmgraph 0.2.0"


def test_the_console_script_version_imports_nothing_heavy():
    if not SWARMGRAPH.exists():
        pytest.skip("the swarmgraph console script is not installed next to this python")
    source = SWARMGRAPH.read_text().splitlines()
    script = "\n".join(line for line in source if not line.startswith("#!"))
    modules, done = imported_modules(
        "-c", f"import sys; sys.argv = ['swarmgraph', '--version']\n{script}"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _roots(modules, HEAVY_FOR_THE_CLI) == []


def test_the_engine_defers_optional_dependencies():
    modules, done = imported_modules(
        "-c", "from swarmgraph import Agent, Swarm; import swarmgraph.graph"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "langgraph.graph" in modules  # the engine really loaded
    assert _roots(modules, DEFERRED_BY_THE_ENGINE) == []


def _full_collections_during(code: str, before: str = "") -> list[str]:
    """``[collector enabled after, full (generation 2) collections during]`` for ``code``."""
    watch = "lambda phase, info: phase == 'start' and info['generation'] == 2 and seen.append(1)"
    program = f"import gc\n{before}\nseen = []\ngc.callbacks.append({watch})\n{code}\n"
    program += "print(gc.isenabled(), len(seen))"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_first_import_runs_no_full_collection_and_leaves_the_collector_on():
    # A plain import of LangGraph + LangChain sets off full collections (the control) ...
    control = _full_collections_during(
        "import langgraph.graph, langchain_core.language_models.base"
    )
    assert control[0] == "True" and int(control[1]) > 0
    # ... the facade's lazy import pauses the collector for its duration, then resumes it.
    assert _full_collections_during("from swarmgraph import Agent, Swarm") == ["True", "0"]


def test_a_collector_the_program_turned_off_stays_off():
    assert _full_collections_during("from swarmgraph import Swarm", "gc.disable()")[0] == "False"
