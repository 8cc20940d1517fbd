"""Parallel handoffs through Session, on every backend: the joined turn is saved whole (each
branch's own messages travel with the joined answer, so `swarmgraph history` and /history show
them), and an approval inside a branch pauses the turn, is seen from a fresh Session, and
resumes with approvals= there."""

from __future__ import annotations

import asyncio

import pytest
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.graph.branches import history_dicts
from swarmgraph.memory import Session
from swarmgraph.memory.approvals import ApprovalPendingError
from test_parallel import approval_desk, desk_with, swarm_of, writer_tool

from swarmgraph import Agent, ScriptedChatModel, scripted_tool_call
from swarmgraph.app.terminal import Style, conversation_lines


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_the_joined_turn_is_saved_whole_with_each_branchs_messages(backend_url):
    cid = fresh_id("fan-out")
    billing = Agent(name="Billing", model="billing", functions=[writer_tool("invoice", "paid")])
    tech = Agent(name="Tech", model="tech")
    desk, desk_models = desk_with([billing, tech])
    models = {
        **desk_models,
        "billing": ScriptedChatModel([scripted_tool_call("write_invoice"), "Invoice paid."]),
        "tech": ScriptedChatModel(["Router fine."]),
    }
    response = Session(cid, url=backend_url).run(swarm_of(models), desk, "invoice and router?")
    later = Session(cid, url=backend_url)  # a refresh: what is stored
    assert [m.type for m in later.messages] == ["human", "ai", "tool", "ai"]
    assert later.context_variables == {"invoice": "paid"} == response.context_variables
    joined = history_dicts(later.messages)[2]
    assert [(b["branch"], b["status"], b["answer"]) for b in joined["branches"]] == [
        ("Billing", "answered", "Invoice paid."),
        ("Tech", "answered", "Router fine."),
    ]
    assert [m["role"] for m in joined["branches"][0]["messages"]] == [
        "assistant",
        "tool",
        "assistant",
    ]
    shown = "\n".join(conversation_lines(history_dicts(later.messages), Style(False)))
    assert "⇉ Billing (answered)" in shown and "Billing ⚙ write_invoice()" in shown


@pytest.mark.parametrize(
    "backend_url",
    ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
    indirect=True,
)
def test_an_approval_inside_a_branch_pauses_the_turn_and_a_fresh_session_resumes_it(backend_url):
    cid = fresh_id("fan-out-approval")
    desk, models = approval_desk()
    swarm = swarm_of(models)
    paused = Session(cid, url=backend_url).run(swarm, desk, "refund 7, check my router")
    assert [p.id for p in paused.pending] == ["refund-7"]
    fresh = Session(cid, url=backend_url)
    assert [(p.id, p.agent, p.tool) for p in fresh.pending] == [("refund-7", "Billing", "refund")]
    with pytest.raises(ApprovalPendingError, match="refund"):
        fresh.run(swarm, desk, "hello?")
    done = Session(cid, url=backend_url).run(swarm, desk, approvals={"refund-7": True})
    assert [m["content"] for m in done.messages] == [
        '{"Billing": "Refunded.", "Tech": "Router fine."}',
        "Summed up.",
    ]
    assert len(models["tech"].calls) == 1  # the branch that had answered did not run again
    after = Session(cid, url=backend_url)
    assert after.pending == []
    assert [m.type for m in after.messages] == ["human", "ai", "tool", "ai"]
    billing = history_dicts(after.messages)[2]["branches"][0]["messages"]
    assert [m.get("content") for m in billing] == [None, "Refunded 7.", "Refunded."]


def test_session_arun_pauses_and_resumes_a_fan_out(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    desk, models = approval_desk()
    swarm = swarm_of(models)

    async def turns() -> list:
        first = await Session("c", url=url).arun(swarm, desk, "refund 7")
        second = await Session("c", url=url).arun(swarm, desk, approvals={"refund-7": "no receipt"})
        return [first, second]

    first, second = asyncio.run(turns())
    assert [p.id for p in first.pending] == ["refund-7"]
    answer = second.messages[0]["content"]
    assert answer == '{"Billing": "Refunded.", "Tech": "Router fine."}'
    assert second.branches[0]["messages"][1]["content"] == "Error: denied: no receipt"
