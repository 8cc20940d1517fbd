"""Turn event logs (:mod:`.turn_events`) on the server backends, Postgres and Redis, and
:func:`log_for`, which picks a store's log. The protocol, the ``memory://`` and SQLite logs, and
what each backend keeps, are in :mod:`.turn_event_logs`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from .store import ConversationStore
from .turn_event_logs import (
    DONE,
    EVENTS,
    LOGS,
    RUNNING,
    EventLog,
    EventPage,
    MemoryEventLog,
    SQLiteEventLog,
    encoded,
)

__all__ = ["PostgresEventLog", "RedisEventLog", "log_for"]


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
_PG_FORGET_EVENTS = f"DELETE FROM {EVENTS} WHERE conversation_key = %(key)s"
_PG_FORGET_LOGS = f"DELETE FROM {LOGS} WHERE conversation_key = %(key)s"


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
        self,
        cid: str,
        turn_id: str,
        events: list[tuple[int, Any]],
        limit: int,
        now: float,
        done: bool = False,
    ) -> None:
        from .backends.postgres.engine import write_transaction

        key = self._key(cid, turn_id)
        last = events[-1][0]
        first = max(1, last - limit + 1)
        rows = [(key["key"], turn_id, n, e) for n, e in encoded(events)]
        with write_transaction(self.url) as conn, conn.cursor() as cursor:
            if rows:
                cursor.executemany(_PG_INSERT, rows)
            cursor.execute(_PG_TRIM, {**key, "first": first})
            cursor.execute(_PG_APPENDED, {**key, "last": last, "first": first, "now": now})
            if done:
                cursor.execute(_PG_FINISH, {**key, "now": now})

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

    def forget(self, cid: str) -> None:
        key = {"key": self._key(cid, "")["key"]}
        self._write((_PG_FORGET_EVENTS, key), (_PG_FORGET_LOGS, key))


def _str(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


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
        self,
        cid: str,
        turn_id: str,
        events: list[tuple[int, Any]],
        limit: int,
        now: float,
        done: bool = False,
    ) -> None:
        log, kept = self._keys(cid, turn_id)
        last = events[-1][0]
        first = max(1, last - limit + 1)
        members = {f"{n}:{e}": n for n, e in encoded(events)}
        with self._errors():
            pipe = self._client.pipeline(transaction=True)
            if members:
                pipe.zadd(kept, members)
            pipe.zremrangebyscore(kept, "-inf", f"({first}")
            row: dict[str, str | int] = {"last": last, "touched": repr(now)}
            if done:
                row["status"] = DONE
            pipe.hset(log, mapping=row)  # type: ignore[arg-type]
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

    def forget(self, cid: str) -> None:
        with self._errors():
            turns = self._client.smembers(TURNS_PREFIX + cid)
            keys = [key for turn in turns for key in self._keys(cid, _str(turn))]
            self._client.delete(TURNS_PREFIX + cid, *keys)
