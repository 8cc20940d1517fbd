"""Marks a tool carries to say a feature applies to it, and what a marked tool brings a run.

A feature marks a tool without changing it (:func:`mark` sets an attribute on the function)
and, when its module is imported, registers the mark (:func:`register_mark`) with what a run
with such a tool needs: the middleware it brings. The core asks only whether a tool carries a
registered mark (:func:`any_marked`) and which middleware marked tools bring
(:func:`marked_middleware`); a mark cannot be on any tool before the module that registers it
is loaded (its decorator lives there), so a plain program registers nothing and asks nothing.
A tool parameter a feature injects may bring middleware the same way
(graph/core/injected.py's ``InjectedParam.brings``).

:func:`loaded` asks whether a feature's module (``swarmgraph.graph.features.<name>``) is
imported at all, without importing it (tests/test_layout.py runs a plain program and sees no
feature loaded).

Example:
    >>> loaded("no_such_feature") is None
    True
    >>> register_mark("__doc_reviewed__", lambda: ["a middleware"])
    >>> def publish(text: str) -> str:
    ...     return "published"
    >>> is_marked(mark(publish, "__doc_reviewed__"), "__doc_reviewed__"), marked(publish)
    (True, True)
    >>> marked(lambda: "plain"), any_marked([publish])
    (False, True)
    >>> "a middleware" in marked_middleware()
    True
    >>> unregister_mark("__doc_reviewed__")
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from .injected import brings_of, param_for
from .schema import tool_spec

if TYPE_CHECKING:
    from .types import AgentFunction

__all__ = [
    "any_marked",
    "is_marked",
    "loaded",
    "mark",
    "marked",
    "marked_middleware",
    "register_mark",
    "unregister_mark",
]


def loaded(feature: str) -> ModuleType | None:
    """The feature's module if this process has imported it (some program uses it), else
    ``None``, without importing it."""
    return sys.modules.get(f"{_FEATURES}.{feature}")


#: Where the features' modules live (this module is ``swarmgraph.graph.core.marks``).
_FEATURES = f"{__package__.rpartition('.')[0]}.features"

F = TypeVar("F", bound=Callable[..., Any])

#: The registered marks: the attribute a feature's decorator sets -> the middleware a run
#: with a tool so marked gets (a function, called when a run needs it).
_MARKS: dict[str, Callable[[], Sequence[Any]]] = {}
_lock = threading.Lock()


def register_mark(attribute: str, brings: Callable[[], Sequence[Any]]) -> None:
    """Say that tools carrying ``attribute`` (set by :func:`mark`) need ``brings()``'s
    middleware in their run (a feature calls this when its module is imported)."""
    with _lock:
        _MARKS[attribute] = brings


def unregister_mark(attribute: str) -> None:
    """Forget a mark (a test's, an example's); a feature's own marks stay for the process."""
    with _lock:
        _MARKS.pop(attribute, None)


def mark(func: F, attribute: str) -> F:
    """``func`` with ``attribute`` set on it (the function itself), or on a thin wrapper when
    it takes no attributes (a bound method, a builtin): how a feature's decorator marks a
    tool without changing it."""
    try:
        setattr(func, attribute, True)
        return func
    except (AttributeError, TypeError):
        pass

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    setattr(wrapper, attribute, True)
    return wrapper  # type: ignore[return-value]


def is_marked(func: Any, attribute: str) -> bool:
    """Whether :func:`mark` set ``attribute`` on ``func`` or on what it wraps
    (``__wrapped__``, a ``functools.partial``'s ``func``)."""
    while func is not None:
        if getattr(func, attribute, False):
            return True
        func = getattr(func, "__wrapped__", None) or getattr(func, "func", None)
    return False


def marked(func: Any) -> bool:
    """Whether ``func`` carries any registered mark."""
    return any(is_marked(func, attribute) for attribute in _MARKS)


def marked_middleware() -> tuple[Any, ...]:
    """The middleware a run whose tools are marked gets: what every registered mark and
    injected parameter brings, each object once, in registration order (the same objects
    each time while their features keep returning them: a stack is cached by its members)."""
    found: dict[int, Any] = {}
    for brings in (*_MARKS.values(), *brings_of()):
        for middleware in brings():
            found.setdefault(id(middleware), middleware)
    return tuple(found.values())


def any_marked(tools: Sequence[AgentFunction]) -> bool:
    """Whether one of ``tools`` carries a registered mark, or takes an injected parameter that
    brings middleware (graph/core/injected.py). False: :func:`marked_middleware` is never asked.

    Example:
        >>> any_marked([lambda: "x"])
        False
    """
    return any(marked(f) or _brings(f) for f in tools)


def _brings(func: Any) -> bool:
    """Whether ``func`` takes an injected parameter that brings middleware."""
    for name in tool_spec(func).injected:
        param = param_for(name)
        if param is not None and param.brings is not None:
            return True
    return False
