"""A conversation's messages as a LangChain ``BaseChatMessageHistory``, over any store.

:func:`swarmgraph.memory.open_history` returns a :class:`StoredChatHistory`: the interface
LangChain code already speaks (``messages``, ``add_messages``, ``clear``, ``aget_messages``,
``aadd_messages``, ``aclear``), plus windowed reads (``get_messages(limit=k)``) and ``count``.
It is a thin view of a :class:`~swarmgraph.memory.store.ConversationStore`: every call is one
read or one atomic write of the unit of work, so a history and a ``Session`` on the same
conversation see each other. The tables and keys are LangChain's own layouts, and no
LangChain community class (nor its deprecation warning) is involved.

Async methods are one thread hop to the sync ones: every backend is sync on a bounded pool,
so async callers never open more connections than the pool allows. No native async twin is
kept because none paid: 200 concurrent ``Session.arun`` conversations x 5 turns
(``python -m benchmarks.backend_turns``, 2 cores) took 26-31 s and 9-10 ms CPU a turn on the
native async Redis path against 10.5-12 s and 3.9-4.5 ms through threads; native async
Postgres (a connection per call) failed with "too many clients" while threads stored all
4,000 messages in 9-12 s.

Example:
    >>> import asyncio
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.memory import open_history
    >>> history = open_history("memory://doctest-history", "conv-1")
    >>> history.add_messages([HumanMessage("hi"), AIMessage("hello", name="Triage")])
    >>> [m.content for m in history.get_messages(limit=1)], history.count()
    (['hello'], 2)
    >>> [m.content for m in asyncio.run(history.aget_messages())]
    ['hi', 'hello']
    >>> history.clear(); history.messages
    []
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from .ids import check_conversation_id
from .store import ConversationStore, TurnWrite


class StoredChatHistory(BaseChatMessageHistory):
    """The messages of conversation ``session_id`` in ``store``; see the module docstring."""

    def __init__(self, store: ConversationStore, session_id: str) -> None:
        self.store = store
        self.session_id = check_conversation_id(session_id)

    def __repr__(self) -> str:
        return f"StoredChatHistory({self.session_id!r}, store={self.store!r})"

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """Every message of the conversation, in order."""
        return self.store.messages(self.session_id)

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]:
        """The conversation in order; with ``limit`` only the last ``limit`` messages."""
        return self.store.messages(self.session_id, limit)

    def count(self) -> int:
        """How many messages the conversation holds."""
        return self.store.count(self.session_id)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one atomic write (never interleaved with another's)."""
        if messages:
            write = TurnWrite(messages=list(messages))
            self.store.save(self.session_id, write, expected_version=None)

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def clear(self) -> None:
        """Forget the messages (the conversation's context stays; ``Session.clear`` forgets
        both)."""
        self.store.clear(self.session_id, only="messages")

    async def aget_messages(self, limit: int | None = None) -> list[BaseMessage]:
        return await asyncio.to_thread(self.get_messages, limit)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, messages)

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)
