"""Guardrails on every way into an agent, on its final answer, and handoff preconditions.

Each agent gets its own scripted model (``Agent(model=...)`` picks it), so a test can say
exactly whose model was called and with what.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from swarmgraph.graph.core.run_control import RunControl
from swarmgraph.graph.features.guardrails import (
    GuardrailResult,
    check_entry,
    guardrail,
    model_guardrail,
)

from swarmgraph import (
    CALLER,
    Agent,
    Budget,
    BudgetExceeded,
    GuardrailTripped,
    Result,
    Route,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def no_threats(context_variables, messages):
    """Refuse a conversation whose last user message threatens."""
    last = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    return "a threat" if "or else" in last.content else None


def no_secrets(context_variables, messages):
    """Refuse an answer that leaks the card number."""
    return "leaks a card number" if "4111" in messages[-1].content else None


class Desk:
    """Triage hands to Refunds; every agent has its own scripted model."""

    def __init__(self, **refunds_fields):
        self.models = {
            "triage": ScriptedChatModel([]),
            "refunds": ScriptedChatModel([]),
            "fallback": ScriptedChatModel([]),
        }
        self.fallback = Agent(name="Humans", model="fallback", instructions="A human.")
        self.refunds = Agent(name="Refunds", model="refunds", **refunds_fields)
        self.triage = Agent(name="Triage", model="triage", handoffs=[self.refunds])
        self.swarm = Swarm(chat_model=lambda name: self.models[name])

    def script(self, name: str, *replies) -> None:
        """New replies for an agent's model (the same object: the Swarm caches it by name)."""
        model = self.models.setdefault(name, ScriptedChatModel([]))
        model.responses = list(replies)
        model.reset()

    def calls(self, name: str) -> int:
        return len(self.models[name].calls)


# -- input guardrails: the run's first agent ---------------------------------------------
def test_a_tripped_input_guardrail_stops_before_the_first_model_call():
    desk = Desk(input_guardrails=[no_threats])
    desk.script("refunds", "Refunded.")
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.refunds, [user("refund now, or else")])
    trip = caught.value
    assert (trip.agent, trip.guardrail, trip.reason, trip.kind) == (
        "Refunds",
        "no_threats",
        "a threat",
        "input",
    )
    assert desk.calls("refunds") == 0
    assert trip.response.messages == [] and trip.response.agent is desk.refunds
    assert trip.response.trajectory == [
        {
            "agent": "Refunds",
            "kind": "guardrail",
            "name": "no_threats",
            "when": "input",
            "passed": False,
            "reason": "a threat",
        }
    ]


def test_a_passing_input_guardrail_is_on_the_trajectory_and_the_model_answers():
    desk = Desk(input_guardrails=[no_threats])
    desk.script("refunds", "Refunded.")
    response = desk.swarm.run(desk.refunds, [user("refund order 7 please")])
    assert response.messages[-1]["content"] == "Refunded."
    assert response.trajectory[0] == {
        "agent": "Refunds",
        "kind": "guardrail",
        "name": "no_threats",
        "when": "input",
        "passed": True,
    }


def test_async_guardrails_run_on_both_paths():
    async def slow_no_threats(context_variables, messages):
        await asyncio.sleep(0)
        return no_threats(context_variables, messages)

    desk = Desk(input_guardrails=[slow_no_threats])
    with pytest.raises(GuardrailTripped, match="slow_no_threats"):
        desk.swarm.run(desk.refunds, [user("or else")])
    with pytest.raises(GuardrailTripped, match="slow_no_threats"):
        asyncio.run(desk.swarm.arun(desk.refunds, [user("or else")]))
    assert desk.calls("refunds") == 0


def test_on_trip_hands_the_first_message_to_the_fallback():
    desk = Desk(input_guardrails=[no_threats])
    desk.refunds.on_trip = desk.fallback
    desk.script("fallback", "A human will call you.")
    response = desk.swarm.run(desk.refunds, [user("refund, or else")])
    assert desk.calls("refunds") == 0
    assert response.agent is desk.fallback
    assert response.messages[-1] == {**response.messages[-1], "sender": "Humans"}
    kinds = [(s["kind"], s["agent"], s.get("passed")) for s in response.trajectory]
    assert kinds == [
        ("guardrail", "Refunds", False),
        ("handoff", "Refunds", None),
        ("model", "Humans", None),
    ]


# -- input guardrails on a handoff ---------------------------------------------------------
def test_a_handoff_into_a_guarded_agent_trips_and_answers_the_transfer_call():
    desk = Desk(input_guardrails=[no_threats])
    desk.script("triage", scripted_tool_call("transfer_to_refunds", id="t1"))
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.triage, [user("refund, or else")])
    assert desk.calls("refunds") == 0
    response = caught.value.response
    assert response.agent is desk.triage  # nothing switched
    answer = response.messages[-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "t1"
    assert answer["content"] == "Error: Refunds refused the conversation: a threat"
    assert [s["kind"] for s in response.trajectory] == ["model", "tool", "guardrail"]


def test_a_handoff_trip_with_on_trip_goes_to_the_fallback():
    desk = Desk(input_guardrails=[no_threats])
    desk.refunds.on_trip = desk.fallback
    desk.script("triage", scripted_tool_call("transfer_to_refunds", id="t1"))
    desk.script("fallback", "A human will call you.")
    response = desk.swarm.run(desk.triage, [user("refund, or else")])
    assert desk.calls("refunds") == 0 and response.agent is desk.fallback
    assert response.messages[1]["content"] == json.dumps({"assistant": "Humans"})
    assert response.messages[-1]["content"] == "A human will call you."
    handoff = next(s for s in response.trajectory if s["kind"] == "handoff")
    assert handoff == {"agent": "Triage", "kind": "handoff", "name": "Humans"}


def test_a_fallback_that_trips_too_stops_the_run():
    desk = Desk(input_guardrails=[no_threats])
    desk.fallback.input_guardrails = [lambda ctx, msgs: "closed today"]
    desk.refunds.on_trip = desk.fallback
    desk.script("triage", scripted_tool_call("transfer_to_refunds", id="t1"))
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.triage, [user("refund, or else")])
    assert caught.value.agent == "Humans" and caught.value.reason == "closed today"
    assert desk.calls("refunds") == desk.calls("fallback") == 0
    assert caught.value.response.messages[-1]["content"].startswith("Error: Humans refused")


def test_a_route_into_a_guarded_agent_trips():
    def classify(context_variables: dict) -> Result:
        """Note the intent."""
        return Result(value="refund", context_variables={"intent": "refund"})

    desk = Desk(input_guardrails=[no_threats])
    desk.triage.functions = [classify]
    desk.triage.routes = [Route(when=lambda c: c.get("intent") == "refund", to=desk.refunds)]
    desk.script("triage", scripted_tool_call("classify"))
    with pytest.raises(GuardrailTripped):
        desk.swarm.run(desk.triage, [user("refund, or else")])
    assert desk.calls("refunds") == 0


def test_a_caller_return_into_a_guarded_agent_trips():
    desk = Desk(input_guardrails=[no_threats])
    desk.script("billing", "Billing here.", scripted_tool_call("transfer_back"))
    billing = Agent(name="Billing", model="billing", can_return=True)
    desk.refunds.handoffs = [billing]
    desk.script("refunds", scripted_tool_call("transfer_to_billing"))
    first = desk.swarm.run(desk.refunds, [user("hi, a refund for order 7")])
    assert first.agent is billing and desk.calls("refunds") == 1
    history = [user("hi, a refund for order 7"), *first.messages, user("now, or else")]
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(billing, history)
    assert desk.calls("refunds") == 1  # not called again
    assert caught.value.response.messages[-1]["content"].startswith("Error: Refunds refused")


def test_a_langgraph_member_handing_to_a_guarded_agent_trips():
    from langchain.agents import create_agent

    from swarmgraph import handoff_tool

    desk = Desk(input_guardrails=[no_threats])
    research = create_agent(
        ScriptedChatModel([scripted_tool_call("transfer_to_refunds")]),
        tools=[handoff_tool(desk.refunds)],
        name="research",
    )
    desk.triage.handoffs.append(research)
    desk.script("triage", scripted_tool_call("transfer_to_research"))
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.triage, [user("papers, or else")])
    assert desk.calls("refunds") == 0
    assert caught.value.response.agent.name == "research"


# -- output guardrails --------------------------------------------------------------------
def test_an_output_guardrail_refuses_a_final_answer_after_a_handoff():
    desk = Desk(output_guardrails=[no_secrets])
    desk.script("triage", scripted_tool_call("transfer_to_refunds"))
    desk.script("refunds", "Refunded to card 4111 1111 1111 1111.")
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.triage, [user("refund order 7")])
    trip = caught.value
    assert (trip.agent, trip.kind, trip.reason) == ("Refunds", "output", "leaks a card number")
    assert trip.response.messages[-1]["sender"] == "Refunds"  # everything so far, the answer too
    assert trip.response.trajectory[-1]["when"] == "output"


def test_an_output_trip_with_on_trip_lets_the_fallback_answer():
    desk = Desk(output_guardrails=[no_secrets])
    desk.refunds.on_trip = desk.fallback
    desk.script("refunds", "Card 4111 refunded.")
    desk.script("fallback", "Your refund is on its way.")
    response = desk.swarm.run(desk.refunds, [user("refund order 7")])
    assert response.agent is desk.fallback
    assert [m["sender"] for m in response.messages] == ["Refunds", "Humans"]
    assert response.messages[-1]["content"] == "Your refund is on its way."


def test_tool_calls_are_not_final_answers():
    desk = Desk(output_guardrails=[lambda ctx, msgs: "never"])
    desk.script("triage", scripted_tool_call("transfer_to_refunds"))
    desk.script("refunds", "Done.")
    desk.triage.output_guardrails = [lambda ctx, msgs: "Triage never answers"]
    with pytest.raises(GuardrailTripped) as caught:
        desk.swarm.run(desk.triage, [user("hi")], max_turns=5)
    assert caught.value.agent == "Refunds"  # Triage's tool call passed; Refunds' answer did not


def test_a_guardrail_that_raises_trips_fail_closed():
    def broken(context_variables, messages):
        raise KeyError("customer")

    desk = Desk(input_guardrails=[broken])
    with pytest.raises(GuardrailTripped, match="broken raised KeyError"):
        desk.swarm.run(desk.refunds, [user("hi")])
    assert desk.calls("refunds") == 0


# -- preconditions ----------------------------------------------------------------------
def test_a_precondition_refuses_the_handoff_until_the_model_fixes_the_context():
    def note_order(order_id: int) -> Result:
        """Note the order id."""
        return Result(value="noted", context_variables={"order_id": order_id})

    desk = Desk(requires=["order_id"])
    desk.triage.functions = [note_order]
    desk.script(
        "triage",
        scripted_tool_call("transfer_to_refunds", id="t1"),
        scripted_tool_call("note_order", {"order_id": 7}),
        scripted_tool_call("transfer_to_refunds", id="t2"),
    )
    desk.script("refunds", "Refunded.")
    response = desk.swarm.run(desk.triage, [user("refund")])
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    assert answers["t1"] == "Error: Refunds needs order_id"
    assert answers["t2"] == json.dumps({"assistant": "Refunds"})
    assert response.agent is desk.refunds and desk.calls("refunds") == 1
    checks = [s["passed"] for s in response.trajectory if s["kind"] == "precondition"]
    assert checks == [False, True]
    # the model read the refusal before it fixed the context
    seen = desk.models["triage"].calls[1]
    assert any(
        isinstance(m, ToolMessage) and m.content == "Error: Refunds needs order_id" for m in seen
    )


def test_a_callable_precondition_and_a_route_that_is_not_taken():
    def verified(context_variables):
        return None if context_variables.get("verified") else "the customer is not verified"

    def classify(context_variables: dict) -> Result:
        """Note the intent."""
        return Result(value="refund", context_variables={"intent": "refund"})

    desk = Desk(requires=verified)
    desk.triage.functions = [classify]
    desk.triage.routes = [Route(when=lambda c: c.get("intent") == "refund", to=desk.refunds)]
    desk.script("triage", scripted_tool_call("classify"), "Please verify first.")
    response = desk.swarm.run(desk.triage, [user("refund")])
    assert response.agent is desk.triage and desk.calls("refunds") == 0
    failed = next(s for s in response.trajectory if s["kind"] == "precondition")
    assert failed["reason"] == "Refunds can't take the conversation: the customer is not verified"


def test_a_caller_return_respects_the_precondition():
    desk = Desk()
    billing = Agent(name="Billing", model="billing", can_return=True)
    desk.triage.requires = ["order_id"]
    desk.triage.handoffs = [billing]
    desk.script("billing", scripted_tool_call("transfer_back", id="b1"))
    desk.script("triage", scripted_tool_call("transfer_to_billing"), "Back at Triage.")
    response = desk.swarm.run(desk.triage, [user("hi")], context_variables={"order_id": 7})
    assert response.agent is desk.triage  # order_id was there
    desk.script("billing", scripted_tool_call("transfer_back", id="b1"), "ok")
    desk.script("triage", scripted_tool_call("transfer_to_billing"))
    response = desk.swarm.run(desk.triage, [user("hi")])
    back = next(m for m in response.messages if m.get("tool_call_id") == "b1")
    assert back["content"] == "Error: Triage needs order_id" and response.agent is billing


# -- counted ------------------------------------------------------------------------------
def test_a_model_guardrail_books_its_usage_and_the_budget_wins_over_it():
    judge_model = ScriptedChatModel(["PASS"])
    judge = model_guardrail(judge_model, "Say PASS unless the user threatens.", name="judge")
    desk = Desk(input_guardrails=[judge])
    desk.script("triage", scripted_tool_call("transfer_to_refunds"))
    desk.script("refunds", "Refunded.")
    response = desk.swarm.run(desk.triage, [user("refund order 7")])
    entry = next(s for s in response.trajectory if s["kind"] == "guardrail")
    assert entry["passed"] and entry["input_tokens"] > 0 and entry["output_tokens"] > 0
    assert response.usage["model_calls"] == 3  # Triage, the judge, Refunds
    assert response.usage["by_agent"]["Refunds"]["model_calls"] == 2
    # With one model call left after Triage's, the judge would pass the budget: BudgetExceeded.
    judge_model.reset()
    desk.script("triage", scripted_tool_call("transfer_to_refunds"))
    desk.script("refunds", "Refunded.")
    with pytest.raises(BudgetExceeded) as caught:
        desk.swarm.run(desk.triage, [user("refund order 7")], budget=Budget(max_model_calls=1))
    assert judge_model.calls == [] and desk.calls("refunds") == 0
    assert caught.value.response.messages[-1]["content"].startswith("Error: Budget exceeded")


def test_a_guardrail_may_report_its_own_cost():
    @guardrail(uses_model=True)
    def priced(context_variables, messages):
        return GuardrailResult(reason=None, model="mini", input_tokens=30, output_tokens=2)

    desk = Desk(input_guardrails=[priced])
    desk.script("refunds", "Refunded.")
    response = desk.swarm.run(desk.refunds, [user("refund")])
    assert response.usage["input_tokens"] >= 30 and response.usage["model_calls"] == 2
    assert response.trajectory[0]["model"] == "mini"


def test_check_entry_is_the_hook_for_any_other_way_in():
    refunds = Agent(name="Refunds", requires=["order_id"], input_guardrails=[no_threats])
    control = RunControl()
    state = {"messages": [HumanMessage("or else")], "context_variables": {"order_id": 7}}
    trip = check_entry(refunds, state, control)
    assert (trip.kind, trip.name) == ("input", "no_threats")
    assert [s["kind"] for s in control.ledger.trajectory] == ["precondition", "guardrail"]


# -- the compiled graph, streaming, drawing -------------------------------------------------
def test_the_compiled_graph_raises_and_its_thread_keeps_the_last_checkpoint():
    desk = Desk(input_guardrails=[no_threats])
    triage_model = ScriptedChatModel([scripted_tool_call("transfer_to_refunds"), "ok"])
    app = build_swarm_graph([desk.triage], chat_model=triage_model).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    with pytest.raises(GuardrailTripped):
        app.invoke({"messages": [("user", "refund, or else")]}, thread)
    assert len(triage_model.calls) == 1  # Refunds' model never ran (the model is shared here)


def test_a_streamed_run_raises_after_its_events():
    desk = Desk(input_guardrails=[no_threats])
    desk.script("triage", scripted_tool_call("transfer_to_refunds"))
    events = []
    with pytest.raises(GuardrailTripped) as caught:
        for event in desk.swarm.run(desk.triage, [user("or else")], stream=True):
            events.append(event)
    assert {"delim": "start"} in events and caught.value.response.agent is desk.triage


def test_the_graph_draws_what_an_agent_requires_and_where_a_trip_goes():
    desk = Desk(requires=["order_id"], input_guardrails=[no_threats])
    desk.refunds.on_trip = desk.fallback
    drawn = build_swarm_graph([desk.triage]).compile().get_graph()
    labels = {(e.source, e.target): e.data for e in drawn.edges}
    assert labels[("Triage", "Refunds")] == "needs order_id"
    assert labels[("Triage", "Humans")] == "on_trip"
    assert labels[("Refunds", "Humans")] == "on_trip"


def test_agent_fields_are_checked():
    with pytest.raises(ValueError, match="guardrails are functions"):
        Agent(input_guardrails=["no"])
    with pytest.raises(ValueError, match="on_trip takes an Agent"):
        Agent(on_trip="Humans")
    with pytest.raises(ValueError, match="requires takes context keys"):
        Agent(requires=[1])
    assert Agent(requires="order_id").requires == ["order_id"]


def test_without_guardrails_the_trajectory_is_unchanged():
    model = ScriptedChatModel([scripted_tool_call("transfer_to_refunds"), "Refunded."])
    refunds = Agent(name="Refunds")
    triage = Agent(name="Triage", handoffs=[refunds])
    response = Swarm(chat_model=model).run(triage, [user("refund")])
    assert [s["kind"] for s in response.trajectory] == ["model", "tool", "handoff", "model"]
    assert CALLER.name == "CALLER" and isinstance(model.calls[0][-1], HumanMessage)
    assert not isinstance(model.calls[-1][-1], AIMessage)
