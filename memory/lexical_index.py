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


class _Postings:
    """One term's postings: the slots of the facts holding it and its count in each, in
    arrays that grow by doubling (a fact's removal moves the last entry into its place), so
    a recall scores a term's matches in one vectorised expression."""

    def __init__(self) -> None:
        import numpy as np

        self.slots = np.empty(4, dtype=np.int64)
        self.counts = np.empty(4, dtype=np.float64)
        self.size = 0
        self.where: dict[int, int] = {}  # slot -> its position in the arrays

    def add(self, slot: int, count: int) -> None:
        if self.size == len(self.slots):
            self.slots, self.counts = _grown(self.slots), _grown(self.counts)
        self.slots[self.size], self.counts[self.size] = slot, count
        self.where[slot] = self.size
        self.size += 1

    def remove(self, slot: int) -> None:
        at, last = self.where.pop(slot), self.size - 1
        if at != last:
            moved = int(self.slots[last])
            self.slots[at], self.counts[at] = moved, self.counts[last]
            self.where[moved] = at
        self.size = last


def _grown(array: Any) -> Any:
    import numpy as np

    bigger = np.empty(2 * len(array), dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


class _Space:
    """One namespace's index. ``docs`` keeps write order: the newest fact is last. Each
    fact has a slot (reused after its removal) where its length and write sequence sit in
    arrays; its postings name it by slot."""

    def __init__(self) -> None:
        import numpy as np

        #: key -> (record, term counts, length, slot)
        self.docs: dict[str, tuple[Record, Counter[str], int, int]] = {}
        self.postings: dict[str, _Postings] = {}
        self.length = 0
        self.sizes = np.zeros(4, dtype=np.float64)  # slot -> the fact's length in terms
        self.order = np.zeros(4, dtype=np.int64)  # slot -> when it was (re)added
        self.keys: list[str] = []  # slot -> key
        self.written: list[tuple[int, int]] = []  # slot -> (length, order), as Python ints
        self.free: list[int] = []
        self.added = 0

    def remove(self, key: str) -> None:
        old = self.docs.pop(key, None)
        if old is None:
            return
        _, terms, size, slot = old
        for term in terms:
            posting = self.postings[term]
            posting.remove(slot)
            if not posting.size:
                del self.postings[term]
        self.length -= size
        self.free.append(slot)

    def add(self, key: str, record: Record) -> None:
        self.remove(key)
        if not searchable(record):
            return
        fields = (str(record["key"]), str(record.get("value") or ""))
        text = " ".join((*fields, record.get("text") or ""))
        terms = Counter(tokenize(text))
        size = sum(terms.values())
        if self.free:
            slot = self.free.pop()
            self.keys[slot], self.written[slot] = key, (size, self.added)
        else:
            slot = len(self.keys)
            self.keys.append(key)
            self.written.append((size, self.added))
            if slot == len(self.sizes):
                self.sizes, self.order = _grown(self.sizes), _grown(self.order)
        self.sizes[slot], self.order[slot] = size, self.added
        self.added += 1
        self.docs[key] = (record, terms, size, slot)
        for term, tf in terms.items():
            posting = self.postings.get(term)
            if posting is None:
                posting = self.postings[term] = _Postings()
            posting.add(slot, tf)
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
            newest = [d[0] for s in spaces for d in islice(reversed(s.docs.values()), k)]
            newest.sort(key=lambda r: str(r.get("created_at") or ""), reverse=True)
            return [(record, 0.0) for record in newest[:k]]
        count = sum(len(s.docs) for s in spaces)
        if not count:
            return []
        average = sum(s.length for s in spaces) / count
        base, plan, matches = 0.0, [], 0  # BM25Plus gives every document delta * idf per term
        for position, term in enumerate(terms):  # a repeated term counts again (rank-bm25)
            found = [s.postings.get(term) for s in spaces]
            frequency = sum(p.size for p in found if p is not None)
            if not frequency:
                continue
            idf = math.log((count + 1) / frequency)
            base += idf * DELTA
            plan.append((position, idf * (K1 + 1), K1 * B / average, found))
            matches += frequency
        score = _score_few if matches <= FEW else _score_many
        picks = score(spaces, plan, len(terms), k + TIE_WINDOW)
        ranked = [
            (spaces[n].docs[spaces[n].keys[slot]][0], base + value) for n, slot, value in picks
        ]
        ranked.sort(key=lambda pair: str(pair[0].get("created_at") or ""), reverse=True)
        ranked.sort(key=lambda pair: -pair[1])  # stable: equal scores stay newest first
        return ranked[:k]


#: A term's matches (a query's postings, all terms together) up to which they are scored
#: one by one; more are scored as arrays, whose fixed cost a few matches would not repay.
FEW = 128
#: Per query term: its position in the query, idf * (k1 + 1), k1 * b / average length, and
#: its postings in each namespace searched (``None``: none there).
Plan = list[tuple[int, float, float, list[_Postings | None]]]
#: A match picked: the namespace's position, the fact's slot, its score (without the base).
Pick = tuple[int, int, float]


def _score_few(spaces: Sequence[_Space], plan: Plan, unmatched: int, wanted: int) -> list[Pick]:
    """BM25Plus per document, then the ``wanted`` best, ties in scan order: namespace, the
    first query term matched, write order (as a scan of every fact would meet them)."""
    fixed = K1 * (1 - B)
    scored: dict[tuple[int, int], list[Any]] = {}  # (namespace, slot) -> [score, first term]
    for position, gain, per_length, found in plan:
        for n, posting in enumerate(found):
            if posting is None:
                continue
            written = spaces[n].written
            slots, counts = posting.slots[: posting.size], posting.counts[: posting.size]
            for slot, tf in zip(slots.tolist(), counts.tolist(), strict=True):
                entry = scored.setdefault((n, slot), [0.0, position])
                entry[0] += gain * tf / (fixed + per_length * written[slot][0] + tf)
    # Only those at or above the wanted-th best score are sorted, on the full order.
    floor = min(heapq.nlargest(wanted, (entry[0] for entry in scored.values())), default=0.0)
    ranked = sorted(
        ((-value, n, first, spaces[n].written[slot][1], slot)
         for (n, slot), (value, first) in scored.items() if value >= floor)
    )[:wanted]  # fmt: skip
    return [(n, slot, -negated) for negated, n, _, _, slot in ranked]


def _score_many(spaces: Sequence[_Space], plan: Plan, unmatched: int, wanted: int) -> list[Pick]:
    """As :func:`_score_few`, on arrays: per namespace a score and the first query term
    matched (``unmatched``: none) for every slot; the few at or above the ``wanted``-th
    best score are sorted."""
    import numpy as np

    fixed = K1 * (1 - B)
    scores = [np.zeros(len(s.keys)) for s in spaces]
    first = [np.full(len(s.keys), unmatched, dtype=np.int64) for s in spaces]
    for position, gain, per_length, found in plan:
        for space, posting, scored, seen in zip(spaces, found, scores, first, strict=True):
            if posting is None:
                continue
            slots, tf = posting.slots[: posting.size], posting.counts[: posting.size]
            # The same arithmetic, in the same order, as the per-document formula.
            scored[slots] += gain * tf / (fixed + per_length * space.sizes[slots] + tf)
            seen[slots] = np.minimum(seen[slots], position)
    parts = [(n, np.flatnonzero(seen < unmatched)) for n, seen in enumerate(first)]
    score = np.concatenate([scores[n][hit] for n, hit in parts])
    among = np.concatenate([np.full(len(hit), n) for n, hit in parts])
    slot = np.concatenate([hit for _, hit in parts])
    term = np.concatenate([first[n][hit] for n, hit in parts])
    order = np.concatenate([spaces[n].order[hit] for n, hit in parts])
    if len(score) > wanted:  # only those at or above the wanted-th best score are sorted
        floor = np.partition(score, len(score) - wanted)[len(score) - wanted]
        keep = np.flatnonzero(score >= floor)
        score, among, slot, term, order = (a[keep] for a in (score, among, slot, term, order))
    picked = np.lexsort((order, term, among, -score))[:wanted]
    return [(int(among[i]), int(slot[i]), float(score[i])) for i in picked]
