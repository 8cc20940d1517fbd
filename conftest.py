"""Doctests of the library run under pytest's ``--doctest-modules`` with their installed names.

The sources live in ``graph/``, ``memory/`` and ``swarmgraph/`` but install as
``swarmgraph.graph``, ``swarmgraph.memory`` and ``swarmgraph``. Left alone, pytest would import
``graph/core/node.py`` as a second module named ``graph.node``; here each doctest module is
imported under its one real name instead.

The session also gets a folder for the quick long-term benchmark's results
(``SWARMGRAPH_LONGTERM_CACHE``, benchmarks/longterm_cache.py): four tests ask for the same run,
and notebook 07's kernel inherits the variable, so the run is computed once per session.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem, DoctestModule

ROOT = Path(__file__).parent
#: source folder -> the package it installs as (pyproject.toml's package-dir).
INSTALLED_AS = {
    "graph": "swarmgraph.graph",
    "memory": "swarmgraph.memory",
    "swarmgraph": "swarmgraph",
}


def installed_module_name(path: Path) -> str | None:
    """``graph/onetoone/views.py`` -> ``swarmgraph.graph.onetoone.views``; None outside."""
    try:
        parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    except ValueError:
        return None
    if not parts or parts[0] not in INSTALLED_AS:
        return None
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([INSTALLED_AS[parts[0]], *parts[1:]])


def pytest_configure(config: pytest.Config) -> None:
    """One cache folder per session for the offline long-term benchmark (see above); a folder
    the caller set already (``SWARMGRAPH_LONGTERM_CACHE=...``) is used and kept."""
    if os.environ.get("SWARMGRAPH_LONGTERM_CACHE"):
        return
    folder = tempfile.mkdtemp(prefix="swarmgraph-longterm-")
    os.environ["SWARMGRAPH_LONGTERM_CACHE"] = folder

    def remove() -> None:
        os.environ.pop("SWARMGRAPH_LONGTERM_CACHE", None)
        shutil.rmtree(folder, ignore_errors=True)

    config.add_cleanup(remove)


class InstalledDoctestModule(DoctestModule):
    def _getobj(self):
        return importlib.import_module(installed_module_name(self.path))


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent):
    collected = yield
    if installed_module_name(file_path) is None:
        return collected
    # A library file named on the command line (``pytest memory/session.py``) is also
    # collected as a test module under its folder's name, whose relative imports then
    # fail; the sources hold no tests, only doctests, so that node is dropped.
    return [
        InstalledDoctestModule.from_parent(parent, path=file_path)
        if type(node) is DoctestModule
        else node
        for node in collected
        if type(node) is not pytest.Module
    ]


@pytest.fixture(autouse=True)
def _doctests_write_only_to_temp_dirs(request: pytest.FixtureRequest):
    """A docstring example runs in an empty folder and must leave it empty: examples that
    store something say where (a temp dir, ``memory://``), never the reader's working dir."""
    if not isinstance(request.node, DoctestItem):
        yield
        return
    folder = request.getfixturevalue("tmp_path")
    request.getfixturevalue("monkeypatch").chdir(folder)
    yield
    assert list(folder.iterdir()) == [], f"the example wrote {sorted(folder.iterdir())}"
