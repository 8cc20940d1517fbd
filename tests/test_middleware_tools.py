"""A middleware's ``tools`` (``AgentMiddleware.tools``) are bound to the swarm agent, as
``create_agent`` binds them: they join the agent's tools in the model's tool list and run in
the step like its own (graph/core/middleware_tools.py, ``GraphRuntime.tools_of``). Each case
runs on ``Swarm.run`` and on the compiled graph, with a LangChain ``@tool`` and a function."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from swarmgraph import (
    Agent,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)

HI = [{"role": "user", "content": "what is the stock of bees?"}]


@tool
def stock(item: str, warehouse: int = 1) -> str:
    """How many of an item a warehouse holds.

    Args:
        item: what to count.
        warehouse: which warehouse.
    """
    return f"{item}: 42 in warehouse {warehouse}"


def note(text: str, context_variables: dict) -> Result:
    """Note something for the rest of the run."""
    return Result(value=f"noted {text}", context_variables={"note": text})


class Stocking(AgentMiddleware):
    """A middleware that brings a LangChain tool and a plain function."""

    def __init__(self) -> None:
        super().__init__()
        self.tools = [stock, note]  # type: ignore[list-item]


def _script() -> list[Any]:
    return [
        scripted_tool_call("stock", {"item": "bees", "warehouse": 2}, id="s1"),
        scripted_tool_call("note", {"text": "bees counted"}, id="n1"),
        "42 bees.",
    ]


def _told(model: ScriptedChatModel) -> list[str]:
    """The tool names the model was bound with on its first call."""
    return [t["function"]["name"] for t in model.bound_tools[0]]  # type: ignore[attr-defined]


def _lookup() -> str:
    """Look the order up."""
    return "order 7"


@pytest.mark.parametrize("where", ["agent", "run"])
def test_middleware_tools_join_the_agents_and_run_on_swarm_run(where: str):
    model = ScriptedChatModel(_script())
    own = [Stocking()] if where == "agent" else []
    run = [Stocking()] if where == "run" else []
    agent = Agent(name="Store", functions=[_lookup], middleware=own)
    response = Swarm(chat_model=model, middleware=run).run(agent, HI)
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers == ["bees: 42 in warehouse 2", "noted bees counted"]
    assert response.context_variables == {"note": "bees counted"}  # a Result, as any tool's
    assert response.messages[-1]["content"] == "42 bees."
    assert _told(model) == ["_lookup", "stock", "note"]  # the agent's own first


def test_middleware_tools_run_on_the_compiled_graph():
    model = ScriptedChatModel(_script())
    agent = Agent(name="Store", middleware=[Stocking()])
    app = build_swarm_graph([agent], chat_model=model).compile()
    state = app.invoke({"messages": [("user", "stock of bees?")]})
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["bees: 42 in warehouse 2", "noted bees counted"]
    assert state["context_variables"] == {"note": "bees counted"}
    assert _told(model) == ["stock", "note"]


def test_a_langchain_tools_schema_is_what_the_model_is_told():
    model = ScriptedChatModel(["ok"])
    Swarm(chat_model=model).run(Agent(middleware=[Stocking()]), HI)
    schema = next(t for t in model.bound_tools[0] if t["function"]["name"] == "stock")  # type: ignore[attr-defined]
    parameters = schema["function"]["parameters"]
    assert parameters["required"] == ["item"]
    assert parameters["properties"]["item"]["description"] == "what to count."


def test_a_middleware_tool_can_hand_off():
    sales = Agent(name="Sales")

    def transfer_to_sales() -> Agent:
        """Hand over to sales."""
        return sales

    handing = AgentMiddleware()
    handing.tools = [transfer_to_sales]  # type: ignore[list-item]

    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Sales here."])
    response = Swarm(chat_model=model).run(Agent(name="Triage", middleware=[handing]), HI)
    assert response.agent.name == "Sales" and response.messages[-1]["sender"] == "Sales"


def test_arguments_that_do_not_fit_a_langchain_tool_are_an_error_for_the_model():
    model = ScriptedChatModel([scripted_tool_call("stock", {"warehouse": 2}), "Sorry."])
    response = Swarm(chat_model=model).run(Agent(middleware=[Stocking()]), HI)
    assert response.messages[1]["content"].startswith("Error")
    assert "item" in response.messages[1]["content"]


def test_a_tool_that_is_neither_a_function_nor_a_langchain_tool_is_refused():
    broken = AgentMiddleware()
    broken.tools = ["stock"]  # type: ignore[list-item]
    with pytest.raises(TypeError, match="tools takes LangChain tools"):
        Agent(middleware=[broken])
