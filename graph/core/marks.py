"""Marks a tool carries to say it uses a feature, and whether a feature is in use at all.

A tool says it uses a feature by a mark, without being changed: ``@needs_approval`` and
``@effect`` set an attribute on the function (graph/features/approvals.py and
graph/features/effects.py give the marks their meaning). :func:`loaded` asks whether a
feature's module (``swarmgraph.graph.features.<name>``) is imported at all, without importing
it: no ``Parallel`` can exist before its module is loaded, so a plain program never pays for a
check of a feature it does not use (tests/test_layout.py runs one and sees no feature loaded).

Example:
    >>> loaded("no_such_feature") is None
    True
    >>> def refund(order_id: int) -> str:
    ...     return "refunded"
    >>> is_marked(mark(refund, APPROVAL_MARK), APPROVAL_MARK), decides(refund)
    (True, True)
    >>> decides(lambda: "plain")
    False
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .schema import IDEMPOTENCY_PARAM, tool_spec

if TYPE_CHECKING:
    from .types import AgentFunction

__all__ = [
    "APPROVAL_MARK",
    "EFFECT_MARK",
    "ToolPlan",
    "decides",
    "default_idempotency_key",
    "is_marked",
    "loaded",
    "mark",
    "plan_of",
]


def loaded(feature: str) -> ModuleType | None:
    """The feature's module if this process has imported it (some program uses it), else
    ``None``, without importing it."""
    return sys.modules.get(f"{_FEATURES}.{feature}")


#: Where the features' modules live (this module is ``swarmgraph.graph.core.marks``).
_FEATURES = f"{__package__.rpartition('.')[0]}.features"

F = TypeVar("F", bound=Callable[..., Any])

#: ``@needs_approval``: the run stops for a human's decision before the call.
APPROVAL_MARK = "__swarmgraph_needs_approval__"
#: ``@effect``: the call runs at most once (recorded before and after, with a ledger).
EFFECT_MARK = "__swarmgraph_effect__"


def mark(func: F, attribute: str) -> F:
    """``func`` with ``attribute`` set on it (the function itself), or on a thin wrapper when
    it takes no attributes (a bound method, a builtin): how ``@needs_approval`` and
    ``@effect`` mark a tool without changing it."""
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


def decides(func: Any) -> bool:
    """Whether calls of ``func`` may wait for a decision or go through an effect ledger
    (marked ``@needs_approval`` or ``@effect``)."""
    return is_marked(func, APPROVAL_MARK) or is_marked(func, EFFECT_MARK)


class ToolPlan(NamedTuple):
    """What an agent's tools ask of the run, read once per agent (:meth:`GraphRuntime.plan`):
    ``decides``: a tool is marked ``@needs_approval`` or ``@effect`` (graph/core/marks.py), so
    its
    calls may wait for a decision or go through an effect ledger; ``keyed``: a tool takes
    the injected ``idempotency_key``. Neither: those features are never entered."""

    decides: bool
    keyed: bool


def plan_of(tools: Sequence[AgentFunction]) -> ToolPlan:
    """What ``tools`` ask of a run (:class:`ToolPlan`).

    Example:
        >>> from swarmgraph.graph.features.approvals import needs_approval
        >>> plan_of([lambda: "x"]), plan_of([needs_approval(lambda: "x")]).decides
        (ToolPlan(decides=False, keyed=False), True)
    """
    return ToolPlan(
        decides=any(map(decides, tools)),
        keyed=any(IDEMPOTENCY_PARAM in tool_spec(f).injected for f in tools),
    )


def default_idempotency_key(key: str, scope: str = "") -> str:
    """32 hex digits, stable for one call (``key``) in one conversation (``scope``): the
    injected ``idempotency_key`` of a tool whose run keeps no ledger that names it
    (graph/features/effects.py re-exports it; a ledger scopes it to its conversation).

    Example:
        >>> default_idempotency_key("c1@r1", "conv-7") == default_idempotency_key("c1@r1", "conv-7")
        True
        >>> len(default_idempotency_key("c1@r1"))
        32
    """
    return hashlib.sha256(f"{scope}\x00{key}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
