"""Parallel handoffs through Session, on every backend: the joined turn is saved whole (each
branch's own messages travel with the joined answer, so `swarmgraph history` and /history show
them), and an approval inside a branch pauses the turn, is seen from a fresh Session, and
resumes with approvals= there."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.graph.features.branches import history_dicts
from swarmgraph.memory import Session
from swarmgraph.memory.approvals import ApprovalPendingError
from test_parallel import approval_desk, desk_with, swarm_of, writer_tool

from swarmgraph import Agent, ScriptedChatModel, Swarm, effect, scripted_tool_call
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


def _wait_for_done(url: str, cid: str, count: int) -> None:
    store = Session(cid, url=url).store
    deadline = time.monotonic() + 30
    while len(store.records(cid, "effect.done")) < count and time.monotonic() < deadline:
        time.sleep(0.01)


class _Crash(BaseException):
    """What a process that dies mid-tool leaves: nothing after it runs (not an Exception, so
    no branch catches it and the run's save never happens)."""


def _crashing_fan_out(url: str, crashes: int) -> tuple[Agent, Swarm, dict[str, list[str]]]:
    """A desk fanning out to A, B, C, whose models all number their call ``call_0``; B's
    tool crashes its first ``crashes`` runs, once A's and C's calls are recorded done. The
    keys each branch's tool was given, by branch, in the order it ran."""
    keys: dict[str, list[str]] = {}
    left = {"B": crashes}

    def pay_for(label: str):
        @effect
        def pay(idempotency_key: str) -> str:
            """Pay."""
            keys.setdefault(label, []).append(idempotency_key)
            if left.get(label):
                left[label] -= 1
                _wait_for_done(url, "c", 2)
                raise _Crash
            return f"{label} paid."

        return pay

    branches = [Agent(name=n, model=n, functions=[pay_for(n)]) for n in ("A", "B", "C")]
    desk, models = desk_with(branches)

    def answer(messages: list) -> object:
        paid = messages[-1].type == "tool" and messages[-1].name == "pay"
        return "Done." if paid else scripted_tool_call("pay", id="call_0")

    def model(name: str) -> ScriptedChatModel:
        return models["desk"] if name == "desk" else ScriptedChatModel(respond=answer)

    return desk, Swarm(chat_model=model), keys


def test_a_branch_calls_idempotency_key_is_stable_across_a_retry_and_differs_by_branch(tmp_path):
    """Each branch's call gets its own key though all are ``call_0``, and B's call, crashed
    and run again after its retry, gets the same key both times."""
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    desk, swarm, keys = _crashing_fan_out(url, crashes=1)
    with pytest.raises(_Crash):
        Session("c", url=url).run(swarm, desk, "pay all", turn_id="t-1")
    assert Session("c", url=url).unfinished == ["t-1"]
    retried = Session("c", url=url).run(swarm, desk, turn_id="t-1")
    assert [(p.agent, p.in_doubt) for p in retried.pending] == [("B", True)]
    assert keys["A"] == keys["A"][:1] and keys["C"] == keys["C"][:1]  # done: not run again
    Session("c", url=url).run(swarm, desk, approvals={p.id: True for p in retried.pending})
    assert Session("c", url=url).pending == []
    assert len(keys["B"]) == 2 and len(set(keys["B"])) == 1  # run again: the same key
    firsts = {label: runs[0] for label, runs in keys.items()}
    assert len(set(firsts.values())) == 3  # one call id, three branches: three keys
    assert all(len(set(runs)) == 1 for runs in keys.values())


def test_a_branch_call_approved_again_that_crashes_again_is_in_doubt_again(tmp_path):
    """The operator's run that approves B's call in doubt dies inside it too: that turn is
    unfinished, its retry finds the second attempt in doubt, and a reason answers it."""
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    desk, swarm, keys = _crashing_fan_out(url, crashes=2)
    with pytest.raises(_Crash):
        Session("c", url=url).run(swarm, desk, "pay all", turn_id="t-1")
    [doubt] = Session("c", url=url).run(swarm, desk, turn_id="t-1").pending
    with pytest.raises(_Crash):
        Session("c", url=url).run(swarm, desk, approvals={doubt.id: True}, turn_id="t-2")
    assert Session("c", url=url).unfinished == ["t-2"]
    [again] = Session("c", url=url).run(swarm, desk, turn_id="t-2").pending
    assert (again.agent, again.in_doubt) == ("B", True)
    done = Session("c", url=url).run(swarm, desk, approvals={again.id: "B paid (found)."})
    assert json.loads(done.messages[0]["content"]) == {"A": "Done.", "B": "Done.", "C": "Done."}
    b_messages = done.branches[1]["messages"]
    assert [m["content"] for m in b_messages if m["role"] == "tool"] == ["B paid (found)."]
    assert [len(keys[label]) for label in "ABC"] == [1, 2, 1] and len(set(keys["B"])) == 1
    stored = Session("c", url=url)
    assert stored.pending == [] and stored.unfinished == []
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai"]


def test_two_calls_of_one_branch_numbered_alike_get_two_keys_and_both_run(tmp_path):
    """A branch whose model numbers every reply's call ``call_0``: its two calls are two
    effects (each run once, each its own key), not one call answered twice."""
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    keys: list[str] = []

    @effect
    def pay(order_id: int, idempotency_key: str) -> str:
        """Pay."""
        keys.append(idempotency_key)
        return f"Paid order {order_id}."

    def answer(messages: list) -> object:
        paid = [m for m in messages if m.type == "tool" and m.name == "pay"]
        if len(paid) < 2:
            return scripted_tool_call("pay", {"order_id": len(paid) + 1}, id="call_0")
        return "Paid both."

    billing = Agent(name="Billing", model="billing", functions=[pay])
    desk, models = desk_with([billing, Agent(name="Tech", model="tech")])
    models = {**models, "billing": ScriptedChatModel(respond=answer),
              "tech": ScriptedChatModel(["Router fine."])}  # fmt: skip
    response = Session("c", url=url).run(swarm_of(models), desk, "pay 1 and 2")
    tools = [m["content"] for m in response.branches[0]["messages"] if m["role"] == "tool"]
    assert tools == ["Paid order 1.", "Paid order 2."]
    assert len(keys) == 2 and len(set(keys)) == 2
