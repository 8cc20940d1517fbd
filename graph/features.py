"""The engine's two halves, declared once: the core (Swarm's semantics on LangGraph) and the
features that attach to it only when a program uses them.

The core is what a plain Swarm program runs: the agent config (``types``), the state, message
conversion, tool schemas, one agent step (``node``: instructions -> model -> tools -> switch,
with ``tool_calls``, ``runtime`` and the ``drivers`` that make one body serve ``run`` and
``arun``), the builder and ``Swarm``. A core module never imports a feature at module level:
it reaches one only on the path where the program uses it (a ``Budget`` given, a tool marked
``@needs_approval`` or ``@effect``, a guardrail or ``requires=``, ``history=``, routes, a tool
that returns ``Parallel``, ``context_schema=``, a LangGraph member, ``stream=True``...), by an
import inside that path; :func:`loaded` asks whether a feature is in use at all without
loading it (no ``Parallel`` can exist before its module is imported). ``tests/test_layout.py``
checks both rules, and that a plain program loads no feature module.

A tool says it uses a feature by a mark, without being changed: ``@needs_approval`` and
``@effect`` set an attribute on the function (graph/approvals.py, graph/effects.py give the
marks their meaning); the core reads marks (:func:`decides`) to know whether a run needs
those features at all.

Example:
    >>> "node" in CORE and "budget" in FEATURES and not CORE & FEATURES
    True
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
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "APPROVAL_MARK",
    "CORE",
    "EFFECT_MARK",
    "FEATURES",
    "decides",
    "is_marked",
    "loaded",
    "mark",
]

#: The core's modules (``swarmgraph.graph.<name>``).
CORE = frozenset(
    {
        "__init__",
        "builder",
        "discovery",
        "docstrings",
        "drivers",
        "errors",
        "features",
        "hooks",
        "lazy",
        "messages",
        "middleware",
        "models",
        "node",
        "node_names",
        "options",  # our agent options as the middleware they install (names features lazily)
        "observed_graph",
        "prepared_run",
        "process_exit",
        "run_control",
        "runtime",
        "schema",
        "state",
        "swarm",
        "tool_calls",
        "tool_events",
        "tool_wrapping",
        "types",
    }
)

#: The features' modules: each attaches only where a program uses it.
FEATURES = frozenset(
    {
        "approvals",  # @needs_approval: calls that wait for a human
        "branches",  # Parallel fan-out: branch and join nodes
        "budget",  # Budget: limits checked before each step
        "context_changes",  # how a fan-out's join merges context changes
        "context_schema",  # context_schema=: a typed context
        "decisions",  # approvals and effects in an agent's step
        "effect_store",  # the effect ledger on a LangGraph store
        "effects",  # @effect: calls that run at most once
        "fan_out_scope",  # which fan-out a parallel branch belongs to
        "guarded_switch",  # a switch into an agent that checks who comes in
        "guardrails",  # input/output guardrails, requires=
        "handback",  # CALLER: hand back to whoever handed off
        "history_views",  # Agent(history=...): what a receiving agent reads
        "member_handoff",  # handoff_tool for LangGraph members
        "memory_tools",  # Agent(memory_tools=True)
        "native",  # LangGraph graphs as members
        "parallel",  # the Parallel value and its merge rules
        "preconditions",  # requires=
        "rate_limit",  # RateLimitMiddleware: the middleware docs/internals.md walks
        "routes",  # Agent(routes=[Route(...)])
        "streamed_arguments",  # tool-call arguments as they stream
        "swarm_events",  # Swarm.run(stream=True)'s events
        "tracing",  # OpenTelemetry spans, when a tracer provider is configured
    }
)


def loaded(feature: str) -> ModuleType | None:
    """The feature's module if this process has imported it (some program uses it), else
    ``None``, without importing it."""
    return sys.modules.get(f"{__package__}.{feature}")


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
