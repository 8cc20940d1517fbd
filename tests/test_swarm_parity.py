"""Where Swarm's behaviour must hold exactly: in-place context edits, any agent name,
agents that share a name, and what ``debug=True`` prints (issue 11, items 1-3 and 5)."""

from __future__ import annotations

import asyncio
import json

import pytest
from swarmgraph.graph import Agent, Result, Swarm, build_swarm_graph
from swarmgraph.graph.chat_models.scripted import (
    ScriptedChatModel,
    scripted_tool_call,
    scripted_tool_calls,
)
from swarmgraph.graph.core.node_names import assign_node_names


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def _run(swarm: Swarm, agent: Agent, messages: list, *, use_async: bool, **kwargs):
    if use_async:
        return asyncio.run(swarm.arun(agent, messages, **kwargs))
    return swarm.run(agent, messages, **kwargs)


# -- 11.1: a tool that deletes a context key in place -------------------------------------


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("how", ["del", "pop"])
def test_a_key_a_tool_deletes_in_place_is_gone(how, use_async):
    seen: list[dict] = []

    def instructions(context_variables):
        seen.append(dict(context_variables))
        return "Help."

    def forget_order(context_variables):
        if how == "del":
            del context_variables["order_id"]
        else:
            context_variables.pop("order_id")
        context_variables["forgotten"] = True
        return "forgotten"

    agent = Agent(instructions=instructions, functions=[forget_order])
    model = ScriptedChatModel([scripted_tool_call("forget_order"), "Done."])
    response = _run(
        Swarm(chat_model=model),
        agent,
        [user("forget it")],
        use_async=use_async,
        context_variables={"order_id": 7, "name": "Ming"},
    )
    assert seen == [{"order_id": 7, "name": "Ming"}, {"name": "Ming", "forgotten": True}]
    assert response.context_variables == {"name": "Ming", "forgotten": True}


def test_result_context_stays_a_key_by_key_update():
    def remember(context_variables):
        return Result(value="ok", context_variables={"order_id": 8})

    model = ScriptedChatModel([scripted_tool_call("remember"), "Done."])
    response = Swarm(chat_model=model).run(
        Agent(functions=[remember]), [user("x")], context_variables={"name": "Ming", "order_id": 7}
    )
    assert response.context_variables == {"name": "Ming", "order_id": 8}


@pytest.mark.parametrize("typed", [False, True])
def test_a_later_call_of_the_reply_sees_a_result_update_only_with_a_typed_context(typed):
    """Swarm applies ``Result(context_variables=)`` after every call of the reply (a plain
    dict here too); a typed context takes each call's update through its reducers when the
    call returns, so the next call of the same reply sees it (docs/differences_from_swarm.md)."""
    from pydantic import BaseModel

    class Desk(BaseModel):
        order_id: int | None = None
        seen: str = ""

    def set_order():
        return Result(value="set", context_variables={"order_id": 8})

    def read_order(context_variables):
        return f"order {context_variables.get('order_id')}"

    reply = scripted_tool_calls([("set_order", {}, "c1"), ("read_order", {}, "c2")])
    swarm = Swarm(
        chat_model=ScriptedChatModel([reply, "Done."]), context_schema=Desk if typed else None
    )
    response = swarm.run(Agent(functions=[set_order, read_order]), [user("x")])
    assert response.messages[2]["content"] == ("order 8" if typed else "order None")
    assert response.context_variables["order_id"] == 8


def test_deletion_sticks_in_a_checkpointed_graph():
    from langgraph.checkpoint.memory import InMemorySaver

    def clear_cart(context_variables):
        context_variables.clear()
        return "cleared"

    model = ScriptedChatModel([scripted_tool_call("clear_cart"), "Empty now.", "Still empty."])
    app = build_swarm_graph([Agent(functions=[clear_cart])], chat_model=model).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [("user", "clear")], "context_variables": {"cart": [1]}}, thread)
    assert out["context_variables"] == {}
    out = app.invoke({"messages": [("user", "and now?")]}, thread)
    assert out["context_variables"] == {}


# -- 11.2: any agent name ---------------------------------------------------------------

ODD_NAMES = [
    "Support: Tier 1",
    "Sales|EU",
    "__start__",
    "__end__",
    "dynamic_handoff",
    "Refunds Team",
    "",
    "messages",
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", ODD_NAMES)
def test_any_agent_name_works_and_keeps_its_real_name(name, stream):
    target = Agent(name=name, instructions=f"You are {name!r}.")
    triage = Agent(name="Triage", handoffs=[target])
    tool = triage.tools[0].__name__
    model = ScriptedChatModel([scripted_tool_call(tool), "Hello from the other side."])
    out = Swarm(chat_model=model).run(triage, [user("hi")], stream=stream)
    if stream:
        events = list(out)
        senders = {e["sender"] for e in events if e.get("sender") is not None}
        assert senders == {"Triage", name}
        response = events[-1]["response"]
    else:
        response = out
    assert response.agent is target
    assert response.messages[1]["content"] == json.dumps({"assistant": name})
    assert response.messages[-1]["sender"] == name
    assert model.calls[1][0].content == f"You are {name!r}."


@pytest.mark.parametrize("name", ODD_NAMES)
def test_an_oddly_named_agent_can_start_the_run(name):
    model = ScriptedChatModel(["hi"])
    agent = Agent(name=name, instructions="Be odd.")
    response = Swarm(chat_model=model).run(agent, [user("x")])
    assert response.agent is agent and response.messages[0]["sender"] == name


def test_node_names_keep_every_name_langgraph_accepts():
    literal = Agent(name="Sales_EU")
    piped = Agent(name="Sales|EU")
    spaced = Agent(name="Refunds Team")
    start = Agent(name="Triage", handoffs=[piped, literal, spaced])
    app = build_swarm_graph([start], chat_model=ScriptedChatModel([])).compile()
    nodes = set(app.get_graph().nodes)
    # the literal "Sales_EU" keeps its name although "Sales|EU" maps onto it first
    assert {"Triage", "Sales_EU", "Refunds Team", "Sales_EU#2"} <= nodes
    again = assign_node_names([start, piped, literal, spaced])
    assert again == assign_node_names([start, piped, literal, spaced])  # stable
    assert again[piped] == "Sales_EU#2" and again[literal] == "Sales_EU"


def test_drawn_labels_are_the_real_names():
    from swarmgraph.app.drawing import layout_graph

    a1, a2 = Agent(name="Agent"), Agent(name="Agent")
    start = Agent(name="Support: Tier 1", handoffs=[a1, a2])
    picture = layout_graph(build_swarm_graph([start], chat_model=ScriptedChatModel([])))
    agent_labels = sorted(picture.labels[n] for n in picture.agent_nodes)
    assert agent_labels == ["Agent", "Agent", "Support: Tier 1"]


# -- 11.3: two agents with the same name -----------------------------------------------


def test_two_agents_with_one_name_each_run_with_their_own_instructions_and_tools():
    calls: list[str] = []
    first = Agent(instructions="I am the first.")  # Swarm's default name: "Agent"
    second = Agent(instructions="I am the second.")

    def to_second():
        return second

    def to_first():
        return first

    def second_only():
        calls.append("second_only")
        return "only the second has this"

    first.functions = [to_second]
    second.functions = [to_first, second_only]
    model = ScriptedChatModel(
        [
            scripted_tool_call("to_second"),
            scripted_tool_call("second_only"),
            scripted_tool_call("to_first"),
            "Back to the first.",
        ]
    )
    response = Swarm(chat_model=model).run(first, [user("hi")])
    assert [c[0].content for c in model.calls] == [
        "I am the first.",
        "I am the second.",
        "I am the second.",
        "I am the first.",
    ]
    tool_names = [[t["function"]["name"] for t in tools] for tools in model.bound_tools]
    assert tool_names == [
        ["to_second"],
        ["to_first", "second_only"],
        ["to_first", "second_only"],
        ["to_second"],
    ]
    assert calls == ["second_only"]
    assert response.agent is first
    assert [m.get("sender") for m in response.messages if m["role"] == "assistant"] == ["Agent"] * 4


# -- 11.5: debug prints plain dicts ------------------------------------------------------


def test_debug_prints_plain_message_dicts(capsys):
    def lookup(order_id: int, context_variables: dict) -> str:
        return "shipped"

    model = ScriptedChatModel([scripted_tool_call("lookup", {"order_id": 7}), "It shipped."])
    Swarm(chat_model=model).run(
        Agent(instructions="Help.", functions=[lookup]),
        [user("where is 7?")],
        context_variables={"secret": "s3"},
        debug=True,
    )
    out = capsys.readouterr().out
    assert (
        "Getting chat completion for...: [{'role': 'system', 'content': 'Help.'}, "
        "{'role': 'user', 'content': 'where is 7?'}]" in out
    )
    assert "Received completion: {'content': 'It shipped.', 'refusal': None" in out
    assert "Processing tool call: lookup with arguments {'order_id': 7}" in out
    for langchain_only in ("AIMessage", "HumanMessage", "additional_kwargs", "response_metadata"):
        assert langchain_only not in out
    assert "s3" not in out  # the injected context is not printed as an argument
