"""A running turn's events, numbered and kept in the conversation's store, so any reader can
rejoin it: what it missed, then the live events, nothing twice and nothing skipped.

A turn that keeps its events (:meth:`Session.start <swarmgraph.memory.Session.start>`, and
every run of ``swarmgraph ui``) writes them through a :class:`TurnEventWriter`: each event
(any JSON value) gets the next number, from 1, and goes to the store's **event log** of that
turn, ``(conversation id, turn id) -> [(number, event)]`` (a table on SQLite and Postgres, a
sorted set and a hash on Redis, a dict for ``memory://``: :mod:`.turn_event_logs`). Writes are
batched: the run's thread only appends to a list; one flusher thread per process writes every
open log's new events at most ``flush_every`` seconds later (and at once when the turn ends:
what is left and the log's end go in one write, so a reader sees the end with every event),
so a turn's model never waits on the store for its events.

A reader (:func:`follow_turn_events`, ``Session.rejoin``, the UI's ``Last-Event-ID``) asks for
the events after the last number it has: it reads them from the store, then waits for more
(woken by the writer when both are in this process, else polling every ``poll`` seconds) until
the log says the turn is over. Readers never drive the run: a reader that goes away stops
nothing, and any number of readers, in any process, may follow one turn.

Bounded: a log keeps its newest ``limit`` events (a reader asking for older ones gets
:class:`EventsDropped`, never a gap), and a conversation keeps the log of its last finished
turn (a client reconnecting just after the end still gets the end) and those of turns still
running: opening a turn's log deletes the conversation's other finished logs.

What a crash costs: the events already flushed are in the store, the last ``flush_every``
seconds of them may not be, and the log never says "over". The writer touches its log every
``heartbeat`` seconds while the turn runs, so a reader that sees no touch for ``stale_after``
seconds raises :class:`TurnEventsAbandoned` instead of waiting forever. The turn itself is
saved whole or not at all, as always (docs/storage.md): the log is a view of a running turn,
never the record of it.

Example:
    >>> writer = TurnEventWriter("memory://doc-events", "conv-1", "turn-1")
    >>> [writer.append({"n": n}) for n in ("a", "b", "c")]
    [1, 2, 3]
    >>> writer.finish()
    >>> list(follow_turn_events("memory://doc-events", "conv-1", "turn-1", after=1))
    [(2, {'n': 'b'}), (3, {'n': 'c'})]
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

from .event_log_backends import log_for
from .ids import check_conversation_id, check_turn_id
from .turn_event_logs import DONE, RUNNING, EventLog, EventPage

__all__ = [
    "DONE",
    "RUNNING",
    "EventLog",
    "EventPage",
    "EventsDropped",
    "NoTurnEvents",
    "TurnEventWriter",
    "TurnEventsAbandoned",
    "follow_turn_events",
]

#: Events a log keeps by default (the oldest go first).
LIMIT = 10_000


class EventsDropped(LookupError):
    """A reader asked for events older than the oldest its log still keeps."""


class NoTurnEvents(LookupError):
    """No event log for that turn: never kept, or deleted (the conversation's next kept turn
    started; ``Session.clear`` leaves logs alone, the next turn's start deletes them)."""


class TurnEventsAbandoned(RuntimeError):
    """A log that says its turn runs, but whose writer has not touched it for longer than
    the reader's ``stale_after``: the process running the turn is gone (see the module
    docstring for what a crash costs)."""


def event_log(url: str) -> EventLog:
    """The event logs of the store ``url`` names (one object per store per process).

    Example:
        >>> event_log("memory://doc-logs") is event_log("memory://doc-logs")
        True
    """
    from .backends import open_store

    return log_for(open_store(url))


# -- being woken up: a writer and its readers in one process ------------------------------------
class _Bell:
    """Rung by a writer after each write; a reader that read at ``rung`` waits for the next."""

    def __init__(self) -> None:
        self.rung = 0
        self.changed = threading.Condition()

    def ring(self) -> None:
        with self.changed:
            self.rung += 1
            self.changed.notify_all()

    def wait(self, seen: int, timeout: float) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.rung != seen, timeout)


#: Only while someone reads: a writer rings the bells of the readers it has, if any.
_bells: weakref.WeakValueDictionary[tuple[str, str, str], _Bell] = weakref.WeakValueDictionary()
_bells_lock = threading.Lock()


def _bell(url: str, cid: str, turn_id: str) -> _Bell:
    with _bells_lock:
        found = _bells.get((url, cid, turn_id))
        if found is None:
            found = _bells[(url, cid, turn_id)] = _Bell()
        return found


def _ring(url: str, cid: str, turn_id: str) -> None:
    with _bells_lock:
        bell = _bells.get((url, cid, turn_id))
    if bell is not None:
        bell.ring()


# -- writing --------------------------------------------------------------------------------
class TurnEventWriter:
    """Numbers a turn's events and writes them to its log in the store ``url`` names (see
    the module docstring). :meth:`append` is cheap (a list append); :meth:`finish` writes
    what is left and marks the log over, in one write. Thread-safe (a fan-out's branches append from
    their own threads).

    ``flush_every``: seconds an event may wait before the flusher writes it; ``heartbeat``:
    seconds between touches of a quiet log (what tells readers the writer lives);
    ``limit``: events the log keeps.
    """

    def __init__(
        self,
        url: str,
        conversation_id: str,
        turn_id: str,
        *,
        limit: int = LIMIT,
        flush_every: float = 0.05,
        heartbeat: float = 5.0,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1, got {limit!r}")
        self.url, self.limit = url, limit
        self.conversation_id = check_conversation_id(conversation_id)
        self.turn_id = check_turn_id(turn_id)
        self.flush_every, self.heartbeat = flush_every, heartbeat
        self._log = event_log(url)
        self._lock = threading.Lock()
        self._pending: list[tuple[int, Any]] = []
        self._write_lock = threading.Lock()  # one write of this log at a time, in order
        self._touched = time.time()
        self._done = False
        # Numbering goes on from what is stored (a retried turn id adds to its log).
        self.last = self._log.open(self.conversation_id, self.turn_id)
        _flusher.add(self)

    @property
    def done(self) -> bool:
        return self._done

    def append(self, value: Any) -> int:
        """Keep ``value`` (JSON-ready, not changed afterwards) as the next event; its number."""
        with self._lock:
            if self._done:
                raise RuntimeError(f"turn {self.turn_id}'s events are over; nothing is added")
            self.last += 1
            self._pending.append((self.last, value))
            return self.last

    def _take(self) -> list[tuple[int, Any]]:
        """The pending events, taken (the write lock held): the newest ``limit`` of them,
        cut here once for every backend (the older ones the same write would drop: numbers
        go on by one, so the batch's last ``limit`` are the log's newest)."""
        with self._lock:
            batch, self._pending = self._pending, []
        return batch[-self.limit :] if len(batch) > self.limit else batch

    def flush(self) -> None:
        """Write what was appended since the last flush (the flusher calls this)."""
        with self._write_lock:
            batch = self._take()
            now = time.time()
            if batch:
                try:
                    self._log.append(self.conversation_id, self.turn_id, batch, self.limit, now)
                except BaseException:  # not written: kept first in line, never a gap
                    with self._lock:
                        self._pending[:0] = batch
                    raise
                self._touched = now
            elif not self._done and now - self._touched >= self.heartbeat:
                self._log.touch(self.conversation_id, self.turn_id, now)
                self._touched = now
            else:
                return
        _ring(self.url, self.conversation_id, self.turn_id)

    def finish(self) -> None:
        """Write what is left and mark the log over: its readers get the rest, then stop."""
        with self._lock:
            if self._done:
                return
            self._done = True
        _flusher.remove(self)
        with self._write_lock:  # what is left and the end: one write (one transaction)
            batch = self._take()
            now = time.time()
            try:
                if batch:
                    self._log.append(
                        self.conversation_id, self.turn_id, batch, self.limit, now, done=True
                    )
                else:
                    self._log.finish(self.conversation_id, self.turn_id, now)
            except BaseException:  # not written: the log never says over (readers see it go
                with self._lock:  # stale, as after a crash)
                    self._pending[:0] = batch
                raise
        _ring(self.url, self.conversation_id, self.turn_id)


class _Flusher:
    """The process's one flusher thread: every ``flush_every`` it writes each open log's new
    events (and touches quiet ones). Started on first use; a daemon.

    It ticks on for ``linger`` seconds after its last writer finished, so a process running
    turn after turn (a server) opens each turn's log without waking a second thread: the
    next tick finds the new writer, ``flush_every`` at most after it opened (a short turn
    has written its events itself by then, at its finish). Only a flusher that went idle is
    woken by a new writer, and its first flush still comes ``flush_every`` later (the writer
    has had no time to append much). Waking it for every turn cost each short turn a second
    thread's turn at the GIL (``make bench``'s ``ui`` section)."""

    def __init__(self, linger: float = 2.0) -> None:
        self.linger = linger
        self._writers: set[TurnEventWriter] = set()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._idle = False  # the thread waits for a writer, with no tick due

    def add(self, writer: TurnEventWriter) -> None:
        with self._lock:
            self._writers.add(writer)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="swarmgraph-turn-events", daemon=True
                )
                self._thread.start()
            if self._idle:
                self._lock.notify_all()

    def remove(self, writer: TurnEventWriter) -> None:
        with self._lock:
            self._writers.discard(writer)

    def _loop(self) -> None:
        every, busy = 0.05, time.monotonic()
        while True:
            with self._lock:
                if not self._writers and time.monotonic() - busy >= self.linger:
                    self._idle = True
                    while not self._writers:
                        self._lock.wait()
                    self._idle = False
                    self._lock.wait(min(w.flush_every for w in self._writers))
                writers = list(self._writers)
            if writers:
                every, busy = min(w.flush_every for w in writers), time.monotonic()
            for writer in writers:
                # The store is down: the events stay pending, the next flush (or the turn's
                # finish, which raises what it meets) writes them.
                with contextlib.suppress(Exception):
                    writer.flush()
            time.sleep(every)


_flusher = _Flusher()


# -- reading --------------------------------------------------------------------------------
def follow_turn_events(
    url: str,
    conversation_id: str,
    turn_id: str,
    after: int = 0,
    *,
    poll: float = 0.25,
    heartbeat: float | None = None,
    stale_after: float | None = 30.0,
    batch: int = 500,
) -> Iterator[tuple[int, Any]]:
    """``(number, event)`` of every event of the turn after ``after``, then the live ones,
    until its log says it is over. Raises :class:`NoTurnEvents` (no such log),
    :class:`EventsDropped` (``after`` is older than the log keeps) and
    :class:`TurnEventsAbandoned` (no touch for ``stale_after`` seconds, ``None``: wait
    forever). With ``heartbeat``, ``(0, None)`` comes after that many quiet seconds (a server
    writes a comment, and so learns its client went away).

    Example:
        >>> writer = TurnEventWriter("memory://doc-follow", "c", "t")
        >>> writer.append("hello")
        1
        >>> seen = follow_turn_events("memory://doc-follow", "c", "t")
        >>> next(seen)
        (1, 'hello')
        >>> writer.append("bye"), writer.finish()
        (2, None)
        >>> list(seen)
        [(2, 'bye')]
    """
    cid, turn_id = check_conversation_id(conversation_id), check_turn_id(turn_id)
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ValueError(f"after must be an int >= 0, got {after!r}")
    log = event_log(url)
    bell = _bell(url, cid, turn_id)
    position, quiet_since = after, time.monotonic()
    while True:
        seen = bell.rung  # before the read: a write after it rings past this
        page = log.read(cid, turn_id, position, batch)
        if page is None:
            raise NoTurnEvents(f"no events kept for turn {turn_id!r} of {cid!r}")
        if position + 1 < page.first:
            raise EventsDropped(
                f"turn {turn_id} keeps events from {page.first} on; asked from {position + 1} "
                "(read the conversation again and rejoin from its last event)"
            )
        if page.events:
            yield from page.events
            position = page.events[-1][0]
            quiet_since = time.monotonic()
            continue
        if page.status == DONE and position >= page.last:
            return
        if stale_after is not None and time.time() - page.touched > stale_after:
            raise TurnEventsAbandoned(
                f"turn {turn_id} of {cid!r} has had no event and no heartbeat for "
                f"{time.time() - page.touched:.0f} s: the process running it is gone; its "
                "events end at " + str(page.last)
            )
        bell.wait(seen, poll)  # a writer in this process rings at once; others are polled
        if heartbeat is not None and time.monotonic() - quiet_since >= heartbeat:
            quiet_since = time.monotonic()
            yield 0, None
