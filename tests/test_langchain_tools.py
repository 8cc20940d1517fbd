"""LangChain tools (``@tool``, any ``BaseTool``) in ``Agent(functions=[...])``: they run in the
swarm step as Swarm-style functions do, on ``Swarm.run`` and on the compiled graph, with
``context_variables`` injected live (graph/core/middleware_tools.py, ``Agent``'s check)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain.agents.middleware import AgentMiddleware, wrap_tool_call
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import InjectedToolArg, tool
from langgraph.types import Command
from pydantic import BaseModel

from swarmgraph import (
    Agent,
    Result,
    ScriptedChatModel,
    Swarm,
    ToolSchemaError,
    build_swarm_graph,
    scripted_tool_call,
)

HI = [{"role": "user", "content": "two bees in the cart, please"}]


class Item(BaseModel):
    sku: str
    qty: int = 1


@tool
def add_item(item: Item, context_variables: dict) -> str:
    """Put an item in the cart.

    Args:
        item: what to add.
    """
    context_variables.setdefault("cart", []).append(f"{item.sku} x{item.qty}")
    return f"added {type(item).__name__} {item.sku}"


@tool
def cart_size(context_variables: Annotated[dict, InjectedToolArg]) -> str:
    """How many lines the cart has."""
    return str(len(context_variables.get("cart", [])))


@tool
def checkout(total: int) -> Result:
    """Check the cart out."""
    return Result(value=f"paid {total}", context_variables={"paid": total})


def _script() -> list[Any]:
    return [
        scripted_tool_call("add_item", {"item": {"sku": "bee", "qty": 2}}, id="a1"),
        scripted_tool_call("cart_size", {}, id="c1"),
        scripted_tool_call("checkout", {"total": 9}, id="k1"),
        "Two bees, paid.",
    ]


def _agent() -> Agent:
    return Agent(name="Shop", functions=[add_item, cart_size, checkout])


def test_langchain_tools_run_on_swarm_run_with_the_live_context():
    response = Swarm(chat_model=ScriptedChatModel(_script())).run(
        _agent(), HI, context_variables={"cart": ["honey x1"]}
    )
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    # the item reached the tool as the tool's schema reads it (an Item), and the in-place
    # write to context_variables was seen by the next call and kept
    assert answers == ["added Item bee", "2", "paid 9"]
    assert response.context_variables == {"cart": ["honey x1", "bee x2"], "paid": 9}


def test_langchain_tools_run_on_the_compiled_graph():
    app = build_swarm_graph([_agent()], chat_model=ScriptedChatModel(_script())).compile()
    state = app.invoke({"messages": [("user", "bees")], "context_variables": {"cart": []}})
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["added Item bee", "1", "paid 9"]
    assert state["context_variables"] == {"cart": ["bee x2"], "paid": 9}


def test_the_model_is_told_the_tools_schema_without_context_variables_and_cannot_forge_it():
    model = ScriptedChatModel(
        [scripted_tool_call("cart_size", {"context_variables": {"cart": [1, 2, 3]}}), "ok"]
    )
    response = Swarm(chat_model=model).run(_agent(), HI, context_variables={"cart": ["x"]})
    assert response.messages[1]["content"] == "1"  # the run's context, not the model's
    told = {t["function"]["name"]: t["function"] for t in model.bound_tools[0]}  # type: ignore[attr-defined]
    assert list(told) == ["add_item", "cart_size", "checkout"]
    assert told["add_item"]["description"].startswith("Put an item in the cart.")
    assert list(told["add_item"]["parameters"]["properties"]) == ["item"]
    assert told["cart_size"]["parameters"]["properties"] == {}


def test_arguments_that_do_not_fit_are_an_error_the_model_reads():
    model = ScriptedChatModel([scripted_tool_call("add_item", {"item": {"qty": 2}}), "Sorry."])
    response = Swarm(chat_model=model).run(_agent(), HI)
    assert response.messages[1]["content"].startswith("Error")
    assert "sku" in response.messages[1]["content"]
    assert response.context_variables == {}


async def test_an_async_langchain_tool_runs_with_the_live_context():
    @tool
    async def tag(label: str, context_variables: dict) -> str:
        """Tag the conversation."""
        context_variables["tag"] = label
        return f"tagged {label}"

    model = ScriptedChatModel([scripted_tool_call("tag", {"label": "vip"}), "Done."])
    response = await Swarm(chat_model=model).arun(Agent(functions=[tag]), HI)
    assert response.messages[1]["content"] == "tagged vip"
    assert response.context_variables == {"tag": "vip"}


def test_a_langchain_tool_that_returns_an_agent_hands_off():
    sales = Agent(name="Sales")

    @tool
    def to_sales() -> Agent:
        """Hand the customer to sales."""
        return sales

    model = ScriptedChatModel([scripted_tool_call("to_sales"), "Sales here."])
    response = Swarm(chat_model=model).run(Agent(name="Triage", functions=[to_sales]), HI)
    assert response.agent is sales
    assert response.messages[-1]["sender"] == "Sales"


class _Seen(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.events.append(("start", serialized["name"]))

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.events.append(("end", str(getattr(output, "content", output))))


@pytest.mark.parametrize("given", ["functions", "middleware"])
def test_callbacks_hear_each_langchain_tool_call_once(given: str):
    # The step reports every call (graph/core/tool_events.py); the tool must not report it again.
    seen = _Seen()
    agent = _agent()
    if given == "middleware":  # a middleware's tools are run the same way
        bringing = AgentMiddleware()
        bringing.tools = agent.functions  # type: ignore[assignment]
        agent = Agent(name="Shop", middleware=[bringing])
    app = build_swarm_graph([agent], chat_model=ScriptedChatModel(_script())).compile()
    app.invoke({"messages": [("user", "bees")]}, {"callbacks": [seen]})
    assert [kind for kind, _ in seen.events] == ["start", "end"] * 3
    assert [name for kind, name in seen.events if kind == "start"] == [
        "add_item", "cart_size", "checkout",
    ]  # fmt: skip
    ends = [text for kind, text in seen.events if kind == "end"]
    assert ends[:2] == ["added Item bee", "1"]  # told by the step (the tools take the context)
    assert "paid 9" in ends[2]  # told by the tool's own run: what it returned, a Result


def test_a_langchain_tool_runs_in_the_steps_config_and_what_it_runs_nests_in_its_run():
    shout = RunnableLambda(lambda text: text.upper(), name="shout")

    @tool
    def whose(text: str, config: RunnableConfig) -> str:
        """Say whose thread this is."""
        return shout.invoke(f"{text} in {config['configurable']['thread_id']}")

    class Runs(BaseCallbackHandler):
        def __init__(self) -> None:
            self.tools: dict[Any, str] = {}
            self.nested: list[tuple[str, Any]] = []

        def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
            self.tools[kwargs["run_id"]] = serialized["name"]

        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            if kwargs.get("name") == "shout":
                self.nested.append(("shout", kwargs.get("parent_run_id")))

    runs = Runs()
    model = ScriptedChatModel([scripted_tool_call("whose", {"text": "hi"}), "Done."])
    app = build_swarm_graph([Agent(functions=[whose])], chat_model=model).compile()
    state = app.invoke(
        {"messages": [("user", "whose?")]},
        {"configurable": {"thread_id": "t-9"}, "callbacks": [runs]},
    )
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["HI IN T-9"]
    [(_, parent)] = runs.nested
    assert runs.tools.get(parent) == "whose"  # the nested run is the tool run's child
    assert list(runs.tools.values()) == ["whose"]  # and the call was told once


def test_a_tool_taking_an_injected_argument_nothing_fills_is_refused_when_the_agent_is_made():
    # InjectedToolArg alone is left to LangChain's caller; in a swarm nothing would fill it.
    @tool
    def stamp(text: str, secret: Annotated[str, InjectedToolArg]) -> str:
        """Stamp text."""
        return f"{text} {secret}"

    with pytest.raises(TypeError, match=r"Agent.functions: tool 'stamp'.*nothing.*\(secret\)"):
        Agent(functions=[stamp])


def test_a_return_direct_tool_is_refused_when_the_agent_is_made():
    @tool(return_direct=True)
    def final(text: str) -> str:
        """Answer and stop."""
        return text

    with pytest.raises(TypeError, match=r"'final' is return_direct"):
        Agent(functions=[final])


def test_a_langchain_tool_appended_after_the_agent_was_made_is_a_clear_error():
    agent = Agent(name="Shop")
    agent.functions.append(checkout)  # type: ignore[arg-type]
    with pytest.raises(ToolSchemaError, match=r"'checkout' joined an agent's functions after"):
        Swarm(chat_model=ScriptedChatModel(["hi"])).run(agent, HI)


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_tool_that_returns_command_goto_an_agent_name_hands_off(wrapped: bool):
    # langgraph-swarm's habit: a tool hands off with Command(goto=<agent name>). str() of it
    # once reached the model and the handoff was lost without a word.
    sales = Agent(name="Sales", model="sales")

    def go_to_sales() -> Command:
        """Hand the customer to sales."""
        return Command(goto="Sales")

    def go_nowhere() -> Command:
        """Hand the customer to a desk nobody has."""
        return Command(goto="Refunds")

    @wrap_tool_call
    def passing(request, handler):  # type: ignore[no-untyped-def]
        return handler(request)

    agent = Agent(
        name="Triage",
        model="triage",
        functions=[go_nowhere, go_to_sales],
        handoffs=[sales],
        middleware=[passing] if wrapped else [],
    )
    models = {
        "triage": ScriptedChatModel(
            [scripted_tool_call("go_nowhere"), scripted_tool_call("go_to_sales")]
        ),
        "sales": ScriptedChatModel(["Sales here."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(agent, HI)
    nowhere, to_sales = response.messages[1]["content"], response.messages[3]["content"]
    assert nowhere.startswith("Error: go_nowhere handed off to 'Refunds', which is no agent")
    assert to_sales == '{"assistant": "Sales"}'
    assert response.agent is sales and response.messages[-1]["content"] == "Sales here."


@tool
def search_orders(text: str) -> str:
    """Search the orders."""
    return f"2 orders match {text}"


def find_order(text: str) -> str:
    """Find an order (through the search tool)."""
    return search_orders.invoke({"text": text})


def test_the_graph_draws_a_langchain_tools_handoff_and_no_tool_becomes_a_node():
    sales = Agent(name="Sales")

    @tool
    def to_sales(context_variables: dict) -> Agent:
        """Hand the customer to sales."""
        return sales

    triage = Agent(name="Triage", functions=[to_sales, find_order, search_orders])
    drawn = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile().get_graph()
    # the tool's own function is read for the agents it may hand off to; a tool a function
    # uses (a Runnable with a name, as a LangGraph member is) is no agent of the swarm
    assert {n for n in drawn.nodes if not n.startswith("__")} == {
        "Triage", "Sales", "dynamic_handoff",
    }  # fmt: skip
    assert ("Triage", "Sales") in {(e.source, e.target) for e in drawn.edges}


def whose_thread(question: str, config: RunnableConfig) -> str:
    """Say whose thread this is."""
    return f"{question} in {config['configurable']['thread_id']}"


def test_a_plain_function_taking_runnable_config_gets_the_steps_config_never_the_models():
    forged = {"configurable": {"thread_id": "forged"}}
    model = ScriptedChatModel(
        [scripted_tool_call("whose_thread", {"question": "hi", "config": forged}), "Done."]
    )
    app = build_swarm_graph([Agent(functions=[whose_thread])], chat_model=model).compile()
    state = app.invoke({"messages": [("user", "whose?")]}, {"configurable": {"thread_id": "t-3"}})
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["hi in t-3"]
    [told] = model.bound_tools[0]  # type: ignore[attr-defined]
    assert list(told["function"]["parameters"]["properties"]) == ["question"]


def test_a_langchain_tool_taking_context_and_config_gets_both():
    @tool
    def stamp(text: str, context_variables: dict, config: RunnableConfig) -> str:
        """Stamp the text with the thread."""
        context_variables["stamped"] = text
        return f"{text} @ {config['configurable']['thread_id']}"

    model = ScriptedChatModel([scripted_tool_call("stamp", {"text": "ok"}), "Done."])
    app = build_swarm_graph([Agent(functions=[stamp])], chat_model=model).compile()
    state = app.invoke({"messages": [("user", "stamp")]}, {"configurable": {"thread_id": "t-7"}})
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["ok @ t-7"]
    assert state["context_variables"] == {"stamped": "ok"}


def _json_schema_tool() -> Any:
    """A tool whose arguments are a JSON schema, as langchain-mcp-adapters makes an MCP
    server's tools: an async-only StructuredTool, its args_schema a dict."""
    from langchain_core.tools import StructuredTool

    async def echo(**arguments: Any) -> str:
        return f"echo {arguments['text']}"

    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What to echo."}},
        "required": ["text"],
        "additionalProperties": False,
    }
    return StructuredTool(
        name="echo", description="Echo a text.", args_schema=schema, coroutine=echo
    )


def test_a_tool_described_by_a_json_schema_is_told_as_it_is_and_runs():
    # Before: refused ("describes its arguments as a JSON schema"), so no MCP tool could join.
    from swarmgraph import function_to_json

    echo = _json_schema_tool()
    agent = Agent(name="Echo", functions=[echo])
    told = function_to_json(agent.functions[0])["function"]
    assert told["description"] == "Echo a text."
    assert told["parameters"] == echo.args_schema  # the schema, exactly
    script = [
        scripted_tool_call("echo", {"text": "hi"}),
        scripted_tool_call("echo", {}),
        scripted_tool_call("echo", {"text": "hi", "loud": True}),
        "Done.",
    ]
    model = ScriptedChatModel(script)
    response = Swarm(chat_model=model).run(agent, HI)
    assert [m["content"] for m in response.messages if m["role"] == "tool"] == [
        "echo hi",
        "Error: echo: missing required argument 'text'",
        "Error: echo: unknown argument 'loud' (accepted: text)",  # additionalProperties: false
    ]
    assert model.bound_tools[0] == [function_to_json(agent.functions[0])]
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel([*script[:1], "Done."]))
    state = asyncio.run(graph.compile().ainvoke({"messages": HI}))
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["echo hi"]
