"""What a hook's code reads of the step that runs it: the context of the model call being
prepared (around a ``prompt_context`` hook) and the run's :class:`RunControl` (around a
middleware hook). Context variables, so they follow one step's code only, on either driver.

Example:
    >>> with call_context({"user": "Ming"}):
    ...     current_call_context()
    {'user': 'Ming'}
    >>> current_call_context() is None
    True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["call_context", "current_call_context", "hook_control", "step_control"]

#: The context of the model call a ``prompt_context`` hook is asked for (set by the step around
#: the hook): what a hook's helpers read as the run's context when not told (a Session's recall
#: screens facts by the agent's input guardrails with it).
_CALL_CONTEXT: ContextVar[Mapping[str, Any] | None] = ContextVar(
    "swarmgraph_call_context", default=None
)
#: The run's control (a ``RunControl``) while a middleware hook of a step runs
#: (graph/core/middleware.py sets it). Held as ``object``: this module sits below run_control.py,
#: whose types name the middleware's, so a reader checks it with ``isinstance``.
_STEP_CONTROL: ContextVar[object | None] = ContextVar("swarmgraph_step_control", default=None)


@contextmanager
def call_context(context: Mapping[str, Any]) -> Iterator[None]:
    """While the step asks a ``prompt_context`` hook: ``context`` is the context the model
    call is built from (read back with :func:`current_call_context`)."""
    token = _CALL_CONTEXT.set(context)
    try:
        yield
    finally:
        _CALL_CONTEXT.reset(token)


def current_call_context() -> Mapping[str, Any] | None:
    """The context of the model call being prepared (inside a ``prompt_context`` hook), else
    ``None``."""
    return _CALL_CONTEXT.get()


class hook_control:  # (lower case: used as the function it was, ``with hook_control(c):``)
    """While a middleware hook runs: ``control`` is the run's (read with :func:`step_control`).
    A compiled graph invoked without ``Swarm`` makes a control per step, which a hook could not
    find in its config; this is how it finds the step's. A plain class, not a generator
    context manager: every hook call of every step goes through it (a traced run's handoff
    hook among them).

    Example:
        >>> from swarmgraph.graph.core.run_control import RunControl
        >>> control = RunControl()
        >>> with hook_control(control):
        ...     step_control() is control
        True
        >>> step_control() is None
        True
    """

    __slots__ = ("control", "token")

    def __init__(self, control: object | None) -> None:
        self.control = control

    def __enter__(self) -> None:
        self.token = _STEP_CONTROL.set(self.control)

    def __exit__(self, *exc: object) -> None:
        _STEP_CONTROL.reset(self.token)


def step_control() -> object | None:
    """The run's ``RunControl`` inside a middleware hook a step calls (its ledger books
    the trajectory; ``swarm_run`` says whether ``Swarm.run`` holds the Response), else ``None``."""
    return _STEP_CONTROL.get()
