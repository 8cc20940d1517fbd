"""PostgreSQL (``postgresql://...``): messages, context and records, pooled, one advisory lock
per conversation (connections, locks and errors: :mod:`.engine`).

Tables, created on first use (those of earlier versions are migrated in place):

* ``swarm_messages`` (``id``, ``session_id``, ``message``, ``created_at``): langchain-postgres'
  ``PostgresChatMessageHistory`` columns, so upstream's class reads it. Any conversation id
  maps to a stable UUID (:func:`~.engine.conversation_uuid`, uuid5 over a fixed namespace),
  readable again in ``swarm_conversations``. ``message`` is ``JSON``, not ``JSONB``: JSON keeps
  the exact text (JSONB rejects ``\\u0000`` and lone surrogates, reorders keys and turns
  ``1e+20`` into an integer). An index on ``(session_id, id)`` makes the last ``k`` messages
  O(k).
* ``swarm_context``: keyed by ``conversation_key``, the SHA-256 of the id's UTF-8 (a fixed
  32 bytes, so an id of any length is indexable; a btree refuses keys over ~2.7 kB), with
  ``context`` and ``meta`` as ``JSON`` (``-0.0``, key order, ``1e+20`` come back as saved),
  ``version``, ``active_agent``, and ``message_count`` (how many messages the conversation
  holds, kept by every save, so a load knows where a turn's messages land without counting).
* ``swarm_records``: ``(conversation_key, kind, key) -> value`` (``JSON``).

A load is one statement (one snapshot, one round trip): the context row joined with an array
of the window's messages. A save is one transaction holding the conversation's advisory lock,
whose first write is the conditional update of the context row; a connection lost after
COMMIT was sent raises :class:`~swarmgraph.memory.errors.TurnOutcomeUnknown`.

Example (needs a server; the tests run it against a throwaway one)::

    store = open_store("postgresql://app@127.0.0.1/chat")
    store.save("conv-42", TurnWrite([HumanMessage("hi")], context={"order_id": 7}),
               expected_version=0)                                    # -> 1
    store.load("conv-42", window=Window(last=20)).context             # {'order_id': 7}
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...errors import ContextVersionConflict, RecordExists
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
from ...urls import shown_url
from .engine import (
    conversation_uuid,
    ensure_schema,
    read_connection,
    write_transaction,
)

#: Table names are constants, never built from user input.
MESSAGES = "swarm_messages"
NAMES = "swarm_conversations"
CONTEXT = "swarm_context"
RECORDS = "swarm_records"
#: A conversation's context row is rewritten by every turn (its version, and around each
#: effect call twice more): room left on each page keeps the new row version beside the old
#: (a HOT update: no index write, no bloat), and a lookup of a row by its key stays an index
#: scan, not a scan of a table the planner thinks is small.
FILL = "fillfactor=25"
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {MESSAGES} (id BIGSERIAL PRIMARY KEY, session_id UUID NOT NULL, "
    "message JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    f"CREATE INDEX IF NOT EXISTS ix_{MESSAGES}_session_id_id ON {MESSAGES} (session_id, id)",
    # conversation_id is not indexed: a btree refuses values over ~2.7 kB, and ids may be
    # longer; session_id (a uuid5 of the id) is the key.
    f"CREATE TABLE IF NOT EXISTS {NAMES} (session_id UUID PRIMARY KEY, "
    "conversation_id TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    # Only when an earlier layout left the constraint: an unconditional ALTER would take an
    # exclusive lock on every process start and deadlock with turns already running.
    f"""DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '{NAMES}_conversation_id_key')
    THEN
        ALTER TABLE {NAMES} DROP CONSTRAINT {NAMES}_conversation_id_key;
    END IF;
    END $$""",
    f"CREATE TABLE IF NOT EXISTS {CONTEXT} (conversation_key BYTEA PRIMARY KEY, "
    "conversation_id TEXT NOT NULL, context JSON NOT NULL DEFAULT '{}', "
    "version BIGINT NOT NULL DEFAULT 0, active_agent TEXT, meta JSON NOT NULL DEFAULT '{}', "
    f"updated_at TIMESTAMPTZ NOT NULL DEFAULT now(), message_count BIGINT) WITH ({FILL})",
    # Earlier layout: the id itself as primary key (long ids broke the btree) and JSONB.
    f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema =
            current_schema() AND table_name = '{CONTEXT}' AND column_name = 'conversation_key')
    THEN
        ALTER TABLE {CONTEXT} ADD COLUMN conversation_key BYTEA;
        UPDATE {CONTEXT} SET conversation_key = sha256(convert_to(conversation_id, 'UTF8'));
        ALTER TABLE {CONTEXT} DROP CONSTRAINT IF EXISTS {CONTEXT}_pkey;
        ALTER TABLE {CONTEXT} ALTER COLUMN conversation_key SET NOT NULL;
        ALTER TABLE {CONTEXT} ADD PRIMARY KEY (conversation_key);
    END IF;
    IF (SELECT data_type FROM information_schema.columns WHERE table_schema =
            current_schema() AND table_name = '{CONTEXT}' AND column_name = 'context') = 'jsonb'
    THEN
        ALTER TABLE {CONTEXT} ALTER COLUMN context DROP DEFAULT,
            ALTER COLUMN meta DROP DEFAULT,
            ALTER COLUMN context TYPE JSON USING context::json,
            ALTER COLUMN meta TYPE JSON USING meta::json,
            ALTER COLUMN context SET DEFAULT '{{}}', ALTER COLUMN meta SET DEFAULT '{{}}';
    END IF;
    END $$""",
    f"CREATE TABLE IF NOT EXISTS {RECORDS} (conversation_key BYTEA NOT NULL, "
    "kind TEXT NOT NULL, key TEXT NOT NULL, value JSON NOT NULL, "
    "updated_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (conversation_key, kind, key))",
    # How many messages the conversation holds, kept by every save (NULL in rows of earlier
    # versions until their next save, which counts them once). Only when missing: an ALTER
    # takes an exclusive lock even when it has nothing to do.
    f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema =
            current_schema() AND table_name = '{CONTEXT}' AND column_name = 'message_count')
    THEN
        ALTER TABLE {CONTEXT} ADD COLUMN message_count BIGINT;
    END IF;
    IF NOT coalesce((SELECT reloptions FROM pg_class WHERE oid = to_regclass('{CONTEXT}'))
            @> ARRAY['{FILL}'], false)
    THEN
        ALTER TABLE {CONTEXT} SET ({FILL});
    END IF;
    END $$""",
)
#: True when every table, column and index above is there as this version needs it: then no
#: DDL runs at all, so a role with rights on the tables but not owning them works.
SCHEMA_CURRENT = f"""SELECT
    to_regclass('{MESSAGES}') IS NOT NULL AND to_regclass('{NAMES}') IS NOT NULL
    AND to_regclass('{CONTEXT}') IS NOT NULL AND to_regclass('{RECORDS}') IS NOT NULL
    AND to_regclass('ix_{MESSAGES}_session_id_id') IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '{NAMES}_conversation_id_key')
    AND (SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()
         AND table_name = '{CONTEXT}' AND (column_name IN ('conversation_key', 'message_count')
         OR (column_name IN ('context', 'meta') AND data_type = 'json'))) = 4
    AND coalesce((SELECT reloptions FROM pg_class WHERE oid = to_regclass('{CONTEXT}'))
         @> ARRAY['{FILL}'], false)"""

# -- messages --------------------------------------------------------------------------------
# The window is picked by ids alone (an index-only scan of (session_id, id), newest first),
# then only those k rows are fetched. A plain ``... ORDER BY id DESC LIMIT k`` lets the
# planner walk the primary key backwards and filter, reading every newer row of every other
# conversation when a long conversation has gone quiet (20,000 rows for 20 in the tests).
WINDOW_IDS = (
    f"SELECT id FROM {MESSAGES} WHERE session_id = %s ORDER BY session_id DESC, id DESC LIMIT %s"
)
WINDOW_SQL = f"SELECT message::text FROM {MESSAGES} WHERE id IN ({WINDOW_IDS}) ORDER BY id"
ALL_SQL = f"SELECT message::text FROM {MESSAGES} WHERE session_id = %s ORDER BY id"
SINCE_SQL = f"{ALL_SQL} OFFSET %s"
COUNT_SQL = f"SELECT count(*) FROM {MESSAGES} WHERE session_id = %s"
INSERT_SQL = f"INSERT INTO {MESSAGES} (session_id, message) VALUES (%s, %s)"
NAME_SQL = (
    f"INSERT INTO {NAMES} (session_id, conversation_id) VALUES (%s, %s) "
    "ON CONFLICT (session_id) DO NOTHING"
)
LOOKUP_SQL = f"SELECT conversation_id FROM {NAMES} WHERE session_id = %s"
DELETE_MESSAGES_SQL = f"DELETE FROM {MESSAGES} WHERE session_id = %s"

# -- a load: the context row and a window of messages in one statement -------------------------
# The count is the stored counter: NULL (unknown) with no row yet, or a row of an earlier
# version not saved to since; a load never counts (O(k) stays O(k)).
_COUNT = "c.message_count"
# The records a load asks for: an index lookup per (kind, key) pair, as JSON text.
_WANTED = (
    "(SELECT json_agg(json_build_array(r.kind, r.key, r.value)) "
    f"FROM {RECORDS} r WHERE r.conversation_key = %(key)s "
    "AND r.kind = ANY(%(kinds)s) AND r.key = ANY(%(keys)s))::text"
)
_ROW = (
    "SELECT c.context::text, c.version, c.active_agent, c.meta::text, {messages}, "
    f"{_COUNT}, {{records}} "
    f"FROM (SELECT 1) AS one LEFT JOIN {CONTEXT} c ON c.conversation_key = %(key)s"
)
_IDS = WINDOW_IDS.replace("%s", "%(sid)s", 1).replace("%s", "%(limit)s")
_WINDOWS = {
    "none": "NULL::text[]",
    "all": f"ARRAY({ALL_SQL.replace('%s', '%(sid)s')})",
    "last": f"ARRAY(SELECT message::text FROM {MESSAGES} WHERE id IN ({_IDS}) ORDER BY id)",
    "since": f"ARRAY({ALL_SQL.replace('%s', '%(sid)s')} OFFSET %(start)s)",
}
#: Window kind -> the one statement of a load (``LOAD_WITH_RECORDS_SQL``: and some records).
LOAD_SQL = {kind: _ROW.format(messages=m, records="NULL::text") for kind, m in _WINDOWS.items()}
LOAD_WITH_RECORDS_SQL = {
    kind: _ROW.format(messages=m, records=_WANTED) for kind, m in _WINDOWS.items()
}

# -- the context row ---------------------------------------------------------------------------
# A save's first write is one conditional statement: the version check is its WHERE clause, so
# the row is never read first; RETURNING says whether it wrote. Under READ COMMITTED a
# concurrent writer of the row waits for the first to commit and then re-checks the WHERE
# against the new row, so no update is lost even without the lock. A NULL context or meta
# keeps the stored one, and every write bumps the version.
# The message counter moves with the messages the save appends (the first statement runs
# before they are inserted, so a count it has to make is the count before them).
_COUNTED = f"(SELECT count(*) FROM {MESSAGES} WHERE session_id = %(sid)s)"
_UPSERT = (
    f"INSERT INTO {CONTEXT} AS t (conversation_key, conversation_id, context, version, "
    "active_agent, meta, message_count) VALUES (%(key)s, %(cid)s, "
    "coalesce(%(context)s::json, '{{}}'), 1, %(agent)s, coalesce(%(meta)s::json, '{{}}'), "
    f"{_COUNTED} + %(added)s) ON CONFLICT (conversation_key) DO UPDATE "
    "SET context = coalesce(%(context)s::json, t.context), version = {version}, "
    "active_agent = coalesce(excluded.active_agent, t.active_agent), "
    "meta = coalesce(%(meta)s::json, t.meta), updated_at = now(), "
    "message_count = CASE WHEN t.message_count IS NOT NULL THEN t.message_count "
    f"ELSE {_COUNTED} END + %(added)s"
)
#: No expected version: whatever is stored, plus one.
SAVE_SQL = _UPSERT.format(version="t.version + 1") + " RETURNING version"
#: Expected version 0: a first save (a meta-only row an earlier release wrote sits at 0 too).
SAVE_FIRST_SQL = _UPSERT.format(version="1") + " WHERE t.version = 0 RETURNING version"
#: Expected version v > 0: only if v is still stored.
SAVE_IF_SQL = (
    f"UPDATE {CONTEXT} SET context = coalesce(%(context)s::json, context), "
    "version = version + 1, active_agent = coalesce(%(agent)s, active_agent), "
    "meta = coalesce(%(meta)s::json, meta), updated_at = now(), "
    "message_count = CASE WHEN message_count IS NOT NULL THEN message_count "
    f"ELSE {_COUNTED} END + %(added)s "
    "WHERE conversation_key = %(key)s AND version = %(expected)s RETURNING version"
)
#: An append of messages alone moves the counter only (an unknown one stays unknown).
COUNT_APPENDED_SQL = (
    f"UPDATE {CONTEXT} SET message_count = message_count + %s WHERE conversation_key = %s"
)
ZERO_COUNT_SQL = f"UPDATE {CONTEXT} SET message_count = 0 WHERE conversation_key = %s"
VERSION_SQL = f"SELECT version FROM {CONTEXT} WHERE conversation_key = %s"
# Clearing keeps the row as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
TOMBSTONE_SQL = (
    f"UPDATE {CONTEXT} SET context = '{{}}', meta = '{{}}', active_agent = NULL, "
    "version = version + 1, updated_at = now() WHERE conversation_key = %s"
)

# -- records -----------------------------------------------------------------------------------
PUT_SQL = (
    f"INSERT INTO {RECORDS} AS r (conversation_key, kind, key, value) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (conversation_key, kind, key) DO UPDATE SET value = excluded.value, "
    "updated_at = now()"
)
PUT_IF_ABSENT_SQL = (
    f"INSERT INTO {RECORDS} (conversation_key, kind, key, value) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT DO NOTHING RETURNING 1"
)
RECORD_SQL = (
    f"SELECT value::text FROM {RECORDS} WHERE conversation_key = %s AND kind = %s AND key = %s"
)
RECORDS_SQL = f"SELECT key, value::text FROM {RECORDS} WHERE conversation_key = %s AND kind = %s"
SOME_RECORDS_SQL = f"{RECORDS_SQL} AND key = ANY(%s)"
DELETE_RECORDS_SQL = f"DELETE FROM {RECORDS} WHERE conversation_key = %s"

# -- the listing -------------------------------------------------------------------------------
# Every conversation with a context row or messages (named in swarm_conversations whenever
# messages are written): its agent, message count and last change, the later of the context
# row's and the newest message's time.
CONVERSATIONS_SQL = (
    f"WITH m AS (SELECT session_id, count(*) AS n, max(created_at) AS at FROM {MESSAGES} "
    "GROUP BY session_id), "
    f"named AS (SELECT n.conversation_id, m.n, m.at FROM m JOIN {NAMES} n USING (session_id)) "
    "SELECT coalesce(c.conversation_id, named.conversation_id), c.active_agent, "
    "coalesce(named.n, 0), extract(epoch FROM greatest(c.updated_at, named.at))::float8 "
    f"FROM {CONTEXT} c FULL OUTER JOIN named ON named.conversation_id = c.conversation_id"
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


def conversation_id_of(url: str, session_uuid: uuid.UUID) -> str | None:
    """The readable conversation id a stored UUID stands for (``None`` if never written)."""
    with read_connection(url) as conn:
        row = conn.execute(LOOKUP_SQL, (session_uuid,)).fetchone()
    return None if row is None else row[0]


def _count(conn: Any, sid: uuid.UUID) -> int:
    row = conn.execute(COUNT_SQL, (sid,)).fetchone()
    return int(row[0]) if row else 0


def _snapshot(row: Any, texts: Sequence[str | bytes], start: int | None) -> Snapshot:
    messages = decode_messages(texts)
    count = None if row[5] is None else int(row[5])
    records = {(kind, key): json.dumps(value) for kind, key, value in json.loads(row[6] or "[]")}
    if row[1] is None:  # no context row (the LEFT JOIN found none)
        return Snapshot(messages=messages, start=start, count=count, records=records)
    context, meta = from_stored(row[0]), from_stored(row[3])
    return Snapshot(context, int(row[1]), row[2], meta, messages, start, count, records)


class PostgresStore(StoreBase):
    """Conversations in one Postgres database; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.size_limit = size_limit
        ensure_schema(url, SCHEMA, SCHEMA_CURRENT, (MESSAGES, NAMES, CONTEXT, RECORDS))

    def __repr__(self) -> str:
        return f"PostgresStore(url={shown_url(self.url)!r})"

    def _load(self, cid: str, window: Window, records: list[tuple[str, str]]) -> Snapshot:
        params: dict[str, Any] = {"key": conversation_key(cid), "sid": conversation_uuid(cid)}
        if window.last is not None:
            kind, params["limit"] = ("last", window.last) if window.last else ("none", 0)
        else:
            kind, params["start"] = ("since", window.start) if window.start else ("all", 0)
        if records:
            params["kinds"] = sorted({kind for kind, _ in records})
            params["keys"] = sorted({key for _, key in records})
        with read_connection(self.url) as conn:
            sql = LOAD_WITH_RECORDS_SQL[kind] if records else LOAD_SQL[kind]
            row = conn.execute(sql, params).fetchone()
            assert row is not None  # LEFT JOIN from one row: always one row back
            read: Sequence[str | bytes] = row[4] or []
            if kind != "since":
                snapshot = _snapshot(row, read, None if kind == "last" else 0)
            else:
                sid = params["sid"]
                texts, start = since(  # a second statement only if the read came back empty
                    window.start,
                    lambda n: read if n else self._column(conn, ALL_SQL, (sid,)),
                    lambda: int(row[5]) if row[5] is not None else _count(conn, sid),
                )
                snapshot = _snapshot(row, texts, start)
        # Pairs of a kind and a key asked for separately are not asked for together.
        snapshot.records = {pair: v for pair, v in snapshot.records.items() if pair in records}
        return snapshot

    @staticmethod
    def _column(conn: Any, sql: str, params: tuple) -> list[str | bytes]:
        return [row[0] for row in conn.execute(sql, params).fetchall()]

    def _save(self, cid: str, write: EncodedWrite, expected: int | None) -> int:
        with write_transaction(self.url, cid) as conn:
            return self._write(conn, cid, write, expected)

    def _write(self, conn: Any, cid: str, write: EncodedWrite, expected: int | None) -> int:
        """Every statement of a save, inside its transaction (which holds the lock): the
        conditional context write first, then records, then messages."""
        key = conversation_key(cid)
        if write.appends_only(expected):
            self._insert(conn, cid, write.messages)
            conn.execute(COUNT_APPENDED_SQL, (len(write.messages), key))
            stored = conn.execute(VERSION_SQL, (key,)).fetchone()
            return int(stored[0]) if stored else 0
        params: dict[str, Any] = {
            "key": key,
            "sid": conversation_uuid(cid),
            "added": len(write.messages),
            "cid": cid,
            "context": None if write.context is None else to_stored(write.context),
            "meta": None if write.meta is None else to_stored(write.meta),
            "agent": write.active_agent,
        }
        if expected is None:
            sql = SAVE_SQL
        else:
            sql, params["expected"] = (SAVE_FIRST_SQL if expected == 0 else SAVE_IF_SQL), expected
        with conn.cursor() as cursor:
            row = cursor.execute(sql, params).fetchone()
            if row is None:
                stored = cursor.execute(VERSION_SQL, (key,)).fetchone()
                raise ContextVersionConflict(
                    cid, int(stored[0] if stored else 0), params["expected"]
                )
            for record in write.records:
                values = (key, record.kind, record.key, record.value)
                if not record.if_absent:
                    cursor.execute(PUT_SQL, values)
                elif cursor.execute(PUT_IF_ABSENT_SQL, values).fetchone() is None:
                    found = cursor.execute(RECORD_SQL, values[:3]).fetchone()
                    raise RecordExists(cid, record.kind, record.key, json.loads(found[0]))
        self._insert(conn, cid, write.messages)
        return int(row[0])

    @staticmethod
    def _insert(conn: Any, cid: str, messages: list[str]) -> None:
        if not messages:
            return
        sid = conversation_uuid(cid)
        with conn.cursor() as cursor:
            # Every write names its UUID (a no-op after the first): a rolled-back first turn
            # must not leave later turns without a readable id.
            cursor.execute(NAME_SQL, (sid, cid))
            cursor.executemany(INSERT_SQL, [(sid, m) for m in messages])

    def _clear(self, cid: str, only: Half | None) -> None:
        key = conversation_key(cid)
        with write_transaction(self.url, cid) as conn:
            if only != "context":
                conn.execute(DELETE_MESSAGES_SQL, (conversation_uuid(cid),))
                conn.execute(ZERO_COUNT_SQL, (key,))
            if only != "messages":
                conn.execute(TOMBSTONE_SQL, (key,))
                conn.execute(DELETE_RECORDS_SQL, (key,))

    def _messages(self, cid: str, limit: int | None) -> list[str | bytes]:
        sid = conversation_uuid(cid)
        with read_connection(self.url) as conn:
            if limit is None:
                return self._column(conn, ALL_SQL, (sid,))
            return self._column(conn, WINDOW_SQL, (sid, limit))

    def _count(self, cid: str) -> int:
        with read_connection(self.url) as conn:
            return _count(conn, conversation_uuid(cid))

    def _records(self, cid: str, kind: str, keys: list[str] | None) -> dict[str, str]:
        key = conversation_key(cid)
        with read_connection(self.url) as conn:
            if keys is None:
                rows = conn.execute(RECORDS_SQL, (key, kind)).fetchall()
            else:
                rows = conn.execute(SOME_RECORDS_SQL, (key, kind, keys)).fetchall()
        return {row[0]: row[1] for row in rows}

    def _summaries(self) -> list[ConversationSummary]:
        with read_connection(self.url) as conn:
            rows = conn.execute(CONVERSATIONS_SQL).fetchall()
        return [ConversationSummary(row[0], row[1], int(row[2]), row[3]) for row in rows]


def open_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> PostgresStore:
    """The registry's entry point: the conversations in the database ``url`` names."""
    return PostgresStore(url, size_limit=size_limit)
