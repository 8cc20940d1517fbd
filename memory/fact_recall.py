"""How :meth:`~.long_term.LongTermMemory.recall` picks facts: BM25 over the visible facts
(:mod:`.fact_search`), or the store's vector search when it has embeddings.

Example:
    >>> from swarmgraph.memory.fact import Fact
    >>> facts = [Fact("dog_name", "Rex", "user"), Fact("city", "Lyon", "user")]
    >>> [f.key for f in lexical_recall(facts, "What is my dog called?", k=3)]
    ['dog_name']
    >>> [f.key for f in lexical_recall(facts, "what is it?", k=1)]   # no searchable word
    ['city']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import SearchOp

from .fact import Fact
from .fact_namespaces import SCOPE_ORDER
from .fact_search import rank, tokenize

if TYPE_CHECKING:
    from .long_term_store import LongTermStore


def lexical_recall(visible: Sequence[Fact], query: str, k: int) -> list[Fact]:
    """The ``k`` facts of ``visible`` sharing the most (BM25) with ``query``, ties to the newer
    fact, then the more specific scope, then the key; a query with no searchable word gets
    the ``k`` newest."""
    facts = sorted(
        visible,
        key=lambda f: (
            -(f.created_at.timestamp() if f.created_at else 0.0),
            SCOPE_ORDER[f.scope],
            f.key,
        ),
    )
    documents = [" ".join((f.key, f.value, f.text or "")) for f in facts]
    ranked = rank(query, documents)
    if not ranked and not tokenize(query):
        return facts[:k]
    return [facts[i] for i, _ in ranked[:k]]


def vector_recall(
    store: LongTermStore, namespaces: list[tuple[str, ...]], query: str, k: int
) -> list[Fact]:
    """The ``k`` current facts in ``namespaces`` the store's vector index finds most similar
    to ``query``."""
    pages = store.read(
        [SearchOp(ns, filter={"forgotten": False}, query=query, limit=k) for ns in namespaces]
    )
    scored: list[tuple[float, Fact]] = []
    for namespace, page in zip(namespaces, pages, strict=True):
        for item in cast(Sequence[Any], page or []):
            if tuple(item.namespace) == namespace:
                score = getattr(item, "score", None)
                scored.append(
                    (
                        float(score) if score is not None else float("-inf"),
                        Fact.from_record(item.value),
                    )
                )
    scored.sort(
        key=lambda pair: (
            -pair[0],
            -(pair[1].created_at.timestamp() if pair[1].created_at else 0.0),
            SCOPE_ORDER[pair[1].scope],
            pair[1].key,
        )
    )
    return [fact for _, fact in scored[:k]]
