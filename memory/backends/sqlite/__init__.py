"""SQLite (``sqlite:///path``): LangChain's ``SQLChatMessageHistory`` table plus our context table
in the same file, so one turn is one transaction.
"""

from __future__ import annotations

from ...context_json import DEFAULT_SIZE_LIMIT
from .context_store import SQLiteContextStore
from .history import SQLiteChatHistory

__all__ = ["SQLiteChatHistory", "SQLiteContextStore", "open_context_store", "open_history"]


def open_history(url: str, session_id: str) -> SQLiteChatHistory:
    """The registry's entry point: the chat history of ``session_id`` at ``url``."""
    return SQLiteChatHistory(url, session_id)


def open_context_store(
    url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT
) -> SQLiteContextStore:
    """The registry's entry point: the context store at ``url``."""
    return SQLiteContextStore(url, size_limit=size_limit)
