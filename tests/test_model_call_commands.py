"""What a ``wrap_model_call`` hook returns, composed as ``create_agent`` composes it: the hook
around gets a ``ModelResponse`` from its handler (never an ``ExtendedModelResponse`` or a bare
``AIMessage``), and a ``Command`` returned with the reply (``ExtendedModelResponse``) is applied
after it: its keys written, its messages after the reply, a retried try's commands dropped.
A state hook (``before_model``...) may return its update as a ``Command``, as a
``create_agent`` node may."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState, ExtendedModelResponse
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from typing_extensions import NotRequired

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph

HI = [{"role": "user", "content": "hi"}]


class CountState(AgentState):
    model_calls: NotRequired[int]


class Count(AgentMiddleware):
    """Counts the agent's model calls in the graph's state, through a ``Command`` returned
    with the reply; and notes the count after the reply."""

    state_schema = CountState

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        response = handler(request)
        calls = (request.state.get("model_calls") or 0) + 1
        note = AIMessage(f"(model call {calls})", name="counter")
        update = {"model_calls": calls, "messages": [note]}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    async def awrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        response = await handler(request)
        calls = (request.state.get("model_calls") or 0) + 1
        command = Command(update={"model_calls": calls})
        return ExtendedModelResponse(model_response=response, command=command)


class Seen(AgentMiddleware):
    """Outermost: keeps what its handler gave it, and what ``after_model`` then reads."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[str] = []
        self.counts: list[Any] = []

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        response = handler(request)
        self.handed.append(type(response).__name__)
        return response

    async def awrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        response = await handler(request)
        self.handed.append(type(response).__name__)
        return response

    def after_model(self, state, runtime):  # type: ignore[no-untyped-def]
        self.counts.append(state.get("model_calls"))


@pytest.mark.parametrize("way", ["invoke", "ainvoke"])
def test_a_command_returned_with_the_reply_is_written_and_the_outer_hook_gets_a_model_response(
    way: str,
) -> None:
    seen = Seen()
    agent = Agent(name="Desk", middleware=[seen, Count()])
    app = build_swarm_graph([agent], chat_model=ScriptedChatModel(["Hi.", "Again."])).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": way}}
    for _ in range(2):
        if way == "invoke":
            state = app.invoke({"messages": HI}, thread)
        else:
            state = asyncio.run(app.ainvoke({"messages": HI}, thread))
    assert state["model_calls"] == 2  # before, the Command was dropped without a word
    assert seen.handed == ["ModelResponse", "ModelResponse"]
    assert seen.counts == [1, 2]  # after_model reads what the command wrote
    said = [(m.name, m.content) for m in state["messages"] if isinstance(m, AIMessage)]
    if way == "invoke":  # the sync hook also notes the count: after the reply, as LangChain adds it
        assert said == [
            ("Desk", "Hi."),
            ("counter", "(model call 1)"),
            ("Desk", "Again."),
            ("counter", "(model call 2)"),
        ]
    else:
        assert said == [("Desk", "Hi."), ("Desk", "Again.")]


def test_on_swarm_run_the_command_is_seen_by_the_later_hooks_and_its_message_returned() -> None:
    seen = Seen()
    agent = Agent(name="Desk", middleware=[seen, Count()])
    response = Swarm(chat_model=ScriptedChatModel(["Hi."])).run(agent, HI)
    assert seen.counts == [1]
    assert [m["content"] for m in response.messages] == ["Hi.", "(model call 1)"]


class Retry(AgentMiddleware):
    """Asks twice and keeps the second reply: the first try's command must not be applied."""

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        handler(request)
        return handler(request)


class Tries(AgentMiddleware):
    state_schema = CountState

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        self.tries += 1
        note = AIMessage(f"try {self.tries}", name="tries")
        command = Command(update={"messages": [note], "model_calls": self.tries})
        return ExtendedModelResponse(model_response=handler(request), command=command)


def test_a_retried_inner_hook_keeps_only_the_last_tries_command() -> None:
    agent = Agent(name="Desk", middleware=[Retry(), Tries()])
    model = ScriptedChatModel(["First.", "Second."])
    state = build_swarm_graph([agent], chat_model=model).compile().invoke({"messages": HI})
    assert [m.content for m in state["messages"][1:]] == ["Second.", "try 2"]
    assert state["model_calls"] == 2


def test_a_command_that_goes_somewhere_is_refused_as_create_agent_refuses_it() -> None:
    class Goes(AgentMiddleware):
        def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
            return ExtendedModelResponse(model_response=handler(request), command=Command(goto="x"))

    agent = Agent(name="Desk", middleware=[Goes()])
    with pytest.raises(NotImplementedError, match="goto, resume or graph"):
        Swarm(chat_model=ScriptedChatModel(["Hi."])).run(agent, HI)


class MoodState(AgentState):
    mood: NotRequired[str]


@pytest.mark.parametrize("hook", ["before_agent", "before_model", "after_model", "after_agent"])
def test_a_state_hook_may_return_a_command_update_as_a_create_agent_node_may(hook: str) -> None:
    # Before, the step took the Command for a dict: "'Command' object is not iterable".
    from langchain.agents import middleware as lc

    def set_mood(state, runtime):  # type: ignore[no-untyped-def]
        return Command(update={"mood": f"set in {hook}"})

    hooked = getattr(lc, hook)(state_schema=MoodState)(set_mood)
    agent = Agent(name="Desk", middleware=[hooked])
    model = ScriptedChatModel(["Hi."])
    state = build_swarm_graph([agent], chat_model=model).compile().invoke({"messages": HI})
    assert state["mood"] == f"set in {hook}" and state["messages"][-1].content == "Hi."


def test_a_state_hook_command_that_goes_somewhere_is_a_clear_error() -> None:
    from langchain.agents.middleware import before_model

    @before_model
    def leave(state, runtime):  # type: ignore[no-untyped-def]
        return Command(goto="elsewhere")

    agent = Agent(name="Desk", middleware=[leave])
    with pytest.raises(TypeError, match=r"returned a Command with goto.*jump_to"):
        Swarm(chat_model=ScriptedChatModel(["Hi."])).run(agent, HI)
