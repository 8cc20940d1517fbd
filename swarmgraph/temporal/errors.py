"""The errors of a swarm run on Temporal; each one derives from ``SwarmgraphError``.

Example:
    >>> from swarmgraph.graph.core.errors import SwarmgraphError
    >>> issubclass(TemporalRunFailed, SwarmgraphError), issubclass(TemporalInputError, ValueError)
    (True, True)
"""

from __future__ import annotations

from typing import Any

from ..graph.core.errors import SwarmgraphError

__all__ = ["TemporalInputError", "TemporalRunFailed", "TemporalUnavailable", "ToolInDoubt"]


class TemporalInputError(SwarmgraphError, ValueError):
    """A run's input cannot go to Temporal (not JSON, an agent no worker can import); raised
    before the run starts."""


class TemporalUnavailable(SwarmgraphError, ConnectionError):
    """The Temporal server did not answer at the address given."""


class TemporalRunFailed(SwarmgraphError):
    """The run's workflow failed. ``kind`` names the error the worker raised
    (``"HandoffLoopError"``, ``"AgentSpecError"``...), ``response`` holds what the run
    produced before it stopped when the worker had one (else ``None``)."""

    def __init__(self, message: str, kind: str, response: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.response = response


class ToolInDoubt(SwarmgraphError):
    """A tool call's activity was lost (its worker died, it timed out) and the tool is not
    marked ``@idempotent``: it may or may not have happened, and it was not run again. The
    model reads this as the call's error."""
