"""The demo swarm and its offline demo model: tools write and read context, handoffs happen."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from scale_helpers import fresh_id
from swarmgraph.graph import Swarm
from swarmgraph.memory import Session

from swarmgraph.app.demo import (
    DEMO_CONVERSATION,
    demo_agents,
    demo_model,
    demo_rules,
    refunds_instructions,
    triage_instructions,
)


def _handoffs(messages):
    return [
        m["tool_name"]
        for m in messages
        if m["role"] == "tool" and m["tool_name"].startswith("transfer_to_")
    ]


def test_first_turn_writes_name_and_order_and_hands_off_to_refunds():
    triage, _, _ = demo_agents()
    response = Swarm(chat_model=demo_model()).run(
        agent=triage, messages=[{"role": "user", "content": DEMO_CONVERSATION[0]}]
    )
    assert response.agent.name == "Refunds"
    assert response.context_variables == {
        "name": "Ming",
        "order_id": 7,
        "refunds": {"7": "approved"},
        "refund_status": "approved",
    }
    assert _handoffs(response.messages) == ["transfer_to_refunds"]
    assert "Ming" in response.messages[-1]["content"]
    assert "order 7" in response.messages[-1]["content"]


def test_tools_read_context_not_text():
    # Sales quotes with the name from context_variables, which the user never repeats.
    _, sales, _ = demo_agents()
    response = Swarm(chat_model=demo_model()).run(
        agent=sales,
        messages=[{"role": "user", "content": "How much is a smoker?"}],
        context_variables={"name": "Zoe"},
    )
    tool = next(m for m in response.messages if m["role"] == "tool")
    assert tool["tool_name"] == "quote_price"
    assert tool["content"] == "Quote for Zoe: one smoker costs $25."


def test_refund_without_order_in_context_asks_for_it():
    _, _, refunds = demo_agents()
    response = Swarm(chat_model=demo_model()).run(
        agent=refunds, messages=[{"role": "user", "content": "I want a refund"}]
    )
    assert "order number" in response.messages[-1]["content"]
    assert "refund_status" not in response.context_variables


def test_scripted_conversation_through_a_session_continues_with_the_stored_agent(tmp_path):
    agents = demo_agents()
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    swarm = Swarm(chat_model=demo_model())
    seen = []
    for text in DEMO_CONVERSATION:
        session = Session("demo", url=url, agents=list(agents))  # a refresh before every turn
        response = session.run(swarm, agents[0], text)
        seen.append((response.agent.name, _handoffs(response.messages)))
    assert seen == [
        ("Refunds", ["transfer_to_refunds"]),
        ("Sales", ["transfer_to_triage", "transfer_to_sales"]),
        ("Refunds", ["transfer_to_triage", "transfer_to_refunds"]),
    ]
    assert "approved" in response.messages[-1]["content"]
    assert Session("demo", url=url).active_agent_name == "Refunds"


def test_rules_read_fields_from_the_system_prompt():
    reply = demo_rules(
        [SystemMessage(refunds_instructions({"order_id": 3})), HumanMessage("refund please")]
    )
    assert [c["name"] for c in reply.tool_calls] == ["process_refund"]
    reply = demo_rules(
        [SystemMessage(triage_instructions({"name": "Ming"})), HumanMessage("I'm Ming")]
    )  # already known: no second set_name
    assert isinstance(reply, str) and "Ming" in reply


def test_model_never_runs_out_and_streams():
    model = demo_model()
    for i in range(25):
        assert model.invoke([HumanMessage(f"hello {i}")]).content
    chunks = list(model.stream([SystemMessage(triage_instructions({})), HumanMessage("hi")]))
    assert len(chunks) > 3
    assert "".join(c.content for c in chunks).startswith("Hello there!")


def test_each_order_keeps_its_own_refund_status_and_a_denial_is_said_as_one():
    """Approve order 7, deny order 8 (``swarmgraph chat --approve process_refund``): asked
    about the refund, the demo tells the truth about each order, and right after the denial
    it says so instead of asking which order to refund."""
    from swarmgraph.app.cli import _mark_for_approval

    agents = list(demo_agents())
    _mark_for_approval(agents, ["process_refund"])
    swarm = Swarm(chat_model=demo_model())
    session = Session("two-orders", url="memory://" + fresh_id("demo"), agents=agents)

    def turn(text=None, decision=None):
        if decision is None:
            return session.run(swarm, agents[0], text)
        [waiting] = session.pending
        return session.run(swarm, agents[0], approvals={waiting.id: decision})

    turn("I'm Ming, refund order 7")
    assert "refund for order 7 is approved" in turn(decision=True).messages[-1]["content"]
    turn("Please refund order 8 too")
    denied = turn(decision=False).messages[-1]["content"]
    assert "not filed the refund for order 8" in denied and "denied" in denied
    assert "Which order" not in denied
    status = turn("Did my refund go through?").messages[-1]["content"]
    assert status.startswith("No refund filed for order 8.")
    assert "approved" not in status
    earlier = turn("And did the refund for order 7 go through?").messages[-1]["content"]
    assert earlier.startswith("Refund for order 7: approved.")
    assert session.context_variables["refunds"] == {"7": "approved"}
