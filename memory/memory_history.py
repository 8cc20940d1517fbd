"""In-process chat history (``memory://[name]``): LangChain's ``InMemoryChatMessageHistory``.

Histories live in a module-level registry keyed by (namespace, session id), so two
``open_history("memory://", "c1")`` calls in one process see the same messages, as two
connections to one database would; nothing outlives the process. One re-entrant lock per
namespace is its "transaction": the matching context store joins it.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> a = MemoryChatHistory.open("memory://doc", "c1")
    >>> a.add_messages([HumanMessage("hi")])
    >>> MemoryChatHistory.open("memory://doc", "c1").count()
    1
    >>> a.clear()
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, ClassVar

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import BaseMessage
from pydantic import PrivateAttr

from memory.history import check_limit
from memory.urls import check_conversation_id, memory_namespace

_registry_lock = threading.Lock()
_namespace_locks: dict[str, threading.RLock] = {}


def namespace_lock(namespace: str) -> threading.RLock:
    """The lock that serialises writes in one ``memory://`` namespace."""
    with _registry_lock:
        return _namespace_locks.setdefault(namespace, threading.RLock())


class MemoryChatHistory(InMemoryChatMessageHistory):
    """One conversation's messages in this process's memory."""

    _histories: ClassVar[dict[tuple[str, str], MemoryChatHistory]] = {}
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)

    @classmethod
    def open(cls, url: str, session_id: str) -> MemoryChatHistory:
        """The shared history of ``session_id`` in the namespace ``url`` names."""
        check_conversation_id(session_id)
        namespace = memory_namespace(url)
        with _registry_lock:
            history = cls._histories.get((namespace, session_id))
            if history is None:
                history = cls()
                cls._histories[(namespace, session_id)] = history
        history._lock = namespace_lock(namespace)
        return history

    @property
    def transaction_domain(self) -> threading.RLock:
        return self._lock

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]:  # type: ignore[override]
        limit = check_limit(limit)
        with self._lock:
            if limit == 0:
                return []
            # Copies, so a caller editing a message cannot rewrite stored history.
            chosen = self.messages if limit is None else self.messages[-limit:]
            return [m.model_copy(deep=True) for m in chosen]

    def add_messages(  # type: ignore[override]
        self, messages: Sequence[BaseMessage], *, connection: Any = None
    ) -> None:
        copies = [m.model_copy(deep=True) for m in messages]
        with self._lock:
            self.messages.extend(copies)

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def get_messages_since(self, position: int) -> list[BaseMessage]:
        with self._lock:
            return [m.model_copy(deep=True) for m in self.messages[max(int(position), 0) :]]

    def count(self) -> int:
        with self._lock:
            return len(self.messages)

    def clear(self, *, connection: Any = None) -> None:  # type: ignore[override]
        with self._lock:
            self.messages = []

    @contextmanager
    def begin_write(self):
        with self._lock:
            yield self._lock

    async def aget_messages(self, limit: int | None = None) -> list[BaseMessage]:  # type: ignore[override]
        return self.get_messages(limit)

    async def aadd_messages(  # type: ignore[override]
        self, messages: Sequence[BaseMessage], *, connection: Any = None
    ) -> None:
        self.add_messages(messages)

    async def aget_messages_since(self, position: int) -> list[BaseMessage]:
        return self.get_messages_since(position)

    async def acount(self) -> int:
        return self.count()

    async def aclear(self, *, connection: Any = None) -> None:  # type: ignore[override]
        self.clear()

    @asynccontextmanager
    async def abegin_write(self):
        with self._lock:
            yield self._lock
