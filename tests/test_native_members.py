"""A compiled LangGraph graph (create_agent, create_react_agent, a hand-built StateGraph) as a
swarm member next to our Agents: handed to, sharing the history, handing back."""

from __future__ import annotations

import asyncio
import warnings
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from swarmgraph.graph.features.native import GraphAgent, as_member
from swarmgraph.memory import Session
from typing_extensions import TypedDict

from swarmgraph import (
    Agent,
    Budget,
    BudgetExceeded,
    HandoffLoopError,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    handoff_tool,
    scripted_tool_call,
)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


@tool
def search_papers(topic: str) -> str:
    """Search the paper index."""
    return f"3 papers on {topic}"


def research_graph(replies: list, *, back_to: Agent | None = None, name: str = "research"):
    tools: list[Any] = [search_papers]
    if back_to is not None:
        tools.append(handoff_tool(back_to))
    return create_agent(ScriptedChatModel(replies), tools=tools, name=name)


def test_an_agent_hands_off_to_a_create_agent_graph_and_its_messages_join_the_history():
    triage = Agent(name="Triage")
    research = research_graph(
        [scripted_tool_call("search_papers", {"topic": "bees"}), "Found 3 papers on bees."]
    )
    triage.handoffs.append(research)
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    response = swarm.run(triage, [user("papers on bees?")])

    assert isinstance(response.agent, GraphAgent) and response.agent.graph is research
    assert [(m["role"], m.get("sender") or m.get("tool_name")) for m in response.messages] == [
        ("assistant", "Triage"),
        ("tool", "transfer_to_research"),
        ("assistant", "research"),  # the member's tool call, stamped with its name
        ("tool", "search_papers"),
        ("assistant", "research"),
    ]
    assert response.messages[3]["content"] == "3 papers on bees"
    assert response.messages[-1]["content"] == "Found 3 papers on bees."
    assert response.usage["model_calls"] == 3


def test_the_member_hands_back_with_the_tool_we_provide_and_triage_reads_its_work():
    triage_model = ScriptedChatModel(
        [scripted_tool_call("transfer_to_research"), "Triage here: the summary is above."]
    )
    triage = Agent(name="Triage", instructions="Route.")
    research_model = ScriptedChatModel(
        [
            scripted_tool_call("search_papers", {"topic": "wasps"}),
            scripted_tool_call("transfer_to_triage", content="Done searching; back to Triage."),
        ]
    )
    research = create_agent(
        research_model, tools=[search_papers, handoff_tool(triage)], name="research"
    )
    triage.handoffs.append(research)
    response = Swarm(chat_model=triage_model).run(triage, [user("wasps?")])

    assert response.agent is triage
    senders = [m.get("sender") or m.get("tool_name") for m in response.messages]
    assert senders == [
        "Triage", "transfer_to_research",
        "research", "search_papers",
        "research", "transfer_to_triage",
        "Triage",
    ]  # fmt: skip
    assert response.messages[5]["content"] == '{"assistant": "Triage"}'
    # Triage's second call saw the member's work: the search result and its handback
    seen = [m.content for m in triage_model.calls[1]]
    assert "3 papers on wasps" in seen and "Done searching; back to Triage." in seen
    # the member's model got the shared history (no Triage system prompt: it has its own)
    first_member_call = research_model.calls[0]
    assert [m.type for m in first_member_call] == ["human", "ai", "tool"]


def test_the_graph_draws_edges_both_ways_and_a_transfer_function_may_return_the_graph():
    triage = Agent(name="Triage")
    research = research_graph(["ok"], back_to=triage)

    def transfer_to_research():
        """Send research questions to the research graph."""
        return research

    triage.functions.append(transfer_to_research)
    app = build_swarm_graph([triage]).compile()
    mermaid = app.get_graph().draw_mermaid()
    assert "Triage -.-> research" in mermaid and "research -.-> Triage" in mermaid

    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    response = swarm.run(triage, [user("q")])
    assert response.agent.name == "research" and response.messages[-1]["content"] == "ok"


def test_result_agent_may_be_a_graph_and_build_swarm_graph_takes_graphs_in_its_list():
    research = research_graph(["from research"])

    def route(topic: str) -> Result:
        """Route a topic."""
        return Result(value=f"routing {topic}", agent=research, context_variables={"t": topic})

    triage = Agent(name="Triage", functions=[route])
    builder = build_swarm_graph(
        [triage, research],
        chat_model=ScriptedChatModel([scripted_tool_call("route", {"topic": "x"})]),
    )
    out = builder.compile().invoke({"messages": [("user", "hi")]})
    assert out["active_agent"] == "research"
    assert out["context_variables"] == {"t": "x"}
    assert out["messages"][-1].content == "from research" and out["messages"][-1].name == "research"


def test_a_checkpointed_thread_resumes_with_the_member_active():
    triage = Agent(name="Triage")
    research = research_graph(["first answer", "second answer"])
    triage.handoffs.append(research)
    model = ScriptedChatModel([scripted_tool_call("transfer_to_research")])
    app = build_swarm_graph([triage], chat_model=model).compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [("user", "one")]}, thread)
    state = app.invoke({"messages": [("user", "two")]}, thread)
    assert state["active_agent"] == "research"
    assert [m.content for m in state["messages"] if isinstance(m, AIMessage)][-1] == "second answer"
    assert len(model.calls) == 1  # turn two went straight to the member


def _merge(left: dict | None, right: dict | None) -> dict:
    return {**(left or {}), **(right or {})}


class BookingState(TypedDict):
    messages: Annotated[list, add_messages]
    context_variables: Annotated[dict, _merge]


def test_a_hand_built_state_graph_shares_context_variables_when_its_state_has_them():
    def desk(state: BookingState) -> dict:
        name = state["context_variables"].get("name", "?")
        return {
            "messages": [AIMessage(f"Booked for {name}.")],
            "context_variables": {"booking": 42},
        }

    graph = StateGraph(BookingState)
    graph.add_node("desk", desk)
    graph.add_edge(START, "desk")
    booking = graph.compile(name="Booking")

    triage = Agent(name="Triage", handoffs=[booking])
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_booking")]))
    response = swarm.run(triage, [user("book")], context_variables={"name": "Ming"})
    assert response.messages[-1]["content"] == "Booked for Ming."
    assert response.messages[-1]["sender"] == "Booking"
    assert response.context_variables == {"name": "Ming", "booking": 42}


def test_create_react_agent_from_langgraph_prebuilt_works_the_same():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated for create_agent
        from langgraph.prebuilt import create_react_agent

        triage = Agent(name="Triage")
        helper = create_react_agent(
            ScriptedChatModel([scripted_tool_call("transfer_to_triage")]),
            tools=[handoff_tool(triage)],
            name="helper",
        )
    triage.handoffs.append(helper)
    model = ScriptedChatModel([scripted_tool_call("transfer_to_helper"), "Back at triage."])
    response = Swarm(chat_model=model).run(triage, [user("x")])
    assert response.agent is triage and response.messages[-1]["content"] == "Back at triage."


def test_async_run_and_stream_events_carry_the_members_name():
    triage = Agent(name="Triage")
    triage.handoffs.append(research_graph(["async answer"]))
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    response = asyncio.run(swarm.arun(triage, [user("q")]))
    assert response.messages[-1] == {**response.messages[-1], "sender": "research",
                                     "content": "async answer"}  # fmt: skip

    triage2 = Agent(name="Triage")
    triage2.handoffs.append(research_graph(["streamed answer"]))
    swarm2 = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    events = list(swarm2.run(triage2, [user("q")], stream=True))
    final = events[-1]["response"]
    assert final.messages[-1]["content"] == "streamed answer"
    assert any(e.get("sender") == "research" for e in events if "content" in e)


def test_a_session_stores_the_members_messages_and_resumes_with_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'native.db'}"
    triage = Agent(name="Triage")
    research = research_graph(["answer one", "answer two"])
    triage.handoffs.append(research)
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    Session("c", url=url, agents=[triage, research]).run(swarm, triage, "one")
    later = Session("c", url=url, agents=[triage, research])
    assert later.active_agent_name == "research"
    assert [m.name for m in later.messages if isinstance(m, AIMessage)] == ["Triage", "research"]
    response = later.run(swarm, triage, "two")
    assert response.messages[-1]["content"] == "answer two"


def test_handing_back_and_forth_without_an_answer_stops_with_a_handoff_loop_error():
    triage = Agent(name="Triage")
    bouncer = create_agent(
        ScriptedChatModel([], respond=lambda _m: scripted_tool_call("transfer_to_triage")),
        tools=[handoff_tool(triage)],
        name="bouncer",
    )
    triage.handoffs.append(bouncer)
    model = ScriptedChatModel([], respond=lambda _m: scripted_tool_call("transfer_to_bouncer"))
    with pytest.raises(HandoffLoopError, match="Triage -> bouncer -> Triage"):
        Swarm(chat_model=model, max_consecutive_handoffs=4).run(triage, [user("x")])


def test_clear_errors_for_unnamed_graphs_and_non_agents():
    unnamed = create_agent(ScriptedChatModel([]), tools=[])
    with pytest.raises(ValueError, match=r"compile\(name="):
        build_swarm_graph([Agent(), unnamed])
    with pytest.raises(ValueError, match="handoffs takes Agents or compiled LangGraph graphs"):
        Agent(handoffs=["Sales"])
    with pytest.raises(TypeError, match="handoff_tool needs an Agent"):
        handoff_tool("Triage")
    assert as_member(research_graph([])) is not None


def test_a_failed_handoff_tool_call_is_not_a_handoff():
    triage = Agent(name="Triage")
    research = research_graph([], back_to=triage)
    member = as_member(research)
    from swarmgraph.graph.features.native import GraphNode

    node = GraphNode(type("R", (), {"max_consecutive_handoffs": 10})(), member)
    failed = ToolMessage("Error: boom", tool_call_id="1", name="transfer_to_triage", status="error")
    assert node._handoff(member, [failed]) is None


def test_a_graph_may_start_the_run_and_hand_over_to_our_agent():
    triage = Agent(name="Triage")
    research = research_graph([scripted_tool_call("transfer_to_triage")], back_to=triage)
    model = ScriptedChatModel(["Triage answers."])
    response = Swarm(chat_model=model).run(research, [user("hello")])
    assert response.agent is triage
    assert [m.get("sender") for m in response.messages] == ["research", None, "Triage"]


def test_a_members_handoff_counts_against_the_budget_like_ours():
    triage = Agent(name="Triage")
    research = research_graph([scripted_tool_call("transfer_to_triage")], back_to=triage)
    model = ScriptedChatModel(["Triage answers."])
    with pytest.raises(BudgetExceeded) as info:
        Swarm(chat_model=model).run(research, [user("hello")], budget=Budget(max_handoffs=0))
    assert info.value.limit == "max_handoffs" and info.value.agent == "research"
    assert info.value.response.agent.name == "research"  # no switch happened
    assert model.calls == []  # Triage never ran
    research = research_graph([scripted_tool_call("transfer_to_triage")], back_to=triage)
    response = Swarm(chat_model=model).run(research, [user("hello")], budget=Budget(max_handoffs=1))
    assert response.agent is triage and response.usage["handoffs"] == 1


def test_a_member_under_a_mapped_node_name_runs_this_runs_graph():
    # "research:eu" cannot be a LangGraph node name, so its node is named otherwise. One
    # Swarm compiles one graph per topology: the second run (new objects, same topology)
    # must run its own member graph, found by node name, not the first run's.
    swarm = Swarm(
        chat_model=ScriptedChatModel(
            respond=lambda m: scripted_tool_call("transfer_to_research_eu")
        )
    )
    answers = []
    for reply in ("first graph", "second graph"):
        triage = Agent(name="Triage")
        triage.handoffs.append(research_graph([reply], name="research:eu"))
        answers.append(swarm.run(triage, [user("q")]).messages[-1]["content"])
    assert answers == ["first graph", "second graph"]


async def _collect(started) -> list[dict]:
    return [event async for event in await started]  # arun(stream=True) awaits to a stream


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_members_reply_streams_token_by_token_once_under_its_name(mode):
    triage = Agent(name="Triage")
    triage.handoffs.append(
        research_graph(
            [scripted_tool_call("search_papers", {"topic": "bees"}), "Bees see ultraviolet."]
        )
    )
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    if mode == "sync":
        events = list(swarm.run(triage, [user("q")], stream=True))
    else:
        events = asyncio.run(_collect(swarm.arun(triage, [user("q")], stream=True)))
    # Group the deltas into the replies Swarm's delims mark.
    replies: list[list[dict]] = []
    for event in events[:-1]:
        if event.get("delim") == "start":
            replies.append([])
        elif "delim" not in event:
            replies[-1].append(event)
    senders = [reply[0]["sender"] for reply in replies]
    assert senders == ["Triage", "research", "research"]  # transfer, search call, answer
    answer = replies[-1]
    tokens = [d["content"] for d in answer if d["content"]]
    assert tokens == ["Bees ", "see ", "ultraviolet."]  # its own model's tokens
    # OpenAI's opening delta (role, content "") and closing empty delta, as Swarm yields them
    assert [d.get("role") for d in answer] == ["assistant", None, None, None, None]
    assert answer[0]["content"] == "" and answer[-1]["content"] is None
    search_call = replies[1][0]["tool_calls"][0]["function"]
    assert search_call["name"] == "search_papers"
    final = events[-1]["response"]
    assert final.messages[-1]["content"] == "Bees see ultraviolet."
    assert sum(m["role"] == "assistant" for m in final.messages) == 3  # nothing doubled
