"""The runs of ``swarmgraph ui``: each one's events numbered and kept in the conversation's
store (:mod:`swarmgraph.memory.turn_events`), so a client that lost its connection rejoins.

Every event a run emits gets the next number (its SSE ``id:``) and goes to the turn's event
log in the Session's store (the run id is the turn id), bounded by ``limit`` events; the log
of a conversation's last finished run stays until its next run starts. A reader asks for
what follows the last id it has (the ``Last-Event-ID`` a browser sends on reconnecting): it
gets what it missed, then waits for the live events, so nothing comes twice and nothing is
skipped. Readers never drive the run: the run is driven by its own thread, so a reader that
goes away stops nothing. :class:`Runs` knows the runs this process drives (one at a time per
conversation); any process can read any run's events from the store.

Example:
    >>> runs = Runs()
    >>> log = runs.open("run-1", "conv-1", "memory://doc-runs")
    >>> log.append({"n": "a"}), log.append({"n": "b"}), log.append({"n": "c"})
    (1, 2, 3)
    >>> log.finish()
    >>> [item for item in runs.get("run-1").follow(after=1)]
    [(2, {'n': 'b'}), (3, {'n': 'c'})]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ...memory.turn_events import (
    LIMIT,
    EventsDropped,
    NoTurnEvents,
    TurnEventWriter,
    event_log,
    follow_turn_events,
)

__all__ = ["EventsDropped", "Latch", "NoTurnEvents", "RunBusy", "RunLog", "Runs", "follow"]


class RunBusy(RuntimeError):
    """A conversation already has a run going (one turn at a time per conversation)."""


class Latch:
    """A flag set once, that any number of threads may wait for: ``threading.Event``'s
    ``set``/``is_set``/``wait``, made of one lock (an ``Event`` builds a ``Condition``, whose
    making cost a run of the page two such switches a share of a short turn's CPU time).

    Example:
        >>> done = Latch()
        >>> done.is_set(), done.wait(0.01)
        (False, False)
        >>> done.set(); done.set()
        >>> done.is_set(), done.wait()
        (True, True)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()  # held until set: a waiter blocks on it
        self._set = False
        self._setting = threading.Lock()

    def set(self) -> None:
        with self._setting:
            if not self._set:
                self._set = True
                self._lock.release()

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until set (or ``timeout`` seconds); whether it is."""
        if self._set:
            return True
        if self._lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            self._lock.release()  # the next waiter goes through too
        return self._set


class RunLog:
    """One run driven here: its event writer, its stop switch, its end."""

    def __init__(self, run_id: str, thread_id: str, url: str, limit: int = LIMIT) -> None:
        self.run_id, self.thread_id, self.url, self.limit = run_id, thread_id, url, limit
        self.writer = TurnEventWriter(url, thread_id, run_id, limit=limit, flush_every=0.02)
        self._finished = Latch()
        #: Set to ask the run to stop at its next model or tool call (the stop button).
        self.stop_requested = Latch()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    @property
    def last_id(self) -> int:
        return self.writer.last

    def append(self, event: dict[str, Any]) -> int:
        """Keep ``event`` (an AG-UI event as wire JSON) as the next; returns its number."""
        return self.writer.append(event)

    def finish(self) -> None:
        """The run is over: its last events are written, readers get them, then stop."""
        try:
            self.writer.finish()
        finally:
            self._finished.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the run is over (or ``timeout`` seconds); whether it is."""
        return self._finished.wait(timeout)

    def follow(
        self, after: int = 0, *, heartbeat: float | None = None
    ) -> Iterator[tuple[int, Any]]:
        """The run's events after ``after``, then live (see :func:`follow`)."""
        return follow(self.url, self.thread_id, self.run_id, after, heartbeat=heartbeat)


def follow(
    url: str, thread_id: str, run_id: str, after: int = 0, *, heartbeat: float | None = None
) -> Iterator[tuple[int, Any]]:
    """``(number, event)`` of every event of the run after ``after``, read from the store,
    then the live ones, until the run is over; with ``heartbeat``, ``(0, None)`` after that
    many quiet seconds. :class:`EventsDropped` when ``after`` is older than the log keeps,
    :class:`NoTurnEvents` when no log of that run is kept."""
    return follow_turn_events(url, thread_id, run_id, after, heartbeat=heartbeat, poll=0.1)


class Runs:
    """The runs this process drives, by run id: the running ones, and at least the last
    ``keep_finished`` others (whose conversation a rejoin by run id alone needs; the older
    ones are let go once twice as many are kept, so a run's start looks at them seldom)."""

    def __init__(self, keep_finished: int = 32, limit: int = LIMIT) -> None:
        self.keep_finished, self.limit = keep_finished, limit
        self._logs: OrderedDict[str, RunLog] = OrderedDict()
        self._last: dict[str, RunLog] = {}  # each conversation's latest run (one at a time)
        self._lock = threading.Lock()

    def open(self, run_id: str, thread_id: str, url: str) -> RunLog:
        """A new run's log in the store at ``url``; :class:`RunBusy` if ``thread_id`` has a
        run going, and ``ValueError`` for a run id already used on that conversation."""
        with self._lock:
            if run_id in self._logs:
                raise ValueError(f"run id {run_id!r} was used already; send a new one")
            busy = self._running(thread_id)
            if busy is not None:
                raise RunBusy(f"conversation {thread_id!r} has a run going: {busy.run_id}")
            if event_log(url).read(thread_id, run_id, 0, 1) is not None:
                raise ValueError(f"run id {run_id!r} was used already; send a new one")
            log = RunLog(run_id, thread_id, url, self.limit)
            self._logs[run_id] = log
            self._last[thread_id] = log
            if len(self._logs) > 2 * self.keep_finished:
                finished = [key for key, each in self._logs.items() if each.done]
                for key in finished[: max(0, len(finished) - self.keep_finished)]:
                    gone = self._logs.pop(key)
                    if self._last.get(gone.thread_id) is gone:
                        del self._last[gone.thread_id]
            return log

    def get(self, run_id: str) -> RunLog | None:
        with self._lock:
            return self._logs.get(run_id)

    def running(self, thread_id: str) -> RunLog | None:
        """The run going on ``thread_id`` now, if any."""
        with self._lock:
            return self._running(thread_id)

    def _running(self, thread_id: str) -> RunLog | None:
        log = self._last.get(thread_id)  # a conversation's runs go one after another
        return None if log is None or log.done else log
