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

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

__all__ = ["ApprovalPendingError", "check_turn", "pending_in"]


class ApprovalPendingError(ValueError):
    """A new message was sent to a conversation whose tool calls wait for approval."""


def pending_in(messages: Sequence[BaseMessage]) -> list[Any]:
    """The tool calls the stored conversation ends on without an answer (they wait for a
    decision: a Session only stores whole runs, in which every other call is answered), as
    ``PendingApproval`` s."""
    # The engine loads on first use, as elsewhere in memory/ (importing memory stays cheap).
    from ..graph.approvals import as_pending, open_calls

    found = open_calls(messages)
    return [] if found is None else as_pending(*found)


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
