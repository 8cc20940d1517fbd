"""Every ``docs/...`` path a docstring of the library names exists (a pointer to a page that
is not there sends the reader nowhere)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("graph", "memory", "swarmgraph")
#: A path under docs/ as prose writes it: ``docs/storage.md``, ``docs/scaling_out_worker.py``.
DOCS_PATH = re.compile(r"\bdocs/[\w./-]*\w")


def docs_paths(source: str) -> set[str]:
    """The ``docs/`` paths named in the docstrings of one module's source.

    >>> sorted(docs_paths('def f():\\n    \"\"\"See docs/storage.md, or docs/a/b.md.\"\"\"\\n'))
    ['docs/a/b.md', 'docs/storage.md']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.update(DOCS_PATH.findall(ast.get_docstring(node, clean=False) or ""))
    return found


def named_paths() -> dict[str, set[str]]:
    """``docs/`` path -> the source files whose docstrings name it."""
    named: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name in docs_paths(path.read_text(encoding="utf-8")):
                named.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return named


def test_the_scan_finds_the_pointers_the_sources_hold():
    # Session's module docstring points at the storage page: a scan that finds nothing is broken.
    assert "memory/session.py" in named_paths().get("docs/storage.md", set())


def test_every_docs_path_named_in_a_docstring_exists():
    missing = {name: files for name, files in named_paths().items() if not (ROOT / name).exists()}
    assert not missing, f"docstrings point at docs/ pages that do not exist: {missing}"
