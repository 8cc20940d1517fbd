"""Turn event logs (:mod:`.turn_events`) on each backend, beside the conversations.

=================  ==============================================================================
backend            a turn's log
=================  ==============================================================================
``memory://``      a dict per namespace in this process, each event kept as its JSON text (what
                   the other backends store: text costs the garbage collector nothing, where a
                   finished log's dicts, kept until the conversation's next turn, would)
``sqlite:///``     tables ``swarm_turn_logs`` (one row a turn: status, first and last number,
                   when touched) and ``swarm_turn_events`` (``(conversation_id, turn_id,
                   number) -> event`` JSON text), in the conversations' file
``postgresql://``  the same two tables, keyed by the conversation's SHA-256 like its context row
``redis://``       a hash ``swarm_turn_log:<turn>:<conversation>`` (status, first, last, touched),
                   a sorted set ``swarm_turn_events:<turn>:<conversation>`` (score: the number),
                   and a set ``swarm_turn_logs:<conversation>`` of the conversation's turn ids
=================  ==============================================================================

An append is one transaction (``MULTI`` on Redis): the events, the drop of those over the
limit, the log's last number and touch. A read is one consistent read of the log's row and the
events after a number. Opening a turn's log deletes the conversation's finished ones.

Example:
    >>> from swarmgraph.memory.event_log_backends import log_for
    >>> log = log_for(__import__("swarmgraph.memory", fromlist=["open_store"]).open_store(
    ...     "memory://doc-event-logs"))
    >>> log.open("c", "t"), log.append("c", "t", [(1, "a"), (2, "b"), (3, "c")], 2, 0.0)
    (0, None)
    >>> page = log.read("c", "t", 0, 10)
    >>> page.first, page.events
    (2, [(2, 'b'), (3, 'c')])
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "DONE",
    "EVENTS",
    "LOGS",
    "RUNNING",
    "EventLog",
    "EventPage",
    "MemoryEventLog",
    "SQLiteEventLog",
    "encode",
    "encoded",
]

#: A log's status: its turn is running, or over (its last event is in).
RUNNING, DONE = "running", "done"


@dataclass
class EventPage:
    """One read of a log: ``events`` after the number asked for (``(number, value)``, in
    order), the oldest number the log keeps (``first``), its ``last``, its ``status`` and when
    its writer last touched it (``touched``, seconds since the epoch)."""

    events: list[tuple[int, Any]] = field(default_factory=list)
    first: int = 1
    last: int = 0
    status: str = RUNNING
    touched: float = 0.0


class EventLog(Protocol):
    """What a backend offers for turn event logs (:mod:`.turn_event_logs`)."""

    def open(self, cid: str, turn_id: str) -> int:
        """Create the turn's log (status running), or take over the one stored; returns the
        last number it holds (0 for a new one). Deletes the conversation's finished logs."""
        ...

    def append(
        self,
        cid: str,
        turn_id: str,
        events: list[tuple[int, Any]],
        limit: int,
        now: float,
        done: bool = False,
    ) -> None:
        """Add ``events`` (numbered already, by one), keep the newest ``limit``, touch the
        log (a batch of more than ``limit``, which :class:`~.turn_events.TurnEventWriter`
        never sends, is written whole, then cut by the same write);
        ``done``: and mark it over, in the same write (a turn's last events and its end are
        one write: a reader never sees the end without them, nor them without the end)."""
        ...

    def touch(self, cid: str, turn_id: str, now: float) -> None: ...

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        """Mark the log over (its events are all in)."""
        ...

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        """Up to ``count`` events after ``after`` and the log's state, in one consistent
        read; ``None`` when there is no such log."""
        ...

    def drop(self, cid: str, turn_id: str) -> None: ...

    def forget(self, cid: str) -> None:
        """Drop every log of the conversation (``Session.clear``)."""
        ...


#: One encoder for every event: the C encoder ``json.dumps`` would make (``ensure_ascii=False``,
#: compact separators, ``default=repr``), made once: ``json.dumps`` with options makes one per
#: call, and its Python layers around it cost more than the encoding of a small event. No
#: check for cycles (``markers=None``): an event is a tree of plain values.
_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_c_string: Any = getattr(json.encoder, "c_encode_basestring", None)
_encode_parts: Any = (
    None
    if _c_encoder is None or _c_string is None
    else _c_encoder(None, repr, _c_string, None, ":", ",", False, False, True)
)
_encode_slow = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode


def encode(value: Any) -> str:
    """An event as the JSON text every backend stores.

    Example:
        >>> encode({"type": "CUSTOM", "value": ["é", 1.5, None]})
        '{"type":"CUSTOM","value":["é",1.5,null]}'
        >>> encode("é"), encode({"at": object}) == '{"at":"' + repr(object) + '"}'
        ('"é"', True)
    """
    if _encode_parts is None:  # a Python without the C encoder
        return _encode_slow(value)
    return "".join(_encode_parts(value, 0))


def encoded(events: list[tuple[int, Any]]) -> list[tuple[int, str]]:
    """A batch of ``(number, event)`` as ``(number, JSON text)``: :func:`encode` of each.

    Example:
        >>> encoded([(1, {"a": "é"}), (2, None)])
        [(1, '{"a":"é"}'), (2, 'null')]
    """
    return [(number, encode(value)) for number, value in events]


# -- memory:// ----------------------------------------------------------------------------------
class _Kept:
    def __init__(self) -> None:
        self.events: list[tuple[int, Any]] = []
        self.first, self.last, self.status, self.touched = 1, 0, RUNNING, 0.0


#: Per namespace: its lock, and its logs by conversation, then turn (a turn's open finds its
#: conversation's other logs without looking at every conversation's).
_namespaces: dict[str, tuple[threading.Lock, dict[str, dict[str, _Kept]]]] = {}
_namespaces_lock = threading.Lock()


class MemoryEventLog:
    """The logs of one ``memory://`` namespace."""

    def __init__(self, url: str) -> None:
        from .urls import memory_namespace

        with _namespaces_lock:
            self._lock, self._logs = _namespaces.setdefault(
                memory_namespace(url), (threading.Lock(), {})
            )

    def _kept(self, cid: str, turn_id: str) -> _Kept | None:
        turns = self._logs.get(cid)
        return None if turns is None else turns.get(turn_id)

    def open(self, cid: str, turn_id: str) -> int:
        import time

        with self._lock:
            turns = self._logs.setdefault(cid, {})
            for key in [k for k, v in turns.items() if v.status == DONE and k != turn_id]:
                del turns[key]
            kept = turns.setdefault(turn_id, _Kept())
            kept.status, kept.touched = RUNNING, time.time()
            return kept.last

    def append(
        self,
        cid: str,
        turn_id: str,
        events: list[tuple[int, Any]],
        limit: int,
        now: float,
        done: bool = False,
    ) -> None:
        texts = encoded(events)  # outside the lock
        with self._lock:
            kept = self._logs.setdefault(cid, {}).setdefault(turn_id, _Kept())
            kept.events.extend(texts)
            kept.last, kept.touched = events[-1][0], now
            if done:
                kept.status = DONE
            if len(kept.events) > limit:
                del kept.events[: len(kept.events) - limit]
            # As the other backends: the oldest kept is the newest ``limit``'s (a batch the
            # writer cut to them drops older numbers it never sent).
            kept.first = max(kept.first, kept.last - limit + 1)

    def touch(self, cid: str, turn_id: str, now: float) -> None:
        with self._lock:
            if (kept := self._kept(cid, turn_id)) is not None:
                kept.touched = now

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        with self._lock:
            if (kept := self._kept(cid, turn_id)) is not None:
                kept.status, kept.touched = DONE, now

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        with self._lock:
            kept = self._kept(cid, turn_id)
            if kept is None:
                return None
            start = max(0, after + 1 - kept.first)
            batch = kept.events[start : start + count]
            page = EventPage([], kept.first, kept.last, kept.status, kept.touched)
        page.events = [(number, json.loads(text)) for number, text in batch]
        return page

    def drop(self, cid: str, turn_id: str) -> None:
        with self._lock:
            turns = self._logs.get(cid)
            if turns is not None:
                turns.pop(turn_id, None)
                if not turns:
                    del self._logs[cid]

    def forget(self, cid: str) -> None:
        with self._lock:
            self._logs.pop(cid, None)


# -- SQLite ---------------------------------------------------------------------------------------
LOGS, EVENTS = "swarm_turn_logs", "swarm_turn_events"
SQLITE_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {LOGS} (conversation_id TEXT NOT NULL, turn_id TEXT NOT NULL, "
    "status TEXT NOT NULL, first_number INTEGER NOT NULL DEFAULT 1, "
    "last_number INTEGER NOT NULL DEFAULT 0, touched REAL NOT NULL, "
    "PRIMARY KEY (conversation_id, turn_id))",
    f"CREATE TABLE IF NOT EXISTS {EVENTS} (conversation_id TEXT NOT NULL, "
    "turn_id TEXT NOT NULL, number INTEGER NOT NULL, event TEXT NOT NULL, "
    "PRIMARY KEY (conversation_id, turn_id, number)) WITHOUT ROWID",
)
_DROP_DONE_EVENTS = (
    f"DELETE FROM {EVENTS} WHERE conversation_id = :cid AND turn_id IN (SELECT turn_id FROM "
    f"{LOGS} WHERE conversation_id = :cid AND status = 'done' AND turn_id <> :turn)"
)
_DROP_DONE_LOGS = (
    f"DELETE FROM {LOGS} WHERE conversation_id = :cid AND status = 'done' AND turn_id <> :turn"
)
_OPEN = (
    f"INSERT INTO {LOGS} (conversation_id, turn_id, status, touched) "
    "VALUES (:cid, :turn, 'running', :now) ON CONFLICT (conversation_id, turn_id) "
    "DO UPDATE SET status = 'running', touched = :now RETURNING last_number"
)
_INSERT = (
    f"INSERT INTO {EVENTS} (conversation_id, turn_id, number, event) VALUES (:cid, :turn, :n, :e)"
)
_TRIM = f"DELETE FROM {EVENTS} WHERE conversation_id = :cid AND turn_id = :turn AND number < :first"
_APPENDED = (
    f"UPDATE {LOGS} SET last_number = :last, first_number = max(first_number, :first), "
    "touched = :now WHERE conversation_id = :cid AND turn_id = :turn"
)
_TOUCH = f"UPDATE {LOGS} SET touched = :now WHERE conversation_id = :cid AND turn_id = :turn"
_FINISH = (
    f"UPDATE {LOGS} SET status = 'done', touched = :now "
    "WHERE conversation_id = :cid AND turn_id = :turn"
)
_LOG_ROW = (
    f"SELECT status, first_number, last_number, touched FROM {LOGS} "
    "WHERE conversation_id = :cid AND turn_id = :turn"
)
_READ = (
    f"SELECT number, event FROM {EVENTS} WHERE conversation_id = :cid AND turn_id = :turn "
    "AND number > :after ORDER BY number LIMIT :count"
)
_DROP_EVENTS = f"DELETE FROM {EVENTS} WHERE conversation_id = :cid AND turn_id = :turn"
_DROP_LOG = f"DELETE FROM {LOGS} WHERE conversation_id = :cid AND turn_id = :turn"
_FORGET_EVENTS = f"DELETE FROM {EVENTS} WHERE conversation_id = :cid"
_FORGET_LOGS = f"DELETE FROM {LOGS} WHERE conversation_id = :cid"


class SQLiteEventLog:
    """The logs in a conversations' SQLite file (its engine, its write lock)."""

    def __init__(self, store: Any) -> None:
        from .backends.sqlite.engine import write_transaction
        from .backends.sqlite.store import text

        self._engine, self._text, self._write = store.engine, text, write_transaction
        with write_transaction(self._engine) as conn:
            for statement in SQLITE_SCHEMA:
                conn.execute(text(statement))

    def _run(self, *steps: tuple[str, Any]) -> Any:
        with self._write(self._engine) as conn:
            result = None
            for sql, params in steps:
                result = conn.execute(self._text(sql), params)
            return result.first() if result is not None and result.returns_rows else None

    def open(self, cid: str, turn_id: str) -> int:
        import time

        key = {"cid": cid, "turn": turn_id}
        row = self._run(
            (_DROP_DONE_EVENTS, key),
            (_DROP_DONE_LOGS, key),
            (_OPEN, {**key, "now": time.time()}),
        )
        return int(row[0])

    def append(
        self,
        cid: str,
        turn_id: str,
        events: list[tuple[int, Any]],
        limit: int,
        now: float,
        done: bool = False,
    ) -> None:
        key = {"cid": cid, "turn": turn_id}
        last = events[-1][0]
        first = max(1, last - limit + 1)
        rows = [{**key, "n": n, "e": e} for n, e in encoded(events)]
        with self._write(self._engine) as conn:
            if rows:
                conn.execute(self._text(_INSERT), rows)
            conn.execute(self._text(_TRIM), {**key, "first": first})
            conn.execute(self._text(_APPENDED), {**key, "last": last, "first": first, "now": now})
            if done:
                conn.execute(self._text(_FINISH), {**key, "now": now})

    def touch(self, cid: str, turn_id: str, now: float) -> None:
        self._run((_TOUCH, {"cid": cid, "turn": turn_id, "now": now}))

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        self._run((_FINISH, {"cid": cid, "turn": turn_id, "now": now}))

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        key = {"cid": cid, "turn": turn_id}
        with self._engine.connect() as conn:  # one read transaction: the row and its events
            row = conn.execute(self._text(_LOG_ROW), key).first()
            if row is None:
                return None
            found = conn.execute(self._text(_READ), {**key, "after": after, "count": count})
            events = [(int(n), json.loads(e)) for n, e in found]
        return EventPage(events, int(row[1]), int(row[2]), str(row[0]), float(row[3]))

    def drop(self, cid: str, turn_id: str) -> None:
        key = {"cid": cid, "turn": turn_id}
        self._run((_DROP_EVENTS, key), (_DROP_LOG, key))

    def forget(self, cid: str) -> None:
        self._run((_FORGET_EVENTS, {"cid": cid}), (_FORGET_LOGS, {"cid": cid}))
