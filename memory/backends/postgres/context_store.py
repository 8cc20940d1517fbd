"""Postgres context store: table ``swarm_context``, one JSON document and a version per id.

Columns: ``conversation_key`` (primary key: SHA-256 of the id's UTF-8, a fixed 32 bytes, so
an id of any length is indexable; a btree refuses keys over ~2.7 kB), ``conversation_id``
(the id as given, unindexed), ``context`` and ``meta`` (``JSON``, which keeps the exact text:
``-0.0``, key order, ``1e+20``, ``\\u0000`` and lone surrogates all come back as saved, as they
do from SQLite and Redis; ``JSONB`` would normalise them), ``version``, ``active_agent``,
``updated_at``. A read inside a write transaction (``load(..., connection=c)``) first takes
the conversation's advisory lock, as SQLite's ``BEGIN IMMEDIATE`` takes the file lock: a
writer holds the lock *before* it reads the version it will bump, so two writers can never
both read version 3 and both write 4.

Tables made by earlier versions (id as primary key, JSONB columns) are migrated in place the
first time a process opens the store.

Example (needs a server; the tests run it against a throwaway one)::

    store = open_context_store("postgresql://app@127.0.0.1/chat")
    store.save("conv-42", {"order_id": 7}, active_agent="Refunds")   # -> 1
    store.load("conv-42").context                                    # {'order_id': 7}
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...context_store import ContextRecord, RecordWriter
from ...errors import ContextVersionConflict
from ...urls import check_conversation_id, shown_url
from .engine import (
    ensure_schema,
    lock_conversation,
    read_connection,
    transaction_domain,
    unavailable_as_storage_error,
    write_transaction,
)

#: A constant, never built from user input.
TABLE = "swarm_context"
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (conversation_key BYTEA PRIMARY KEY, "
    "conversation_id TEXT NOT NULL, context JSON NOT NULL DEFAULT '{}', "
    "version BIGINT NOT NULL DEFAULT 0, active_agent TEXT, meta JSON NOT NULL DEFAULT '{}', "
    "updated_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    # Earlier layout: the id itself as primary key (long ids broke the btree) and JSONB.
    f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema =
            current_schema() AND table_name = '{TABLE}' AND column_name = 'conversation_key')
    THEN
        ALTER TABLE {TABLE} ADD COLUMN conversation_key BYTEA;
        UPDATE {TABLE} SET conversation_key = sha256(convert_to(conversation_id, 'UTF8'));
        ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS {TABLE}_pkey;
        ALTER TABLE {TABLE} ALTER COLUMN conversation_key SET NOT NULL;
        ALTER TABLE {TABLE} ADD PRIMARY KEY (conversation_key);
    END IF;
    IF (SELECT data_type FROM information_schema.columns WHERE table_schema =
            current_schema() AND table_name = '{TABLE}' AND column_name = 'context') = 'jsonb'
    THEN
        ALTER TABLE {TABLE} ALTER COLUMN context DROP DEFAULT,
            ALTER COLUMN meta DROP DEFAULT,
            ALTER COLUMN context TYPE JSON USING context::json,
            ALTER COLUMN meta TYPE JSON USING meta::json,
            ALTER COLUMN context SET DEFAULT '{{}}', ALTER COLUMN meta SET DEFAULT '{{}}';
    END IF;
    END $$""",
)
LOAD_SQL = (
    f"SELECT context::text, version, active_agent, meta::text FROM {TABLE} "
    "WHERE conversation_key = %s"
)
# A save is one conditional statement: the version check is its WHERE clause, so the row is
# never read first. RETURNING says whether it wrote (no row back: another version is stored).
# Under READ COMMITTED a concurrent writer of the same row waits for the first to commit and
# then re-checks the WHERE against the new row, so no update is lost even without the lock.
# A NULL context or meta keeps the stored one, so the context, the meta or both are one
# statement, and every write bumps the version (a stale conditional save of either conflicts).
_UPSERT = (
    f"INSERT INTO {TABLE} AS t (conversation_key, conversation_id, context, version, "
    "active_agent, meta) VALUES (%(key)s, %(cid)s, coalesce(%(context)s::json, '{{}}'), 1, "
    "%(agent)s, coalesce(%(meta)s::json, '{{}}')) ON CONFLICT (conversation_key) DO UPDATE "
    "SET context = coalesce(%(context)s::json, t.context), version = {version}, "
    "active_agent = coalesce(excluded.active_agent, t.active_agent), "
    "meta = coalesce(%(meta)s::json, t.meta), updated_at = now()"
)
#: No expected version: whatever is stored, plus one.
SAVE_SQL = _UPSERT.format(version="t.version + 1") + " RETURNING version"
#: Expected version 0: a first save (a meta-only row an earlier release wrote sits at 0 too).
SAVE_FIRST_SQL = _UPSERT.format(version="1") + " WHERE t.version = 0 RETURNING version"
#: Expected version v > 0: only if v is still stored.
SAVE_IF_SQL = (
    f"UPDATE {TABLE} SET context = coalesce(%(context)s::json, context), "
    "version = version + 1, active_agent = coalesce(%(agent)s, active_agent), "
    "meta = coalesce(%(meta)s::json, meta), updated_at = now() "
    "WHERE conversation_key = %(key)s AND version = %(expected)s RETURNING version"
)
VERSION_SQL = f"SELECT version FROM {TABLE} WHERE conversation_key = %s"
# Clearing keeps the row as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
DELETE_SQL = (
    f"UPDATE {TABLE} SET context = '{{}}', meta = '{{}}', active_agent = NULL, "
    "version = version + 1, updated_at = now() WHERE conversation_key = %s"
)

#: Earlier versions stored a document JSONB would have altered as ``{WRAPPER: text}``; such
#: rows are still read. A document that itself starts with this key is still wrapped, so a
#: user's own ``{"$swarmgraph_json": ...}`` is never mistaken for one.
WRAPPER = "$swarmgraph_json"


def conversation_key(conversation_id: str) -> bytes:
    """The fixed-size primary key of a conversation's row: SHA-256 of its UTF-8 bytes.

    Example:
        >>> len(conversation_key("c" * 100_000)), conversation_key("a") == conversation_key("a")
        (32, True)
    """
    return hashlib.sha256(conversation_id.encode("utf-8")).digest()


def to_stored(text: str) -> str:
    """JSON text as the column stores it: ``text`` itself (the ``JSON`` type keeps it byte
    for byte), wrapped only when it could be read as an old wrapped document.

    Example:
        >>> to_stored('{"a":-0.0}')
        '{"a":-0.0}'
        >>> own = '{"$swarmgraph_json":"x"}'
        >>> from_stored(to_stored(own))
        {'$swarmgraph_json': 'x'}
    """
    if text.startswith('{"' + WRAPPER):
        return json.dumps({WRAPPER: text})
    return text


def from_stored(text: str | None) -> dict:
    """Stored JSON text back to the dict that was saved.

    Example:
        >>> from_stored('{"b":-0.0,"a":1}'), from_stored(None)
        ({'b': -0.0, 'a': 1}, {})
    """
    value = decode_context(text)
    if len(value) == 1 and isinstance(value.get(WRAPPER), str):
        return json.loads(value[WRAPPER])
    return value


def _record(row: Any) -> ContextRecord:
    if row is None:
        return ContextRecord()
    return ContextRecord(from_stored(row[0]), int(row[1]), row[2], from_stored(row[3]))


class PostgresContextStore(RecordWriter):
    """One JSON context document per conversation id in Postgres; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.size_limit = size_limit
        self.transaction_domain = transaction_domain(url)
        ensure_schema(url, "context", SCHEMA)

    def __repr__(self) -> str:
        return f"PostgresContextStore(url={shown_url(self.url)!r})"

    def load(self, conversation_id: str, *, connection: Any = None) -> ContextRecord:
        """The stored record (an empty one at version 0 if nothing is stored).

        With ``connection`` (a write transaction) the conversation's lock is taken first.
        """
        cid = check_conversation_id(conversation_id)
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                lock_conversation(connection, cid)
                return _record(connection.execute(LOAD_SQL, (conversation_key(cid),)).fetchone())
        with read_connection(self.url) as conn:
            return _record(conn.execute(LOAD_SQL, (conversation_key(cid),)).fetchone())

    def _write(
        self,
        cid: str,
        encoded: str | None,
        meta: dict | None,
        agent: str | None,
        expected: int | None,
        connection: Any,
    ) -> int:
        params: dict[str, Any] = {
            "key": conversation_key(cid),
            "cid": cid,
            "context": None if encoded is None else to_stored(encoded),
            "meta": None if meta is None else to_stored(json.dumps(meta)),
            "agent": agent,
        }
        if expected is None:
            sql = SAVE_SQL
        else:
            sql, params["expected"] = (SAVE_FIRST_SQL if expected == 0 else SAVE_IF_SQL), expected
        if connection is None:
            with write_transaction(self.url, cid) as conn:
                return self._run(conn, sql, params)
        with unavailable_as_storage_error(self.url):
            return self._run(connection, sql, params)

    @staticmethod
    def _run(conn: Any, sql: str, params: dict[str, Any]) -> int:
        row = conn.execute(sql, params).fetchone()
        if row is None:
            stored = conn.execute(VERSION_SQL, (params["key"],)).fetchone()
            raise ContextVersionConflict(
                params["cid"], int(stored[0] if stored else 0), params["expected"]
            )
        return int(row[0])

    def delete(self, conversation_id: str, *, connection: Any = None) -> None:
        cid = check_conversation_id(conversation_id)
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                connection.execute(DELETE_SQL, (conversation_key(cid),))
            return
        with write_transaction(self.url, cid) as conn:
            conn.execute(DELETE_SQL, (conversation_key(cid),))

    def begin_write(self):
        """A transaction; :meth:`load` with its connection locks the conversation it reads."""
        return write_transaction(self.url)
