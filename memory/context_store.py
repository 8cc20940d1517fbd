"""Context stores: "the key fields" of a conversation, one JSON document per conversation id.

Each record holds the ``context`` dict, a ``version`` (0 = nothing stored, +1 per context
save, for optimistic concurrency), the ``active_agent`` name, and ``meta`` (a dict for derived
state such as the summary policy's running summary). :func:`open_context_store` picks the
backend from the URL; SQLite puts the table next to the chat history in the same file, so a
turn's messages and context can be saved in one transaction.

Example:
    >>> store = open_context_store("memory://doctest-context")
    >>> store.save("conv-42", {"name": "Ming", "order_id": 7}, active_agent="Refunds")
    1
    >>> record = store.load("conv-42")
    >>> record.context, record.version, record.active_agent
    ({'name': 'Ming', 'order_id': 7}, 1, 'Refunds')
    >>> store.save("conv-42", {}, expected_version=0)
    Traceback (most recent call last):
    ...
    memory.context_store.ContextVersionConflict: context of 'conv-42' is at version 1, not 0
    >>> store.delete("conv-42")
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory.context_json import DEFAULT_SIZE_LIMIT, decode_context, encode_context
from memory.urls import SUPPORTED_SCHEMES, check_conversation_id, redact_url, url_scheme


class ContextVersionConflict(RuntimeError):
    """``save(..., expected_version=v)`` found another version stored (someone else wrote)."""

    def __init__(self, conversation_id: str, stored: int, expected: int) -> None:
        self.conversation_id, self.stored, self.expected = conversation_id, stored, expected
        super().__init__(f"context of {conversation_id!r} is at version {stored}, not {expected}")


def next_version(conversation_id: str, stored: int, expected: int | None) -> int:
    """The version a save writes: ``stored + 1``, after the optimistic check every backend
    makes (``expected`` None means "whatever is stored").

    Example:
        >>> next_version("c", 3, None), next_version("c", 3, 3)
        (4, 4)
    """
    if expected is not None and expected != stored:
        raise ContextVersionConflict(conversation_id, stored, expected)
    return stored + 1


@dataclass
class ContextRecord:
    """What a context store holds for one conversation."""

    context: dict = field(default_factory=dict)
    version: int = 0
    active_agent: str | None = None
    meta: dict = field(default_factory=dict)


@runtime_checkable
class ContextStore(Protocol):
    """What :class:`memory.Session` needs from a context store (sync and async)."""

    transaction_domain: Any
    size_limit: int | None

    def load(self, conversation_id: str, *, connection: Any = None) -> ContextRecord: ...
    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: Any = None,
    ) -> int: ...
    def save_meta(self, conversation_id: str, meta: dict, *, connection: Any = None) -> None: ...
    def delete(self, conversation_id: str, *, connection: Any = None) -> None: ...
    def begin_write(self) -> Any: ...
    async def aload(self, conversation_id: str, *, connection: Any = None) -> ContextRecord: ...
    async def asave(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: Any = None,
    ) -> int: ...
    async def asave_meta(
        self, conversation_id: str, meta: dict, *, connection: Any = None
    ) -> None: ...
    async def adelete(self, conversation_id: str, *, connection: Any = None) -> None: ...
    def abegin_write(self) -> Any: ...


def open_context_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> ContextStore:
    """Open the context store ``url`` names (``sqlite:///path``, ``memory://[name]``,
    ``postgresql://...``, ``redis://...``).

    ``size_limit``: bytes of JSON above which saving warns (``None``: never).

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> store = open_context_store(url)
        >>> store.save("conv-42", {"order_id": 7}), store.load("conv-42").context
        (1, {'order_id': 7})
    """
    scheme = url_scheme(url)
    if scheme == "sqlite":
        from memory.sqlite_context_store import SQLiteContextStore

        return SQLiteContextStore(url, size_limit=size_limit)
    if scheme == "memory":
        return MemoryContextStore(url, size_limit=size_limit)
    if scheme == "postgresql":
        from memory.postgres_context_store import PostgresContextStore

        return PostgresContextStore(url, size_limit=size_limit)
    if scheme in ("redis", "rediss"):
        from memory.redis_context_store import RedisContextStore

        return RedisContextStore(url, size_limit=size_limit)
    raise ValueError(
        f"no context-store backend for {redact_url(url)!r}; supported: "
        + ", ".join(f"{s}://" for s in SUPPORTED_SCHEMES)
    )


_memory_rows: dict[tuple[str, str], tuple[str, int, str | None, str]] = {}


class MemoryContextStore:
    """In-process context store for ``memory://[name]``; rows are stored as JSON text too,
    so it refuses exactly what the SQLite store refuses and hands out fresh copies."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        from memory.memory_history import namespace_lock
        from memory.urls import memory_namespace

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

    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        connection: Any = None,
    ) -> int:
        check_conversation_id(conversation_id)
        encoded = encode_context(context, size_limit=self.size_limit)
        with self._lock:
            key = (self.namespace, conversation_id)
            _, stored, agent, meta = _memory_rows.get(key, ("{}", 0, None, "{}"))
            version = next_version(conversation_id, stored, expected_version)
            _memory_rows[key] = (encoded, version, active_agent or agent, meta)
            return version

    def save_meta(self, conversation_id: str, meta: dict, *, connection: Any = None) -> None:
        check_conversation_id(conversation_id)
        encoded = json.dumps(copy.deepcopy(meta))
        with self._lock:
            key = (self.namespace, conversation_id)
            context, version, agent, _ = _memory_rows.get(key, ("{}", 0, None, "{}"))
            _memory_rows[key] = (context, version, agent, encoded)

    def delete(self, conversation_id: str, *, connection: Any = None) -> None:
        with self._lock:
            _memory_rows.pop((self.namespace, conversation_id), None)

    @contextmanager
    def begin_write(self) -> Iterator[Any]:
        with self._lock:
            yield self._lock

    async def aload(self, conversation_id: str, *, connection: Any = None) -> ContextRecord:
        return self.load(conversation_id)

    async def asave(self, conversation_id: str, context: dict, **kwargs: Any) -> int:
        return self.save(conversation_id, context, **kwargs)

    async def asave_meta(self, conversation_id: str, meta: dict, *, connection: Any = None) -> None:
        self.save_meta(conversation_id, meta)

    async def adelete(self, conversation_id: str, *, connection: Any = None) -> None:
        self.delete(conversation_id)

    @asynccontextmanager
    async def abegin_write(self):
        with self._lock:
            yield self._lock
