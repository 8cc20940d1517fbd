"""The log of a conversation's recent turns, kept in its context record's ``meta``.

Every saved turn appends an entry: its ``id`` (a stored turn id is never run again: a retry
after :class:`~swarmgraph.memory.errors.TurnOutcomeUnknown` returns the stored turn), how many
messages it stored (``new``: the caller's, ``run``: the run's), and the ``agent`` holding the
conversation after it (with its ``rank`` among agents sharing that name). A stored turn is
replayed from those counts: its messages are the ``new + run`` that precede the later turns'.

Example:
    >>> meta = logged({}, {"id": "t1", "new": 1, "run": 1, "agent": "A"})
    >>> find_turn(meta, "t1")["agent"], find_turn(meta, "t2") is None
    ('A', True)
"""

from __future__ import annotations

#: How many recent turn ids a conversation remembers; a retry after TurnOutcomeUnknown comes
#: within moments, far inside this window.
TURN_LOG = 32


def find_turn(meta: dict, turn_id: str) -> dict | None:
    """The stored entry of ``turn_id`` in a record's ``meta`` (``None``: not stored).

    Example:
        >>> find_turn({"turns": [{"id": "t1", "new": 1, "run": 1, "agent": "A"}]}, "t1")["agent"]
        'A'
        >>> find_turn({}, "t1") is None
        True
    """
    for turn in reversed(meta.get("turns", [])):
        if turn.get("id") == turn_id:
            return turn
    return None


def logged(meta: dict, entry: dict) -> dict:
    """``meta`` with ``entry`` appended to its log of the last :data:`TURN_LOG` turns.

    Example:
        >>> logged({"turns": [{"id": "t1"}]}, {"id": "t2"})
        {'turns': [{'id': 't1'}, {'id': 't2'}]}
    """
    return {**meta, "turns": [*meta.get("turns", []), entry][-TURN_LOG:]}


def ranked(meta: dict, rank: int) -> dict:
    """``meta`` with the active agent's rank among agents of its name (absent when 0).

    Example:
        >>> ranked({"turns": []}, 1), ranked({"agent_rank": 1}, 0)
        ({'turns': [], 'agent_rank': 1}, {})
    """
    kept = {k: v for k, v in meta.items() if k != "agent_rank"}
    if rank:
        kept["agent_rank"] = rank
    return kept


def stored_slice(meta: dict, turn: dict) -> tuple[int, int]:
    """Where ``turn``'s messages sit, counted from the end of the conversation: the last
    ``span`` messages hold them first, ``size`` of them.

    Example:
        >>> meta = {"turns": [{"id": "a", "new": 1, "run": 3}, {"id": "b", "new": 1, "run": 1}]}
        >>> stored_slice(meta, meta["turns"][0])
        (4, 6)
    """
    turns = meta.get("turns", [])
    later = turns[turns.index(turn) + 1 :]
    size = turn["new"] + turn["run"]
    return size, size + sum(t["new"] + t["run"] for t in later)
