"""Chat histories: "what was said", behind one small interface and one URL-dispatching factory.

:func:`open_history` returns a LangChain ``BaseChatMessageHistory`` that also satisfies
:class:`ChatHistory`, our protocol: read the last ``limit`` messages, append, count, clear.
Backends are sync, on bounded connection pools; LangChain's async methods (``aget_messages``,
``aadd_messages``, ``aclear``) are one thread hop each (:class:`AsyncByThread`), and
:meth:`memory.Session.arun` makes one hop for a turn's whole load and one for its save.
Backends keep LangChain's (partly deprecated) classes behind it, so swapping one needs no
change in :class:`memory.Session`.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.memory import open_history
    >>> history = open_history("memory://doctest-history", "conv-1")
    >>> history.add_messages([HumanMessage("hi"), AIMessage("hello", name="Triage")])
    >>> [m.content for m in history.get_messages(limit=1)], history.count()
    (['hello'], 2)
    >>> history.clear()
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage, ToolMessage


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


class AsyncByThread:
    """LangChain's async history methods as one thread hop to the sync ones.

    Every backend is sync-first on a bounded pool, so async callers never open more
    connections than the pool allows. Listed first in a backend's bases, it replaces the
    upstream class's async methods (which need a connection object of their own). No native
    async twin is kept because none paid: 200 concurrent ``Session.arun`` conversations x 5
    turns (``python -m benchmarks.backend_turns``, 2 cores, before/after interleaved) took
    26-31 s and 9-10 ms CPU a turn on the native async Redis path against 10.5-12 s and
    3.9-4.5 ms through threads; native async Postgres (a connection per call) failed with
    "too many clients" while threads stored all 4,000 messages in 9-12 s; SQLite already
    hopped to a thread (12-15 s either way).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from swarmgraph.memory import open_history
        >>> history = open_history("memory://doctest-async", "c1")
        >>> asyncio.run(history.aadd_messages([HumanMessage("hi")]))
        >>> [m.content for m in asyncio.run(history.aget_messages(limit=1))]
        ['hi']
        >>> asyncio.run(history.aclear())
    """

    async def aget_messages(self, limit: int | None = None) -> list[BaseMessage]:
        return await asyncio.to_thread(self.get_messages, limit)  # type: ignore[attr-defined]

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, messages)  # type: ignore[attr-defined]

    async def aadd_message(self, message: BaseMessage) -> None:
        await self.aadd_messages([message])

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)  # type: ignore[attr-defined]


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
