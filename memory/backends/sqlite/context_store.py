"""SQLite context store: table ``swarm_context`` in the same file as the chat history.

One row per conversation id: ``context`` (JSON text), ``version``, ``active_agent``, ``meta``
(JSON text), ``updated_at``. Writes run under ``BEGIN IMMEDIATE`` (or inside a caller's
transaction, which is how :class:`memory.Session` saves messages and context atomically).

Example:
    >>> import os, tempfile
    >>> store = SQLiteContextStore("sqlite:///" + os.path.join(tempfile.mkdtemp(), "c.db"))
    >>> store.save("conv-7", {"vip": True}, active_agent="Sales")
    1
    >>> store.save_meta("conv-7", {"summary": "User wants a refund."}, expected_version=1)
    2
    >>> record = store.load("conv-7")
    >>> record.context, record.version, record.active_agent, record.meta["summary"]
    ({'vip': True}, 2, 'Sales', 'User wants a refund.')
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...context_store import ContextRecord, RecordWriter
from ...errors import ContextVersionConflict
from ...urls import check_conversation_id, sqlite_path
from .engine import read_only, sync_engine, write_transaction

TABLE = "swarm_context"
CREATE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    "conversation_id TEXT NOT NULL PRIMARY KEY, context TEXT NOT NULL DEFAULT '{}', "
    "version INTEGER NOT NULL DEFAULT 0, active_agent TEXT, meta TEXT NOT NULL DEFAULT '{}', "
    "updated_at REAL NOT NULL)"
)
LOAD_SQL = f"SELECT context, version, active_agent, meta FROM {TABLE} WHERE conversation_id = :cid"
# A save is one conditional statement: the version check is its WHERE clause, so the row is
# never read first. RETURNING says whether it wrote (no row back: another version is stored).
# A NULL :context or :meta keeps the stored one, so the context, the meta or both are one
# statement, and every write bumps the version (a stale conditional save of either conflicts).
_UPSERT = (
    f"INSERT INTO {TABLE} (conversation_id, context, version, active_agent, meta, updated_at) "
    "VALUES (:cid, coalesce(:context, '{{}}'), 1, :agent, coalesce(:meta, '{{}}'), :now) "
    "ON CONFLICT (conversation_id) DO UPDATE SET "
    f"context = coalesce(:context, {TABLE}.context), "
    "version = {version}, "
    f"active_agent = coalesce(excluded.active_agent, {TABLE}.active_agent), "
    f"meta = coalesce(:meta, {TABLE}.meta), updated_at = excluded.updated_at"
)
#: No expected version: whatever is stored, plus one.
SAVE_SQL = _UPSERT.format(version=f"{TABLE}.version + 1") + " RETURNING version"
#: Expected version 0: a first save (a meta-only row an earlier release wrote sits at 0 too).
SAVE_FIRST_SQL = _UPSERT.format(version="1") + f" WHERE {TABLE}.version = 0 RETURNING version"
#: Expected version v > 0: only if v is still stored.
SAVE_IF_SQL = (
    f"UPDATE {TABLE} SET context = coalesce(:context, context), version = version + 1, "
    "active_agent = coalesce(:agent, active_agent), meta = coalesce(:meta, meta), "
    "updated_at = :now WHERE conversation_id = :cid AND version = :expected RETURNING version"
)
VERSION_SQL = f"SELECT version FROM {TABLE} WHERE conversation_id = :cid"
# Clearing keeps the row as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
DELETE_SQL = (
    f"UPDATE {TABLE} SET context = '{{}}', meta = '{{}}', active_agent = NULL, "
    "version = version + 1, updated_at = (julianday('now') - 2440587.5) * 86400.0 "
    "WHERE conversation_id = :cid"
)

_schema_ready: set[Any] = set()


def _record(row: Any) -> ContextRecord:
    if row is None:
        return ContextRecord()
    return ContextRecord(decode_context(row[0]), int(row[1]), row[2], json.loads(row[3] or "{}"))


class SQLiteContextStore(RecordWriter):
    """One JSON context document per conversation id in a SQLite file."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.path = sqlite_path(url)
        self.size_limit = size_limit
        self.engine = sync_engine(self.path)
        self.transaction_domain = self.engine
        if self.engine not in _schema_ready and not read_only(self.engine):
            with write_transaction(self.engine) as conn:
                conn.execute(text(CREATE_SQL))
            _schema_ready.add(self.engine)

    def load(self, conversation_id: str, *, connection: Connection | None = None) -> ContextRecord:
        """The stored record (an empty one at version 0 if nothing is stored)."""
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            return _record(connection.execute(text(LOAD_SQL), params).first())
        with self.engine.connect() as conn:
            return _record(conn.execute(text(LOAD_SQL), params).first())

    def _write(
        self,
        cid: str,
        encoded: str | None,
        meta: dict | None,
        agent: str | None,
        expected: int | None,
        connection: Connection | None,
    ) -> int:
        params = {
            "cid": cid,
            "context": encoded,
            "meta": None if meta is None else json.dumps(meta),
            "agent": agent,
            "now": time.time(),
        }
        if expected is None:
            sql = SAVE_SQL
        else:
            sql, params["expected"] = (SAVE_FIRST_SQL if expected == 0 else SAVE_IF_SQL), expected
        if connection is None:
            with write_transaction(self.engine) as conn:
                return self._run(conn, sql, params)
        return self._run(connection, sql, params)

    @staticmethod
    def _run(conn: Connection, sql: str, params: dict[str, Any]) -> int:
        row = conn.execute(text(sql), params).first()
        if row is None:
            stored = conn.execute(text(VERSION_SQL), {"cid": params["cid"]}).scalar()
            raise ContextVersionConflict(params["cid"], int(stored or 0), params["expected"])
        return int(row[0])

    def delete(self, conversation_id: str, *, connection: Connection | None = None) -> None:
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            connection.execute(text(DELETE_SQL), params)
            return
        with write_transaction(self.engine) as conn:
            conn.execute(text(DELETE_SQL), params)

    def begin_write(self):
        return write_transaction(self.engine)
