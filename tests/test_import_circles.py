"""Import circles inside graph/, counting the imports under ``if TYPE_CHECKING:`` too.

A circle of files that import each other (even only for a type) is one file to a reader: none
of them can be read, tested or replaced alone. This is the structure check that replaces the
old field, line and function counts (issue 37 item 5): it walks every module of graph/, its
subpackages included, and finds each circle as a strongly connected component of the import
graph. An import names the module it imports from (``from .x import y`` -> ``x``, or ``x.y``
when that is a module), not the packages above it, as ``python ../shared/tools/layers.py``
counts them, so the two agree.

graph/ has no circle (issue 37 removed the last ones), and a new one fails the suite; the core
(graph/core/) imports no feature (graph/features/), not even for a type: features reach the
core through its interfaces (middleware hooks, the member kinds, the builder's extension,
the context's rules), installed by the API layer (graph/options.py).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

try:  # tests/ on sys.path (rootdir conftest) or the repo root
    from import_names import imported_by_name
except ImportError:  # pragma: no cover
    from tests.import_names import imported_by_name

ROOT = Path(__file__).resolve().parent.parent


def modules(root: Path, package: str = "graph") -> dict[str, Path]:
    """Dotted name (``graph.onetoone.pattern``; a package by its folder) -> file."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``name`` imports anywhere in its file: at module level,
    inside functions and under ``if TYPE_CHECKING:``, or by name (tests/import_names.py);
    ``swarmgraph.graph`` is ``graph``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = imported_by_name(tree, package)  # a module loaded by name is imported too
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = (node.module or "").replace("swarmgraph.graph", "graph", 1)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.replace("swarmgraph.graph", "graph", 1) for a in node.names)
    return {m for m in found if m in known and m != name}


def circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def graph_circles(root: Path = ROOT) -> list[frozenset[str]]:
    known = modules(root)
    return circles({name: imports(name, path, known) for name, path in known.items()})


def _show(found: list[frozenset[str]]) -> str:
    return "; ".join(" <-> ".join(sorted(c)) for c in sorted(found, key=sorted))


def test_the_walker_finds_a_circle_made_of_a_type_only_import(tmp_path):
    """The check can fail: a circle closed by a relative ``TYPE_CHECKING`` import, one by a
    function-level import through the public name, and a subpackage's module are all seen."""
    pkg = tmp_path / "graph"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import B\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\nB = 1\n"
    )
    (pkg / "core" / "step.py").write_text("def f():\n    from swarmgraph.graph.c import C\n")
    (pkg / "c.py").write_text("from .core import step\n")
    (pkg / "d.py").write_text("from .a import A\n")  # imports into a circle: not in one
    (pkg / "e.py").write_text(  # loads f by name, and f imports it back
        "import importlib\ndef g():\n    return importlib.import_module('.f', __package__)\n"
    )
    (pkg / "f.py").write_text("from .e import g\n")
    found = graph_circles(tmp_path)
    assert sorted(map(sorted, found)) == [
        ["graph.a", "graph.b"], ["graph.c", "graph.core.step"], ["graph.e", "graph.f"]
    ]  # fmt: skip


def test_graph_has_no_import_circle():
    """graph/ has no import circle, counting type-only imports (issue 37)."""
    found = graph_circles()
    assert found == [], f"import circles in graph/: {_show(found)}"


def core_to_features(root: Path = ROOT) -> set[tuple[str, str]]:
    """Every import of a graph/features/ module by a graph/core/ module, anywhere in it."""
    known = modules(root)
    return {
        (name, target)
        for name, path in known.items()
        if name.startswith("graph.core")
        for target in imports(name, path, known)
        if target.startswith("graph.features")
    }


def test_the_walker_finds_a_lazy_core_import_of_a_feature(tmp_path):
    pkg = tmp_path / "graph"
    for folder in ("core", "features"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "features" / "budget.py").write_text("B = 1\n")
    (pkg / "core" / "node.py").write_text("def f():\n    from ..features.budget import B\n")
    assert core_to_features(tmp_path) == {("graph.core.node", "graph.features.budget")}


def test_the_core_imports_no_feature():
    """Anywhere in a core module, type-only imports too."""
    found = sorted(core_to_features())
    assert found == [], f"the core imports features: {found}"
