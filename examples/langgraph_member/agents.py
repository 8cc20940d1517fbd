"""A library help desk: our ``Agent`` Triage, and a ``create_agent`` graph you may already have.

The catalogue agent is a plain LangGraph graph made by ``langchain.agents.create_agent`` with a
name. Triage hands off to it with ``handoffs=[...]`` like to any agent; it searches with its
own tool, and hands back with :func:`swarmgraph.handoff_tool`. Its messages join the shared
history, so Triage reads what it found.

Example:
    >>> from swarmgraph import Swarm, ScriptedChatModel
    >>> from examples.langgraph_member.offline import rules
    >>> triage, catalogue = build(ScriptedChatModel([], respond=rules))
    >>> swarm = Swarm(chat_model=ScriptedChatModel([], respond=rules))
    >>> response = swarm.run(triage, [{"role": "user", "content": "Any books on bees?"}])
    >>> response.agent.name, response.messages[-1]["sender"]
    ('catalogue', 'catalogue')
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool

from swarmgraph import Agent, handoff_tool

MODEL = "gpt-4o-mini"

BOOKS = {
    "bees": ["The Buzz About Bees (Tautz)", "Honeybee Democracy (Seeley)"],
    "bikes": ["Just Ride (Petersen)"],
    "rain": ["Rain: A Natural and Cultural History (Barnett)"],
}


@tool
def search_catalogue(topic: str) -> str:
    """Search the library catalogue for books on a topic."""
    found = BOOKS.get(topic.lower().rstrip("s") + "s") or BOOKS.get(topic.lower())
    return "; ".join(found) if found else f"No books on {topic}."


def build(model: Any) -> tuple[Agent, Any]:
    """``(triage, catalogue)``; ``model`` is the chat model the catalogue graph runs on."""
    triage = Agent(
        name="Triage",
        model=MODEL,
        instructions=(
            "You are Triage at the town library. Questions about which books we have go to "
            "the catalogue agent; answer opening hours (10-20 daily) and loans yourself."
        ),
    )
    catalogue = create_agent(
        model,
        tools=[search_catalogue, handoff_tool(triage)],
        system_prompt=(
            "You are the catalogue agent. Search with search_catalogue and list what you "
            "found. For anything that is not about finding books, call transfer_to_triage."
        ),
        name="catalogue",
    )
    triage.handoffs.append(catalogue)
    return triage, catalogue
