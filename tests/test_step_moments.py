"""The step's two extension moments for calls that outlive a step (graph/core/middleware.py,
docs/middleware.md): ``hold_calls`` leaves some of a reply's calls unanswered, ``before_step``
answers them at the start of a later step instead of asking the model. Approvals and effects
are one such middleware (graph/features/decisions.py); any middleware may be one, on a run
whose tools are not marked too, on ``Swarm.run`` and on the compiled graph alike."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call


class Later(AgentMiddleware):
    """Holds every call of ``slow`` when the model asks for it; the next step runs it."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[str] = []
        self.started: list[str] = []

    def hold_calls(self, turn: Any, reply: AIMessage, tools: list) -> tuple[AIMessage, list]:
        held = [c for c in reply.tool_calls if c["name"] == "slow"]
        self.held += [c["id"] or "" for c in held]
        keep = [c for c in reply.tool_calls if c["name"] != "slow"]
        return reply.model_copy(update={"tool_calls": keep}), held

    async def before_step(self, start: Any) -> bool:
        messages = start.turn.state["messages"]
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None or not last.tool_calls:
            return False
        waiting = [c for c in last.tool_calls if c["id"] not in answered]
        if not waiting:
            return False
        self.started += [c["id"] or "" for c in waiting]
        start.admit(
            start.turn, last.model_copy(update={"tool_calls": waiting}), start.turn.agent.functions
        )
        return True


def _setup() -> tuple[Agent, ScriptedChatModel, Later, list[int]]:
    ran: list[int] = []

    def slow(n: int) -> str:
        """A slow job."""
        ran.append(n)
        return f"slow {n} done"

    def quick(n: int) -> str:
        """A quick job."""
        return f"quick {n} done"

    later = Later()
    model = ScriptedChatModel(
        [
            AIMessage(
                "",
                tool_calls=[
                    {"name": "slow", "args": {"n": 1}, "id": "s1"},
                    {"name": "quick", "args": {"n": 2}, "id": "q2"},
                ],
            ),
            "All done.",
        ]
    )
    return Agent(name="Jobs", functions=[slow, quick], middleware=[later]), model, later, ran


def _check(messages: list[Any], later: Later, ran: list[int], model: ScriptedChatModel) -> None:
    # the held call was answered a step later, by before_step, without a third model call
    assert later.held == ["s1"] and later.started == ["s1"] and ran == [1]
    assert len(model.calls) == 2
    answers = [(m.tool_call_id, m.content) for m in messages if isinstance(m, ToolMessage)]
    assert answers == [("q2", "quick 2 done"), ("s1", "slow 1 done")]
    assert messages[-1].content == "All done."


def test_a_held_call_is_answered_by_a_later_step_on_swarm_run() -> None:
    agent, model, later, ran = _setup()
    response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "go"}])
    assert [m.get("tool_call_id") for m in response.messages if m["role"] == "tool"] == ["q2", "s1"]
    assert response.messages[-1]["content"] == "All done."
    assert later.held == ["s1"] and later.started == ["s1"] and ran == [1]
    assert len(model.calls) == 2


def test_a_held_call_is_answered_by_a_later_step_on_the_compiled_graph() -> None:
    agent, model, later, ran = _setup()
    graph = build_swarm_graph([agent], chat_model=model).compile()
    out = graph.invoke({"messages": [HumanMessage("go")]})
    _check(out["messages"], later, ran, model)


def test_before_step_is_awaited_on_the_async_path() -> None:
    agent, model, later, ran = _setup()
    graph = build_swarm_graph([agent], chat_model=model).compile()
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}))
    _check(out["messages"], later, ran, model)


def test_a_step_without_waiting_calls_asks_the_model() -> None:
    """``before_step`` returning False: the step goes on as usual."""
    later = Later()
    model = ScriptedChatModel(["Hi."])
    response = Swarm(chat_model=model).run(
        Agent(middleware=[later]), [{"role": "user", "content": "hi"}]
    )
    assert response.messages[-1]["content"] == "Hi." and later.started == []


def test_a_call_nothing_holds_runs_in_its_own_step() -> None:
    """The same middleware holds only ``slow``: another tool's call runs in its own step."""
    agent, _, later, ran = _setup()
    model = ScriptedChatModel([scripted_tool_call("quick", {"n": 3}), "Done."])
    response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "go"}])
    assert [m["content"] for m in response.messages[1:]] == ["quick 3 done", "Done."]
    assert later.held == [] and ran == []
