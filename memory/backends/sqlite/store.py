"""SQLite (``sqlite:///path``): a conversation's messages, context and records in one file.

Tables, created on first use:

* ``message_store`` (``id``, ``session_id``, ``message`` JSON text): LangChain's
  ``SQLChatMessageHistory`` layout, so plain LangChain reads what we write (and the other way
  round), with an index on ``(session_id, id)`` so the last ``k`` messages cost O(k)
  (``ORDER BY id DESC LIMIT k`` walks it backwards);
* ``swarm_context``: one row per conversation (``context`` and ``meta`` JSON text,
  ``version``, ``active_agent``, ``updated_at``, and ``message_count``: how many messages the
  conversation holds, kept by every save, so a load knows where the next turn's messages land
  without counting them; ``NULL`` in files of earlier versions until their next save);
* ``swarm_records``: ``(conversation_id, kind, key) -> value`` (JSON text).

A load is one read transaction (WAL: it never waits for a writer); a save is one
``BEGIN IMMEDIATE`` transaction whose first statement is the conditional update of the
context row (``UPDATE ... WHERE version = v RETURNING version``: no read first), so a
process killed at any moment leaves whole turns only.

Example:
    >>> import os, tempfile
    >>> from langchain_core.messages import HumanMessage
    >>> from swarmgraph.memory.store import TurnWrite, Window
    >>> store = SQLiteStore("sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db"))
    >>> store.save("conv-7", TurnWrite([HumanMessage("hi")], context={"vip": True}),
    ...            expected_version=0)
    1
    >>> snapshot = store.load("conv-7", window=Window(last=20))
    >>> snapshot.context, snapshot.version, [m.content for m in snapshot.messages]
    ({'vip': True}, 1, ['hi'])
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import bindparam
from sqlalchemy import text as _text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DatabaseError, OperationalError

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...errors import ContextVersionConflict, RecordExists
from ...per_process import PerProcess
from ...store import (
    ConversationSummary,
    EncodedWrite,
    Half,
    Snapshot,
    StoreBase,
    Window,
    decode_messages,
    since,
)
from ...urls import shown_url, sqlite_path
from .engine import explained, read_only, sync_engine, write_transaction

#: A statement's SQLAlchemy object, made once (a turn runs the same few every time).
text = functools.lru_cache(maxsize=64)(_text)

#: Table names are constants, never built from user input.
MESSAGES = "message_store"  # upstream's default table
CONTEXT = "swarm_context"
RECORDS = "swarm_records"
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {MESSAGES} "
    "(id INTEGER NOT NULL PRIMARY KEY, session_id TEXT, message TEXT)",
    f"CREATE INDEX IF NOT EXISTS ix_{MESSAGES}_session_id_id ON {MESSAGES} (session_id, id)",
    f"CREATE TABLE IF NOT EXISTS {CONTEXT} ("
    "conversation_id TEXT NOT NULL PRIMARY KEY, context TEXT NOT NULL DEFAULT '{}', "
    "version INTEGER NOT NULL DEFAULT 0, active_agent TEXT, meta TEXT NOT NULL DEFAULT '{}', "
    "updated_at REAL NOT NULL, message_count INTEGER)",
    f"CREATE TABLE IF NOT EXISTS {RECORDS} (conversation_id TEXT NOT NULL, kind TEXT NOT NULL, "
    "key TEXT NOT NULL, value TEXT NOT NULL, updated_at REAL NOT NULL, "
    "PRIMARY KEY (conversation_id, kind, key))",
)

# -- messages --------------------------------------------------------------------------------
WINDOW_SQL = f"SELECT message FROM {MESSAGES} WHERE session_id = :sid ORDER BY id DESC LIMIT :limit"
ALL_SQL = f"SELECT message FROM {MESSAGES} WHERE session_id = :sid ORDER BY id"
# OFFSET walks index entries without decoding the skipped messages.
SINCE_SQL = f"{ALL_SQL} LIMIT -1 OFFSET :position"
COUNT_SQL = f"SELECT count(*) FROM {MESSAGES} WHERE session_id = :sid"
INSERT_SQL = f"INSERT INTO {MESSAGES} (session_id, message) VALUES (:sid, :message)"
DELETE_MESSAGES_SQL = f"DELETE FROM {MESSAGES} WHERE session_id = :sid"

#: Files of earlier versions get the counter on first open (NULL: count at the next save).
ADD_COUNTER_SQL = f"ALTER TABLE {CONTEXT} ADD COLUMN message_count INTEGER"

# -- the context row ---------------------------------------------------------------------------
# The count is the stored counter: NULL (unknown) with no row yet, or in a row of an earlier
# version not saved to since; a load never counts.
_COUNTED = f"(SELECT count(*) FROM {MESSAGES} WHERE session_id = :cid)"
LOAD_SQL = (
    f"SELECT context, version, active_agent, meta, message_count "
    f"FROM {CONTEXT} WHERE conversation_id = :cid"
)
#: A read-only file of an earlier version has no counter column.
LOAD_UNCOUNTED_SQL = (
    f"SELECT context, version, active_agent, meta, NULL FROM {CONTEXT} WHERE conversation_id = :cid"
)
# A save is one conditional statement: the version check is its WHERE clause, so the row is
# never read first. RETURNING says whether it wrote (no row back: another version is stored).
# A NULL :context or :meta keeps the stored one, and every write bumps the version.
# The message counter moves with the messages the save appends (its first statement runs
# before they are inserted, so a count it has to make is the count before them).
_UPSERT = (
    f"INSERT INTO {CONTEXT} (conversation_id, context, version, active_agent, meta, updated_at, "
    "message_count) "
    "VALUES (:cid, coalesce(:context, '{{}}'), 1, :agent, coalesce(:meta, '{{}}'), :now, "
    f"{_COUNTED} + :added) "
    "ON CONFLICT (conversation_id) DO UPDATE SET "
    f"context = coalesce(:context, {CONTEXT}.context), "
    "version = {version}, "
    f"active_agent = coalesce(excluded.active_agent, {CONTEXT}.active_agent), "
    f"meta = coalesce(:meta, {CONTEXT}.meta), updated_at = excluded.updated_at, "
    f"message_count = coalesce({CONTEXT}.message_count, {_COUNTED}) + :added"
)
#: No expected version: whatever is stored, plus one.
SAVE_SQL = _UPSERT.format(version=f"{CONTEXT}.version + 1") + " RETURNING version"
#: Expected version 0: a first save (a meta-only row an earlier release wrote sits at 0 too).
SAVE_FIRST_SQL = _UPSERT.format(version="1") + f" WHERE {CONTEXT}.version = 0 RETURNING version"
#: Expected version v > 0: only if v is still stored.
SAVE_IF_SQL = (
    f"UPDATE {CONTEXT} SET context = coalesce(:context, context), version = version + 1, "
    "active_agent = coalesce(:agent, active_agent), meta = coalesce(:meta, meta), "
    f"updated_at = :now, message_count = coalesce(message_count, {_COUNTED}) + :added "
    "WHERE conversation_id = :cid AND version = :expected RETURNING version"
)
#: An append of messages alone moves the counter only (an unknown one stays unknown).
COUNT_APPENDED_SQL = (
    f"UPDATE {CONTEXT} SET message_count = message_count + :added WHERE conversation_id = :cid"
)
ZERO_COUNT_SQL = f"UPDATE {CONTEXT} SET message_count = 0 WHERE conversation_id = :cid"
VERSION_SQL = f"SELECT version FROM {CONTEXT} WHERE conversation_id = :cid"
_NOW = "(julianday('now') - 2440587.5) * 86400.0"
# Clearing keeps the row as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
TOMBSTONE_SQL = (
    f"UPDATE {CONTEXT} SET context = '{{}}', meta = '{{}}', active_agent = NULL, "
    f"version = version + 1, updated_at = {_NOW} WHERE conversation_id = :cid"
)

# -- records -----------------------------------------------------------------------------------
PUT_SQL = (
    f"INSERT INTO {RECORDS} (conversation_id, kind, key, value, updated_at) "
    "VALUES (:cid, :kind, :key, :value, :now) ON CONFLICT (conversation_id, kind, key) "
    "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
)
PUT_IF_ABSENT_SQL = (
    f"INSERT INTO {RECORDS} (conversation_id, kind, key, value, updated_at) "
    "VALUES (:cid, :kind, :key, :value, :now) ON CONFLICT DO NOTHING RETURNING 1"
)
RECORD_SQL = (
    f"SELECT value FROM {RECORDS} WHERE conversation_id = :cid AND kind = :kind AND key = :key"
)
RECORDS_SQL = f"SELECT key, value FROM {RECORDS} WHERE conversation_id = :cid AND kind = :kind"
SOME_RECORDS_SQL = _text(f"{RECORDS_SQL} AND key IN :keys").bindparams(
    bindparam("keys", expanding=True)
)
DELETE_RECORDS_SQL = f"DELETE FROM {RECORDS} WHERE conversation_id = :cid"

# -- the listing -------------------------------------------------------------------------------
# Every conversation with a context row or messages: its agent, message count, last change
# (the row's updated_at; message-only conversations have none). Two grouped scans of the
# (session_id, id) index and the context table's primary key.
CONVERSATIONS_SQL = (
    f"SELECT c.conversation_id, c.active_agent, coalesce(m.n, 0), c.updated_at FROM {CONTEXT} c "
    f"LEFT JOIN (SELECT session_id, count(*) AS n FROM {MESSAGES} GROUP BY session_id) m "
    "ON m.session_id = c.conversation_id "
    f"UNION ALL SELECT session_id, NULL, count(*), NULL FROM {MESSAGES} "
    f"WHERE session_id NOT IN (SELECT conversation_id FROM {CONTEXT}) GROUP BY session_id"
)


def _create_schema(path: str) -> bool:
    """Create the tables (and add the counter to an earlier version's); True when the file
    has the message counter."""
    engine = sync_engine(path)
    if read_only(engine):  # read-only media: read what is there, create nothing
        with engine.connect() as conn:
            return _has_counter(conn)
    with write_transaction(engine) as conn:
        for statement in SCHEMA:
            conn.execute(text(statement))
        if not _has_counter(conn):
            conn.execute(text(ADD_COUNTER_SQL))
    return True


def _has_counter(conn: Connection) -> bool:
    columns = conn.execute(text(f"PRAGMA table_info({CONTEXT})")).fetchall()
    return any(column[1] == "message_count" for column in columns)


_schemas: PerProcess[str, bool] = PerProcess(_create_schema)


P = ParamSpec("P")
R = TypeVar("R")


def _explained(
    method: Callable[Concatenate[SQLiteStore, P], R],
) -> Callable[Concatenate[SQLiteStore, P], R]:
    """``method`` with a read-only, missing or corrupt file's (or a full disk's) driver
    error named for its cause; the driver's error stays attached as ``__cause__``."""

    @functools.wraps(method)
    def wrapper(self: SQLiteStore, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except DatabaseError as error:  # OperationalError is one
            clear = explained(self.url, self.path, error)
            if clear is error:
                raise
            raise clear from error

    return wrapper


class SQLiteStore(StoreBase):
    """Conversations in one SQLite file; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.path: Path = sqlite_path(url)
        self.size_limit = size_limit
        self.engine = sync_engine(self.path)
        try:
            counted = _schemas.get(str(self.path))
        except DatabaseError as error:
            clear = explained(url, self.path, error)
            if clear is error:
                raise
            raise clear from error
        self._load_sql = LOAD_SQL if counted else LOAD_UNCOUNTED_SQL

    def __repr__(self) -> str:
        return f"SQLiteStore(url={shown_url(self.url)!r})"

    @_explained
    def _load(self, cid: str, window: Window, records: list[tuple[str, str]]) -> Snapshot:
        params = {"cid": cid, "sid": cid}
        with self.engine.connect() as conn:  # one read transaction: a consistent snapshot
            row = conn.execute(text(self._load_sql), params).first()
            count = None if row is None or row[4] is None else int(row[4])
            found = {}
            try:  # the records asked for, each by its key
                for kind, key in records:
                    value = conn.execute(text(RECORD_SQL), {"cid": cid, "kind": kind, "key": key})
                    if (stored := value.scalar()) is not None:
                        found[(kind, key)] = stored
            except OperationalError as error:
                if f"no such table: {RECORDS}" not in str(error):  # an older file, read-only
                    raise
            start: int | None
            texts: Sequence[str | bytes]
            if window.last is not None:
                texts, start = self._last(conn, cid, window.last), None
            elif not window.start:
                texts, start = self._column(conn, ALL_SQL, sid=cid), 0
            else:
                texts, start = since(
                    window.start,
                    lambda n: self._column(conn, SINCE_SQL, sid=cid, position=n),
                    lambda: count if count is not None else self._counted(conn, cid),
                )
        messages = decode_messages(texts)  # decoded with the connection back in its pool
        if row is None:
            return Snapshot(messages=messages, start=start, count=count, records=found)
        meta, context = json.loads(row[3] or "{}"), decode_context(row[0])
        return Snapshot(context, int(row[1]), row[2], meta, messages, start, count, found)

    @staticmethod
    def _counted(conn: Connection, cid: str) -> int:
        return int(conn.execute(text(COUNT_SQL), {"sid": cid}).scalar_one())

    @staticmethod
    def _column(conn: Connection, sql: str, **params: Any) -> list[str | bytes]:
        return list(conn.execute(text(sql), params).scalars())

    def _last(self, conn: Connection, cid: str, limit: int) -> list[str | bytes]:
        if limit == 0:
            return []
        return self._column(conn, WINDOW_SQL, sid=cid, limit=limit)[::-1]

    @_explained
    def _save(self, cid: str, write: EncodedWrite, expected: int | None) -> int:
        with write_transaction(self.engine) as conn:
            return self._write(conn, cid, write, expected)

    def _write(self, conn: Connection, cid: str, write: EncodedWrite, expected: int | None) -> int:
        """Every statement of a save, inside its transaction: the conditional context write
        first (a conflict ends the save before anything else runs), then records, messages."""
        if write.appends_only(expected):
            self._insert(conn, cid, write.messages)
            added = {"cid": cid, "added": len(write.messages)}
            conn.execute(text(COUNT_APPENDED_SQL), added)
            return int(conn.execute(text(VERSION_SQL), {"cid": cid}).scalar() or 0)
        now = time.time()
        params: dict[str, Any] = {
            "cid": cid,
            "context": write.context,
            "meta": write.meta,
            "agent": write.active_agent,
            "now": now,
            "added": len(write.messages),
        }
        if expected is None:
            sql = SAVE_SQL
        else:
            sql, params["expected"] = (SAVE_FIRST_SQL if expected == 0 else SAVE_IF_SQL), expected
        row = conn.execute(text(sql), params).first()
        if row is None:
            stored = conn.execute(text(VERSION_SQL), {"cid": cid}).scalar()
            raise ContextVersionConflict(cid, int(stored or 0), int(params["expected"]))
        for record in write.records:
            values = {"cid": cid, "kind": record.kind, "key": record.key, "value": record.value}
            if not record.if_absent:
                conn.execute(text(PUT_SQL), {**values, "now": now})
            elif conn.execute(text(PUT_IF_ABSENT_SQL), {**values, "now": now}).first() is None:
                stored = conn.execute(text(RECORD_SQL), values).scalar_one()
                raise RecordExists(cid, record.kind, record.key, json.loads(stored))
        self._insert(conn, cid, write.messages)
        return int(row[0])

    @staticmethod
    def _insert(conn: Connection, cid: str, messages: list[str]) -> None:
        if messages:
            conn.execute(text(INSERT_SQL), [{"sid": cid, "message": m} for m in messages])

    @_explained
    def _clear(self, cid: str, only: Half | None) -> None:
        with write_transaction(self.engine) as conn:
            if only != "context":
                conn.execute(text(DELETE_MESSAGES_SQL), {"sid": cid})
                conn.execute(text(ZERO_COUNT_SQL), {"cid": cid})
            if only != "messages":
                conn.execute(text(TOMBSTONE_SQL), {"cid": cid})
                conn.execute(text(DELETE_RECORDS_SQL), {"cid": cid})

    @_explained
    def _messages(self, cid: str, limit: int | None) -> list[str | bytes]:
        with self.engine.connect() as conn:
            if limit is None:
                return self._column(conn, ALL_SQL, sid=cid)
            return self._last(conn, cid, limit)

    @_explained
    def _count(self, cid: str) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text(COUNT_SQL), {"sid": cid}).scalar_one())

    @_explained
    def _records(self, cid: str, kind: str, keys: list[str] | None) -> dict[str, str]:
        params: dict[str, Any] = {"cid": cid, "kind": kind}
        statement = text(RECORDS_SQL) if keys is None else SOME_RECORDS_SQL
        if keys is not None:
            params["keys"] = keys
        try:
            with self.engine.connect() as conn:
                return {row[0]: row[1] for row in conn.execute(statement, params)}
        except OperationalError as error:
            if f"no such table: {RECORDS}" in str(error):  # an older file, opened read-only
                return {}
            raise

    @_explained
    def _summaries(self) -> list[ConversationSummary]:
        with self.engine.connect() as conn:
            return [
                ConversationSummary(row[0], row[1], int(row[2]), row[3])
                for row in conn.execute(text(CONVERSATIONS_SQL))
            ]


def open_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> SQLiteStore:
    """The registry's entry point: the conversations in the SQLite file ``url`` names."""
    return SQLiteStore(url, size_limit=size_limit)
