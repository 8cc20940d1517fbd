"""PostgreSQL (``postgresql://...``): langchain-postgres' message table and our context table,
pooled, one advisory lock per conversation.
"""

from __future__ import annotations

from ...context_json import DEFAULT_SIZE_LIMIT
from .context_store import PostgresContextStore
from .history import PostgresChatHistory

__all__ = ["PostgresChatHistory", "PostgresContextStore", "open_context_store", "open_history"]


def open_history(url: str, session_id: str) -> PostgresChatHistory:
    """The registry's entry point: the chat history of ``session_id`` at ``url``."""
    return PostgresChatHistory(url, session_id)


def open_context_store(
    url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT
) -> PostgresContextStore:
    """The registry's entry point: the context store at ``url``."""
    return PostgresContextStore(url, size_limit=size_limit)
