"""A command whose optional extra is missing names that extra, and only that one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swarmgraph.app.extras import EXTRA_OF_MODULE, extra_for, install_hint

ROOT = Path(__file__).resolve().parents[1]


def _without(modules: set[str], argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``swarmgraph ARGV`` in a process where ``modules`` are not installed."""
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys

        class Missing(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {modules!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

        sys.meta_path.insert(0, Missing())
        from swarmgraph.app.cli import main
        sys.exit(main({argv!r}))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow  # a subprocess each
def test_graph_png_without_the_draw_extra_names_both_modules_and_the_draw_extra(tmp_path):
    done = _without({"matplotlib", "grandalf"}, ["graph", "--format", "png"], tmp_path)
    assert done.returncode == 1
    line = done.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in done.stderr
    assert "missing: matplotlib, grandalf" in line
    assert "pip install 'swarmgraph[draw]'" in line
    assert "postgres" not in line.lower()
    assert not (tmp_path / ".swarmgraph" / "demo_graph.png").exists()


@pytest.mark.slow
def test_graph_png_without_grandalf_alone_says_so(tmp_path):
    done = _without({"grandalf"}, ["graph", "--format", "png"], tmp_path)
    assert done.returncode == 1
    assert "(missing: grandalf)" in done.stderr and "'swarmgraph[draw]'" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("modules", "url", "extra"),
    [
        ({"redis"}, "redis://127.0.0.1:9/0", "redis"),
        (
            {"psycopg", "psycopg_pool", "langchain_postgres"},
            "postgresql://u@127.0.0.1:9/x",
            "postgres",
        ),
    ],
)
def test_a_storage_url_without_its_extra_names_that_extra(tmp_path, modules, url, extra):
    done = _without(modules, ["history", "--session", "x", "--db", url], tmp_path)
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip()
    assert line.count("\n") == 0 and "Traceback" not in done.stderr
    assert f"the {extra} extra" in line and f"pip install 'swarmgraph[{extra}]'" in line
    other = {"redis": "postgres", "postgres": "redis"}[extra]
    assert f"[{other}]" not in line


def test_every_extra_in_the_table_is_one_pyproject_declares():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(EXTRA_OF_MODULE.values()) <= set(extras["optional-dependencies"])


def test_a_module_of_no_extra_gets_no_install_hint():
    error = ModuleNotFoundError("No module named 'my_app'", name="my_app")
    assert install_hint(error) == "No module named 'my_app'"
    assert extra_for("langgraph") is None and extra_for("langgraph.store.postgres") == "postgres"


def _requirements(extra: str | None) -> set[str]:
    """The distributions ``pip install ".[extra]"`` asks for (``None``: the core), by name."""
    import re

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in wanted}


def test_the_tracing_extra_alone_installs_what_the_first_tracing_example_imports():
    """docs/tracing.md's first example (and ``demo --trace``) runs after
    ``pip install ".[tracing]"``: every distribution its imports come from is the core's or
    the tracing extra's (issue 40: the SDK came only with ``dev``)."""
    import ast
    import importlib.metadata
    import re

    page = (ROOT / "docs" / "tracing.md").read_text()
    first = re.search(r"```python\n(.*?)```", page, re.S)
    assert first is not None
    modules = set()
    for node in ast.walk(ast.parse(first.group(1))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    assert "opentelemetry.sdk.trace" in modules
    owners = importlib.metadata.packages_distributions()
    installed = _requirements(None) | _requirements("tracing") | {"swarmgraph"}
    for module in modules:
        if module.split(".")[0] == "swarmgraph":
            continue
        dists = {d.lower().replace("_", "-") for d in owners.get(module.split(".")[0], [])}
        # a namespace package (opentelemetry) spans distributions: the one holding the module
        holding = {
            d for d in dists
            if any(str(f).replace("/", ".").startswith(module) for f in
                   importlib.metadata.distribution(d).files or [])
        }  # fmt: skip
        assert holding & installed, f"{module} comes from {holding or dists}, not [tracing]"


@pytest.mark.slow  # a subprocess
def test_demo_trace_without_the_sdk_names_the_tracing_extra(tmp_path):
    done = _without({"opentelemetry"}, ["demo", "--trace"], tmp_path)
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip()
    assert "Traceback" not in done.stderr and "opentelemetry.sdk" in line
    assert "pip install 'swarmgraph[tracing]'" in line and "[dev]" not in line
