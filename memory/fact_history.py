"""What a fact used to be: each superseded value with when it held, and recall of those
values when a question is about the past ("before", "used to", "previously", "last year")
or counts what there has been ("how many cities have I lived in?").

:meth:`~.long_term.LongTermMemory.history` keeps every value a key has had; each superseded
one carries ``superseded_at``, when the next value (or a forget) replaced it, so it held from
its ``created_at`` until then. Recall only ever ranks current values; when the question
:func:`asks_about_past`, the recalled facts' earlier values join them in the recall block
(:func:`with_earlier`), each marked as an earlier value with its dates, so "Where did I live
before Porto?" finds the city before it.

Example:
    >>> from swarmgraph.memory import LongTermMemory
    >>> memory = LongTermMemory("memory://doctest-fact-history", user_id="ming")
    >>> _ = memory.remember("home_city", "Lyon", text="I live in Lyon.")
    >>> _ = memory.remember("home_city", "Porto", text="I moved to Porto.")
    >>> [(f.value, f.superseded_at is not None) for f in memory.history("home_city")]
    [('Lyon', True), ('Porto', False)]
    >>> asks_about_past("Where did I live before Porto?"), asks_about_past("Where do I live?")
    (True, False)
    >>> question = "Where did I live before?"   # only the earlier value's text says "live"
    >>> memory.recall(question)
    []
    >>> [f.value for f in with_earlier(memory, memory.recall(question), question)]
    ['Porto', 'Lyon']
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .fact import Fact

if TYPE_CHECKING:
    from .long_term import LongTermMemory

#: Words that ask about what was, not what is.
PAST = re.compile(
    r"\b(before|used to|use to|previous(ly)?|formerly|former|earlier|originally|at first|"
    r"no longer|any ?more|my old|last (year|month|week|time|summer|winter|spring|autumn)|"
    r"(years?|months?|weeks?) ago|in the past|back then|once upon|"
    # "How many cities have I lived in?" counts every value a fact has had (issue 39)
    r"how many\b.*\b(have|had|did) (i|we)\b)\b",
    re.IGNORECASE,
)
#: Earlier values shown per recalled fact, newest first.
EARLIER_PER_FACT = 3


def asks_about_past(text: str) -> bool:
    """True when ``text`` asks about an earlier state ("before", "used to", "last year"...).

    Example:
        >>> asks_about_past("What car did I use to drive?"), asks_about_past("My car?")
        (True, False)
        >>> asks_about_past("How many cities have I lived in?"), asks_about_past("How many?")
        (True, False)
    """
    return bool(PAST.search(text or ""))


def with_spans(history: Sequence[Fact]) -> list[Fact]:
    """``history`` (oldest first) with each entry's ``superseded_at``: when the next entry
    (a new value or a forget) was written; the last entry has none."""
    spans = list(history)
    for at, after in enumerate(history[1:]):
        if after.created_at is not None:
            spans[at] = dataclasses.replace(history[at], superseded_at=after.created_at)
    return spans


def earlier_values(memory: LongTermMemory, fact: Fact, limit: int = EARLIER_PER_FACT) -> list[Fact]:
    """The values ``fact``'s key held before its current one, newest first (forgets and
    repeats of the current value left out), each with when it held."""
    agent = fact.agent if fact.scope == "agent" else None
    past = memory.history(fact.key, fact.scope, agent)[:-1]
    earlier = [f for f in reversed(past) if not f.forgotten and f.value != fact.value]
    return earlier[:limit]


def with_earlier(
    memory: LongTermMemory,
    facts: Sequence[Fact],
    query: str = "",
    agent: str | None = None,
    k: int = 3,
) -> list[Fact]:
    """``facts`` (recalled, most relevant first), each followed by its earlier values; then,
    for ``query``, the current facts whose *earlier* values match it best (up to ``k``
    more keys: "Where did I live before?" matches "I live in Lyon", said before the move to
    Porto), each with its earlier values too. A forgotten key's past is never recalled: the
    user asked to forget it."""
    slots = [(f.scope, f.agent, f.key) for f in facts]
    more: list[Fact] = []
    if query.strip():
        spaces = [space for space, _ in _spaces(memory, agent)]
        hits = memory._store.lexical_search(spaces, query, 3 * k)
        for record, _ in hits:
            past = Fact.from_record(record)
            slot = (past.scope, past.agent, past.key)
            if slot in slots or len(more) >= k:
                continue
            slots.append(slot)
            current = memory.get(past.key, past.scope, past.agent)
            if current is not None:
                more.append(current)
    out: list[Fact] = []
    for fact in (*facts, *more):
        out.append(fact)
        if fact.superseded_at is None and fact.version > 1:  # a current fact with a past
            out.extend(earlier_values(memory, fact))
    return out


def _spaces(memory: LongTermMemory, agent: str | None) -> list[tuple[tuple[str, ...], str]]:
    """The history namespaces ``agent`` may read, with their scopes, most specific first."""
    from .fact_namespaces import namespaces

    scopes: list[tuple[str, str | None]] = [("user", None), ("shared", None)]
    if agent is not None:
        scopes.insert(0, ("agent", agent))
    return [(namespaces(memory._user, s, a)[1], s) for s, a in scopes]


def held(fact: Fact) -> str:
    """When a superseded value held, as the recall block and the ``history`` tool say it.

    Example:
        >>> from datetime import datetime
        >>> held(Fact("city", "Lyon", "user", created_at=datetime(2025, 3, 1),
        ...           superseded_at=datetime(2026, 1, 9)))
        'earlier value, held from 2025-03-01 until 2026-01-09'
    """
    start = f" from {fact.created_at:%Y-%m-%d}" if fact.created_at else ""
    end = f" until {fact.superseded_at:%Y-%m-%d}" if fact.superseded_at else ""
    return f"earlier value, held{start}{end}"
