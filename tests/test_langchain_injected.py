"""What LangGraph's ``ToolNode`` injects into a tool by annotation, a swarm step fills the same
way (graph/core/langchain_args.py): ``ToolRuntime``, ``InjectedToolCallId``, ``InjectedState``,
``InjectedStore``, for plain functions and ``@tool`` alike, on the compiled graph and on
``Swarm.run``; hidden from the model, and a value the model forges is dropped."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain.agents.middleware import wrap_tool_call
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolArg, InjectedToolCallId, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls

from swarmgraph import (
    Agent,
    ScriptedChatModel,
    Swarm,
    ToolSchemaError,
    build_swarm_graph,
    function_to_json,
    scripted_tool_call,
)

HI = [{"role": "user", "content": "note that I like tea"}]


def note(text: str, runtime: ToolRuntime) -> str:
    """Keep a note for this user."""
    state = runtime.state
    asker = state["messages"][-1]  # the reply that asked for this call
    assert isinstance(asker, AIMessage) and asker.tool_calls[0]["id"] == runtime.tool_call_id
    state["context_variables"]["notes"] = [*state["context_variables"].get("notes", []), text]
    runtime.stream_writer({"noted": text})
    if runtime.store is not None:
        user = (runtime.context or {}).get("user", "nobody")
        runtime.store.put(("notes", user), runtime.tool_call_id or "", {"text": text})
    return f"noted for {state['active_agent']} in call {runtime.tool_call_id}"


def _graph(*functions: Any, script: list[Any] | None = None, **compile: Any) -> Any:
    model = ScriptedChatModel(
        script or [scripted_tool_call("note", {"text": "tea"}, id="c-1"), "Noted."]
    )
    agent = Agent(name="Keeper", functions=list(functions or [note]))
    return build_swarm_graph([agent], chat_model=model).compile(**compile)


def test_the_step_fills_a_tool_runtime_on_the_compiled_graph() -> None:
    store = InMemoryStore()
    graph = _graph(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "t-1"}}
    chunks = list(
        graph.stream(
            {"messages": HI}, config, stream_mode=["custom", "values"], context={"user": "ming"}
        )
    )
    assert [c for mode, c in chunks if mode == "custom"] == [{"noted": "tea"}]
    state = graph.get_state(config).values
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["noted for Keeper in call c-1"]
    assert state["context_variables"] == {"notes": ["tea"]}  # the in-place write was kept
    stored = store.get(("notes", "ming"), "c-1")
    assert stored is not None and stored.value == {"text": "tea"}


def test_the_step_fills_a_tool_runtime_on_swarm_run() -> None:
    model = ScriptedChatModel([scripted_tool_call("note", {"text": "tea"}, id="c-1"), "Ok."])
    response = Swarm(chat_model=model).run(
        Agent(name="Keeper", functions=[note]), HI, context_variables={"notes": ["milk"]}
    )
    assert response.messages[1]["content"] == "noted for Keeper in call c-1"
    assert response.context_variables == {"notes": ["milk", "tea"]}


def test_an_async_tool_gets_its_runtime_too() -> None:
    async def note_later(text: str, runtime: ToolRuntime) -> str:
        """Keep a note, later."""
        runtime.stream_writer({"later": text})
        return f"{text} in {runtime.tool_call_id}"

    graph = _graph(
        note_later, script=[scripted_tool_call("note_later", {"text": "tea"}, id="c-2"), "Ok."]
    )

    async def run() -> list[Any]:
        return [c async for c in graph.astream({"messages": HI}, stream_mode=["custom", "values"])]

    chunks = asyncio.run(run())
    assert [c for mode, c in chunks if mode == "custom"] == [{"later": "tea"}]
    final = [c for mode, c in chunks if mode == "values"][-1]
    assert [m.content for m in final["messages"] if isinstance(m, ToolMessage)] == ["tea in c-2"]


@tool
def stamp(
    text: str,
    call: Annotated[str, InjectedToolCallId],
    agent: Annotated[str, InjectedState("active_agent")],
    messages: Annotated[list, InjectedState("messages")],
) -> str:
    """Stamp a text with who asked and where."""
    return f"{text} by {agent} in {call} after {len(messages)} messages"


def test_injected_arguments_are_hidden_and_a_forged_value_is_dropped() -> None:
    for made in (Agent(functions=[stamp]).functions[0], stamp.func):
        parameters = function_to_json(made)["function"]["parameters"]
        assert parameters["properties"].keys() == {"text"}
        assert parameters["required"] == ["text"]
    forged = {"text": "hi", "call": "forged", "agent": "Mallory", "messages": []}
    model = ScriptedChatModel([scripted_tool_call("stamp", forged, id="c-7"), "Done."])
    response = Swarm(chat_model=model).run(Agent(name="Clerk", functions=[stamp]), HI)
    # the history the tool reads: the user's message and the reply that asked
    assert response.messages[1]["content"] == "hi by Clerk in c-7 after 2 messages"


def test_a_plain_function_takes_the_same_annotations() -> None:
    # Before: InjectedToolCallId on a plain function was shown to the model as a required string.
    def badge(name: str, call: Annotated[str, InjectedToolCallId]) -> str:
        """Print a badge."""
        return f"{name}#{call}"

    assert function_to_json(badge)["function"]["parameters"]["required"] == ["name"]
    model = ScriptedChatModel([scripted_tool_call("badge", {"name": "Ming"}, id="c-3"), "."])
    response = Swarm(chat_model=model).run(Agent(functions=[badge]), HI)
    assert response.messages[1]["content"] == "Ming#c-3"


def test_a_tool_that_needs_a_store_tells_the_model_when_the_graph_has_none() -> None:
    def remember(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Remember a text."""
        store.put(("memo",), "last", {"text": text})
        return "remembered"

    script = [scripted_tool_call("remember", {"text": "tea"}), "Ok."]
    without = _graph(remember, script=list(script)).invoke({"messages": HI})
    [answer] = [m.content for m in without["messages"] if isinstance(m, ToolMessage)]
    assert answer.startswith("Error: remember needs a LangGraph store ('store'); this graph")
    store = InMemoryStore()
    with_store = _graph(remember, script=list(script), store=store).invoke({"messages": HI})
    assert [m.content for m in with_store["messages"] if isinstance(m, ToolMessage)] == [
        "remembered"
    ]
    found = store.get(("memo",), "last")
    assert found is not None and found.value == {"text": "tea"}


def test_an_injected_argument_nothing_fills_is_a_schema_error() -> None:
    def secretive(text: str, key: Annotated[str, InjectedToolArg]) -> str:
        """Sign a text."""
        return text

    with pytest.raises(ToolSchemaError, match=r"'secretive': parameter 'key' is an InjectedTool"):
        function_to_json(secretive)


def test_runtime_tools_lists_the_agents_tools_as_base_tools() -> None:
    @tool
    def tools_here(runtime: ToolRuntime) -> str:
        """Name the tools."""
        return ",".join(sorted(t.name for t in runtime.tools))

    model = ScriptedChatModel([scripted_tool_call("tools_here", {}), "."])
    response = Swarm(chat_model=model).run(Agent(functions=[tools_here, stamp, note]), HI)
    # note, a plain function, as the FunctionTool a model request lists it as
    assert response.messages[1]["content"] == "note,stamp,tools_here"


@pytest.mark.parametrize(
    ("handle", "expected"),
    [
        (True, "the shelf is empty"),
        ("Try another shelf.", "Try another shelf."),
        (lambda error: f"sorry: {error}", "sorry: the shelf is empty"),
        (False, "Error: pick raised ToolException: the shelf is empty"),
    ],
)
def test_a_live_tool_answers_a_tool_exception_as_its_handle_tool_error_says(
    handle: Any, expected: str
) -> None:
    # Before: a tool taking context_variables (run through its own function, not tool.invoke)
    # answered every ToolException as an error, whatever its handle_tool_error said.
    @tool
    def pick(shelf: int, context_variables: dict) -> str:
        """Pick an item from a shelf."""
        raise ToolException("the shelf is empty")

    pick.handle_tool_error = handle
    model = ScriptedChatModel([scripted_tool_call("pick", {"shelf": 3}), "Sorry."])
    response = Swarm(chat_model=model).run(Agent(functions=[pick]), HI)
    assert response.messages[1]["content"] == expected


def test_a_live_tool_raising_another_error_is_still_the_models_error_to_read() -> None:
    @tool
    def pick(shelf: int, context_variables: dict) -> str:
        """Pick an item from a shelf."""
        raise KeyError(shelf)

    pick.handle_tool_error = True  # LangChain's rule: only a ToolException is handled
    model = ScriptedChatModel([scripted_tool_call("pick", {"shelf": 3}), "Sorry."])
    response = Swarm(chat_model=model).run(Agent(functions=[pick]), HI)
    assert response.messages[1]["content"] == "Error: pick raised KeyError: 3"


def test_a_wrap_tool_call_hook_gets_the_tool_and_a_tool_runtime_as_tool_node_gives_them() -> None:
    # Before: request.runtime was LangGraph's Runtime (no tool_call_id, state, config, tools)
    # and request.tool None. Now both as ToolNode gives them: every tool a BaseTool (a plain
    # function as its FunctionTool, with its description).
    seen: list[tuple[Any, ...]] = []

    @wrap_tool_call
    def watch(request, handler):  # type: ignore[no-untyped-def]
        runtime = request.runtime
        seen.append(
            (
                request.tool.name,
                request.tool.description,
                runtime.tool_call_id,
                runtime.context,
                runtime.config["configurable"]["thread_id"],
                sorted(t.name for t in runtime.tools),
            )
        )
        return handler(request)

    reply = scripted_tool_calls([("stamp", {"text": "a"}, "c-1"), ("note", {"text": "b"}, "c-2")])
    model = ScriptedChatModel([reply, "Done."])
    agent = Agent(name="Clerk", functions=[stamp, note], middleware=[watch])
    graph = build_swarm_graph([agent], chat_model=model).compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": HI}, {"configurable": {"thread_id": "t-5"}}, context={"user": "ming"})
    assert seen == [
        ("stamp", stamp.description, "c-1", {"user": "ming"}, "t-5", ["note", "stamp"]),
        ("note", "Keep a note for this user.", "c-2", {"user": "ming"}, "t-5", ["note", "stamp"]),
    ]


def test_a_live_content_and_artifact_tool_answers_with_its_content() -> None:
    # Before: run through its own function (it takes a ToolRuntime), the (content, artifact)
    # pair reached the model as JSON; tool.invoke gives the content, and so does the step now.
    @tool(response_format="content_and_artifact")
    def search(query: str, runtime: ToolRuntime) -> tuple[str, dict[str, Any]]:
        """Search the catalogue."""
        return f"2 hits for {query}", {"ids": [1, 2]}

    @tool(response_format="content_and_artifact")
    def broken(query: str, runtime: ToolRuntime) -> str:
        """Search badly."""
        return "no pair"

    script = [
        scripted_tool_call("search", {"query": "bees"}),
        scripted_tool_call("broken", {"query": "bees"}),
        "Found.",
    ]
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[search, broken]), HI
    )
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers[0] == "2 hits for bees"
    assert answers[1].startswith("Error: broken raised ValueError: response_format=")


def test_a_tools_runtime_state_holds_the_messages_the_steps_hooks_wrote() -> None:
    # Before, a before_model hook's message was missing from ToolRuntime.state["messages"],
    # though the graph's state holds it before the reply once the step is written.
    from langchain.agents.middleware import before_model

    @before_model
    def remind(state, runtime):  # type: ignore[no-untyped-def]
        return {"messages": [AIMessage("Reminder: be brief.", name="reminder")]}

    def read_back(runtime: ToolRuntime) -> str:
        """Say what the conversation holds."""
        return " | ".join(str(m.content) or "<reply>" for m in runtime.state["messages"])

    agent = Agent(name="Desk", functions=[read_back], middleware=[remind])
    model = ScriptedChatModel([scripted_tool_call("read_back"), "Done."])
    state = (
        build_swarm_graph([agent], chat_model=model)
        .compile()
        .invoke({"messages": [{"role": "user", "content": "hi"}]})
    )
    answer = next(m.content for m in state["messages"] if m.type == "tool")
    assert answer == "hi | Reminder: be brief. | <reply>"
