"""Chat histories: "what was said", behind one small interface and one URL-dispatching factory.

:func:`open_history` returns a LangChain ``BaseChatMessageHistory`` that also satisfies
:class:`ChatHistory`, our protocol: read the last ``limit`` messages, append, count, clear,
sync and async. Backends keep LangChain's (partly deprecated) classes behind it, so swapping
one needs no change in :class:`memory.Session`.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> history = open_history("memory://doctest-history", "conv-1")
    >>> history.add_messages([HumanMessage("hi"), AIMessage("hello", name="Triage")])
    >>> [m.content for m in history.get_messages(limit=1)], history.count()
    (['hello'], 2)
    >>> history.clear()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, ToolMessage

from memory.urls import SUPPORTED_SCHEMES, check_conversation_id, redact_url, url_scheme


@runtime_checkable
class ChatHistory(Protocol):
    """What :class:`memory.Session` needs from a message store.

    ``transaction_domain`` is an object shared by every store that can join one transaction
    (the SQLite engine of a file, the lock of an in-process namespace), or ``None``.
    ``add_messages(..., connection=c)`` writes inside a transaction opened by
    ``begin_write()`` on any store of the same domain. ``get_messages_since(n)`` is
    ``messages[n:]`` in one read (the summary policy's "everything not yet summarised").
    """

    transaction_domain: Any

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]: ...
    def add_messages(self, messages: Sequence[BaseMessage], *, connection: Any = None) -> None: ...
    def get_messages_since(self, position: int) -> list[BaseMessage]: ...
    def count(self) -> int: ...
    def clear(self, *, connection: Any = None) -> None: ...
    def begin_write(self) -> Any: ...
    async def aget_messages(self, limit: int | None = None) -> list[BaseMessage]: ...
    async def aadd_messages(
        self, messages: Sequence[BaseMessage], *, connection: Any = None
    ) -> None: ...
    async def aget_messages_since(self, position: int) -> list[BaseMessage]: ...
    async def acount(self) -> int: ...
    async def aclear(self, *, connection: Any = None) -> None: ...
    def abegin_write(self) -> Any: ...


def check_limit(limit: int | None) -> int | None:
    """Validate a window size: ``None`` (everything) or an int >= 0."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be None or an int >= 0, got {limit!r}")
    return limit


def drop_orphan_tool_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Drop leading ToolMessages whose AI tool call fell outside a window.

    Chat APIs reject a ``tool`` message that does not follow the assistant message that
    called it, so a window must never start on one.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> window = [ToolMessage("42", tool_call_id="c1"), AIMessage("It is 42.")]
        >>> [m.type for m in drop_orphan_tool_messages(window)]
        ['ai']
    """
    start = 0
    while start < len(messages) and isinstance(messages[start], ToolMessage):
        start += 1
    return messages[start:]


def open_history(url: str, session_id: str) -> BaseChatMessageHistory:
    """Open the chat history of ``session_id`` in the store ``url`` names.

    ``sqlite:///path`` (LangChain's ``SQLChatMessageHistory`` with an index and windowed
    reads), ``memory://[name]`` (in-process), ``postgresql://...`` (langchain-postgres'
    ``PostgresChatMessageHistory``, pooled) and ``redis://host:port/db[?ttl=seconds]``
    (langchain-community's ``RedisChatMessageHistory``).

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> history = open_history(url, "conv-42")
        >>> type(history).__name__, isinstance(history, ChatHistory)
        ('SQLiteChatHistory', True)
    """
    check_conversation_id(session_id)
    scheme = url_scheme(url)
    if scheme == "sqlite":
        from memory.sqlite_history import SQLiteChatHistory

        return SQLiteChatHistory(url, session_id)
    if scheme == "memory":
        from memory.memory_history import MemoryChatHistory

        return MemoryChatHistory.open(url, session_id)
    if scheme == "postgresql":
        from memory.postgres_history import PostgresChatHistory

        return PostgresChatHistory(url, session_id)
    if scheme in ("redis", "rediss"):
        from memory.redis_history import RedisChatHistory

        return RedisChatHistory(url, session_id)
    raise ValueError(
        f"no chat-history backend for {redact_url(url)!r}; supported: "
        + ", ".join(f"{s}://" for s in SUPPORTED_SCHEMES)
    )
