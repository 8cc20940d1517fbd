"""A client-side deadline for Postgres operations: a server that stops answering is cut off.

``statement_timeout`` is enforced by the server, and TCP keepalives by the kernel, and neither
helps when the server process is frozen (SIGSTOP, a stuck VM, a partition behind a proxy
that still ACKs): the kernel keeps the socket alive and libpq waits forever for a reply. So
one daemon thread per process watches every armed operation and, when its deadline passes,
shuts the connection's socket down. libpq's wait returns at once with "server closed the
connection", the caller gets :class:`~swarmgraph.memory.errors.StorageUnavailable`, and the
broken connection is discarded by the pool.

Arming costs a dict insert and a condition notify, no thread per operation.

Example:
    >>> import socket
    >>> left, right = socket.socketpair()
    >>> with guard(left.fileno(), 0.05) as armed:
    ...     left.recv(1)   # nobody ever answers: the deadline shuts the socket down
    b''
    >>> armed.fired
    True
    >>> left.close(); right.close()
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field


@dataclass
class Armed:
    """One watched operation; ``fired`` tells the caller its error came from the deadline."""

    fileno: int
    deadline: float
    fired: bool = False
    key: int = field(default=0)


class _Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, Armed] = {}
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._wake_at = float("inf")  # when the watchdog thread wakes up next by itself

    def arm(self, fileno: int, seconds: float) -> Armed:
        armed = Armed(fileno, time.monotonic() + seconds, key=next(self._ids))
        with self._cond:
            if self._thread is None or self._pid != os.getpid():  # a forked child starts anew
                self._pid = os.getpid()
                self._armed.clear()
                self._thread = threading.Thread(
                    target=self._run, name="swarmgraph-pg-deadline", daemon=True
                )
                self._thread.start()
            self._armed[armed.key] = armed
            if armed.deadline < self._wake_at:  # the usual case wakes nobody: ~6 arms a turn
                self._cond.notify()
        return armed

    def disarm(self, armed: Armed) -> None:
        # Under the lock: once this returns, the watchdog can no longer touch the socket,
        # so the connection may go back to the pool (and its fd be reused) safely.
        with self._cond:
            self._armed.pop(armed.key, None)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for armed in [a for a in self._armed.values() if a.deadline <= now]:
                    del self._armed[armed.key]
                    armed.fired = True
                    _shut_down(armed.fileno)
                wait = min((a.deadline for a in self._armed.values()), default=now + 60) - now
                self._wake_at = now + max(wait, 0.001)
                self._cond.wait(timeout=max(wait, 0.001))
                self._wake_at = float("inf")  # awake: arm() need not notify


def _shut_down(fileno: int) -> None:
    with suppress(OSError):
        sock = socket.socket(fileno=os.dup(fileno))
        try:
            sock.shutdown(socket.SHUT_RDWR)  # acts on the socket, shared by libpq's fd
        finally:
            sock.close()


_WATCHDOG = _Watchdog()


@contextmanager
def guard(fileno: int, seconds: float) -> Iterator[Armed]:
    """Shut the socket ``fileno`` down if the block is still running after ``seconds``."""
    armed = _WATCHDOG.arm(fileno, seconds)
    try:
        yield armed
    finally:
        _WATCHDOG.disarm(armed)
