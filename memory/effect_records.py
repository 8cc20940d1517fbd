"""What the store records of a turn's effect calls, and how they are read back: the record
kinds (``effect``, ``effect.done``, ``approval``; the table in :mod:`.effect_ledger`), one key
per attempt of a call, and the reads that say what became of each call.

Its own module, beside :mod:`.effect_ledger` (which writes the records): the approvals read
the same records (:func:`call_states`, behind ``Session.pending``) without the ledger.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .store import ConversationStore
from .turn_index import TURN

if TYPE_CHECKING:
    from ..graph.features.effects import EffectOutcome

__all__ = ["APPROVAL", "DONE", "EFFECT", "MAX_ATTEMPTS", "attempt_key", "call_states",
           "recorded_outcomes"]  # fmt: skip

EFFECT = "effect"
DONE = "effect.done"
APPROVAL = "approval"
#: Attempts of one call a ledger looks for (a human approving the same call in doubt again
#: and again is rare; past this many the call stays in doubt).
MAX_ATTEMPTS = 9


def attempt_key(key: str, attempt: int) -> str:
    """The ``effect`` record of one attempt of a call (the first is the call's own key).

    Example:
        >>> attempt_key("c1@r1", 1), attempt_key("c1@r1", 2)
        ('c1@r1', 'c1@r1#2')
    """
    return key if attempt <= 1 else f"{key}#{attempt}"


def recorded_outcomes(
    store: ConversationStore, conversation_id: str, keys: Collection[str]
) -> dict[str, tuple[EffectOutcome, str | None]]:
    """What is recorded for the calls ``keys``: ``key -> (outcome, turn id that started it)``
    (two reads: the attempts started, the results)."""
    from ..graph.features.effects import EffectOutcome

    if not keys:
        return {}
    wanted = [attempt_key(k, n) for k in keys for n in range(1, MAX_ATTEMPTS + 1)]
    started = store.records(conversation_id, EFFECT, wanted)
    done = store.records(conversation_id, DONE, list(keys))
    found: dict[str, tuple[EffectOutcome, str | None]] = {}
    for key in keys:
        attempts = [started[attempt_key(key, n)] for n in range(1, MAX_ATTEMPTS + 1)
                    if attempt_key(key, n) in started]  # fmt: skip
        last = attempts[-1] if attempts else None
        by = last.get("turn") if isinstance(last, dict) else None
        if key in done:
            found[key] = (EffectOutcome.from_record(done[key]), by)
        elif last is not None:
            found[key] = (EffectOutcome.from_record(last), by)
    return found


def call_states(
    store: ConversationStore, conversation_id: str, keys: Collection[str]
) -> dict[str, tuple[EffectOutcome, str | None, dict[str, Any] | None]]:
    """What is recorded for the calls ``keys`` and whether the turn that started each is still
    running: ``key -> (outcome, turn id that started it, that turn's entry)`` (three reads).

    The reads go in this order: the attempts started, the starters' turn entries, then the
    results. A run records a call's result before its turn's entry stops being ``open`` (the
    result right after the tool, the entry at the turn's final save), so a starter read
    finished whose result is not there in the read after it finished without one: it died
    with the call unfinished (or a retry of its turn id took over and stopped), and the call
    is in doubt. Read the other way round, a call another process finishes between the two
    reads would look in doubt, and a second decision about it could land (issue 40).

    Example:
        >>> from swarmgraph.memory.backends import open_store
        >>> from swarmgraph.memory.store import Record, TurnWrite
        >>> store = open_store("memory://call-states-doc")
        >>> started = Record(EFFECT, "c1@r1", {"status": "started", "attempt": 1, "turn": "t1"})
        >>> opened = Record(TURN, "t1", {"status": "open", "owner": "o"})
        >>> _ = store.save("conv", TurnWrite(records=[started, opened]), expected_version=0)
        >>> outcome, by, entry = call_states(store, "conv", ["c1@r1"])["c1@r1"]
        >>> outcome.status, by, entry["status"]
        ('started', 't1', 'open')
    """
    from ..graph.features.effects import EffectOutcome

    if not keys:
        return {}
    wanted = [attempt_key(k, n) for k in keys for n in range(1, MAX_ATTEMPTS + 1)]
    started = store.records(conversation_id, EFFECT, wanted)
    starters: dict[str, str] = {}
    last: dict[str, Any] = {}
    for key in keys:
        for n in range(MAX_ATTEMPTS, 0, -1):
            if attempt_key(key, n) in started:
                last[key] = started[attempt_key(key, n)]
                by = last[key].get("turn") if isinstance(last[key], dict) else None
                if by:
                    starters[key] = by
                break
    owners = sorted(set(starters.values()))
    entries = store.records(conversation_id, TURN, owners) if owners else {}
    done = store.records(conversation_id, DONE, list(keys))  # after the entries: see above
    found: dict[str, tuple[EffectOutcome, str | None, dict[str, Any] | None]] = {}
    for key in keys:
        by = starters.get(key)
        entry = entries.get(by) if by else None
        entry = entry if isinstance(entry, dict) else None
        if key in done:
            found[key] = (EffectOutcome.from_record(done[key]), by, entry)
        elif key in last:
            found[key] = (EffectOutcome.from_record(last[key]), by, entry)
    return found
