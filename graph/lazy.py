"""Names a package loads on first use (PEP 562), shared by the facade and ``swarmgraph.graph``.

Example:
    >>> getattr_, dir_ = lazy_exports("json", {"dumps": "json"})
    >>> getattr_("dumps")({"a": 1}), "dumps" in dir_()
    ('{"a": 1}', True)
"""

from __future__ import annotations

import importlib
import sys


def lazy_exports(package: str, exports: dict[str, str]):
    """Module-level ``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a name
    to the module that defines it (relative to ``package``), imported on first access."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exports])

    return __getattr__, __dir__
