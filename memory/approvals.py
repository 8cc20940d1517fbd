"""A Session turn that stopped for approval: what waits, and the rules for the next call.

A turn that stops for a human's decision is saved like any other (its messages and context so
far); what waits is read back from the stored conversation itself: the last assistant message's
tool calls that have no answer. So ``Session.pending`` is the same in another process, after a
restart, with no extra table.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> stored = [HumanMessage("refund 7"), AIMessage("", name="Refunds", tool_calls=[
    ...     {"name": "process_refund", "args": {"order_id": 7}, "id": "c1"}])]
    >>> [p.describe() for p in pending_in(stored)]
    ['process_refund(order_id=7)']
    >>> check_turn("conv-1", pending_in(stored), new=[HumanMessage("hello?")], approvals=None)
    Traceback (most recent call last):
    ...
    swarmgraph.memory.approvals.ApprovalPendingError: conversation 'conv-1' waits for approval \
of process_refund(order_id=7) (id 'c1'); resume it first: session.run(swarm, agent, \
approvals={'c1': True | False | 'reason'}), with no new message
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage

from ..graph.core.errors import SwarmgraphError

if TYPE_CHECKING:
    from .store import ConversationStore

__all__ = [
    "ApprovalPendingError",
    "already_decided",
    "check_turn",
    "pending_in",
    "replayed_decisions",
    "tail_outcomes",
]

#: What the effect ledger says about an unanswered call: answered from the ledger (``done``),
#: started by a turn that is finished or was retried (``in_doubt``), or started by a turn
#: still open elsewhere (``in_flight``: it may be running now; only a retry of that turn
#: declares it in doubt).
CallState = Literal["done", "in_doubt", "in_flight"]


class ApprovalPendingError(SwarmgraphError, ValueError):
    """A new message was sent to a conversation whose tool calls wait for approval."""


def pending_in(
    messages: Sequence[BaseMessage], states: Mapping[str, CallState] | None = None
) -> list[Any]:
    """The tool calls the stored conversation ends on without an answer (they wait for a
    decision: a Session only stores whole runs, in which every other call is answered), as
    ``PendingApproval`` s. ``states`` (:func:`tail_outcomes`): a call answered from the effect
    ledger waits for nothing, one in flight elsewhere waits for its own turn, one in doubt is
    marked ``in_doubt``."""
    # The engine loads on first use, as elsewhere in memory/ (importing memory stays cheap).
    from ..graph.features.approvals import as_pending, open_calls

    found = open_calls(messages)
    if found is None:
        return []
    pending = []
    for call in as_pending(*found):
        state = (states or {}).get(call.id)
        if state == "in_doubt":
            pending.append(call.model_copy(update={"in_doubt": True}))
        elif state is None:
            pending.append(call)
    return pending


def tail_outcomes(
    store: ConversationStore, conversation_id: str, messages: Sequence[BaseMessage]
) -> dict[str, CallState]:
    """What the effect ledger holds for the unanswered calls ``messages`` end on, by call id
    (no read at all when every call is answered, the usual case). The starters' turns are
    read before the results (:func:`~swarmgraph.memory.effect_records.call_states`), so a
    call another process finishes meanwhile is never told as in doubt."""
    from ..graph.features.approvals import open_calls
    from ..graph.features.effects import effect_key
    from .effect_records import call_states

    found = open_calls(messages)
    if found is None:
        return {}
    reply, calls = found
    keys = {effect_key(c.get("id") or "", reply.id): c.get("id") or "" for c in calls}
    states: dict[str, CallState] = {}
    for key, (outcome, _, entry) in call_states(store, conversation_id, list(keys)).items():
        if outcome.status == "done":
            states[keys[key]] = "done"
        elif entry is not None and entry.get("status") == "open":
            states[keys[key]] = "in_flight"
        else:
            states[keys[key]] = "in_doubt"
    return states


def already_decided(
    store: ConversationStore,
    conversation_id: str,
    messages: Sequence[BaseMessage],
    pending: Sequence[Any],
    approvals: Mapping[str, Any],
) -> None:
    """Raise ``ApprovalAlreadyDecided`` for a decision about a call that no longer waits
    because someone decided it first (its decision is recorded): the loser of two people
    answering one approval, whichever turn id each used."""
    from ..graph.features.effects import effect_key
    from ..graph.features.errors import ApprovalAlreadyDecided

    waiting = {p.id for p in pending}
    gone = [call_id for call_id in approvals if call_id not in waiting]
    if not gone:
        return
    asked: dict[str, tuple[str, str]] = {}  # ledger key -> (call id, tool)
    for message in reversed(messages):  # the assistant messages that asked for them
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id") or ""
                if call_id in gone and call_id not in {c for c, _ in asked.values()}:
                    asked[effect_key(call_id, message.id)] = (call_id, call["name"])
    if not asked:
        return
    decided = store.records(conversation_id, "approval", list(asked))
    for key, value in decided.items():
        call_id, tool = asked[key]
        decision = value.get("decision") if isinstance(value, dict) else value
        raise ApprovalAlreadyDecided(call_id, decision, tool)


def replayed_decisions(
    store: ConversationStore,
    conversation_id: str,
    messages: Sequence[BaseMessage],
    approvals: Mapping[str, Any],
) -> None:
    """Raise ``ApprovalAlreadyDecided`` when a stored turn is asked for again (same turn id)
    with a decision other than the one recorded: its outcome is not this caller's. The same
    decision again is a replay, and returns the stored turn.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> from swarmgraph.memory.backends import open_store
        >>> from swarmgraph.memory.store import Record, TurnWrite
        >>> store = open_store("memory://doctest-replayed-decisions")
        >>> asked = AIMessage("", id="r1", tool_calls=[{"name": "refund", "args": {}, "id": "c1"}])
        >>> first = Record("approval", "c1@r1", {"decision": True, "turn": "t2"})
        >>> _ = store.save("conv", TurnWrite(records=[first]), expected_version=None)
        >>> replayed_decisions(store, "conv", [asked], {"c1": True})  # the same: a replay
        >>> replayed_decisions(store, "conv", [asked], {"c1": False})
        Traceback (most recent call last):
        ...
        swarmgraph.graph.features.errors.ApprovalAlreadyDecided: ...
    """
    from ..graph.features.effects import effect_key
    from ..graph.features.errors import ApprovalAlreadyDecided

    asked: dict[str, tuple[str, str]] = {}  # ledger key -> (call id, tool)
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id") or ""
                if call_id in approvals:
                    asked[effect_key(call_id, message.id)] = (call_id, call["name"])
    if not asked:
        return
    for key, value in store.records(conversation_id, "approval", list(asked)).items():
        call_id, tool = asked[key]
        decision = value.get("decision") if isinstance(value, dict) else value
        if decision != approvals[call_id]:
            raise ApprovalAlreadyDecided(call_id, decision, tool)


def check_turn(
    conversation_id: str,
    pending: list[Any],
    new: list[BaseMessage],
    approvals: Any,
) -> None:
    """A clear error for a turn that cannot be run: a new message while calls wait, or a
    resume (no message) with nothing waiting or no decisions."""
    if pending and new:
        waits = ", ".join(f"{p.describe()} (id {p.id!r})" for p in pending)
        ids = ", ".join(f"{p.id!r}: True | False | 'reason'" for p in pending)
        raise ApprovalPendingError(
            f"conversation {conversation_id!r} waits for approval of {waits}; resume it first: "
            f"session.run(swarm, agent, approvals={{{ids}}}), with no new message"
        )
    if not new and approvals is None:
        raise ValueError(
            "Session.run needs a message, or approvals={...} to resume a turn that waits for "
            "approval (see session.pending)"
        )
    if not new and not pending:
        raise ValueError(
            f"conversation {conversation_id!r}: nothing waits for approval, so there is "
            "nothing to resume; send a message instead"
        )
