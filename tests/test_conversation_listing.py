"""Listing the stored conversations (``store.conversations()``, ``swarmgraph sessions``) and
handing a conversation to another agent (``Session.switch_agent``), on every backend."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.memory import Session, open_history, open_store
from swarmgraph.memory.store import TurnWrite

from swarmgraph import Agent, ScriptedChatModel, Swarm


def _mine(store, *ids: str) -> dict:
    """The listing's rows for ``ids`` (the Postgres and Redis servers hold other tests' too)."""
    return {row.conversation_id: row for row in store.conversations() if row.conversation_id in ids}


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_conversations_lists_id_agent_messages_and_last_change_newest_first(backend_url):
    store = open_store(backend_url)
    turn, appended, cleared, later = (fresh_id(p) for p in ("turn", "app", "gone", "later"))
    before = time.time() - 1
    turn_messages = [HumanMessage("refund order 7"), AIMessage("Done.", name="Refunds")]
    store.save(turn, TurnWrite(turn_messages, context={"order_id": 7}, active_agent="Refunds"),
               expected_version=0)  # fmt: skip
    # A LangChain history's append: messages only, no record
    open_history(backend_url, appended).add_messages([HumanMessage(f"m{i}") for i in range(3)])
    store.save(cleared, TurnWrite([HumanMessage("x")], context={}, active_agent="Sales"),
               expected_version=0)  # fmt: skip
    store.clear(cleared)
    time.sleep(0.05)
    store.save(later, TurnWrite([HumanMessage("hi")], context={}, active_agent="Triage"),
               expected_version=0)  # fmt: skip
    after = time.time() + 1

    rows = _mine(store, turn, appended, cleared, later)
    assert cleared not in rows  # a cleared conversation holds nothing: not listed
    assert (rows[turn].active_agent, rows[turn].messages) == ("Refunds", 2)
    assert (rows[later].active_agent, rows[later].messages) == ("Triage", 1)
    assert (rows[appended].active_agent, rows[appended].messages) == (None, 3)
    assert before <= rows[turn].updated_at <= rows[later].updated_at <= after
    # only Postgres timestamps messages: an append alone has no time elsewhere
    assert rows[appended].updated_at is None or before <= rows[appended].updated_at <= after
    order = [r.conversation_id for r in store.conversations() if r.conversation_id in rows]
    assert order.index(later) < order.index(turn)  # the last changed first


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_switch_agent_hands_the_next_turn_to_that_agent(backend_url):
    sales = Agent(name="Sales", instructions="You sell.")
    triage = Agent(name="Triage", instructions="Route.", handoffs=[sales])
    cid = fresh_id("switch")
    model = ScriptedChatModel(["Hello!", "Hives are 120 EUR."])
    session = Session(cid, url=backend_url)
    session.run(Swarm(chat_model=model), triage, "hi")
    version = session.store.load(cid).version
    assert session.active_agent_name == "Triage"

    session.switch_agent(sales)
    stored = session.store.load(cid)
    assert stored.active_agent == "Sales" and stored.version == version + 1
    assert [m.content for m in stored.messages] == ["hi", "Hello!"]  # messages stay
    response = Session(cid, url=backend_url).run(Swarm(chat_model=model), triage, "price?")
    assert response.agent is sales
    assert model.calls[-1][0].content == "You sell."  # Sales' prompt answered


def test_switch_agent_needs_the_context_half(tmp_path):
    session = Session("ctx-less", url=f"sqlite:///{tmp_path}/s.db", persist=("messages",))
    with pytest.raises(ValueError, match="keeps no active agent"):
        session.switch_agent(Agent(name="Sales"))
