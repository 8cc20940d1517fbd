"""A feature's state for one run: :class:`RunState`, what ``RunControl.features`` holds.

Its own module, beside graph/core/run_control.py, so that a feature's state class imports only
this: the run's control may name the features' types without a circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import SwarmError

__all__ = ["RunState"]


class RunState:
    """A feature's state for one run: one object per feature, kept by the run's
    :class:`RunControl` under its class (:meth:`RunControl.own`, :meth:`RunControl.state_of`),
    so every access to it is typed. The core knows one thing about it: whether the feature
    stopped the run (:meth:`halts`), which :meth:`RunControl.turns_left` asks.

    Example:
        >>> from dataclasses import dataclass
        >>> from swarmgraph.graph.core.run_control import RunControl
        >>> @dataclass
        ... class Calls(RunState):
        ...     made: int = 0
        >>> control = RunControl()
        >>> control.state_of(Calls) is None, control.own(Calls) is control.own(Calls)
        (True, True)
        >>> control.own(Calls).made += 1
        >>> control.state_of(Calls), control.turns_left()
        (Calls(made=1), True)
    """

    __slots__ = ()

    def halts(self) -> bool:
        """Whether the feature stopped the run here: no node goes on after it."""
        return False

    def stop_error(self) -> SwarmError | None:
        """What ``Swarm.run`` raises, holding the Response, for the stop this feature made
        (a tripped guardrail), if any."""
        return None
