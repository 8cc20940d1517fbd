"""What a Session does about approvals around its load and run: before a turn runs, check it
against the calls the stored conversation waits on (a new message while calls wait is an
error; a decision for a call someone decided first is too) and hand the decisions to the
run; and list what waits, for ``Session.pending``.

A Session enters this module only when the turn brings decisions (``approvals=``) or the
stored conversation ends on a tool call (a turn that paused); a steady turn whose last turn
ended on an answer never does.

Example:
    >>> from swarmgraph.memory.backends import open_store
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> store = open_store("memory://doc-approval-resume")
    >>> said = [HumanMessage("hi"), AIMessage("Hello.")]
    >>> kwargs = {}
    >>> check_approvals(store, "c1", said, [HumanMessage("and?")], None, kwargs), kwargs
    (False, {})
    >>> stored_pending(store, "c1", said)
    []
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from .approvals import already_decided, check_turn, pending_in, tail_outcomes
from .fan_out_resume import paused_fan_out, paused_pending

if TYPE_CHECKING:
    from ..graph.features.approvals import PendingApproval
    from .store import ConversationStore

#: How many stored messages ``Session.pending`` reads: enough for one reply's tool answers.
PENDING_TAIL = 64


def check_approvals(
    store: ConversationStore,
    conversation_id: str,
    messages: Sequence[BaseMessage],
    new: list[BaseMessage],
    approvals: dict | None,
    run_kwargs: dict[str, Any],
) -> bool:
    """Check a new turn against what ``messages`` (the loaded conversation) waits on, and put
    the decisions (and a paused fan-out's branches) in ``run_kwargs``. True when the turn
    resumes a fan-out that paused inside a branch."""
    outcomes = tail_outcomes(store, conversation_id, messages)
    pending = pending_in(messages, outcomes)
    # A fan-out that paused inside a branch ends the conversation on its open call; what
    # waits, and the branches to resume, are in the turn's record (read only then).
    paused = paused_fan_out(store, conversation_id, messages) if pending else None
    if paused is not None:
        pending = paused_pending(paused)
    if approvals:
        already_decided(store, conversation_id, messages, pending, approvals)
    check_turn(conversation_id, pending, new, approvals)
    if approvals is None:
        return False
    run_kwargs["approvals"] = approvals
    if paused is None:
        return False
    run_kwargs["branches"] = paused["branches"]
    return True


def stored_pending(
    store: ConversationStore, conversation_id: str, tail: Sequence[BaseMessage]
) -> list[PendingApproval]:
    """The calls the stored conversation (its last messages, ``tail``) waits on: approval-
    marked calls, effect calls in doubt, or what a paused fan-out's branches wait on."""
    pending = pending_in(tail, tail_outcomes(store, conversation_id, tail))
    paused = paused_fan_out(store, conversation_id, tail) if pending else None
    return paused_pending(paused) if paused is not None else pending
