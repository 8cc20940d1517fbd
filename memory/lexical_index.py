"""Lexical recall for stores without a full-text index of their own (``memory://``, a
LangGraph store handed in from outside): BM25 over an index built once per namespace and
kept up to date on each write, never rebuilt per recall.

SQLite and Postgres rank with their own full-text search (:mod:`.lexical_sql`); this is the
index for the rest. Per namespace it keeps each current fact's terms
(:func:`.fact_search.tokenize` of its key, value and source text), the document
frequencies and the total length, so a recall scores only the facts that share a term with
the query (their postings), with BM25Plus's formula (as ``rank-bm25``'s ``BM25Plus``, which
it replaces here: k1 1.5, b 0.75, delta 1, idf ``log((N + 1) / df)``). Corpus statistics
are those of the namespaces searched together, as when every visible fact was ranked at once.

A namespace is indexed the first time a recall reads it (one listing of the store), then
each write through :meth:`.long_term_store.LongTermStore.write` updates it, under the
store's lock. Writes made to the LangGraph store directly, around ``LongTermStore``, are not
seen by an index already built (on ``memory://`` every write of this package goes through it).

Example:
    >>> from langgraph.store.base import PutOp
    >>> from langgraph.store.memory import InMemoryStore
    >>> store, index = InMemoryStore(), MemoryLexicalIndex()
    >>> ns = ("swarmgraph", "ltm", "user", "ming")
    >>> ops = [PutOp(ns, "dog_name", {"key": "dog_name", "value": "Rex", "forgotten": False}),
    ...        PutOp(ns, "city", {"key": "city", "value": "Lyon", "forgotten": False})]
    >>> _ = store.batch(ops); index.apply(ops)
    >>> [(r["key"], round(s, 2)) for r, s in index.search(store, [ns], "my dog?", 3)]
    [('dog_name', 2.11)]
    >>> index.apply([PutOp(ns, "dog_name", None)])
    >>> index.search(store, [ns], "my dog?", 3)
    []
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol, cast

from langgraph.store.base import BaseStore, Item, PutOp, SearchOp

from .fact_search import tokenize

#: Facts read per page when listing a namespace.
PAGE = 500
#: BM25Plus's parameters, as rank-bm25's defaults.
K1, B, DELTA = 1.5, 0.75, 1.0
#: Matches kept past the ``k`` best, so a tie at the ``k``-th place goes to the newer fact.
TIE_WINDOW = 8

Record = dict[str, Any]
Namespace = tuple[str, ...]


class LexicalIndex(Protocol):
    """What lexical recall asks of a store's full-text index."""

    def search(
        self, store: BaseStore, namespaces: Sequence[Namespace], query: str, k: int
    ) -> list[tuple[Record, float]]:
        """The ``k`` current facts of ``namespaces`` best matching ``query`` (records, each
        with its score, best first); a query with no searchable word: the ``k`` newest."""
        ...

    def apply(self, ops: Sequence[PutOp]) -> None:
        """Take note of ``ops``, just committed (an index kept by the database: nothing)."""
        ...


def list_namespace(store: BaseStore, namespace: Namespace, **filters: Any) -> list[Item]:
    """Every item stored exactly in ``namespace`` (not in namespaces below it), in pages.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = InMemoryStore()
        >>> store.put(("a",), "k", {"v": 1}); store.put(("a", "b"), "k", {})
        >>> [i.key for i in list_namespace(store, ("a",))]
        ['k']
    """
    items: dict[str, Item] = {}
    offset = 0
    while True:
        (page,) = store.batch(
            [SearchOp(namespace, filter=filters or None, limit=PAGE, offset=offset)]
        )
        page = cast(list[Item], page or [])
        for item in page:
            if tuple(item.namespace) == namespace:  # a second guard: exact namespace
                items[item.key] = item
        if len(page) < PAGE:
            return list(items.values())
        offset += PAGE


def searchable(record: Mapping[str, Any]) -> bool:
    """A stored record recall may return: a fact, not a forget's tombstone nor a marker."""
    return "key" in record and "value" in record and not record.get("forgotten")


@dataclass
class _Space:
    """One namespace's index. ``docs`` keeps write order: the newest fact is last."""

    docs: dict[str, tuple[Record, Counter[str], int]] = field(default_factory=dict)
    #: term -> {key: (term frequency, document length)}: scoring reads nothing else.
    postings: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    length: int = 0

    def remove(self, key: str) -> None:
        old = self.docs.pop(key, None)
        if old is None:
            return
        for term in old[1]:
            posting = self.postings[term]
            del posting[key]
            if not posting:
                del self.postings[term]
        self.length -= old[2]

    def add(self, key: str, record: Record) -> None:
        self.remove(key)
        if not searchable(record):
            return
        fields = (str(record["key"]), str(record.get("value") or ""))
        text = " ".join((*fields, record.get("text") or ""))
        terms = Counter(tokenize(text))
        size = sum(terms.values())
        self.docs[key] = (record, terms, size)
        for term, tf in terms.items():
            self.postings.setdefault(term, {})[key] = (tf, size)
        self.length += size


class MemoryLexicalIndex:
    """BM25 over an in-process index of each namespace (see the module docstring)."""

    def __init__(self) -> None:
        self._spaces: dict[Namespace, _Space] = {}

    def apply(self, ops: Sequence[PutOp]) -> None:
        for op in ops:
            space = self._spaces.get(tuple(op.namespace))
            if space is None:  # not read yet: its first recall lists the store, this included
                continue
            if op.value is None:
                space.remove(op.key)
            else:
                space.add(op.key, dict(op.value))

    def _space(self, store: BaseStore, namespace: Namespace) -> _Space:
        space = self._spaces.get(namespace)
        if space is None:
            space = _Space()
            items = sorted(list_namespace(store, namespace), key=lambda i: i.updated_at)
            for item in items:
                space.add(item.key, dict(item.value))
            self._spaces[namespace] = space
        return space

    def search(
        self, store: BaseStore, namespaces: Sequence[Namespace], query: str, k: int
    ) -> list[tuple[Record, float]]:
        spaces = [self._space(store, tuple(ns)) for ns in namespaces]
        terms = tokenize(query)
        if not terms:  # each space's docs are in write order: its newest k are its last k
            newest = [r for s in spaces for r, _, _ in islice(reversed(s.docs.values()), k)]
            newest.sort(key=lambda r: str(r.get("created_at") or ""), reverse=True)
            return [(record, 0.0) for record in newest[:k]]
        count = sum(len(s.docs) for s in spaces)
        if not count:
            return []
        average = sum(s.length for s in spaces) / count
        scores: list[dict[str, float]] = [{} for _ in spaces]
        base = 0.0  # BM25Plus gives every document delta * idf of each query term
        for term in terms:  # a repeated query term counts again, as in rank-bm25
            frequency = sum(len(s.postings.get(term, ())) for s in spaces)
            if not frequency:
                continue
            idf = math.log((count + 1) / frequency)
            base += idf * DELTA
            gain, fixed, per_length = idf * (K1 + 1), K1 * (1 - B), K1 * B / average
            for space, scored in zip(spaces, scores, strict=True):
                for key, (tf, size) in space.postings.get(term, {}).items():
                    scored[key] = scored.get(key, 0.0) + gain * tf / (
                        fixed + per_length * size + tf
                    )
        # The best few by score, then ties among them to the newer fact.
        best = heapq.nlargest(
            k + TIE_WINDOW,
            ((n, key, score) for n, scored in enumerate(scores) for key, score in scored.items()),
            key=lambda found: found[2],
        )
        ranked = [(spaces[n].docs[key][0], base + score) for n, key, score in best]
        ranked.sort(key=lambda pair: str(pair[0].get("created_at") or ""), reverse=True)
        ranked.sort(key=lambda pair: -pair[1])  # stable: equal scores stay newest first
        return ranked[:k]
