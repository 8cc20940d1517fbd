"""langgraph-swarm's handoff tools on a swarm agent: a tool made by its ``create_handoff_tool``
returns ``Command(goto=<agent name>, graph=Command.PARENT, update={"messages": [*history,
answer], "active_agent": <agent name>})``; the step hands off to the agent of that name, the
call answered with the tool's own message, and the builder draws the edge from the tool's
metadata. These use the real package (the bench extra that ``make test`` installs)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain.agents.middleware import wrap_tool_call
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from langgraph_swarm import create_handoff_tool

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call

HI = [{"role": "user", "content": "I need Bob"}]
THREAD = {"configurable": {"thread_id": "t"}}


def _pair(alice_script: list[Any], bob_script: list[Any]) -> tuple[Agent, Agent, Any]:
    bob = Agent(name="Bob", model="bob")
    alice = Agent(name="Alice", model="alice", functions=[create_handoff_tool(agent_name="Bob")])
    models = {"alice": ScriptedChatModel(alice_script), "bob": ScriptedChatModel(bob_script)}
    return alice, bob, models.__getitem__


def _said(state: dict[str, Any]) -> list[tuple[str, str | None, Any]]:
    return [(type(m).__name__, m.name, m.content) for m in state["messages"]]


@pytest.mark.parametrize("way", ["invoke", "ainvoke"])
def test_a_create_handoff_tool_call_hands_off_on_the_compiled_graph(way: str) -> None:
    alice, bob, models = _pair([scripted_tool_call("transfer_to_bob")], ["Bob here.", "Still Bob."])
    app = build_swarm_graph([alice, bob], chat_model=models).compile(checkpointer=InMemorySaver())
    if way == "invoke":
        state = app.invoke({"messages": HI}, THREAD)
    else:
        state = asyncio.run(app.ainvoke({"messages": HI}, THREAD))
    assert _said(state)[1:] == [
        ("AIMessage", "Alice", ""),
        ("ToolMessage", "transfer_to_bob", "Successfully transferred to Bob"),
        ("AIMessage", "Bob", "Bob here."),
    ]
    assert state["active_agent"] == "Bob"
    # the history the tool echoed back is the conversation's own: nothing is written twice
    assert sum(isinstance(m, HumanMessage) for m in state["messages"]) == 1
    # the next turn of the thread starts at Bob (the switch was checkpointed)
    later = app.invoke({"messages": [{"role": "user", "content": "again"}]}, THREAD)
    assert later["messages"][-1].name == "Bob" and later["messages"][-1].content == "Still Bob."
    # the builder read the tool's metadata: the handoff is a drawn edge
    edges = {(e.source, e.target) for e in app.get_graph().edges}
    assert ("Alice", "Bob") in edges


def test_it_hands_off_in_swarm_run_through_wrap_tool_call_hooks() -> None:
    seen: list[str] = []

    @wrap_tool_call
    def watch(request, handler):  # type: ignore[no-untyped-def]
        answer = handler(request)
        seen.append(str(answer.content))
        return answer

    bob = Agent(name="Bob", model="bob")

    def page_bob() -> str:
        """Page Bob (he is on call)."""
        return f"paged {bob.name}"  # names Bob: discovery finds him, as in any Swarm program

    alice = Agent(
        name="Alice",
        model="alice",
        functions=[page_bob, create_handoff_tool(agent_name="Bob")],
        middleware=[watch],
    )
    models = {
        "alice": ScriptedChatModel([scripted_tool_call("transfer_to_bob")]),
        "bob": ScriptedChatModel(["Bob here."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(alice, HI)
    assert response.agent is bob and response.messages[-1]["content"] == "Bob here."
    assert response.messages[1]["content"] == "Successfully transferred to Bob"
    assert seen == ["Successfully transferred to Bob"]


def test_a_handoff_to_an_agent_the_swarm_lacks_is_an_error_the_model_reads() -> None:
    alice = Agent(name="Alice", model="alice", functions=[create_handoff_tool(agent_name="Carol")])
    model = ScriptedChatModel([scripted_tool_call("transfer_to_carol"), "I cannot reach Carol."])
    app = build_swarm_graph([alice], chat_model=model).compile(checkpointer=InMemorySaver())
    state = app.invoke({"messages": HI}, THREAD)
    answer = state["messages"][2].content
    assert answer.startswith("Error: transfer_to_carol handed off to 'Carol', which is no agent")
    assert (
        state.get("active_agent") in (None, "Alice")
        and state["messages"][-1].content == "I cannot reach Carol."
    )
    assert not any(e.target == "Carol" for e in app.get_graph().edges)


def test_a_command_that_adds_messages_besides_its_answer_is_refused_and_nothing_is_written() -> (
    None
):
    # ToolNode's add_messages would append a message the conversation does not hold; a swarm
    # tool answers with its one message, so the whole Command is refused, handoff included.
    def chatty(
        state: Annotated[Any, InjectedState], call: Annotated[str, InjectedToolCallId]
    ) -> Command:
        """Hand off to Bob, with a note."""
        answer = ToolMessage("Transferred.", tool_call_id=call)
        note = AIMessage("A note nobody asked for.")
        update = {"messages": [*state["messages"], note, answer], "active_agent": "Bob"}
        return Command(goto="Bob", graph=Command.PARENT, update=update)

    bob = Agent(name="Bob", model="bob")
    alice = Agent(name="Alice", model="alice", functions=[chatty])
    models = {
        "alice": ScriptedChatModel([scripted_tool_call("chatty"), "Staying."]),
        "bob": ScriptedChatModel(["Bob here."]),
    }
    app = build_swarm_graph([alice, bob], chat_model=models.__getitem__).compile(
        checkpointer=InMemorySaver()
    )
    state = app.invoke({"messages": HI}, THREAD)
    answer = state["messages"][2].content
    assert answer.startswith(
        "Error: chatty returned a LangGraph Command whose update adds 1 message"
    )
    assert state.get("active_agent") in (None, "Alice")  # (the entry agent: never written)
    assert all(m.content != "A note nobody asked for." for m in state["messages"])
