"""In-process storage (``memory://[name]``): conversations in this process's memory.

Everything is kept as the JSON text the other backends store, so it refuses exactly what they
refuse and hands out fresh copies. Two stores opened on one ``memory://name`` see the same
conversations, as two connections to one database would; nothing outlives the process. One
lock per namespace makes every save and load atomic.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from swarmgraph.memory.store import TurnWrite
    >>> MemoryStore("memory://doc").save("c1", TurnWrite([HumanMessage("hi")]), expected_version=0)
    1
    >>> MemoryStore("memory://doc").count("c1")
    1
    >>> MemoryStore("memory://doc").clear("c1")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..context_json import DEFAULT_SIZE_LIMIT, decode_context
from ..errors import RecordExists
from ..store import (
    ConversationSummary,
    EncodedWrite,
    Half,
    Snapshot,
    StoreBase,
    Window,
    decode_messages,
    next_version,
    since,
)
from ..urls import memory_namespace, shown_url


@dataclass
class _Conversation:
    context: str = "{}"
    version: int = 0
    active_agent: str | None = None
    meta: str = "{}"
    messages: list[str] = field(default_factory=list)
    records: dict[tuple[str, str], str] = field(default_factory=dict)
    updated_at: float | None = None  # when the record was last written (time.time())


_registry_lock = threading.Lock()
_namespaces: dict[str, tuple[threading.Lock, dict[str, _Conversation]]] = {}


def _namespace(name: str) -> tuple[threading.Lock, dict[str, _Conversation]]:
    with _registry_lock:
        return _namespaces.setdefault(name, (threading.Lock(), {}))


class MemoryStore(StoreBase):
    """The conversations of one ``memory://`` namespace; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.size_limit = size_limit
        self._lock, self._conversations = _namespace(memory_namespace(url))

    def __repr__(self) -> str:
        return f"MemoryStore(url={shown_url(self.url)!r})"

    def _load(self, cid: str, window: Window) -> Snapshot:
        with self._lock:
            found = self._conversations.get(cid) or _Conversation()
            texts: Sequence[str | bytes] = found.messages
            start: int | None = 0
            if window.last is not None:
                texts, start = texts[len(texts) - window.last :] if window.last else [], None
            elif window.start:
                texts, start = since(
                    window.start, lambda n: found.messages[n:], lambda: len(found.messages)
                )
            context, version, agent, meta = (
                found.context,
                found.version,
                found.active_agent,
                found.meta,
            )
        return Snapshot(
            decode_context(context), version, agent, json.loads(meta), decode_messages(texts), start
        )

    def _save(self, cid: str, write: EncodedWrite, expected: int | None) -> int:
        with self._lock:
            found = self._conversations.get(cid) or _Conversation()
            if write.appends_only(expected):
                found.messages.extend(write.messages)
                self._conversations[cid] = found
                return found.version
            version = next_version(cid, found.version, expected)
            for record in write.records:
                stored = found.records.get((record.kind, record.key))
                if record.if_absent and stored is not None:
                    raise RecordExists(cid, record.kind, record.key, json.loads(stored))
            # Checked: now the write, all of it (nothing above changed anything).
            found.version = version
            found.context = found.context if write.context is None else write.context
            found.active_agent = write.active_agent or found.active_agent
            found.meta = found.meta if write.meta is None else write.meta
            found.messages.extend(write.messages)
            found.records.update({(r.kind, r.key): r.value for r in write.records})
            found.updated_at = time.time()
            self._conversations[cid] = found
            return version

    def _clear(self, cid: str, only: Half | None) -> None:
        with self._lock:
            found = self._conversations.get(cid)
            if found is None:
                return
            if only != "context":
                found.messages = []
            if only != "messages":  # a tombstone: the version goes on counting
                found.context, found.active_agent, found.meta, found.records = "{}", None, "{}", {}
                found.version += 1
                found.updated_at = time.time()

    def _messages(self, cid: str, limit: int | None) -> list[str | bytes]:
        with self._lock:
            texts = (self._conversations.get(cid) or _Conversation()).messages
            return list(texts if limit is None else texts[len(texts) - limit :])

    def _summaries(self) -> list[ConversationSummary]:
        with self._lock:
            return [
                ConversationSummary(cid, c.active_agent, len(c.messages), c.updated_at)
                for cid, c in self._conversations.items()
            ]

    def _count(self, cid: str) -> int:
        with self._lock:
            return len((self._conversations.get(cid) or _Conversation()).messages)

    def _records(self, cid: str, kind: str, keys: list[str] | None) -> dict[str, str]:
        with self._lock:
            stored = (self._conversations.get(cid) or _Conversation()).records
            if keys is None:
                return {key: value for (k, key), value in stored.items() if k == kind}
            return {key: stored[(kind, key)] for key in keys if (kind, key) in stored}


def open_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> MemoryStore:
    """The registry's entry point: the in-process store of ``url``'s namespace."""
    return MemoryStore(url, size_limit=size_limit)
