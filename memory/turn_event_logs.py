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

from .store import ConversationStore

__all__ = ["DONE", "RUNNING", "EventLog", "EventPage", "log_for"]

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
        self, cid: str, turn_id: str, events: list[tuple[int, Any]], limit: int, now: float
    ) -> None:
        """Add ``events`` (numbered already), keep the newest ``limit``, touch the log."""
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


_logs: dict[int, tuple[ConversationStore, EventLog]] = {}
_logs_lock = threading.Lock()


def log_for(store: ConversationStore) -> EventLog:
    """The event logs of ``store`` (made once per store object)."""
    with _logs_lock:
        found = _logs.get(id(store))
        if found is not None and found[0] is store:
            return found[1]
    kind = type(store).__name__
    log: EventLog
    if kind == "MemoryStore":
        log = MemoryEventLog(store.url)
    elif kind == "SQLiteStore":
        log = SQLiteEventLog(store)
    elif kind == "PostgresStore":
        log = PostgresEventLog(store.url)
    elif kind == "RedisStore":
        log = RedisEventLog(store.url)
    else:
        raise TypeError(f"{kind} keeps no turn events (memory, SQLite, Postgres or Redis do)")
    with _logs_lock:
        _logs[id(store)] = (store, log)
    return log


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


# -- memory:// ----------------------------------------------------------------------------------
class _Kept:
    def __init__(self) -> None:
        self.events: list[tuple[int, Any]] = []
        self.first, self.last, self.status, self.touched = 1, 0, RUNNING, 0.0


_namespaces: dict[str, tuple[threading.Lock, dict[tuple[str, str], _Kept]]] = {}


class MemoryEventLog:
    """The logs of one ``memory://`` namespace."""

    def __init__(self, url: str) -> None:
        from .urls import memory_namespace

        with _logs_lock:
            self._lock, self._logs = _namespaces.setdefault(
                memory_namespace(url), (threading.Lock(), {})
            )

    def open(self, cid: str, turn_id: str) -> int:
        import time

        with self._lock:
            for key in [k for k, v in self._logs.items() if k[0] == cid and v.status == DONE]:
                if key[1] != turn_id:
                    del self._logs[key]
            kept = self._logs.setdefault((cid, turn_id), _Kept())
            kept.status, kept.touched = RUNNING, time.time()
            return kept.last

    def append(
        self, cid: str, turn_id: str, events: list[tuple[int, Any]], limit: int, now: float
    ) -> None:
        with self._lock:
            kept = self._logs.setdefault((cid, turn_id), _Kept())
            kept.events.extend((number, _encode(value)) for number, value in events)
            kept.last, kept.touched = events[-1][0], now
            if len(kept.events) > limit:
                del kept.events[: len(kept.events) - limit]
                kept.first = kept.events[0][0]

    def touch(self, cid: str, turn_id: str, now: float) -> None:
        with self._lock:
            if (kept := self._logs.get((cid, turn_id))) is not None:
                kept.touched = now

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        with self._lock:
            if (kept := self._logs.get((cid, turn_id))) is not None:
                kept.status, kept.touched = DONE, now

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        with self._lock:
            kept = self._logs.get((cid, turn_id))
            if kept is None:
                return None
            start = max(0, after + 1 - kept.first)
            batch = kept.events[start : start + count]
            page = EventPage([], kept.first, kept.last, kept.status, kept.touched)
        page.events = [(number, json.loads(text)) for number, text in batch]
        return page

    def drop(self, cid: str, turn_id: str) -> None:
        with self._lock:
            self._logs.pop((cid, turn_id), None)


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
        self, cid: str, turn_id: str, events: list[tuple[int, Any]], limit: int, now: float
    ) -> None:
        key = {"cid": cid, "turn": turn_id}
        last = events[-1][0]
        first = max(1, last - limit + 1)
        rows = [{**key, "n": n, "e": _encode(v)} for n, v in events if n >= first]
        with self._write(self._engine) as conn:
            if rows:
                conn.execute(self._text(_INSERT), rows)
            conn.execute(self._text(_TRIM), {**key, "first": first})
            conn.execute(self._text(_APPENDED), {**key, "last": last, "first": first, "now": now})

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


# -- Postgres -------------------------------------------------------------------------------------
PG_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {LOGS} (conversation_key BYTEA NOT NULL, "
    "turn_id TEXT NOT NULL, status TEXT NOT NULL, first_number BIGINT NOT NULL DEFAULT 1, "
    "last_number BIGINT NOT NULL DEFAULT 0, touched DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (conversation_key, turn_id))",
    f"CREATE TABLE IF NOT EXISTS {EVENTS} (conversation_key BYTEA NOT NULL, "
    "turn_id TEXT NOT NULL, number BIGINT NOT NULL, event TEXT NOT NULL, "
    "PRIMARY KEY (conversation_key, turn_id, number))",
)
PG_CURRENT = f"SELECT to_regclass('{LOGS}') IS NOT NULL AND to_regclass('{EVENTS}') IS NOT NULL"
_PG_DROP_DONE_EVENTS = (
    f"DELETE FROM {EVENTS} WHERE conversation_key = %(key)s AND turn_id IN (SELECT turn_id "
    f"FROM {LOGS} WHERE conversation_key = %(key)s AND status = 'done' AND turn_id <> %(turn)s)"
)
_PG_DROP_DONE_LOGS = (
    f"DELETE FROM {LOGS} WHERE conversation_key = %(key)s AND status = 'done' "
    "AND turn_id <> %(turn)s"
)
_PG_OPEN = (
    f"INSERT INTO {LOGS} (conversation_key, turn_id, status, touched) "
    "VALUES (%(key)s, %(turn)s, 'running', %(now)s) ON CONFLICT (conversation_key, turn_id) "
    "DO UPDATE SET status = 'running', touched = %(now)s RETURNING last_number"
)
_PG_INSERT = (
    f"INSERT INTO {EVENTS} (conversation_key, turn_id, number, event) VALUES (%s, %s, %s, %s)"
)
_PG_TRIM = (
    f"DELETE FROM {EVENTS} WHERE conversation_key = %(key)s AND turn_id = %(turn)s "
    "AND number < %(first)s"
)
_PG_APPENDED = (
    f"UPDATE {LOGS} SET last_number = %(last)s, first_number = greatest(first_number, "
    "%(first)s), touched = %(now)s WHERE conversation_key = %(key)s AND turn_id = %(turn)s"
)
_PG_TOUCH = (
    f"UPDATE {LOGS} SET touched = %(now)s WHERE conversation_key = %(key)s AND turn_id = %(turn)s"
)
_PG_FINISH = (
    f"UPDATE {LOGS} SET status = 'done', touched = %(now)s "
    "WHERE conversation_key = %(key)s AND turn_id = %(turn)s"
)
# One statement, one snapshot: the log's row with the events after a number, as an array.
_PG_READ = (
    f"SELECT l.status, l.first_number, l.last_number, l.touched, "
    "(SELECT coalesce(array_agg(e.number ORDER BY e.number), '{}') FROM (SELECT number FROM "
    f"{EVENTS} WHERE conversation_key = %(key)s AND turn_id = %(turn)s AND number > %(after)s "
    "ORDER BY number LIMIT %(count)s) e), "
    "(SELECT coalesce(array_agg(e.event ORDER BY e.number), '{}') FROM (SELECT number, event "
    f"FROM {EVENTS} WHERE conversation_key = %(key)s AND turn_id = %(turn)s "
    "AND number > %(after)s ORDER BY number LIMIT %(count)s) e) "
    f"FROM {LOGS} l WHERE l.conversation_key = %(key)s AND l.turn_id = %(turn)s"
)
_PG_DROP_EVENTS = f"DELETE FROM {EVENTS} WHERE conversation_key = %(key)s AND turn_id = %(turn)s"
_PG_DROP_LOG = f"DELETE FROM {LOGS} WHERE conversation_key = %(key)s AND turn_id = %(turn)s"


class PostgresEventLog:
    """The logs in a conversations' Postgres database (its pool)."""

    def __init__(self, url: str) -> None:
        from .backends.postgres.engine import ensure_schema

        self.url = url
        ensure_schema(url, PG_SCHEMA, PG_CURRENT, (LOGS, EVENTS))

    @staticmethod
    def _key(cid: str, turn_id: str) -> dict[str, Any]:
        from .backends.postgres.store import conversation_key

        return {"key": conversation_key(cid), "turn": turn_id}

    def _write(self, *steps: tuple[str, Any]) -> Any:
        from .backends.postgres.engine import write_transaction

        with write_transaction(self.url) as conn:
            row = None
            for sql, params in steps:
                cursor = conn.execute(sql, params)
                row = cursor.fetchone() if cursor.description else None
            return row

    def open(self, cid: str, turn_id: str) -> int:
        import time

        key = self._key(cid, turn_id)
        row = self._write(
            (_PG_DROP_DONE_EVENTS, key),
            (_PG_DROP_DONE_LOGS, key),
            (_PG_OPEN, {**key, "now": time.time()}),
        )
        return int(row[0])

    def append(
        self, cid: str, turn_id: str, events: list[tuple[int, Any]], limit: int, now: float
    ) -> None:
        from .backends.postgres.engine import write_transaction

        key = self._key(cid, turn_id)
        last = events[-1][0]
        first = max(1, last - limit + 1)
        rows = [(key["key"], turn_id, n, _encode(v)) for n, v in events if n >= first]
        with write_transaction(self.url) as conn, conn.cursor() as cursor:
            if rows:
                cursor.executemany(_PG_INSERT, rows)
            cursor.execute(_PG_TRIM, {**key, "first": first})
            cursor.execute(_PG_APPENDED, {**key, "last": last, "first": first, "now": now})

    def touch(self, cid: str, turn_id: str, now: float) -> None:
        self._write((_PG_TOUCH, {**self._key(cid, turn_id), "now": now}))

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        self._write((_PG_FINISH, {**self._key(cid, turn_id), "now": now}))

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        from .backends.postgres.engine import read_connection

        params = {**self._key(cid, turn_id), "after": after, "count": count}
        with read_connection(self.url) as conn:
            row = conn.execute(_PG_READ, params).fetchone()
        if row is None:
            return None
        events = [(int(n), json.loads(e)) for n, e in zip(row[4], row[5], strict=True)]
        return EventPage(events, int(row[1]), int(row[2]), str(row[0]), float(row[3]))

    def drop(self, cid: str, turn_id: str) -> None:
        key = self._key(cid, turn_id)
        self._write((_PG_DROP_EVENTS, key), (_PG_DROP_LOG, key))


# -- Redis ----------------------------------------------------------------------------------------
LOG_PREFIX, EVENTS_PREFIX, TURNS_PREFIX = (
    "swarm_turn_log:",
    "swarm_turn_events:",
    "swarm_turn_logs:",
)


class RedisEventLog:
    """The logs in a conversations' Redis database (its client). The turn id comes first in
    the keys (a turn id holds no ``:`` of ours to confuse: the conversation id, last, may)."""

    def __init__(self, url: str) -> None:
        from .backends.redis.engine import redis_options, sync_client

        self.url = url
        self._client = sync_client(url)
        self._ttl = redis_options(url)[1]

    @staticmethod
    def _keys(cid: str, turn_id: str) -> tuple[str, str]:
        tail = f"{len(turn_id)}:{turn_id}:{cid}"  # the length: no two (turn, cid) pairs meet
        return LOG_PREFIX + tail, EVENTS_PREFIX + tail

    def _errors(self) -> Any:
        from .backends.redis.engine import unavailable_as_storage_error

        return unavailable_as_storage_error(self.url)

    def open(self, cid: str, turn_id: str) -> int:
        import time

        turns = TURNS_PREFIX + cid
        with self._errors():
            for other in self._client.smembers(turns):
                name = other.decode() if isinstance(other, bytes) else str(other)
                if name == turn_id:
                    continue
                log, events = self._keys(cid, name)
                status = self._client.hget(log, "status")
                if (
                    status is None
                    or (status.decode() if isinstance(status, bytes) else status) == DONE
                ):
                    self._client.delete(log, events)
                    self._client.srem(turns, name)
            log, _ = self._keys(cid, turn_id)
            pipe = self._client.pipeline(transaction=True)
            pipe.sadd(turns, turn_id)
            pipe.hsetnx(log, "last", 0)
            pipe.hsetnx(log, "first", 1)
            pipe.hset(log, mapping={"status": RUNNING, "touched": repr(time.time())})
            pipe.hget(log, "last")
            self._expire(pipe, turns, log)
            last = pipe.execute()[4]
        return int(last or 0)

    def _expire(self, pipe: Any, *keys: str) -> None:
        if self._ttl:  # the URL's ttl: a log expires like the conversation it belongs to
            for key in keys:
                pipe.expire(key, self._ttl)

    def append(
        self, cid: str, turn_id: str, events: list[tuple[int, Any]], limit: int, now: float
    ) -> None:
        log, kept = self._keys(cid, turn_id)
        last = events[-1][0]
        first = max(1, last - limit + 1)
        members = {f"{n}:{_encode(v)}": n for n, v in events if n >= first}
        with self._errors():
            pipe = self._client.pipeline(transaction=True)
            if members:
                pipe.zadd(kept, members)
            pipe.zremrangebyscore(kept, "-inf", f"({first}")
            pipe.hset(log, mapping={"last": last, "touched": repr(now)})
            pipe.hset(log, "first", first)
            self._expire(pipe, log, kept)
            pipe.execute()

    def touch(self, cid: str, turn_id: str, now: float) -> None:
        with self._errors():
            self._client.hset(self._keys(cid, turn_id)[0], "touched", repr(now))

    def finish(self, cid: str, turn_id: str, now: float) -> None:
        with self._errors():
            self._client.hset(
                self._keys(cid, turn_id)[0], mapping={"status": DONE, "touched": repr(now)}
            )

    def read(self, cid: str, turn_id: str, after: int, count: int) -> EventPage | None:
        log, kept = self._keys(cid, turn_id)
        with self._errors():
            pipe = self._client.pipeline(transaction=True)  # MULTI: one consistent view
            pipe.hgetall(log)
            pipe.zrangebyscore(kept, f"({after}", "+inf", start=0, num=count)
            row, members = pipe.execute()
        if not row:
            return None
        fields = {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in row.items()
        }
        events = []
        for member in members:
            text = member.decode() if isinstance(member, bytes) else member
            number, _, value = text.partition(":")
            events.append((int(number), json.loads(value)))
        return EventPage(
            events,
            int(fields.get("first", 1)),
            int(fields.get("last", 0)),
            fields.get("status", RUNNING),
            float(fields.get("touched", 0.0)),
        )

    def drop(self, cid: str, turn_id: str) -> None:
        with self._errors():
            self._client.delete(*self._keys(cid, turn_id))
            self._client.srem(TURNS_PREFIX + cid, turn_id)
