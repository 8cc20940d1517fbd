"""How long-term memory ranks facts for a query: BM25, vector similarity, or both fused.

=========  ===========================================================  ==================
ranking    what it returns                                              default when
=========  ===========================================================  ==================
"bm25"     facts sharing a word with the query, best BM25 score first   no ``embeddings``
"vector"   the facts nearest the query in the store's vector index      never (opt in)
"hybrid"   both lists fused by reciprocal rank (RRF): a fact high in     ``embeddings``
           either list ranks high; one in both ranks highest            given
=========  ===========================================================  ==================

Reciprocal rank fusion scores a fact ``1 / (RRF_K + rank)`` in each list it is in and adds
them (Cormack, Clarke and Büttcher, 2009; ``RRF_K = 60`` as there). It needs no
calibration between BM25 scores and cosine similarities, which are on unrelated scales,
and it is cheap: the BM25 ranking is computed anyway, the vector ranking is one search.
A fact with no word in common still gets its vector rank, so a reworded question ("where
am I based?" for ``city``) finds it; an exact word match (a name, a number) that the
embedding model blurs is kept near the top by BM25.

Example:
    >>> fuse([2, 0], [0, 1, 2])      # 0 is in both lists near the top: first
    [0, 2, 1]
    >>> check_ranking(None, vector=False), check_ranking(None, vector=True)
    ('bm25', 'hybrid')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Ranking = Literal["bm25", "vector", "hybrid"]
RANKINGS: tuple[Ranking, ...] = get_args(Ranking)
#: Reciprocal rank fusion's constant: large enough that rank 1 does not swamp rank 2.
RRF_K = 60


def check_ranking(ranking: object, *, vector: bool) -> Ranking:
    """``ranking`` checked against the store (``vector``: it has embeddings); ``None`` is
    the default, ``"hybrid"`` with embeddings and ``"bm25"`` without.

    Example:
        >>> check_ranking("vector", vector=False)
        Traceback (most recent call last):
        ...
        ValueError: ranking='vector' needs a store opened with embeddings=; this one has none
    """
    if ranking is None:
        return "hybrid" if vector else "bm25"
    if ranking not in RANKINGS:
        raise ValueError(
            f"ranking must be one of {', '.join(map(repr, RANKINGS))} or None, got {ranking!r}"
        )
    if ranking != "bm25" and not vector:
        raise ValueError(
            f"ranking={ranking!r} needs a store opened with embeddings=; this one has none"
        )
    return ranking


def fuse(*rankings: Sequence[int]) -> list[int]:
    """Reciprocal rank fusion of ``rankings`` (each a list of item indices, best first):
    every item in any list, best fused score first; ties keep the smaller index (the
    caller's order: newest fact first).

    Example:
        >>> fuse([1, 2], [])          # one list alone keeps its order
        [1, 2]
        >>> fuse([0, 1], [1, 0])      # a tie: the caller's order decides
        [0, 1]
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))
