"""Lexical search in process: a tokenizer and BM25 ranking, offline and deterministic. Used by
``RetrievalMemory`` over past messages and (the tokenizer) by the ``memory://`` fact index
(:mod:`.lexical_index`); SQLite and Postgres rank facts with their own full-text search.

BM25 is the ``rank-bm25`` package's ``BM25Plus`` (the package langchain-community's
``BM25Retriever`` uses). Plus, not the usual Okapi: with the handful of facts one user has,
Okapi's idf is zero for a word found in half the facts and negative above, so a word that
matches one fact out of two would score nothing. Plus keeps every idf positive.

A document matches only when it shares a word with the query (stop words such as "my",
"is", "what" do not count), so a question about a dog never returns the phone number just
because there was room for ``k`` results. Words are case-folded, split on anything that is
not a letter or digit (``dog_name`` is "dog name"), stripped of a possessive ``'s`` and of a
few English endings ("moved" and "move" are one word).

Example:
    >>> tokenize("What is my dog's NAME?  dog_name")
    ['dog', 'nam', 'dog', 'nam']
    >>> docs = ["dog name: Rex", "city: Lyon. I moved to Lyon", "phone: 555-0142"]
    >>> [docs[i] for i, _ in rank("Where did I move to?", docs)]
    ['city: Lyon. I moved to Lyon']
    >>> rank("favourite colour", docs)
    []
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_STOP_TEXT = """a about above after again all am an and any are as at be been before being but by
    can could did do does doing don for from had has have having he her here hers him his
    how i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours out over own please same she should so some such than that
    the their theirs them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours"""
#: Words that carry no topic: questions and statements about any fact are full of them.
STOP_WORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile(r"['’]s\b")


def _stem(word: str) -> str:
    """A light English stemmer: enough that "lives", "lived", "living" and "live" meet."""
    if word.isdigit() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def query_words(text: str) -> list[str]:
    """``text``'s searchable words, unstemmed: case-folded words and numbers, stop words
    dropped (what a database's full-text search gets, to stem its own way).

    Example:
        >>> query_words("What is my dog's NAME?")
        ['dog', 'name']
    """
    words = _WORD.findall(_POSSESSIVE.sub("", str(text).casefold()))
    return [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]


def tokenize(text: str) -> list[str]:
    """``text`` as search terms: case-folded words and numbers, stemmed, stop words dropped.

    Example:
        >>> tokenize("I MOVED to Lyon; call 555-0142!")
        ['mov', 'lyon', 'call', '555', '0142']
    """
    return [_stem(w) for w in query_words(text)]


def rank(query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
    """``(index, score)`` of the documents that share a term with ``query``, best first.

    Equal scores keep the documents' order, so a caller that sorts its documents (newest
    first, say) decides every tie. No term in common, or a query of stop words only: ``[]``.

    Example:
        >>> rank("dog", ["my dog Rex", "a dog", "a cat"])  # the shorter match ranks first
        [(1, ...), (0, ...)]
    """
    terms = tokenize(query)
    tokenized = [tokenize(doc) for doc in documents]
    wanted = set(terms)
    matching = [i for i, doc in enumerate(tokenized) if wanted.intersection(doc)]
    if not matching:
        return []
    from rank_bm25 import BM25Plus  # numpy behind it: imported on the first search only

    scores = BM25Plus(tokenized).get_scores(terms)
    return sorted(((i, float(scores[i])) for i in matching), key=lambda pair: (-pair[1], pair[0]))
