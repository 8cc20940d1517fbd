"""Issue 40, hostile input and races: interleavings pinned with threads and events, never by
timing. A nested fan-out's call named in the turn's open entry survives a top-level branch's
save made at the same moment; concurrent approve and deny under one turn id leave exactly one
decision and the other caller gets ``ApprovalAlreadyDecided``."""

from __future__ import annotations

import threading

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.graph.features.effects import EffectCall, FanOutSoFar, TurnSoFar
from swarmgraph.memory.backends import open_store
from swarmgraph.memory.effect_ledger import TurnLedger, TurnState
from swarmgraph.memory.turn_index import TURN

from swarmgraph import (
    Agent,
    ApprovalAlreadyDecided,
    Response,
    ScriptedChatModel,
    Session,
    Swarm,
    needs_approval,
    scripted_tool_call,
)


def test_a_nested_call_named_while_a_top_level_branch_saves_stays_named() -> None:
    """Branch A (top level) builds its open entry, then a nested branch's call is named in the
    entry, then A's save lands: the name must still be there (its retry warns about it)."""
    store = open_store("memory://issue40-nested-race")
    turn = TurnState("t-1", new=[HumanMessage("split and pay", id="h1")])
    entry_built, nested_named = threading.Event(), threading.Event()

    def rank(agent: Agent) -> int:  # called by A after it built its entry, before its save
        if threading.current_thread().name == "top-level":
            entry_built.set()
            assert nested_named.wait(10)
        return 0

    ledger = TurnLedger(store, "conv", turn, sent=1, rank=rank)
    desk = Agent(name="Desk")
    fan = AIMessage("", id="r1", tool_calls=[{"name": "ask", "args": {}, "id": "f1"}])
    so_far = FanOutSoFar([turn.new[0], fan], {}, desk, branches=lambda: [])
    branch_reply = AIMessage("", id="b1", tool_calls=[{"name": "log", "args": {}, "id": "c1"}])
    top = EffectCall("c1@b1", "c1", "log", {}, "Billing")
    nested = EffectCall("c2@b2", "c2", "pay", {}, "Payer")
    errors: list[BaseException] = []

    def top_level() -> None:
        try:
            ledger.before(top, TurnSoFar([branch_reply], {}, desk, "Billing", so_far))
        except BaseException as error:  # surfaced below
            errors.append(error)

    a = threading.Thread(target=top_level, name="top-level")
    a.start()
    assert entry_built.wait(10)
    ledger.before(nested, TurnSoFar([], {}, Agent(name="Payer"), "Middle/Payer"))
    nested_named.set()
    a.join(10)
    assert not errors

    entry = store.records("conv", TURN, ["t-1"])["t-1"]
    assert [n["call"] for n in entry.get("nested", [])] == ["c2"]
    assert entry["status"] == "open"


def _decide_at_once(url: str, trial: int) -> tuple[list[object], list[str], list[dict]]:
    """One approval waiting; two callers, one approving and one denying under the same turn
    id, released together. Returns what each got, the refunds run and the approvals stored."""
    ran: list[str] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        ran.append(f"refund {order_id}")
        return f"refunded {order_id}"

    def respond(messages: list) -> object:  # stateless: each caller may ask it
        if messages[-1].type == "human":
            return scripted_tool_call("refund", {"order_id": 7}, id="c1")
        return "Done."

    agent = Agent(name="Refunds", functions=[refund])
    swarm = Swarm(chat_model=ScriptedChatModel(respond=respond))
    conversation = fresh_id(f"at-once-{trial}")
    Session(conversation, url=url).run(swarm, agent, "refund order 7")
    together = threading.Barrier(2)
    got: list[object] = [None, None]

    def decide(slot: int, decision: bool) -> None:
        session = Session(conversation, url=url)
        together.wait()
        try:
            got[slot] = session.run(swarm, agent, approvals={"c1": decision}, turn_id="resume")
        except Exception as error:  # what the loser gets is the point
            got[slot] = error

    threads = [threading.Thread(target=decide, args=(i, d)) for i, d in enumerate([True, False])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    stored = Session(conversation, url=url).store.records(conversation, "approval")
    return got, ran, list(stored.values())


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_approve_and_deny_at_once_under_one_turn_id_one_wins_the_other_is_told(backend_url):
    for trial in range(12):
        got, ran, stored = _decide_at_once(backend_url, trial)
        [decision] = [v["decision"] for v in stored]  # one decision stands
        losers = [g for g in got if isinstance(g, ApprovalAlreadyDecided)]
        winners = [g for g in got if isinstance(g, Response)]
        assert (len(winners), len(losers)) == (1, 1), (trial, got)
        assert losers[0].decision == decision  # the loser is told which decision stood
        assert ran == (["refund 7"] if decision is True else [])
