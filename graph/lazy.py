"""Names a package loads on first use (PEP 562), shared by the facade and ``swarmgraph.graph``.

Example:
    >>> getattr_, dir_ = lazy_exports("json", {"dumps": "json"})
    >>> getattr_("dumps")({"a": 1}), "dumps" in dir_()
    ('{"a": 1}', True)
"""

from __future__ import annotations

import gc
import importlib
import sys
from types import ModuleType


def import_paused(module: str, package: str | None = None) -> ModuleType:
    """``importlib.import_module`` with the cyclic garbage collector paused meanwhile.

    The first name from ``swarmgraph`` imports LangChain, LangGraph and pydantic: ~100,000
    objects that live as long as the process. Allocating them sets off several full
    collections, each walking everything allocated so far and finding no garbage (~15% of
    the import, benchmarks/startup.py). Collection resumes afterwards, with nothing lost:
    garbage made meanwhile is found by the next pass. A collector that was off stays off.

    Example:
        >>> import gc
        >>> import_paused("json").__name__, gc.isenabled()
        ('json', True)
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module, package)
    finally:
        if enabled:  # an import nested in another paused one leaves it to the outer one
            gc.enable()


def lazy_exports(package: str, exports: dict[str, str]):
    """Module-level ``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a name
    to the module that defines it (relative to ``package``), imported on first access."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_paused(module, package), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exports])

    return __getattr__, __dir__
