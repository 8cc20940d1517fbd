"""Context stores: "the key fields" of a conversation, one JSON document per conversation id.

Each record holds the ``context`` dict, a ``version`` (0 = nothing stored, +1 per write of
the record, meta included, for optimistic concurrency: a write given ``expected_version``
writes only if that version is still stored, checked by the write itself), the
``active_agent`` name, and ``meta`` (a dict for derived state: the log of recent turn ids,
the summary policy's running summary).
:func:`open_context_store` picks the backend from the URL; SQLite puts the table next to the
chat history in the same file, so a turn's messages and context can be saved in one
transaction.

Example:
    >>> from swarmgraph.memory import open_context_store
    >>> store = open_context_store("memory://doctest-context")
    >>> store.save("conv-42", {"name": "Ming", "order_id": 7}, active_agent="Refunds")
    1
    >>> record = store.load("conv-42")
    >>> record.context, record.version, record.active_agent
    ({'name': 'Ming', 'order_id': 7}, 1, 'Refunds')
    >>> store.save("conv-42", {}, expected_version=0)
    Traceback (most recent call last):
    ...
    swarmgraph.memory.errors.ContextVersionConflict: context of 'conv-42' is at version 1, not 0
    >>> store.save("conv-42", {"order_id": 8}, expected_version=1, meta={"turns": [{"id": "t"}]})
    2
    >>> store.save_meta("conv-42", {}, expected_version=2)   # the context stays as stored
    3
    >>> record = store.load("conv-42")
    >>> record.context, record.version, record.meta
    ({'order_id': 8}, 3, {})
    >>> store.delete("conv-42")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .context_json import encode_context
from .errors import ContextVersionConflict
from .urls import check_conversation_id


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
    """What :class:`memory.Session` needs from a context store.

    ``save(..., expected_version=v)`` is one conditional write: it stores only if version
    ``v`` is still stored (``0``: nothing yet) and raises :class:`ContextVersionConflict`
    otherwise, without reading the record first. ``meta=`` replaces the record's meta in that
    same write (``None`` leaves it as stored), so a turn's context and its turn log are one
    write. ``save_meta`` is the same write with the context left as stored (a Session that
    keeps no context still logs its turns). Both bump the version and return the new one:
    a writer that loaded an older version conflicts instead of writing back a stale meta.
    Stores are sync (bounded pools); async code hops to a thread, as
    :meth:`memory.Session.arun` does once per load and per save.
    """

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
        meta: dict | None = None,
        connection: Any = None,
    ) -> int: ...
    def save_meta(
        self,
        conversation_id: str,
        meta: dict,
        *,
        expected_version: int | None = None,
        connection: Any = None,
    ) -> int: ...
    def delete(self, conversation_id: str, *, connection: Any = None) -> None: ...
    def begin_write(self) -> Any: ...


class RecordWriter:
    """``save`` and ``save_meta`` for every backend, over the one write each one implements:
    ``_write(cid, encoded, meta, active_agent, expected_version, connection) -> version``,
    where ``encoded`` (the context as JSON text) and ``meta``/``active_agent`` are ``None``
    for "keep what is stored". The id is checked and the context encoded (with its size
    check) here, once, the same way on every backend.
    """

    size_limit: int | None = None

    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        meta: dict | None = None,
        connection: Any = None,
    ) -> int:
        """Store ``context`` (and ``active_agent`` and ``meta`` unless None); return the new
        version."""
        cid = check_conversation_id(conversation_id)
        encoded = encode_context(context, size_limit=self.size_limit)
        return self._write(cid, encoded, meta, active_agent, expected_version, connection)

    def save_meta(
        self,
        conversation_id: str,
        meta: dict,
        *,
        expected_version: int | None = None,
        connection: Any = None,
    ) -> int:
        """Replace the record's ``meta`` dict (the context stays); return the new version."""
        cid = check_conversation_id(conversation_id)
        return self._write(cid, None, meta, None, expected_version, connection)

    def _write(
        self,
        cid: str,
        encoded: str | None,
        meta: dict | None,
        agent: str | None,
        expected: int | None,
        connection: Any,
    ) -> int:
        raise NotImplementedError
