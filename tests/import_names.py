"""Modules a source file names as strings, to import later: what the import-circle checks
(tests/test_import_circles.py, tests/test_layout.py) count beside its ``import`` statements.

A module loaded by name is still imported: ``importlib.import_module(".decisions",
__package__)`` in a module that ``decisions`` imports back is a circle, only hidden from a
walker that reads import statements alone.
"""

from __future__ import annotations

import ast


def imported_by_name(tree: ast.Module, package: str) -> set[str]:
    """Dotted names of the modules ``tree`` (a module of ``package``) names to import later:
    a relative name (``".decisions"``, the backend registry's ``".sqlite"``) or one built from
    the module's own (``f"{__name__}.features.decisions"``, ``f"{__package__}.x"``), each
    resolved against ``package``. The caller keeps those that are modules.

    Example:
        >>> tree = ast.parse('import_module(".b", __package__)\\nf"{__name__}.c.d"')
        >>> sorted(imported_by_name(tree, "pkg"))
        ['pkg.b', 'pkg.c.d']
    """
    own = {"__name__", "__package__"}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            rel = node.value
            if rel.startswith(".") and rel[1:].replace(".", "_").isidentifier():
                found.add(f"{package}{rel}")
        elif isinstance(node, ast.JoinedStr) and len(node.values) == 2:
            head, tail = node.values
            if (
                isinstance(head, ast.FormattedValue)
                and isinstance(head.value, ast.Name)
                and head.value.id in own
                and isinstance(tail, ast.Constant)
                and isinstance(tail.value, str)
            ):
                found.add(f"{package}{tail.value}")
    return found
