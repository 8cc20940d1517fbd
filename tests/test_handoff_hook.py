"""The swarm's handoff moment as a middleware extension (graph/core/middleware.py,
docs/middleware.md "The handoff moment"): ``before_handoff`` / ``abefore_handoff`` on the
middleware of the agent taking the conversation, which lets a switch through, refuses it (the
transfer call answered ``Error: <reason>``) or redirects it (``HandTo``); and a hook's
``jump_to=HandTo(agent)``, which hands the conversation over from a step. Each test would fail
if the core ignored the hook.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage
from swarmgraph.graph.core.handoffs import Handoff, HandTo
from swarmgraph.graph.core.hook_context import step_control
from swarmgraph.graph.core.run_control import RunControl

from swarmgraph import (
    Agent,
    GuardrailTripped,
    Parallel,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
)
from swarmgraph import scripted_tool_call as call


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


class Door(AgentMiddleware):
    """Records each handoff it is asked about, and answers with ``verdict``."""

    def __init__(self, verdict: Any = None) -> None:
        super().__init__()
        self.verdict = verdict
        self.seen: list[Handoff] = []
        self.controls: list[Any] = []

    def before_handoff(self, handoff: Handoff) -> Any:
        self.seen.append(handoff)
        self.controls.append(step_control())
        return self.verdict


class AsyncDoor(Door):
    """Only an async hook: ``arun`` awaits it, ``run`` drives it in place."""

    before_handoff = None  # type: ignore[assignment]

    async def abefore_handoff(self, handoff: Handoff) -> Any:
        await asyncio.sleep(0)
        self.seen.append(handoff)
        return self.verdict


def desk(door: AgentMiddleware, *replies: Any) -> tuple[Swarm, Agent, Agent, Agent]:
    humans = Agent(name="Humans", model="humans")
    refunds = Agent(name="Refunds", model="refunds", middleware=[door])
    triage = Agent(name="Triage", model="triage", handoffs=[refunds])
    models = {
        "triage": ScriptedChatModel([call("transfer_to_refunds", id="t1"), *replies]),
        "refunds": ScriptedChatModel(["Refunded."]),
        "humans": ScriptedChatModel(["A human here."]),
    }
    return Swarm(chat_model=lambda name: models[name]), triage, refunds, humans


def test_a_hook_that_lets_the_handoff_through_sees_it_and_the_run_control():
    door = Door()
    swarm, triage, refunds, _ = desk(door)
    response = swarm.run(triage, user("refund"), context_variables={"order": 7})
    assert response.agent is refunds and response.messages[-1]["content"] == "Refunded."
    (seen,) = door.seen
    assert (seen.source, seen.target, seen.way, seen.redirects) == (triage, refunds, "handoff", 0)
    assert seen.state["context_variables"] == {"order": 7}
    assert seen.state["messages"][-1].content == json.dumps({"assistant": "Refunds"})
    assert isinstance(door.controls[0], RunControl)


def test_a_refusal_keeps_the_agent_and_answers_the_transfer_call():
    swarm, triage, _, _ = desk(Door("Refunds is closed today"), "Sorry, refunds are closed.")
    response = swarm.run(triage, user("refund"))
    assert response.agent is triage
    answer = next(m for m in response.messages if m.get("tool_call_id") == "t1")
    assert answer["content"] == "Error: Refunds is closed today"
    assert response.messages[-1]["content"] == "Sorry, refunds are closed."
    assert "handoff" not in [s["kind"] for s in response.trajectory]


def test_a_redirect_hands_to_another_agent_whose_hooks_run_in_turn():
    door, humans_door = Door(), Door()
    swarm, triage, _, humans = desk(door)
    door.verdict = HandTo(humans, note="closed")
    humans.middleware = [humans_door]
    response = swarm.run(triage, user("refund"))
    assert response.agent is humans and response.messages[-1]["content"] == "A human here."
    answer = next(m for m in response.messages if m.get("tool_call_id") == "t1")
    assert answer["content"] == json.dumps({"assistant": "Humans"})
    (seen,) = humans_door.seen
    assert (seen.way, seen.note, seen.redirects, seen.source) == ("jump", "closed", 1, triage)


def test_the_async_hook_is_awaited_on_arun_and_driven_on_run():
    for path in ("run", "arun"):
        door = AsyncDoor("closed")
        swarm, triage, _, _ = desk(door, "Closed.")
        if path == "run":
            response = swarm.run(triage, user("refund"))
        else:
            response = asyncio.run(swarm.arun(triage, user("refund")))
        assert response.agent is triage and len(door.seen) == 1, path


def test_the_run_middleware_is_asked_about_every_switch_on_the_compiled_graph_too():
    door = Door()
    refunds = Agent(name="Refunds")
    triage = Agent(name="Triage", handoffs=[refunds])
    model = ScriptedChatModel([call("transfer_to_refunds"), "Refunded."])
    app = build_swarm_graph([triage], chat_model=model, middleware=[door]).compile()
    out = app.invoke({"messages": [("user", "refund")]})
    assert out["active_agent"] == "Refunds"
    assert [(h.source.name, h.target.name) for h in door.seen] == [("Triage", "Refunds")]


class Bouncer(AgentMiddleware):
    """A ``before_model`` hook that hands a rude user message to ``to``."""

    def __init__(self, to: Agent) -> None:
        super().__init__()
        self.to = to

    def before_model(self, state: dict[str, Any], runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage) and "rude" in last.content:
            return {"jump_to": HandTo(self.to, note="rude")}
        return None


def test_jump_to_an_agent_hands_over_without_asking_the_model():
    humans_door = Door()
    humans = Agent(name="Humans", model="humans", middleware=[humans_door])
    desk_agent = Agent(name="Desk", model="desk", middleware=[Bouncer(humans)])
    models = {"desk": ScriptedChatModel(["Hello."]), "humans": ScriptedChatModel(["Calm down."])}
    swarm = Swarm(chat_model=lambda name: models[name])
    response = swarm.run(desk_agent, user("a rude question"))
    assert response.agent is humans and response.messages[-1]["content"] == "Calm down."
    assert models["desk"].calls == []
    assert [(h.way, h.note) for h in humans_door.seen] == [("jump", "rude")]
    polite = swarm.run(desk_agent, user("a kind question"))
    assert polite.agent is desk_agent and polite.messages[-1]["content"] == "Hello."


def test_a_branch_asks_the_hook_and_a_refusal_refuses_that_branch_only():
    door = Door("Refunds takes no branches")
    refunds = Agent(name="Refunds", model="refunds", middleware=[door])
    billing = Agent(name="Billing", model="billing")

    def ask_both() -> Parallel:
        """Ask refunds and billing."""
        return Parallel(refunds, billing)

    desk_agent = Agent(name="Desk", model="desk", functions=[ask_both])
    models = {
        "desk": ScriptedChatModel([call("ask_both"), "Summed up."]),
        "refunds": ScriptedChatModel(["Refunded."]),
        "billing": ScriptedChatModel(["Billed."]),
    }
    response = Swarm(chat_model=lambda name: models[name]).run(desk_agent, user("both"))
    statuses = {b["agent"]: b["status"] for b in response.branches}
    assert statuses == {"Refunds": "refused", "Billing": "answered"}
    assert [h.way for h in door.seen] == ["branch"] and models["refunds"].calls == []
    joined = json.loads(next(m for m in response.messages if m["role"] == "tool")["content"])
    assert joined["Refunds"] == "Error: Refunds takes no branches"


class Sign(AgentMiddleware):
    """Says what the graph draws on the edges into its agent."""

    handoff_label = "members only"


def test_a_middleware_labels_the_edges_into_its_agent():
    refunds = Agent(name="Refunds", middleware=[Sign()])
    triage = Agent(name="Triage", handoffs=[refunds])
    drawn = build_swarm_graph([triage]).compile().get_graph()
    labels = {(e.source, e.target): e.data for e in drawn.edges}
    assert labels[("Triage", "Refunds")] == "members only"


def test_a_tripped_guardrail_stops_the_run_as_a_trip_not_as_a_middleware_stop():
    def no_threats(context_variables, messages):
        return "a threat" if "or else" in messages[-1].content else None

    refunds = Agent(name="Refunds", input_guardrails=[no_threats])
    with pytest.raises(GuardrailTripped) as caught:
        Swarm(chat_model=ScriptedChatModel(["Refunded."])).run(refunds, user("now, or else"))
    assert caught.value.response.stopped is None  # the trip is the reason, and the only one
