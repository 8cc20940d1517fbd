"""What a hook's code reads of the step that runs it: the run's :class:`RunControl`, around
each middleware hook the step calls (a context variable, so it follows one step's code only,
on either driver).
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["hook_control", "step_control"]

#: The run's control (a ``RunControl``) while a middleware hook of a step runs
#: (graph/core/middleware.py sets it). Held as ``object``: this module sits below run_control.py,
#: whose types name the middleware's, so a reader checks it with ``isinstance``.
_STEP_CONTROL: ContextVar[object | None] = ContextVar("swarmgraph_step_control", default=None)


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
