"""The page's middleware tells a LangGraph member's turn as a step of its own: the member runs
as one graph call, with no step of ours (no ``before_step``), so without this the page would
show no STEP_STARTED for it and credit its tool answers to the agent that handed over."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from swarmgraph.graph.core.run_control import RunHooks

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.app.ui.steps import UiMiddleware


@tool
def search_papers(topic: str) -> str:
    """Search the paper index."""
    return f"3 papers on {topic}"


class Told:
    """Records what the middleware tells the turn, in order."""

    def __init__(self) -> None:
        self.said: list[tuple[str, Any]] = []

    def step_started(self, agent: str, state: dict[str, Any]) -> None:
        self.said.append(("step", agent))

    def step_ended(self, messages: list[Any]) -> None:
        self.said.append(("answers", [str(m.content) for m in messages]))

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


def run(first: str) -> list[tuple[str, Any]]:
    research = create_agent(
        ScriptedChatModel([scripted_tool_call("search_papers", {"topic": "bees"}), "Found 3."]),
        tools=[search_papers],
        name="research",
    )
    triage = Agent(name="Triage")
    triage.handoffs.append(research)
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    told = Told()
    page = UiMiddleware(told)
    start = triage if first == "Triage" else research
    response = swarm.run(
        start, [{"role": "user", "content": "papers?"}], hooks=RunHooks(middleware=[page])
    )
    page.ended(response._langchain_messages)
    return told.said


def test_a_members_turn_is_a_step_with_its_own_tool_answers():
    assert run("Triage") == [
        ("step", "Triage"),
        ("answers", ['{"assistant": "research"}']),
        ("step", "research"),
        ("answers", ["3 papers on bees"]),
    ]


def test_a_turn_that_starts_on_a_member_is_told_as_its_step():
    assert run("research") == [("step", "research"), ("answers", ["3 papers on bees"])]
