"""Postgres context store: table ``swarm_context``, one JSONB document and a version per id.

Columns: ``conversation_id`` (text primary key, the id as given), ``context`` and ``meta``
(JSONB), ``version``, ``active_agent``, ``updated_at``. A read inside a write transaction
(``load(..., connection=c)``) first takes the conversation's advisory lock, as SQLite's
``BEGIN IMMEDIATE`` takes the file lock: a writer holds the lock *before* it reads the
version it will bump, so two writers can never both read version 3 and both write 4.

JSONB normalises what it stores (it rejects ``\\u0000`` and lone surrogates and reads
``1e+20`` back as an integer). A document that would not come back exactly is stored as its
JSON text inside ``{"$swarmgraph_json": "..."}`` instead, and unwrapped on load, so every
backend returns the same dict.

Example (needs a server; the tests run it against a throwaway one)::

    store = open_context_store("postgresql://app@127.0.0.1/chat")
    store.save("conv-42", {"order_id": 7}, active_agent="Refunds")   # -> 1
    store.load("conv-42").context                                    # {'order_id': 7}
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...context_json import DEFAULT_SIZE_LIMIT, encode_context
from ...context_store import ContextRecord
from ...errors import ContextVersionConflict
from ...urls import check_conversation_id
from .engine import (
    describe,
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
    f"CREATE TABLE IF NOT EXISTS {TABLE} (conversation_id TEXT PRIMARY KEY, "
    "context JSONB NOT NULL DEFAULT '{}', version BIGINT NOT NULL DEFAULT 0, "
    "active_agent TEXT, meta JSONB NOT NULL DEFAULT '{}', "
    "updated_at TIMESTAMPTZ NOT NULL DEFAULT now())",
)
LOAD_SQL = f"SELECT context, version, active_agent, meta FROM {TABLE} WHERE conversation_id = %s"
# A save is one conditional statement: the version check is its WHERE clause, so the row is
# never read first. RETURNING says whether it wrote (no row back: another version is stored).
# Under READ COMMITTED a concurrent writer of the same row waits for the first to commit and
# then re-checks the WHERE against the new row, so no update is lost even without the lock.
_UPSERT = (
    f"INSERT INTO {TABLE} AS t (conversation_id, context, version, active_agent) "
    "VALUES (%(cid)s, %(context)s::jsonb, 1, %(agent)s) ON CONFLICT (conversation_id) DO UPDATE "
    "SET context = excluded.context, version = {version}, "
    "active_agent = coalesce(excluded.active_agent, t.active_agent), updated_at = now()"
)
#: No expected version: whatever is stored, plus one.
SAVE_SQL = _UPSERT.format(version="t.version + 1") + " RETURNING version"
#: Expected version 0: a first save (a meta-only row sits at version 0 too).
SAVE_FIRST_SQL = _UPSERT.format(version="1") + " WHERE t.version = 0 RETURNING version"
#: Expected version v > 0: only if v is still stored.
SAVE_IF_SQL = (
    f"UPDATE {TABLE} SET context = %(context)s::jsonb, version = version + 1, "
    "active_agent = coalesce(%(agent)s, active_agent), updated_at = now() "
    "WHERE conversation_id = %(cid)s AND version = %(expected)s RETURNING version"
)
VERSION_SQL = f"SELECT version FROM {TABLE} WHERE conversation_id = %s"
META_SQL = (
    f"INSERT INTO {TABLE} (conversation_id, meta) VALUES (%s, %s::jsonb) "
    "ON CONFLICT (conversation_id) DO UPDATE SET meta = excluded.meta, updated_at = now()"
)
DELETE_SQL = f"DELETE FROM {TABLE} WHERE conversation_id = %s"

WRAPPER = "$swarmgraph_json"
# NUL and surrogate escapes JSONB refuses; exponent numbers it would read back as integers.
_JSONB_UNSAFE = re.compile(r"\\u0000|\\ud[89a-f][0-9a-f]{2}|\d[eE]\+", re.IGNORECASE)


def to_jsonb(text: str) -> str:
    """JSON text JSONB stores exactly: ``text`` itself, or ``text`` wrapped as a string.

    Example:
        >>> to_jsonb('{"a":1}'), to_jsonb('{"big":1e+20}')
        ('{"a":1}', '{"$swarmgraph_json": "{\\\\"big\\\\":1e+20}"}')
    """
    if _JSONB_UNSAFE.search(text) or text.startswith('{"' + WRAPPER):
        return json.dumps({WRAPPER: text})
    return text


def from_jsonb(value: Any) -> dict:
    """A stored JSONB value (parsed by psycopg) back to the dict that was saved.

    Example:
        >>> from_jsonb({"$swarmgraph_json": '{"big":1e+20}'}), from_jsonb(None)
        ({'big': 1e+20}, {})
    """
    if not value:
        return {}
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(WRAPPER), str):
        return json.loads(value[WRAPPER])
    return value


def _record(row: Any) -> ContextRecord:
    if row is None:
        return ContextRecord()
    return ContextRecord(from_jsonb(row[0]), int(row[1]), row[2], from_jsonb(row[3]))


class PostgresContextStore:
    """One JSONB context document per conversation id in Postgres; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.size_limit = size_limit
        self.transaction_domain = transaction_domain(url)
        ensure_schema(url, "context", SCHEMA)

    def __repr__(self) -> str:
        return f"PostgresContextStore(url={describe(self.url)!r})"

    def load(self, conversation_id: str, *, connection: Any = None) -> ContextRecord:
        """The stored record (an empty one at version 0 if nothing is stored).

        With ``connection`` (a write transaction) the conversation's lock is taken first.
        """
        cid = check_conversation_id(conversation_id)
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                lock_conversation(connection, cid)
                return _record(connection.execute(LOAD_SQL, (cid,)).fetchone())
        with read_connection(self.url) as conn:
            return _record(conn.execute(LOAD_SQL, (cid,)).fetchone())

    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: Any = None,
    ) -> int:
        """Store ``context`` (and ``active_agent`` unless None); return the new version."""
        cid = check_conversation_id(conversation_id)
        document = to_jsonb(encode_context(context, size_limit=self.size_limit))
        if connection is None:
            with write_transaction(self.url, cid) as conn:
                return self._save(conn, cid, document, expected_version, active_agent)
        with unavailable_as_storage_error(self.url):
            return self._save(connection, cid, document, expected_version, active_agent)

    @staticmethod
    def _save(conn: Any, cid: str, document: str, expected: int | None, agent) -> int:
        params: dict[str, Any] = {"cid": cid, "context": document, "agent": agent}
        if expected is None:
            sql = SAVE_SQL
        else:
            sql, params["expected"] = (SAVE_FIRST_SQL if expected == 0 else SAVE_IF_SQL), expected
        row = conn.execute(sql, params).fetchone()
        if row is None:
            stored = conn.execute(VERSION_SQL, (cid,)).fetchone()
            raise ContextVersionConflict(cid, int(stored[0] if stored else 0), int(expected or 0))
        return int(row[0])

    def save_meta(self, conversation_id: str, meta: dict, *, connection: Any = None) -> None:
        """Replace the record's ``meta`` dict (context and version untouched)."""
        params = (check_conversation_id(conversation_id), to_jsonb(json.dumps(meta)))
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                connection.execute(META_SQL, params)
            return
        with write_transaction(self.url, conversation_id) as conn:
            conn.execute(META_SQL, params)

    def delete(self, conversation_id: str, *, connection: Any = None) -> None:
        cid = check_conversation_id(conversation_id)
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                connection.execute(DELETE_SQL, (cid,))
            return
        with write_transaction(self.url, cid) as conn:
            conn.execute(DELETE_SQL, (cid,))

    def begin_write(self):
        """A transaction; :meth:`load` with its connection locks the conversation it reads."""
        return write_transaction(self.url)
