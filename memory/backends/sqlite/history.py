"""SQLite chat history: LangChain's ``SQLChatMessageHistory`` with windowed, indexed reads.

The table is upstream's (``message_store``: ``id``, ``session_id``, ``message`` JSON), so files
stay readable by plain LangChain. We add what it lacks: an index on ``(session_id, id)`` so the
last ``k`` messages cost O(k) (``ORDER BY id DESC LIMIT k`` walks the index backwards), writes
under ``BEGIN IMMEDIATE`` on the shared per-file engine, and async methods that work alongside
the sync ones (upstream picks one mode per object): each is one thread hop to its sync twin.

Example:
    >>> import os, tempfile
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
    >>> history = SQLiteChatHistory(url, "conv-42")
    >>> history.add_messages([HumanMessage("refund order 7"), AIMessage("Done.", name="Refunds")])
    >>> [m.content for m in history.get_messages(limit=1)]
    ['Done.']
    >>> import asyncio
    >>> [m.type for m in asyncio.run(history.aget_messages())]
    ['human', 'ai']
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core._api import LangChainDeprecationWarning
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from sqlalchemy import text
from sqlalchemy.engine import Connection

from ...history import AsyncByThread, check_limit
from ...urls import check_conversation_id, sqlite_path
from .engine import read_only, sync_engine, write_transaction

with warnings.catch_warnings():
    # langchain-community warns at import that it is being sunset; the class still works and
    # stays behind our ChatHistory interface, so users should not see that warning.
    warnings.filterwarnings("ignore", message=".*langchain-community.*", category=Warning)
    from langchain_community.chat_message_histories import SQLChatMessageHistory

#: Upstream's default table; never built from user input.
TABLE = "message_store"
INDEX_SQL = f"CREATE INDEX IF NOT EXISTS ix_{TABLE}_session_id_id ON {TABLE} (session_id, id)"
WINDOW_SQL = f"SELECT message FROM {TABLE} WHERE session_id = :sid ORDER BY id DESC LIMIT :limit"
ALL_SQL = f"SELECT message FROM {TABLE} WHERE session_id = :sid ORDER BY id"
# OFFSET walks index entries without decoding the skipped messages.
SINCE_SQL = f"{ALL_SQL} LIMIT -1 OFFSET :position"
COUNT_SQL = f"SELECT count(*) FROM {TABLE} WHERE session_id = :sid"
INSERT_SQL = f"INSERT INTO {TABLE} (session_id, message) VALUES (:sid, :message)"
DELETE_SQL = f"DELETE FROM {TABLE} WHERE session_id = :sid"
CREATE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} "
    "(id INTEGER NOT NULL PRIMARY KEY, session_id TEXT, message TEXT)"
)

_schema_ready: set[Any] = set()


def encode_message(message: BaseMessage) -> str:
    """One message as the JSON text upstream stores (``message_to_dict``)."""
    return json.dumps(message_to_dict(message))


def decode_messages(rows: Sequence[str]) -> list[BaseMessage]:
    """Stored JSON texts back to messages (``messages_from_dict``)."""
    return messages_from_dict([json.loads(row) for row in rows])


class SQLiteChatHistory(AsyncByThread, SQLChatMessageHistory):
    """One conversation's messages in a SQLite file; see the module docstring."""

    def __init__(self, url: str, session_id: str) -> None:
        check_conversation_id(session_id)
        self.path = sqlite_path(url)
        engine = sync_engine(self.path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangChainDeprecationWarning)
            super().__init__(session_id=session_id, connection=engine)
        self.transaction_domain = engine
        if engine not in _schema_ready and not read_only(engine):
            with write_transaction(engine) as conn:
                conn.execute(text(CREATE_SQL))
                conn.execute(text(INDEX_SQL))
            _schema_ready.add(engine)

    def _create_table_if_not_exists(self) -> None:
        # Upstream runs metadata.create_all per object; our DDL runs once per engine instead.
        self._table_created = True

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self.get_messages()

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]:  # type: ignore[override]
        """The conversation in order; with ``limit`` only the last ``limit`` messages."""
        limit = check_limit(limit)
        with self.engine.connect() as conn:
            return decode_messages(self._select(conn.execute, limit))

    def _select(self, execute: Any, limit: int | None) -> list[str]:
        if limit is None:
            return [row[0] for row in execute(text(ALL_SQL), {"sid": self.session_id})]
        if limit == 0:
            return []
        rows = execute(text(WINDOW_SQL), {"sid": self.session_id, "limit": limit})
        return [row[0] for row in rows][::-1]

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def add_messages(  # type: ignore[override]
        self, messages: Sequence[BaseMessage], *, connection: Connection | None = None
    ) -> None:
        """Append ``messages`` in one transaction (or inside ``connection``'s)."""
        params = [{"sid": self.session_id, "message": encode_message(m)} for m in messages]
        if not params:
            return
        if connection is not None:
            connection.execute(text(INSERT_SQL), params)
            return
        with write_transaction(self.engine) as conn:
            conn.execute(text(INSERT_SQL), params)

    def get_messages_since(self, position: int) -> list[BaseMessage]:
        """``messages[position:]`` in one statement (a consistent snapshot)."""
        params = {"sid": self.session_id, "position": max(int(position), 0)}
        with self.engine.connect() as conn:
            return decode_messages([row[0] for row in conn.execute(text(SINCE_SQL), params)])

    def count(self) -> int:
        """How many messages the conversation holds."""
        with self.engine.connect() as conn:
            return int(conn.execute(text(COUNT_SQL), {"sid": self.session_id}).scalar_one())

    def clear(self, *, connection: Connection | None = None) -> None:  # type: ignore[override]
        if connection is not None:
            connection.execute(text(DELETE_SQL), {"sid": self.session_id})
            return
        with write_transaction(self.engine) as conn:
            conn.execute(text(DELETE_SQL), {"sid": self.session_id})

    def begin_write(self):
        """A ``BEGIN IMMEDIATE`` transaction other stores on this file can join."""
        return write_transaction(self.engine)
