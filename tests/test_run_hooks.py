"""The engine's two generic run hooks, without any memory: ``prompt_context`` (text appended to
the system prompt of each model call, asked per call and per agent) and ``tool_inputs`` (the
values of injected tool parameters, from ``graph.schema.INJECTED``), on ``Swarm.run``/``arun``,
their streams and a compiled ``build_swarm_graph``."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call
from swarmgraph.graph.core.schema import INJECTED, tool_spec

USER = [{"role": "user", "content": "hello"}]


def note(text: str, long_term) -> str:
    """Pass a note to whatever the run injects."""
    return long_term.take(text)


def optional_note(text: str, long_term=None) -> str:
    """Works with or without an injected value."""
    return "no memory" if long_term is None else long_term.take(text)


class Sink:
    def __init__(self, who: str) -> None:
        self.who, self.notes = who, []

    def take(self, text: str) -> str:
        self.notes.append(text)
        return f"{self.who} took {text}"


def test_prompt_context_is_asked_per_model_call_and_per_agent():
    sales = Agent(name="Sales", instructions="You are Sales.")
    triage = Agent(name="Triage", instructions="You are Triage.", handoffs=[sales])
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Sales here."])
    asked = []

    def context(agent, messages):
        asked.append((agent.name, messages[-1].type))
        return f"Known to {agent.name} only." if agent.name == "Triage" else None

    Swarm(chat_model=model).run(triage, USER, prompt_context=context)
    assert asked == [("Triage", "human"), ("Sales", "tool")]
    prompts = [call[0].content for call in model.calls]
    assert prompts == ["You are Triage.\n\nKnown to Triage only.", "You are Sales."]


def test_tool_inputs_fill_injected_parameters_for_the_agent_whose_calls_run():
    sinks = {"Triage": Sink("Triage"), "Sales": Sink("Sales")}
    sales = Agent(name="Sales", functions=[note])
    triage = Agent(name="Triage", functions=[note], handoffs=[sales])
    model = ScriptedChatModel(
        [
            scripted_tool_call("note", {"text": "a", "long_term": "forged"}),
            scripted_tool_call("transfer_to_sales"),
            scripted_tool_call("note", {"text": "b"}),
            "done",
        ]
    )
    out = Swarm(chat_model=model).run(
        triage, USER, tool_inputs=lambda agent: {"long_term": sinks[agent.name]}
    )
    assert (sinks["Triage"].notes, sinks["Sales"].notes) == (["a"], ["b"])
    answers = [m["content"] for m in out.messages if m["role"] == "tool"]
    assert answers[0] == "Triage took a" and answers[-1] == "Sales took b"


def test_an_injected_parameter_is_hidden_and_without_a_value_is_an_error_or_its_default():
    assert set(INJECTED) >= {"context_variables", "long_term"}
    spec = tool_spec(note)
    assert spec.injected == ("long_term",) and "long_term" not in str(spec.schema)
    assert spec.parse_arguments({"text": "x", "long_term": "forged"}) == {"text": "x"}
    model = ScriptedChatModel(
        [
            scripted_tool_call("note", {"text": "a"}),
            scripted_tool_call("optional_note", {"text": "b"}),
            "done",
        ]
    )
    out = Swarm(chat_model=model).run(Agent(functions=[note, optional_note]), USER)
    answers = [m["content"] for m in out.messages if m["role"] == "tool"]
    assert answers[0].startswith("Error: note needs 'long_term'")
    assert answers[1] == "no memory"


def test_arun_and_both_streams_carry_the_hooks():
    def run(stream: bool, use_async: bool) -> list[str]:
        model = ScriptedChatModel([scripted_tool_call("note", {"text": "x"}), "ok"])
        sink = Sink("s")
        kwargs = {
            "prompt_context": lambda agent, messages: "extra",
            "tool_inputs": lambda agent: {"long_term": sink},
        }
        swarm, agent = Swarm(chat_model=model), Agent(name="A", functions=[note])
        if use_async:

            async def go():
                result = await swarm.arun(agent, USER, stream=stream, **kwargs)
                if stream:
                    return [event async for event in result]
                return result

            asyncio.run(go())
        else:
            result = swarm.run(agent, USER, stream=stream, **kwargs)
            if stream:
                list(result)
        assert sink.notes == ["x"]
        return [call[0].content for call in model.calls]

    for stream in (False, True):
        for use_async in (False, True):
            assert run(stream, use_async) == ["You are a helpful agent.\n\nextra"] * 2


def test_a_compiled_graph_takes_the_hooks_at_build_time():
    model = ScriptedChatModel(["hi"])
    hook = {"prompt_context": lambda agent, messages: f"for {agent.name}"}
    app = build_swarm_graph([Agent(name="A")], chat_model=model, **hook).compile()
    app.invoke({"messages": [HumanMessage("hello")]})
    assert model.calls[0][0].content == "You are a helpful agent.\n\nfor A"


def test_a_callers_middleware_runs_for_that_run_only_around_the_agents_own():
    from langchain.agents.middleware import AgentMiddleware
    from swarmgraph.graph import Budget
    from swarmgraph.graph.core.run_control import RunHooks
    from swarmgraph.memory import Session

    order: list[str] = []

    class Mark(AgentMiddleware):
        def __init__(self, tag: str) -> None:
            super().__init__()
            self.tag = tag

        @property
        def name(self) -> str:
            return self.tag

        def wrap_model_call(self, request, handler):
            order.append(self.tag)
            return handler(request)

        async def awrap_model_call(self, request, handler):
            order.append(self.tag)
            return await handler(request)

    sales = Agent(name="Sales", middleware=[Mark("own")])
    triage = Agent(name="Triage", handoffs=[sales])

    def swarm() -> Swarm:
        return Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Hi."]))

    hooks = RunHooks(middleware=[Mark("caller")])
    response = swarm().run(triage, USER, hooks=hooks, budget=Budget(max_model_calls=5))
    assert response.messages[-1]["content"] == "Hi."
    assert order == ["caller", "caller", "own"]  # every agent's model call, outermost
    order.clear()
    swarm().run(triage, USER)  # the next run of the same agents has none of it
    assert order == ["own"]
    order.clear()
    asyncio.run(swarm().arun(triage, USER, hooks=hooks))
    assert order == ["caller", "caller", "own"]
    order.clear()  # a Session hands it to its turn's run as it hands its own hooks
    Session("c1", url="memory://caller-middleware").run(swarm(), triage, "hi", hooks=hooks)
    assert order == ["caller", "caller", "own"]


def test_the_prompt_context_is_a_middleware_every_other_hook_sees_the_text_of():
    """The prompt context attaches as the outermost middleware of each agent's stack: a hook
    of the agent's own reads the system prompt with the text in it, a history view narrows
    only what the model reads (the prompt context is asked with the whole conversation), and
    its helpers read the run's context (``current_call_context``); on ``Swarm.run`` and on a
    compiled graph alike."""
    from langchain.agents.middleware import wrap_model_call
    from swarmgraph.graph.features.history_views import last
    from swarmgraph.graph.features.prompt_context import current_call_context

    seen: list[str] = []
    asked: list[tuple[int, object]] = []

    @wrap_model_call
    def spy(request, handler):
        seen.append(request.system_message.content)
        return handler(request)

    def context(agent, messages):
        asked.append((len(messages), (current_call_context() or {}).get("city")))
        return f"{agent.name} knows you."

    history = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi", "sender": "A"},
        {"role": "user", "content": "again"},
    ]
    agent = Agent(name="A", instructions="Be brief.", middleware=[spy], history=last(1))
    model = ScriptedChatModel(["ok"])
    Swarm(chat_model=model).run(agent, history, {"city": "Oslo"}, prompt_context=context)
    app = build_swarm_graph(
        [agent], chat_model=ScriptedChatModel(["ok"]), prompt_context=context
    ).compile()
    app.invoke({"messages": history, "context_variables": {"city": "Lyon"}})
    assert seen == ["Be brief.\n\nA knows you."] * 2
    assert asked == [(3, "Oslo"), (3, "Lyon")]  # the whole conversation, the run's context
    assert [m.content for m in model.calls[0][1:]] == ["again"]  # the view, after it


def test_debug_prints_each_prompt_once_as_the_model_gets_it(capsys):
    """``debug=True`` prints what the model is sent, once per call (Swarm prints it just
    before its call): the prompt context's text in it, and a ``before_model`` hook's change
    printed once, not the prompt before it and again after."""
    from langchain.agents.middleware import before_model
    from langchain_core.messages import HumanMessage

    @before_model
    def remind(state, runtime):
        return {"messages": [HumanMessage("(be brief)")]}

    model = ScriptedChatModel(["ok"])
    agent = Agent(name="A", middleware=[remind])
    Swarm(chat_model=model).run(
        agent, USER, debug=True, prompt_context=lambda agent, messages: "Today is Monday."
    )
    out = capsys.readouterr().out
    assert out.count("Getting chat completion for...:") == len(model.calls) == 1
    sent = out.split("Getting chat completion for...:")[1]
    assert "Today is Monday." in sent and "(be brief)" in sent
