"""SQLite context store: table ``swarm_context`` in the same file as the chat history.

One row per conversation id: ``context`` (JSON text), ``version``, ``active_agent``, ``meta``
(JSON text), ``updated_at``. Writes run under ``BEGIN IMMEDIATE`` (or inside a caller's
transaction, which is how :class:`memory.Session` saves messages and context atomically).

Example:
    >>> import os, tempfile
    >>> store = SQLiteContextStore("sqlite:///" + os.path.join(tempfile.mkdtemp(), "c.db"))
    >>> store.save("conv-7", {"vip": True}, active_agent="Sales")
    1
    >>> store.save_meta("conv-7", {"summary": "User wants a refund."})
    >>> record = store.load("conv-7")
    >>> record.context, record.version, record.active_agent, record.meta["summary"]
    ({'vip': True}, 1, 'Sales', 'User wants a refund.')
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context, encode_context
from ...context_store import ContextRecord, next_version
from ...urls import check_conversation_id, sqlite_path
from .engine import async_engine, awrite_transaction, sync_engine, write_transaction

TABLE = "swarm_context"
CREATE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    "conversation_id TEXT NOT NULL PRIMARY KEY, context TEXT NOT NULL DEFAULT '{}', "
    "version INTEGER NOT NULL DEFAULT 0, active_agent TEXT, meta TEXT NOT NULL DEFAULT '{}', "
    "updated_at REAL NOT NULL)"
)
LOAD_SQL = f"SELECT context, version, active_agent, meta FROM {TABLE} WHERE conversation_id = :cid"
SAVE_SQL = (
    f"INSERT INTO {TABLE} (conversation_id, context, version, active_agent, updated_at) "
    "VALUES (:cid, :context, :version, :agent, :now) ON CONFLICT (conversation_id) DO UPDATE SET "
    "context = excluded.context, version = excluded.version, "
    "active_agent = coalesce(excluded.active_agent, active_agent), updated_at = excluded.updated_at"
)
META_SQL = (
    f"INSERT INTO {TABLE} (conversation_id, meta, updated_at) VALUES (:cid, :meta, :now) "
    "ON CONFLICT (conversation_id) DO UPDATE SET meta = excluded.meta, "
    "updated_at = excluded.updated_at"
)
DELETE_SQL = f"DELETE FROM {TABLE} WHERE conversation_id = :cid"

_schema_ready: set[Any] = set()


def _record(row: Any) -> ContextRecord:
    if row is None:
        return ContextRecord()
    return ContextRecord(decode_context(row[0]), int(row[1]), row[2], json.loads(row[3] or "{}"))


class SQLiteContextStore:
    """One JSON context document per conversation id in a SQLite file."""

    #: Its async methods would only wrap blocking calls (aiosqlite is a thread per
    #: connection): Session.arun runs the whole load and the whole save in one thread hop.
    blocking_io = True

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.path = sqlite_path(url)
        self.size_limit = size_limit
        self.engine = sync_engine(self.path)
        self.transaction_domain = self.engine
        if self.engine not in _schema_ready:
            with write_transaction(self.engine) as conn:
                conn.execute(text(CREATE_SQL))
            _schema_ready.add(self.engine)

    # -- sync ---------------------------------------------------------------------------
    def load(self, conversation_id: str, *, connection: Connection | None = None) -> ContextRecord:
        """The stored record (an empty one at version 0 if nothing is stored)."""
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            return _record(connection.execute(text(LOAD_SQL), params).first())
        with self.engine.connect() as conn:
            return _record(conn.execute(text(LOAD_SQL), params).first())

    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: Connection | None = None,
    ) -> int:
        """Store ``context`` (and ``active_agent`` unless None); return the new version."""
        check_conversation_id(conversation_id)
        encoded = encode_context(context, size_limit=self.size_limit)
        if connection is None:
            with write_transaction(self.engine) as conn:
                return self._save(conn, conversation_id, encoded, expected_version, active_agent)
        return self._save(connection, conversation_id, encoded, expected_version, active_agent)

    def _save(self, conn: Connection, cid: str, encoded: str, expected: int | None, agent) -> int:
        version = next_version(cid, self.load(cid, connection=conn).version, expected)
        params = {"cid": cid, "context": encoded, "version": version, "agent": agent}
        conn.execute(text(SAVE_SQL), {**params, "now": time.time()})
        return version

    def save_meta(
        self, conversation_id: str, meta: dict, *, connection: Connection | None = None
    ) -> None:
        """Replace the record's ``meta`` dict (context and version untouched)."""
        params = {"cid": check_conversation_id(conversation_id), "meta": json.dumps(meta)}
        params["now"] = time.time()
        if connection is not None:
            connection.execute(text(META_SQL), params)
            return
        with write_transaction(self.engine) as conn:
            conn.execute(text(META_SQL), params)

    def delete(self, conversation_id: str, *, connection: Connection | None = None) -> None:
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            connection.execute(text(DELETE_SQL), params)
            return
        with write_transaction(self.engine) as conn:
            conn.execute(text(DELETE_SQL), params)

    def begin_write(self):
        return write_transaction(self.engine)

    # -- async --------------------------------------------------------------------------
    @property
    def _aengine(self):
        return async_engine(self.path)

    async def aload(
        self, conversation_id: str, *, connection: AsyncConnection | None = None
    ) -> ContextRecord:
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            return _record((await connection.execute(text(LOAD_SQL), params)).first())
        async with self._aengine.connect() as conn:
            return _record((await conn.execute(text(LOAD_SQL), params)).first())

    async def asave(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: AsyncConnection | None = None,
    ) -> int:
        check_conversation_id(conversation_id)
        encoded = encode_context(context, size_limit=self.size_limit)
        if connection is None:
            async with awrite_transaction(self._aengine) as conn:
                return await self._asave(
                    conn, conversation_id, encoded, expected_version, active_agent
                )
        return await self._asave(
            connection, conversation_id, encoded, expected_version, active_agent
        )

    async def _asave(self, conn: AsyncConnection, cid: str, encoded: str, expected, agent) -> int:
        stored = (await self.aload(cid, connection=conn)).version
        version = next_version(cid, stored, expected)
        params = {"cid": cid, "context": encoded, "version": version, "agent": agent}
        await conn.execute(text(SAVE_SQL), {**params, "now": time.time()})
        return version

    async def asave_meta(
        self, conversation_id: str, meta: dict, *, connection: AsyncConnection | None = None
    ) -> None:
        params = {"cid": check_conversation_id(conversation_id), "meta": json.dumps(meta)}
        params["now"] = time.time()
        if connection is not None:
            await connection.execute(text(META_SQL), params)
            return
        async with awrite_transaction(self._aengine) as conn:
            await conn.execute(text(META_SQL), params)

    async def adelete(
        self, conversation_id: str, *, connection: AsyncConnection | None = None
    ) -> None:
        params = {"cid": check_conversation_id(conversation_id)}
        if connection is not None:
            await connection.execute(text(DELETE_SQL), params)
            return
        async with awrite_transaction(self._aengine) as conn:
            await conn.execute(text(DELETE_SQL), params)

    def abegin_write(self):
        return awrite_transaction(self._aengine)
