"""In-process storage (``memory://[name]``): LangChain's ``InMemoryChatMessageHistory`` and a
JSON-row context store.

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

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import BaseMessage
from pydantic import PrivateAttr

from ..context_json import DEFAULT_SIZE_LIMIT, decode_context
from ..context_store import ContextRecord, RecordWriter, next_version
from ..history import AsyncByThread, check_limit
from ..urls import check_conversation_id, memory_namespace

_registry_lock = threading.Lock()
_namespace_locks: dict[str, threading.RLock] = {}


def namespace_lock(namespace: str) -> threading.RLock:
    """The lock that serialises writes in one ``memory://`` namespace."""
    with _registry_lock:
        return _namespace_locks.setdefault(namespace, threading.RLock())


class MemoryChatHistory(AsyncByThread, InMemoryChatMessageHistory):
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


_memory_rows: dict[tuple[str, str], tuple[str, int, str | None, str]] = {}


class MemoryContextStore(RecordWriter):
    """In-process context store for ``memory://[name]``; rows are stored as JSON text too,
    so it refuses exactly what the SQLite store refuses and hands out fresh copies."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.namespace = memory_namespace(url)
        self.size_limit = size_limit
        self._lock: threading.RLock = namespace_lock(self.namespace)
        self.transaction_domain = self._lock

    def load(self, conversation_id: str, *, connection: Any = None) -> ContextRecord:
        check_conversation_id(conversation_id)
        with self._lock:
            row = _memory_rows.get((self.namespace, conversation_id))
        if row is None:
            return ContextRecord()
        context, version, agent, meta = row
        return ContextRecord(decode_context(context), version, agent, json.loads(meta))

    def _write(
        self,
        cid: str,
        encoded: str | None,
        meta: dict | None,
        agent: str | None,
        expected: int | None,
        connection: Any = None,  # one lock per namespace is the transaction
    ) -> int:
        new_meta = None if meta is None else json.dumps(meta)
        with self._lock:
            key = (self.namespace, cid)
            stored_context, stored, stored_agent, stored_meta = _memory_rows.get(
                key, ("{}", 0, None, "{}")
            )
            # Every write bumps the version: a stale conditional save of either half conflicts.
            version = next_version(cid, stored, expected)
            _memory_rows[key] = (
                stored_context if encoded is None else encoded,
                version,
                agent or stored_agent,
                stored_meta if new_meta is None else new_meta,
            )
            return version

    def delete(self, conversation_id: str, *, connection: Any = None) -> None:
        """Clear the record; its version goes on counting (a tombstone, never back to 0)."""
        key = (self.namespace, conversation_id)
        with self._lock:
            row = _memory_rows.get(key)
            if row is not None:
                _memory_rows[key] = ("{}", row[1] + 1, None, "{}")

    @contextmanager
    def begin_write(self) -> Iterator[Any]:
        with self._lock:
            yield self._lock


def open_history(url: str, session_id: str) -> MemoryChatHistory:
    """The registry's entry point: the shared in-process history of ``session_id``."""
    return MemoryChatHistory.open(url, session_id)


def open_context_store(
    url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT
) -> MemoryContextStore:
    """The registry's entry point: the in-process context store of ``url``'s namespace."""
    return MemoryContextStore(url, size_limit=size_limit)
