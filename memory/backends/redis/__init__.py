"""Redis (``redis://host:port/db[?ttl=seconds]``): langchain-community's list layout and a context
hash, one MULTI/EXEC per turn.
"""

from __future__ import annotations

from ...context_json import DEFAULT_SIZE_LIMIT
from .context_store import RedisContextStore
from .history import RedisChatHistory

__all__ = ["RedisChatHistory", "RedisContextStore", "open_context_store", "open_history"]


def open_history(url: str, session_id: str) -> RedisChatHistory:
    """The registry's entry point: the chat history of ``session_id`` at ``url``."""
    return RedisChatHistory(url, session_id)


def open_context_store(
    url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT
) -> RedisContextStore:
    """The registry's entry point: the context store at ``url``."""
    return RedisContextStore(url, size_limit=size_limit)
