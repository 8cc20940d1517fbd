"""How :meth:`~.long_term.LongTermMemory.recall` picks facts: the store's own full-text
index (:mod:`.lexical_sql` on SQLite and Postgres, :mod:`.lexical_index` elsewhere), its
vector search when it has embeddings, or both fused (:mod:`.fact_ranking`). Each asks the
store for the top few only: no recall lists a namespace, so its cost follows the matches,
not the number of facts stored.

Example:
    >>> from langgraph.store.base import PutOp
    >>> from swarmgraph.memory.long_term_store import open_long_term_store
    >>> store = open_long_term_store("memory://doctest-fact-recall")
    >>> ns = ("swarmgraph", "ltm", "user", "ming")
    >>> store.write([PutOp(ns, "dog_name", Fact("dog_name", "Rex", "user").to_record()),
    ...              PutOp(ns, "city", Fact("city", "Lyon", "user").to_record())])
    >>> [f.key for f in ranked_recall(store, [ns], "What is my dog called?", 3, "bm25")]
    ['dog_name']
    >>> indexed_text(Fact("home_city", "Lyon", "user"))
    'home city: Lyon'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import SearchOp

from .fact import Fact
from .fact_namespaces import SCOPE_ORDER
from .fact_ranking import Ranking, fuse

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


#: How deep each ranking is read before fusing (``"hybrid"``): a fact just below the ``k``
#: in both lists can still make the fused top ``k``.
FUSE_DEPTH = 10


def ranked_recall(
    store: LongTermStore,
    spaces: Sequence[tuple[str, ...]],
    query: str,
    k: int,
    ranking: Ranking,
) -> list[Fact]:
    """The ``k`` current facts of the namespaces ``spaces`` that ``ranking`` puts first.

    ``"bm25"``: the store's full-text index, facts sharing a word with the query, best
    first, ties to the newer fact; a query with no searchable word gets the ``k`` newest.
    ``"vector"``: the ``k`` nearest by the store's vector index (``search(query=,
    limit=k)``). ``"hybrid"``: the top of both lists fused by reciprocal rank.
    """
    searched = ranking != "bm25" and bool(query.strip())  # no text, nothing to embed
    depth = max(k, FUSE_DEPTH) if ranking == "hybrid" else k
    nearest = vector_top(store, spaces, query, depth) if searched else []
    if searched and ranking == "vector":
        return nearest[:k]
    lexical = [Fact.from_record(r) for r, _ in store.lexical_search(spaces, query, depth)]
    if not searched:
        return lexical[:k]
    found: dict[tuple[str, str | None, str], Fact] = {}
    for fact in (*lexical, *nearest):
        found.setdefault(_slot(fact), fact)
    order = sorted(found.values(), key=_newest_first)
    position = {_slot(f): i for i, f in enumerate(order)}
    fused = fuse([position[_slot(f)] for f in lexical], [position[_slot(f)] for f in nearest])
    return [order[i] for i in fused[:k]]


def vector_top(
    store: LongTermStore, spaces: Sequence[tuple[str, ...]], query: str, k: int
) -> list[Fact]:
    """The ``k`` current facts nearest ``query`` by the store's vector index: one search of
    ``limit=k`` per namespace (on SQLite one for all: :meth:`.LongTermStore.nearest`),
    merged by score (ties: the newer fact). A fact with no vector (none was made for it) is
    not found."""
    scored: list[tuple[float, Fact]] = []
    if store.scheme == "sqlite":  # the vectors ranked alone, the winners' rows read after
        for record, score in store.nearest(spaces, query, k):
            scored.append((score, Fact.from_record(record)))
        spaces, pages = [], []
    else:
        # Only namespaces holding a fact are searched: each search embeds the query again.
        held = store.read([SearchOp(ns, limit=1) for ns in spaces])
        spaces = [ns for ns, page in zip(spaces, held, strict=True) if page]
        pages = store.read(
            [SearchOp(ns, filter={"forgotten": False}, query=query, limit=k) for ns in spaces]
        )
    for namespace, page in zip(spaces, pages, strict=True):
        for item in cast(Sequence[Any], page or []):
            if tuple(item.namespace) != tuple(namespace):  # a second guard: exact namespace
                continue
            if getattr(item, "score", None) is not None:
                scored.append((float(item.score), Fact.from_record(item.value)))
    newest = sorted(scored, key=lambda pair: _newest_first(pair[1]))
    newest.sort(key=lambda pair: -pair[0])  # stable: equal scores keep the newer first
    return [fact for _, fact in newest[:k]]


def _slot(fact: Fact) -> tuple[str, str | None, str]:
    return fact.scope, fact.agent, fact.key


def _newest_first(fact: Fact) -> tuple[float, int, str]:
    stamp = fact.created_at.timestamp() if fact.created_at else 0.0
    return -stamp, SCOPE_ORDER[fact.scope], fact.key
