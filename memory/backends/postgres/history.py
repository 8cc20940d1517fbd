"""Postgres chat history: langchain-postgres' ``PostgresChatMessageHistory`` behind our protocol.

Upstream keys rows by a UUID ``session_id``; any conversation id maps to a stable UUID
(:func:`~.engine.conversation_uuid`, uuid5 over a fixed namespace) and the
original id stays readable in ``swarm_conversations`` (``session_id`` -> ``conversation_id``).
The message table has upstream's columns (``id``, ``session_id``, ``message``,
``created_at``), so upstream's class can read it, with three changes:

* ``message`` is ``JSON``, not ``JSONB``: JSON keeps the exact text, so every message
  round-trips as written (JSONB rejects ``\\u0000`` and lone surrogates, reorders keys and
  turns ``1e+20`` into an integer);
* an index on ``(session_id, id)``, so the last ``k`` messages cost O(k):
  ``ORDER BY id DESC LIMIT k`` walks it backwards;
* connections come from the process-wide pool per call instead of one held per object, and
  every write holds the conversation's advisory lock (see :mod:`.engine`).

Example (needs a server; the tests run it against a throwaway one)::

    history = open_history("postgresql://app@127.0.0.1/chat", "conv-42")
    history.add_messages([HumanMessage("refund order 7")])
    history.get_messages(limit=20)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from langchain_postgres import PostgresChatMessageHistory

from ...history import AsyncByThread, check_limit
from ...urls import check_conversation_id, shown_url
from .engine import (
    conversation_uuid,
    ensure_schema,
    read_connection,
    transaction_domain,
    unavailable_as_storage_error,
    write_transaction,
)

#: Table names are constants, never built from user input.
TABLE = "swarm_messages"
ID_TABLE = "swarm_conversations"
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (id BIGSERIAL PRIMARY KEY, session_id UUID NOT NULL, "
    "message JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    f"CREATE INDEX IF NOT EXISTS ix_{TABLE}_session_id_id ON {TABLE} (session_id, id)",
    # conversation_id is not indexed: a btree refuses values over ~2.7 kB, and ids may be
    # longer; session_id (a uuid5 of the id) is the key.
    f"CREATE TABLE IF NOT EXISTS {ID_TABLE} (session_id UUID PRIMARY KEY, "
    "conversation_id TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    # Only when an earlier layout left the constraint: an unconditional ALTER would take an
    # exclusive lock on every process start and deadlock with turns already running.
    f"""DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '{ID_TABLE}_conversation_id_key')
    THEN
        ALTER TABLE {ID_TABLE} DROP CONSTRAINT {ID_TABLE}_conversation_id_key;
    END IF;
    END $$""",
)
# The window is picked by ids alone (an index-only scan of (session_id, id), newest first),
# then only those k rows are fetched. A plain ``... ORDER BY id DESC LIMIT k`` lets the
# planner walk the primary key backwards and filter, reading every newer row of every other
# conversation when a long conversation has gone quiet (20,000 rows for 20 in the tests).
WINDOW_SQL = (
    f"SELECT message FROM {TABLE} WHERE id IN (SELECT id FROM {TABLE} WHERE session_id = %s "
    "ORDER BY session_id DESC, id DESC LIMIT %s) ORDER BY id DESC"
)
ALL_SQL = f"SELECT message FROM {TABLE} WHERE session_id = %s ORDER BY id"
SINCE_SQL = f"{ALL_SQL} OFFSET %s"
COUNT_SQL = f"SELECT count(*) FROM {TABLE} WHERE session_id = %s"
INSERT_SQL = f"INSERT INTO {TABLE} (session_id, message) VALUES (%s, %s)"
DELETE_SQL = f"DELETE FROM {TABLE} WHERE session_id = %s"
NAME_SQL = (
    f"INSERT INTO {ID_TABLE} (session_id, conversation_id) VALUES (%s, %s) "
    "ON CONFLICT (session_id) DO NOTHING"
)
LOOKUP_SQL = f"SELECT conversation_id FROM {ID_TABLE} WHERE session_id = %s"


def encode_message(message: BaseMessage) -> str:
    """One message as upstream's JSON (ASCII-escaped, so any string survives a JSON column)."""
    return json.dumps(message_to_dict(message))


class PostgresChatHistory(AsyncByThread, PostgresChatMessageHistory):
    """One conversation's messages in Postgres; see the module docstring."""

    def __init__(self, url: str, session_id: str) -> None:
        self.conversation_id = check_conversation_id(session_id)
        self.url = url
        self.session_uuid = conversation_uuid(session_id)
        # Upstream insists on a connection object for the object's whole life; we borrow one
        # per call from the pool instead: it gets a placeholder (its UUID and table-name checks
        # still run), every method that would use it is overridden, and the attribute is
        # cleared so a forgotten override fails loudly, not on a stale socket.
        placeholder: Any = object()
        super().__init__(TABLE, str(self.session_uuid), sync_connection=placeholder)
        self._connection = None
        self.transaction_domain = transaction_domain(url)
        ensure_schema(url, "history", SCHEMA)

    def __repr__(self) -> str:
        return f"PostgresChatHistory({self.conversation_id!r}, url={shown_url(self.url)!r})"

    @staticmethod
    def lookup(url: str, session_uuid: Any) -> str | None:
        """The readable conversation id a stored UUID stands for (``None`` if never written)."""
        with read_connection(url) as conn:
            row = conn.execute(LOOKUP_SQL, (session_uuid,)).fetchone()
        return None if row is None else row[0]

    def _rows(self, messages: Sequence[BaseMessage]) -> list[tuple[Any, str]]:
        return [(self.session_uuid, encode_message(m)) for m in messages]

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self.get_messages()

    @messages.setter
    def messages(self, value: list[BaseMessage]) -> None:
        with self.begin_write() as conn:
            self.clear(connection=conn)
            self.add_messages(value, connection=conn)

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]:  # type: ignore[override]
        """The conversation in order; with ``limit`` only the last ``limit`` messages."""
        limit = check_limit(limit)
        if limit == 0:
            return []
        with read_connection(self.url) as conn:
            if limit is None:
                rows = conn.execute(ALL_SQL, (self.session_uuid,)).fetchall()
            else:
                rows = conn.execute(WINDOW_SQL, (self.session_uuid, limit)).fetchall()[::-1]
        return messages_from_dict([row[0] for row in rows])

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def add_messages(  # type: ignore[override]
        self, messages: Sequence[BaseMessage], *, connection: Any = None
    ) -> None:
        """Append ``messages`` in one transaction (or inside ``connection``'s)."""
        rows = self._rows(messages)
        if not rows:
            return
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                self._insert(connection, rows)
            return
        with self.begin_write() as conn:
            self._insert(conn, rows)

    def _insert(self, conn: Any, rows: list) -> None:
        with conn.cursor() as cursor:
            # Every write names its UUID (a no-op after the first): a rolled-back first turn
            # must not leave later turns without a readable id.
            cursor.execute(NAME_SQL, (self.session_uuid, self.conversation_id))
            cursor.executemany(INSERT_SQL, rows)

    def get_messages_since(self, position: int) -> list[BaseMessage]:
        """``messages[position:]`` in one statement (a consistent snapshot)."""
        with read_connection(self.url) as conn:
            rows = conn.execute(SINCE_SQL, (self.session_uuid, max(int(position), 0))).fetchall()
        return messages_from_dict([row[0] for row in rows])

    def count(self) -> int:
        """How many messages the conversation holds."""
        with read_connection(self.url) as conn:
            return int(conn.execute(COUNT_SQL, (self.session_uuid,)).fetchone()[0])

    def clear(self, *, connection: Any = None) -> None:  # type: ignore[override]
        if connection is not None:
            with unavailable_as_storage_error(self.url):
                connection.execute(DELETE_SQL, (self.session_uuid,))
            return
        with self.begin_write() as conn:
            conn.execute(DELETE_SQL, (self.session_uuid,))

    def begin_write(self):
        """A transaction holding this conversation's lock; the context store can join it."""
        return write_transaction(self.url, self.conversation_id)
