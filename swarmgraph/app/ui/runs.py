"""A run's events, numbered and kept so a client that lost its connection can rejoin.

Every event a run emits gets the next number (its SSE ``id:``) and is kept in the run's
:class:`RunLog` until the run is over and a few newer runs have started (``keep_finished``),
within ``limit`` events a run. A reader asks for what follows the last id it has (the
``Last-Event-ID`` a browser sends on reconnecting): it gets what it missed, then waits for
the live events, so nothing comes twice and nothing is skipped. Readers never drive the
run: the run is driven by its own thread, so a reader that goes away stops nothing.

Example:
    >>> runs = Runs()
    >>> log = runs.open("run-1", "conv-1")
    >>> log.append("a"), log.append("b"), log.append("c")
    (1, 2, 3)
    >>> log.finish()
    >>> [item for item in runs.get("run-1").follow(after=1)]
    [(2, 'b'), (3, 'c')]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

__all__ = ["EventsDropped", "RunBusy", "RunLog", "Runs"]


class EventsDropped(LookupError):
    """A reader asked for events older than the oldest the log still keeps."""


class RunBusy(RuntimeError):
    """A conversation already has a run going (one turn at a time per conversation)."""


class RunLog:
    """One run's events (already encoded text), numbered from 1, the newest ``limit`` kept."""

    def __init__(self, run_id: str, thread_id: str, limit: int = 50_000) -> None:
        self.run_id, self.thread_id, self.limit = run_id, thread_id, limit
        self._events: list[str] = []
        self._first = 1  # the number of self._events[0]
        self._done = False
        self._changed = threading.Condition()
        #: Set to ask the run to stop at its next event (the stop button).
        self.stop_requested = threading.Event()

    @property
    def done(self) -> bool:
        with self._changed:
            return self._done

    @property
    def last_id(self) -> int:
        with self._changed:
            return self._first + len(self._events) - 1

    def append(self, text: str) -> int:
        """Keep ``text`` as the next event; returns its number."""
        with self._changed:
            if self._done:
                raise RuntimeError(f"run {self.run_id} is over; nothing more is kept")
            self._events.append(text)
            number = self._first + len(self._events) - 1
            if len(self._events) > self.limit:  # bounded: the oldest go first
                drop = len(self._events) - self.limit
                del self._events[:drop]
                self._first += drop
            self._changed.notify_all()
            return number

    def finish(self) -> None:
        """The run is over: readers get what is left, then their stream ends."""
        with self._changed:
            self._done = True
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the run is over (or ``timeout`` seconds); whether it is."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done, timeout)

    def follow(
        self, after: int = 0, *, heartbeat: float | None = None
    ) -> Iterator[tuple[int, str]]:
        """``(number, text)`` of every event after ``after``, then the live ones, until the
        run is over. With ``heartbeat``, ``(0, "")`` comes after that many seconds without
        an event (a server writes a comment, and so learns the client went away)."""
        position = after + 1
        while True:
            with self._changed:
                if position < self._first:
                    raise EventsDropped(
                        f"run {self.run_id} keeps events from {self._first} on; asked from "
                        f"{position} (read the state again and rejoin from the last event)"
                    )
                while position > self._first + len(self._events) - 1 and not self._done:
                    if not self._changed.wait(heartbeat) and heartbeat is not None:
                        break
                start = position - self._first
                batch = self._events[start:]
                done = self._done
            if not batch:
                if done:
                    return
                yield 0, ""
                continue
            for offset, text in enumerate(batch):
                yield position + offset, text
            position += len(batch)


class Runs:
    """Every run's log by run id: the running ones, and the last ``keep_finished`` others."""

    def __init__(self, keep_finished: int = 32, limit: int = 50_000) -> None:
        self.keep_finished, self.limit = keep_finished, limit
        self._logs: OrderedDict[str, RunLog] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, run_id: str, thread_id: str) -> RunLog:
        """A new log for ``run_id``; :class:`RunBusy` if ``thread_id`` has a run going, and
        ``ValueError`` for a run id already used."""
        with self._lock:
            if run_id in self._logs:
                raise ValueError(f"run id {run_id!r} was used already; send a new one")
            busy = self._running(thread_id)
            if busy is not None:
                raise RunBusy(f"conversation {thread_id!r} has a run going: {busy.run_id}")
            log = RunLog(run_id, thread_id, self.limit)
            self._logs[run_id] = log
            finished = [key for key, each in self._logs.items() if each.done]
            for key in finished[: max(0, len(finished) - self.keep_finished)]:
                del self._logs[key]
            return log

    def get(self, run_id: str) -> RunLog | None:
        with self._lock:
            return self._logs.get(run_id)

    def running(self, thread_id: str) -> RunLog | None:
        """The run going on ``thread_id`` now, if any."""
        with self._lock:
            return self._running(thread_id)

    def _running(self, thread_id: str) -> RunLog | None:
        for log in self._logs.values():
            if log.thread_id == thread_id and not log.done:
                return log
        return None
