"""How :meth:`~.long_term.LongTermMemory.recall` picks facts: BM25 over the visible facts
(:mod:`.fact_search`), the store's vector search when it has embeddings, or both fused
(:mod:`.fact_ranking`).

Example:
    >>> from swarmgraph.memory.fact import Fact
    >>> facts = [Fact("dog_name", "Rex", "user"), Fact("city", "Lyon", "user")]
    >>> [f.key for f in ranked_recall(None, "ming", facts, "What is my dog called?", 3, "bm25")]
    ['dog_name']
    >>> [f.key for f in ranked_recall(None, "ming", facts, "what is it?", 1, "bm25")]
    ['city']
    >>> indexed_text(Fact("home_city", "Lyon", "user"))
    'home city: Lyon'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import SearchOp

from .fact import Fact
from .fact_namespaces import SCOPE_ORDER, namespaces
from .fact_ranking import Ranking, fuse
from .fact_search import rank, tokenize

if TYPE_CHECKING:
    from .long_term_store import LongTermStore


_KEY_BREAKS = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")


def indexed_text(fact: Fact) -> str:
    """What a store's vector index embeds for ``fact``: its key written as words, then its
    value (``home_city`` -> ``"home city: Lyon"``).

    An embedding model is trained on words, and ``home_city`` is one unusual token run for
    it; BM25 already splits keys this way (:func:`.fact_search.tokenize`), so both rankings
    now read the key alike. Chosen on the benchmark's dev split (docs/long_term_memory.md):
    recall@1 rose for both local models there, and adding the stating text as well did not
    help either. The prompt still shows the key as written (:meth:`Fact.line`).

    Example:
        >>> indexed_text(Fact("dogName", "Rex", "user"))
        'dog Name: Rex'
        >>> indexed_text(Fact("tone", "brief", "user"))
        'tone: brief'
    """
    words = _KEY_BREAKS.sub(" ", fact.key).strip() or fact.key
    return f"{words}: {fact.value}"


def ranked_recall(
    store: LongTermStore | None,
    user: str,
    visible: Sequence[Fact],
    query: str,
    k: int,
    ranking: Ranking,
) -> list[Fact]:
    """The ``k`` facts of ``visible`` that ``ranking`` puts first for ``query``.

    ``"bm25"``: only facts sharing a word with the query, best first, ties to the newer fact,
    then the more specific scope, then the key; a query with no searchable word gets the
    ``k`` newest. ``"vector"``: the ``k`` most similar by the store's index. ``"hybrid"``:
    both rankings fused by reciprocal rank. ``store`` is needed only for the last two.
    """
    facts = sorted(
        visible,
        key=lambda f: (
            -(f.created_at.timestamp() if f.created_at else 0.0),
            SCOPE_ORDER[f.scope],
            f.key,
        ),
    )
    searched = ranking != "bm25" and bool(query.strip())  # no text, nothing to embed
    nearest = vector_order(cast("LongTermStore", store), user, query, facts) if searched else []
    if searched and ranking == "vector":
        return [facts[i] for i in nearest[:k]]
    documents = [" ".join((f.key, f.value, f.text or "")) for f in facts]
    ranked = rank(query, documents)
    if searched:  # hybrid
        return [facts[i] for i in fuse([i for i, _ in ranked], nearest)[:k]]
    if not ranked and not tokenize(query):
        return facts[:k]
    return [facts[i] for i, _ in ranked[:k]]


def vector_order(store: LongTermStore, user: str, query: str, facts: Sequence[Fact]) -> list[int]:
    """Indices into ``facts`` by the store's vector similarity to ``query``, nearest first
    (ties keep ``facts``' order). One search per namespace the facts are in, deep enough to
    rank all of them; a fact with no vector (none was made for it) is left out."""
    index = {(f.scope, f.agent, f.key): i for i, f in enumerate(facts)}
    sizes = Counter((f.scope, f.agent) for f in facts)
    spaces = {namespaces(user, s, a)[0]: size for (s, a), size in sizes.items()}
    pages = store.read(
        [
            SearchOp(ns, filter={"forgotten": False}, query=query, limit=size)
            for ns, size in spaces.items()
        ]
    )
    scored: list[tuple[float, int]] = []
    for namespace, page in zip(spaces, pages, strict=True):
        for item in cast(Sequence[Any], page or []):
            if tuple(item.namespace) != namespace:  # a second guard: exact namespace
                continue
            fact = Fact.from_record(item.value)
            i = index.get((fact.scope, fact.agent, fact.key))
            if i is not None and getattr(item, "score", None) is not None:
                scored.append((float(item.score), i))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [i for _, i in scored]
