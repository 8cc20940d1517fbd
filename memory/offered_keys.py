"""Which of a user's fact keys an open extractor offers its model for one message.

An :class:`~swarmgraph.memory.open_extract.OpenFactExtractor` shows the model the keys the user
already has, so a new wording of a known kind lands on the stored key. A Session asks for them
once per new user message, so they are read with one bounded store search, never by listing
every fact of a user who has thousands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from langgraph.store.base import Item, SearchOp

from .fact import Fact
from .fact_namespaces import visible

if TYPE_CHECKING:
    from .long_term import LongTermMemory

__all__ = ["offered_keys"]


def offered_keys(memory: LongTermMemory, text: str, limit: int) -> list[str]:
    """The keys of ``memory``'s user facts (``"user"`` scope) to offer for ``text``: all of
    them, sorted, while the user has at most ``limit``; past that, the keys of the ``limit``
    facts ``memory.recall(text)`` finds (the store is asked for ``limit + 1`` entries at most).

    Example:
        >>> from swarmgraph.memory import LongTermMemory
        >>> memory = LongTermMemory("memory://doctest-offered-keys", user_id="ming")
        >>> _ = memory.remember("home_city", "Lyon"); _ = memory.remember("car", "a Zoe")
        >>> offered_keys(memory, "I moved to Paris", limit=5)
        ['car', 'home_city']
        >>> offered_keys(memory, "I moved to Lyon", limit=1)  # more facts than the limit
        ['home_city']
    """
    if limit <= 0:
        return []
    (namespace,) = visible(memory._user, None)[:1]  # the user's own facts
    (page,) = memory._store.read([SearchOp(namespace, limit=limit + 1)])
    items = [i for i in cast(list[Item], page or []) if tuple(i.namespace) == namespace]
    if len(items) <= limit:  # all of them: the model sees every kind the user has
        live = (Fact.from_record(i.value) for i in items)
        return sorted(f.key for f in live if not f.forgotten)
    return [f.key for f in memory.recall(text, k=limit) if f.scope == "user"]
