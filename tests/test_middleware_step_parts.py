"""The parts of a step with middleware that are made once or made directly
(graph/core/middleware.py, graph/core/tool_wrapping.py): the wrapping hooks bound once per
stack, LangChain's request objects filled in at once, a tool's value read once. Each test
checks what a hook sees or what the run writes, on both drivers where both run it."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, ModelRequest, after_model, before_model
from langchain_core.messages import AIMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call

HI = [{"role": "user", "content": "hi"}]


def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded {order}"


class Layer(AgentMiddleware):
    """Records entering and leaving each wrapping hook, sync or async (``both``: it has the
    async twins too)."""

    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.label, self.log = name, log

    @property
    def name(self) -> str:
        return self.label

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"model>{self.label}")
        response = handler(request)
        self.log.append(f"model<{self.label}")
        return response

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"tool>{self.label}")
        answer = handler(request)
        self.log.append(f"tool<{self.label}")
        return answer


class AsyncLayer(Layer):
    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"model>{self.label}")
        response = await handler(request)
        self.log.append(f"model<{self.label}")
        return response

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"tool>{self.label}")
        answer = await handler(request)
        self.log.append(f"tool<{self.label}")
        return answer


@pytest.mark.parametrize("awaited", [False, True], ids=["run", "arun"])
def test_wrapping_hooks_nest_the_first_outermost_the_run_around_the_agents(awaited: bool):
    log: list[str] = []
    # (a sync-only wrapping hook has no async twin: LangChain's own raises under arun)
    kind = AsyncLayer if awaited else Layer
    outer, middle, inner = kind("outer", log), AsyncLayer("middle", log), kind("inner", log)
    agent = Agent(functions=[refund], middleware=[middle, inner])
    swarm = Swarm(
        chat_model=ScriptedChatModel([scripted_tool_call("refund", {"order": 7}), "Done."]),
        middleware=[outer],
    )
    response = asyncio.run(swarm.arun(agent, HI)) if awaited else swarm.run(agent, HI)
    assert response.messages[1]["content"] == "refunded 7"  # the tool ran under the hooks
    nest = ["outer", "middle", "inner"]
    model_call = [f"model>{n}" for n in nest] + [f"model<{n}" for n in reversed(nest)]
    tool_call = [f"tool>{n}" for n in nest] + [f"tool<{n}" for n in reversed(nest)]
    assert log == [*model_call, *tool_call, *model_call]


class Seen(AgentMiddleware):
    """Keeps the requests its wrapping hooks were handed."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return await handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return await handler(request)


def test_the_requests_a_hook_gets_are_langchains_own_with_every_field():
    """The step fills ``ModelRequest``/``ToolCallRequest`` at once (not through their
    ``__init__``): each must equal the object LangChain's constructor makes from the same
    fields, and behave as one (``override``, no warning on reading)."""
    seen = Seen()
    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 3}), "Done."])
    Swarm(chat_model=model).run(
        Agent(instructions="Be brief.", functions=[refund], middleware=[seen]), HI
    )
    first, tool, second = seen.requests
    for request in (first, second):
        assert type(request) is ModelRequest
        names = {f.name for f in dataclasses.fields(ModelRequest)}
        assert set(vars(request)) == names  # every field, nothing else
        rebuilt = ModelRequest(**{name: getattr(request, name) for name in names})
        assert rebuilt == request
        assert request.system_prompt == "Be brief."
        assert [t.name for t in request.tools] == ["refund"]  # BaseTools, as create_agent has
        assert request.override(tool_choice="auto").tool_choice == "auto"
    assert [m.content for m in first.messages] == ["hi"]
    assert type(tool) is ToolCallRequest
    assert set(vars(tool)) == {f.name for f in dataclasses.fields(ToolCallRequest)}
    assert tool.tool_call == {"name": "refund", "args": {"order": 3}, "id": tool.tool_call["id"],
                              "type": "tool_call"}  # fmt: skip
    assert tool.tool.name == "refund" and tool.tool.description == "Refund an order."
    assert tool.state["messages"][0].content == "hi"


class Shown:
    """A tool's value that counts how often it is made into text."""

    shown = 0

    def __str__(self) -> str:
        Shown.shown += 1
        return "a receipt"


def receipt() -> Any:
    """Print a receipt."""
    return Shown()


@pytest.mark.parametrize("awaited", [False, True], ids=["run", "arun"])
def test_a_tools_value_is_made_into_its_answer_once_through_wrap_tool_call(awaited: bool):
    Shown.shown = 0
    seen = Seen()
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("receipt", {}), "Done."]))
    agent = Agent(functions=[receipt], middleware=[seen])
    response = asyncio.run(swarm.arun(agent, HI)) if awaited else swarm.run(agent, HI)
    assert response.messages[1]["content"] == "a receipt"
    assert Shown.shown == 1


def test_a_step_with_middleware_writes_what_the_same_step_without_writes():
    """A middleware that changes nothing leaves the step's update as it is: no channel
    written that the plain step does not write (an empty context is not written over)."""

    @before_model
    def look(state: Any, runtime: Any) -> None:
        return None

    def updates(middleware: list[Any]) -> list[set[str]]:
        agent = Agent(name="A", functions=[refund], middleware=middleware)
        model = ScriptedChatModel([scripted_tool_call("refund", {"order": 1}), "Done."])
        graph = build_swarm_graph([agent], chat_model=model).compile()
        chunks = graph.stream({"messages": HI, "context_variables": {}}, stream_mode="updates")
        return [set(update) for chunk in chunks for update in chunk.values() if update]

    plain, hooked = updates([]), updates([look])
    assert hooked == plain
    assert all("context_variables" not in keys for keys in plain[:1])


@pytest.mark.parametrize("after", [False, True], ids=["wrap only", "with after_model"])
@pytest.mark.parametrize("how", ["run", "arun", "graph"])
def test_wrap_tool_call_sees_the_reply_that_asked_for_the_call(how: str, after: bool):
    """As in ``create_agent``, whose tools run after the model's node wrote its reply: the
    request's state ends with the model's reply holding this call, whether or not another
    hook (``after_model``) read the reply first."""
    seen = Seen()
    middleware: list[Any] = [seen]
    if after:

        @after_model
        def glance(state: Any, runtime: Any) -> None:
            return None

        middleware.append(glance)
    agent = Agent(name="A", functions=[refund], middleware=middleware)
    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 4}), "Done."])
    if how == "graph":
        graph = build_swarm_graph([agent], chat_model=model).compile()
        graph.invoke({"messages": HI, "context_variables": {}})
    elif how == "arun":
        asyncio.run(Swarm(chat_model=model).arun(agent, HI))
    else:
        Swarm(chat_model=model).run(agent, HI)
    (request,) = [r for r in seen.requests if isinstance(r, ToolCallRequest)]
    last = request.state["messages"][-1]
    assert isinstance(last, AIMessage)
    assert [c["id"] for c in last.tool_calls] == [request.tool_call["id"]]
    assert [m.content for m in request.state["messages"][:-1]] == ["hi"]
