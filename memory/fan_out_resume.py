"""Resuming a parallel fan-out that paused inside a branch: the record a turn writes when a
branch waits for approval (the branches to resume, what waits, the call they answer), and
reading it back when the conversation still ends on that call; and a turn that died inside a
branch, resumed from the records its open entry keeps (:func:`resume_branches`).

A Session enters this module only when a run fanned out, or a resumed turn picks a fan-out
up; a steady turn of a program without ``Parallel`` never does.

Example:
    >>> from swarmgraph.graph import Response
    >>> fan_out_records(Response(), resumed=True)
    [Record(kind='parallel', key='paused', value=None, if_absent=False)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from .store import Record

if TYPE_CHECKING:
    from ..graph.core.types import Response
    from ..graph.features.approvals import PendingApproval
    from .store import ConversationStore

#: The record a turn that paused inside a parallel branch is kept in (kind, key): the branches
#: to resume (``Response.branches``), what waits, and the fan-out call they answer.
PAUSED = ("parallel", "paused")


def fan_out_records(response: Response, resumed: bool) -> list[Record]:
    """The records a turn writes for parallel branches: the paused fan-out when a branch waits
    for approval; ``None`` in its place once a resumed fan-out went on. (The branches of a
    joined fan-out need none: the joined answer carries them, see ``graph.branches``.)

    Example:
        >>> from swarmgraph.graph import Response
        >>> fan_out_records(Response(), resumed=True)
        [Record(kind='parallel', key='paused', value=None, if_absent=False)]
        >>> fan_out_records(Response(), resumed=False)
        []
    """
    waiting = [b for b in response.branches if b["status"] == "waiting" and "/" not in b["branch"]]
    if waiting:
        call = waiting[0]["plan"]["calls"][0][0]
        value = {
            "call": call,
            "branches": response.branches,
            "pending": [p.model_dump() for p in response.pending],
        }
        return [Record(*PAUSED, value)]
    return [Record(*PAUSED, None)] if resumed else []


def resume_branches(turn: Any, stored: dict, run_kwargs: dict[str, Any]) -> None:
    """An open turn that died inside parallel branches (an effect call in one of them was
    recorded with every branch's progress, graph/features/branches.py ``progress_of``): the retry
    resumes each branch from its record (``Swarm.run(branches=)``), so a call recorded
    started comes back in doubt and one recorded done is answered from its record, never
    run again under a new name.

    Example:
        >>> class Turn: resumes_fan_out = False
        >>> turn, kwargs = Turn(), {}
        >>> resume_branches(turn, {"branches": [{"branch": "A"}]}, kwargs)
        >>> turn.resumes_fan_out, kwargs["branches"]
        (True, [{'branch': 'A'}])
    """
    branches = stored.get("branches")
    if branches:
        run_kwargs["branches"] = branches
        turn.resumes_fan_out = True


def paused_pending(paused: dict) -> list[PendingApproval]:
    """What a stored paused fan-out waits on, as ``PendingApproval`` s."""
    from ..graph.features.approvals import PendingApproval

    return [PendingApproval(**p) for p in paused.get("pending", [])]


def open_call_ids(messages: Sequence[BaseMessage]) -> set[str]:
    """The ids of the tool calls the conversation ends on without an answer."""
    from ..graph.features.approvals import open_calls

    found = open_calls(messages)
    return {c.get("id") or "" for c in found[1]} if found else set()


def paused_fan_out(
    store: ConversationStore, conversation_id: str, messages: Sequence[BaseMessage]
) -> dict | None:
    """The paused fan-out stored with the last turn, if the conversation still ends on
    its open call (``None``: none, or it was answered since)."""
    paused = store.records(conversation_id, PAUSED[0], [PAUSED[1]]).get(PAUSED[1])
    if not paused:
        return None
    return paused if paused.get("call") in open_call_ids(messages) else None
