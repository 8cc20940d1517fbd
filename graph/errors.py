"""Errors the engine raises to the programmer (the model gets ``Error:`` tool messages)."""

from __future__ import annotations

from typing import Any


class SwarmError(RuntimeError):
    """Base class for errors that stop a run.

    ``response`` holds what the run produced before it stopped (a ``Response``),
    so nothing the model or the tools already did is lost.
    """

    response: Any = None


class HandoffLoopError(SwarmError):
    """Agents kept handing the conversation to each other without anyone replying."""

    def __init__(self, trail: list[str], limit: int) -> None:
        self.trail = list(trail)
        self.limit = limit
        path = " -> ".join(trail)
        super().__init__(
            f"Handoff loop: {path} ({limit} handoffs in a row without a reply). "
            "The agents keep transferring to each other; give one of them a way to answer, "
            "or pass max_turns to bound the run."
        )


class AgentNameConflictError(ValueError):
    """Two different Agent objects share a name; names are graph node names."""
