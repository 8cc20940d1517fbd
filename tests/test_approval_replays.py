"""One approval, two different decisions sent with the same turn id.

The first decision runs the turn and is recorded; a second caller who reuses that turn id
with another decision must not get the first's outcome back as if its own had applied: it
is refused with ``ApprovalAlreadyDecided`` (nothing run, nothing stored). The same decision
again is a replay and returns the stored turn without a model call.
"""

from __future__ import annotations

import pytest
from scale_helpers import BACKENDS, fresh_id

from swarmgraph import (
    Agent,
    ApprovalAlreadyDecided,
    ScriptedChatModel,
    Session,
    Swarm,
    needs_approval,
    scripted_tool_call,
)


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
@pytest.mark.parametrize(("first", "second"), [(True, False), (False, True), (True, "no")])
def test_a_second_decision_under_the_same_turn_id_is_refused(backend_url, first, second):
    ran: list[int] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        ran.append(order_id)
        return f"refunded {order_id}"

    agent = Agent(name="Refunds", functions=[refund])
    answers = [scripted_tool_call("refund", {"order_id": 7}, id="c1"), "Done.", "Denied."]
    model = ScriptedChatModel(answers)
    swarm = Swarm(chat_model=model)
    conversation = fresh_id("decide")
    Session(conversation, url=backend_url).run(swarm, agent, "refund order 7")

    decided = Session(conversation, url=backend_url).run(
        swarm, agent, approvals={"c1": first}, turn_id="resume-1"
    )
    stored = Session(conversation, url=backend_url).messages
    calls = len(model.calls)

    with pytest.raises(ApprovalAlreadyDecided) as caught:
        Session(conversation, url=backend_url).run(
            swarm, agent, approvals={"c1": second}, turn_id="resume-1"
        )
    assert caught.value.call_id == "c1"
    assert f"already decided: {first!r}" in str(caught.value)
    assert ran == ([7] if first is True else [])  # the refused decision ran nothing
    assert len(model.calls) == calls  # and asked no model
    assert Session(conversation, url=backend_url).messages == stored  # nor stored anything

    again = Session(conversation, url=backend_url).run(
        swarm, agent, approvals={"c1": first}, turn_id="resume-1"
    )
    assert again.messages == decided.messages  # the same decision: the stored turn
    assert len(model.calls) == calls
