"""Every public module's docstring examples run, so the examples stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "graph",
    "graph.types",
    "graph.state",
    "graph.discovery",
    "graph.tool_calls",
    "graph.run_control",
    "graph.builder",
    "graph.swarm",
    "graph.demo",
    "graph.drawing",
    "graph.cli",
    "graph.terminal",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no runnable examples"
    assert result.failed == 0
