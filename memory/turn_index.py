"""Every turn id a conversation stored, as indexed records: ``Record("turn", <turn id>, entry)``.

A stored turn id is never run again: a retry (after ``TurnOutcomeUnknown``, a timeout, a
crash) finds its entry and gets the stored turn back. The entries are records of the
conversation (one row, or hash field, each, found by key in the load itself), so none is
ever forgotten: not after 32 turns, not after 32,000. ``clear()`` of the conversation
forgets them with everything else.

An entry is one of two kinds:

* ``done``: where the turn's messages sit (``position``: how many messages the conversation
  held before them, ``new``: the caller's, ``run``: the run's, ``first``: the id of the first,
  so a replay checks it reads the right ones), and the agent holding the conversation after it
  (``agent``, with its ``rank`` among agents sharing that name);
* ``open``: a turn in flight that ran an effect tool (graph/features/effects.py). Its messages so
far
  (the caller's, then the run's, up to the assistant message that called the tool), the
  context it started from (``base``) and has now, and its agent are kept here, not in the
  conversation, so concurrent turns never interleave messages; ``owner`` names the run that
  holds it. A retry of the turn id resumes from them.

Conversations stored by earlier versions kept the last 32 turn ids in the context record's
``meta["turns"]``; those are still read (:func:`legacy_turn`).

Example:
    >>> from swarmgraph.memory.store import Snapshot
    >>> entry = done_entry(position=4, new=1, run=3, first="m5", agent="Refunds", rank=0)
    >>> snapshot = Snapshot(records={("turn", "t-9"): entry}, count=8)
    >>> find_turn(snapshot, "t-9")["position"], find_turn(snapshot, "t-1") is None
    (4, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

from .store import ConversationStore, Record, Snapshot, Window

#: The record kind of the turn index.
TURN = "turn"
#: Where ``meta`` lists the turns in flight (open entries), so ``Session.pending`` finds calls
#: left in doubt by a turn nobody retried.
OPEN_TURNS = "open_turns"
#: Where earlier versions kept the log of the last 32 turns (read, never written).
LEGACY_LOG = "turns"
#: Where ``meta`` keeps the active agent's rank among agents of its name (absent when 0).
AGENT_RANK = "agent_rank"


def turn_record(turn_id: str, entry: dict[str, Any], *, first: bool = False) -> Record:
    """The record of ``entry``; ``first``: put-if-absent (a run claiming a new turn id: if
    another run of the same id got there first, its save fails with ``RecordExists``)."""
    return Record(TURN, turn_id, entry, if_absent=first)


def done_entry(
    *, position: int | None, new: int, run: int, first: str | None, agent: str | None, rank: int
) -> dict[str, Any]:
    """The entry of a stored turn (``position`` ``None``: not known when it was saved, the
    first turn of a conversation a chat history wrote to; a replay then finds its messages by
    the first one's id).

    Example:
        >>> done_entry(position=0, new=1, run=1, first=None, agent="A", rank=0)
        {'status': 'done', 'position': 0, 'new': 1, 'run': 1, 'agent': 'A'}
    """
    entry: dict[str, Any] = {"status": "done", "position": position, "new": new, "run": run}
    if position is None:
        del entry["position"]
    if first is not None:
        entry["first"] = first
    entry["agent"] = agent
    if rank:
        entry["rank"] = rank
    return entry


def find_turn(snapshot: Snapshot, turn_id: str) -> dict[str, Any] | None:
    """The entry of ``turn_id``: its record (which the load asked for), else the log an
    earlier version kept in ``meta`` (``None``: not stored).

    Example:
        >>> from swarmgraph.memory.store import Snapshot
        >>> old = Snapshot(meta={"turns": [{"id": "t1", "new": 1, "run": 1, "agent": "A"}]},
        ...                count=2)
        >>> find_turn(old, "t1")
        {'status': 'done', 'position': 0, 'new': 1, 'run': 1, 'agent': 'A'}
    """
    entry = snapshot.records.get((TURN, turn_id))
    if isinstance(entry, dict):
        return entry
    return legacy_turn(snapshot, turn_id) if LEGACY_LOG in snapshot.meta else None


def legacy_turn(snapshot: Snapshot, turn_id: str) -> dict[str, Any] | None:
    """A turn in the log of the last 32 turns earlier versions kept in ``meta["turns"]``, as a
    ``done`` entry: its messages are the ``new + run`` that precede the later turns'.

    Example:
        >>> from swarmgraph.memory.store import Snapshot
        >>> meta = {"turns": [{"id": "a", "new": 1, "run": 3}, {"id": "b", "new": 1, "run": 1}]}
        >>> legacy_turn(Snapshot(meta=meta, count=10), "a")["position"]
        4
    """
    turns = snapshot.meta.get("turns") or []
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if turn.get("id") != turn_id:
            continue
        size = turn["new"] + turn["run"]
        later = sum(t["new"] + t["run"] for t in turns[index + 1 :])
        position = max((snapshot.count or 0) - later - size, 0)
        return done_entry(
            position=position,
            new=turn["new"],
            run=turn["run"],
            first=None,
            agent=turn.get("agent"),
            rank=turn.get("rank", 0),
        )
    return None


def with_open(meta: dict[str, Any], turn_id: str, *, still: bool = True) -> dict[str, Any]:
    """``meta`` with ``turn_id`` listed among the turns in flight (``still=False``: not).

    Example:
        >>> with_open({}, "t1"), with_open({"open_turns": ["t1"]}, "t1", still=False)
        ({'open_turns': ['t1']}, {})
    """
    listed = [t for t in meta.get(OPEN_TURNS, []) if t != turn_id]
    if still:
        listed.append(turn_id)
    kept = {k: v for k, v in meta.items() if k != OPEN_TURNS}
    if listed:
        kept[OPEN_TURNS] = listed
    return kept


def without_legacy_log(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` as this version writes it: an earlier version's turn log stays readable until
    the conversation's next turn, which has its own record (the old ids are copied into
    records by :func:`legacy_records` in that same save).

    Example:
        >>> without_legacy_log({"turns": [], "summary": "s"})
        {'summary': 's'}
    """
    return {k: v for k, v in meta.items() if k != "turns"}


def legacy_records(snapshot: Snapshot, *, but: str | None = None) -> list[Record]:
    """The turns an earlier version logged in ``meta``, as records of this version (written
    once, with the first save that drops the log), so none of those ids is forgotten; ``but``:
    a turn id left out (the saving turn writes its own record).

    Example:
        >>> from swarmgraph.memory.store import Snapshot
        >>> snap = Snapshot(meta={"turns": [{"id": "t1", "new": 1, "run": 1}]}, count=2)
        >>> [(r.key, r.value["position"]) for r in legacy_records(snap)]
        [('t1', 0)]
    """
    records: list[Record] = []
    for turn in snapshot.meta.get(LEGACY_LOG) or []:
        entry = legacy_turn(snapshot, turn.get("id", ""))
        if entry is not None and turn.get("id") and turn["id"] != but:
            records.append(turn_record(turn["id"], entry))
    return records


def done_meta(meta: dict[str, Any], turn_id: str, rank: int | None) -> dict[str, Any]:
    """``meta`` as a finished turn saves it, in one pass: without an earlier version's turn
    log (:func:`without_legacy_log`), ``turn_id`` no longer in flight (:func:`with_open`),
    and the active agent's ``rank`` (:func:`ranked`; ``None``: left as stored).

    Example:
        >>> done_meta({"turns": [], "open_turns": ["t1", "t2"], "agent_rank": 2}, "t1", 0)
        {'open_turns': ['t2']}
        >>> done_meta({"agent_rank": 2}, "t1", None)
        {'agent_rank': 2}
    """
    kept: dict[str, Any] = {}
    still: list[str] = []
    for key, value in meta.items():
        if key == OPEN_TURNS:
            still = [t for t in value if t != turn_id]
        elif key != LEGACY_LOG and (key != AGENT_RANK or rank is None):
            kept[key] = value
    if still:
        kept[OPEN_TURNS] = still
    if rank:
        kept[AGENT_RANK] = rank
    return kept


def stored_turn_messages(
    store: ConversationStore, conversation_id: str, stored: dict[str, Any], size: int
) -> list[BaseMessage]:
    """A stored turn's ``size`` messages, from its position on: checked by the first
    one's id (messages a chat history appended meanwhile may sit before them); empty if
    they were cleared since (the turn still never runs twice)."""
    window = Window(start=int(stored.get("position") or 0))
    found = store.load(conversation_id, window=window).messages
    first = stored.get("first")
    if first is None:  # a turn an earlier version logged: position and counts only
        return found[:size]
    at = next((i for i, m in enumerate(found) if m.id == first), None)
    return [] if at is None else found[at : at + size]


def stored_turns(store: ConversationStore, conversation_id: str) -> list[str]:
    """Every turn id the conversation stored, in the order of its messages (turns in flight
    last): for tools and tests; a turn itself reads only its own entry.

    Example:
        >>> from swarmgraph.memory.backends import open_store
        >>> from swarmgraph.memory.store import TurnWrite
        >>> store = open_store("memory://turn-ids-doc")
        >>> entry = done_entry(position=0, new=1, run=1, first=None, agent="A", rank=0)
        >>> store.save("c", TurnWrite(records=[turn_record("t-1", entry)]), expected_version=0)
        1
        >>> stored_turns(store, "c")
        ['t-1']
    """
    entries = store.records(conversation_id, TURN)
    ordered = sorted(
        entries.items(),
        key=lambda item: (item[1].get("status", "done") != "done", item[1].get("position", 0)),
    )
    return [turn_id for turn_id, _ in ordered]


def ranked(meta: dict, rank: int) -> dict:
    """``meta`` with the active agent's rank among agents of its name (absent when 0).

    Example:
        >>> ranked({"summary": "s"}, 1), ranked({"agent_rank": 1}, 0)
        ({'summary': 's', 'agent_rank': 1}, {})
    """
    kept = {k: v for k, v in meta.items() if k != "agent_rank"}
    if rank:
        kept["agent_rank"] = rank
    return kept
