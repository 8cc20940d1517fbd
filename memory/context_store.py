"""A conversation's context record on its own: "the key fields", one JSON document per id.

:func:`swarmgraph.memory.open_context_store` returns a :class:`ContextStore`, a thin view of a
:class:`~swarmgraph.memory.store.ConversationStore` for code that reads and writes the
context without the messages. A record (:class:`~swarmgraph.memory.store.Snapshot`, without
messages) holds the ``context`` dict, a ``version`` (0 = nothing stored, +1 per write of the
conversation, for optimistic concurrency: a save given ``expected_version`` writes only if
that version is still stored, checked by the write itself), the ``active_agent`` name, and
``meta`` (derived state: the log of recent turn ids, the summary policy's running summary).

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

from .store import NO_MESSAGES, ConversationStore, Snapshot, TurnWrite


class ContextStore:
    """The context half of ``store``; see the module docstring."""

    def __init__(self, store: ConversationStore) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"ContextStore({self.store!r})"

    @property
    def size_limit(self) -> int | None:
        """Bytes of context JSON above which a save warns (``None``: never)."""
        return self.store.size_limit

    def load(self, conversation_id: str) -> Snapshot:
        """The stored record (an empty one at version 0 if nothing is stored)."""
        return self.store.load(conversation_id, window=NO_MESSAGES)

    def save(
        self,
        conversation_id: str,
        context: dict,
        *,
        expected_version: int | None = None,
        active_agent: str | None = None,
        meta: dict | None = None,
    ) -> int:
        """Store ``context`` (and ``active_agent`` and ``meta`` unless None) in one
        conditional write; return the new version."""
        write = TurnWrite(context=context, active_agent=active_agent, meta=meta)
        return self.store.save(conversation_id, write, expected_version=expected_version)

    def save_meta(
        self, conversation_id: str, meta: dict, *, expected_version: int | None = None
    ) -> int:
        """Replace the record's ``meta`` (the context stays); return the new version."""
        write = TurnWrite(meta=meta)
        return self.store.save(conversation_id, write, expected_version=expected_version)

    def delete(self, conversation_id: str) -> None:
        """Clear the record (and the conversation's records); its version goes on counting
        (a tombstone, never back to 0). The messages stay."""
        self.store.clear(conversation_id, only="context")
