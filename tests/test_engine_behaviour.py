"""Everything issue 2 lists beyond Swarm's examples: bad input, handoff rules, the graph."""

from __future__ import annotations

import asyncio
import functools
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from swarmgraph.graph import (
    Agent,
    HandoffLoopError,
    Response,
    Result,
    StepLimitError,
    Swarm,
    SwarmError,
    ToolSchemaError,
    build_swarm_graph,
)
from swarmgraph.graph.chat_models.scripted import (
    ScriptedChatModel,
    scripted_tool_call,
    scripted_tool_calls,
)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def tool_contents(response) -> list[str]:
    return [m["content"] for m in response.messages if m["role"] == "tool"]


def answered_ids(response) -> tuple[list[str], list[str]]:
    asked = [
        c["id"]
        for m in response.messages
        if m["role"] == "assistant"
        for c in (m["tool_calls"] or [])
    ]
    answered = [m["tool_call_id"] for m in response.messages if m["role"] == "tool"]
    return asked, answered


# -- bad input becomes Error: tool messages -------------------------------------------------
def test_bad_tool_calls_are_answered_with_errors_and_the_run_continues():
    def lookup(order_id: int) -> str:
        return f"order {order_id}"

    def explode() -> str:
        raise RuntimeError("database on fire")

    agent = Agent(functions=[lookup, explode])
    bad_json = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "lookup",
                "args": '{"order_id": 7',
                "id": "bad1",
                "error": "bad json",
                "type": "invalid_tool_call",
            }
        ],
    )
    model = ScriptedChatModel(
        [
            bad_json,
            scripted_tool_call("lookup", {"order_id": "seven"}),
            scripted_tool_call("lookup", {}),
            scripted_tool_call("nope", {}),
            scripted_tool_call("explode"),
            scripted_tool_call("lookup", {"order_id": "7"}),
            "done",
        ]
    )
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("go")])
    contents = tool_contents(response)
    assert len(contents) == 6
    assert all(c.startswith("Error:") for c in contents[:5]), contents
    assert "JSON" in contents[0]
    assert "order_id" in contents[1]
    assert "order_id" in contents[2] and "missing" in contents[2].lower()
    assert contents[3] == "Error: Tool nope not found."
    assert "RuntimeError" in contents[4] and "database on fire" in contents[4]
    assert contents[5] == "order 7"  # "7" coerced to int
    assert response.messages[-1]["content"] == "done"
    asked, answered = answered_ids(response)
    assert sorted(asked) == sorted(answered)


def test_model_supplied_context_variables_argument_is_dropped():
    seen = []

    def whoami(context_variables: dict) -> str:
        seen.append(dict(context_variables))
        return context_variables.get("role", "")

    agent = Agent(functions=[whoami])
    model = ScriptedChatModel(
        [
            scripted_tool_call("whoami", {"context_variables": {"role": "admin"}}),
            "ok",
        ]
    )
    response = Swarm(chat_model=model).run(
        agent=agent, messages=[user("x")], context_variables={"role": "guest"}
    )
    assert seen == [{"role": "guest"}]
    assert tool_contents(response) == ["guest"]
    assert response.context_variables == {"role": "guest"}


def test_context_injection_works_for_partials_methods_and_decorated_functions():
    received = []

    def base(prefix: str, context_variables: dict) -> str:
        received.append(("partial", context_variables["k"]))
        return prefix

    class Tools:
        def method_tool(self, context_variables: dict) -> str:
            received.append(("method", context_variables["k"]))
            return "m"

    def logged(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        return wrapper

    @logged
    def decorated(context_variables: dict) -> str:
        received.append(("decorated", context_variables["k"]))
        return "d"

    part = functools.partial(base, "p")
    agent = Agent(functions=[part, Tools().method_tool, decorated])
    model = ScriptedChatModel(
        [
            scripted_tool_calls([("base", {}), ("method_tool", {}), ("decorated", {})]),
            "ok",
        ]
    )
    response = Swarm(chat_model=model).run(
        agent=agent, messages=[user("x")], context_variables={"k": 1}
    )
    assert received == [("partial", 1), ("method", 1), ("decorated", 1)]
    assert tool_contents(response) == ["p", "m", "d"]


def test_return_values_are_converted_like_swarm_with_json_for_dicts():
    other = Agent(name="Other")

    def as_dict():
        return {"a": 1, "ü": [1, 2]}

    def as_int():
        return 42

    def as_agent():
        return other

    agent = Agent(functions=[as_dict, as_int, as_agent])
    model = ScriptedChatModel(
        [
            scripted_tool_calls([("as_dict", {}), ("as_int", {}), ("as_agent", {})]),
            "hi from other",
        ]
    )
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("x")])
    assert tool_contents(response) == ['{"a": 1, "ü": [1, 2]}', "42", '{"assistant": "Other"}']
    assert response.agent is other


@pytest.mark.parametrize("rule", ["last", "first"])
def test_two_handoffs_in_one_reply_last_wins_or_with_first_the_second_is_not_run(rule):
    a, b = Agent(name="A"), Agent(name="B")
    start = Agent(name="Start", handoffs=[a, b])
    model = ScriptedChatModel(
        [
            scripted_tool_calls([("transfer_to_a", {}), ("transfer_to_b", {})]),
            "here",
        ]
    )
    swarm = Swarm(chat_model=model, parallel_handoffs=rule)
    response = swarm.run(agent=start, messages=[user("x")])
    contents = tool_contents(response)
    assert contents[0] == '{"assistant": "A"}'
    if rule == "last":  # Swarm's: both ran, each answered with its result, the last wins
        assert contents[1] == '{"assistant": "B"}'
        assert response.agent is b
    else:
        assert contents[1] == (
            "Error: transfer_to_b was not run: this reply already transferred the "
            "conversation to A."
        )
        assert response.agent is a
    asked, answered = answered_ids(response)
    assert asked == answered


def test_handoff_ping_pong_stops_with_a_clear_error_naming_the_agents():
    ping = Agent(name="Ping")
    pong = Agent(name="Pong", handoffs=[ping])
    ping.handoffs.append(pong)
    model = ScriptedChatModel(
        [],
        respond=lambda msgs: scripted_tool_call(
            "transfer_to_pong" if msgs[0].content == "ping" else "transfer_to_ping"
        ),
    )
    ping.instructions, pong.instructions = "ping", "pong"
    with pytest.raises(HandoffLoopError) as info:
        Swarm(chat_model=model).run(agent=ping, messages=[user("go")])
    message = str(info.value)
    assert "Ping -> Pong -> Ping" in message and "max_turns" in message
    assert len(model.calls) == 10  # stopped after the 10th handoff, not after 10,000 steps
    partial = info.value.response
    assert partial is not None and len(partial.messages) >= 18


def test_max_turns_counts_new_messages_like_swarm():
    def noop() -> str:
        return "ok"

    agent = Agent(functions=[noop])
    model = ScriptedChatModel([], respond=lambda msgs: scripted_tool_call("noop"))
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("x")], max_turns=3)
    # call 1: assistant + tool (2 messages) < 3 → call 2: assistant + tool (4) → stop
    assert [m["role"] for m in response.messages] == ["assistant", "tool", "assistant", "tool"]
    empty = Swarm(chat_model=model).run(agent=agent, messages=[user("x")], max_turns=0)
    assert empty.messages == [] and empty.agent is agent


def test_execute_tools_false_stops_after_the_tool_call():
    called = []

    def side_effect() -> str:
        called.append(1)
        return "x"

    agent = Agent(functions=[side_effect])
    model = ScriptedChatModel([scripted_tool_call("side_effect")])
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("x")], execute_tools=False)
    assert called == []
    assert len(response.messages) == 1
    assert response.messages[0]["tool_calls"][0]["function"]["name"] == "side_effect"


def test_instructions_are_rebuilt_from_the_current_context_on_every_model_call():
    def set_name(context_variables: dict):
        return Result(value="set", context_variables={"name": "Ming"})

    agent = Agent(instructions=lambda ctx: f"name={ctx['name']}", functions=[set_name])
    model = ScriptedChatModel([scripted_tool_call("set_name"), "hi Ming"])
    Swarm(chat_model=model).run(agent=agent, messages=[user("x")])
    assert [c[0].content for c in model.calls] == ["name=", "name=Ming"]


def test_async_tools_and_arun():
    async def slow_lookup(order_id: int) -> str:
        await asyncio.sleep(0)
        return f"order {order_id}"

    agent = Agent(functions=[slow_lookup])
    model = ScriptedChatModel([scripted_tool_call("slow_lookup", {"order_id": 3}), "found"])
    response = asyncio.run(Swarm(chat_model=model).arun(agent, [user("x")]))
    assert tool_contents(response) == ["order 3"]
    # the sync path awaits async tools too
    model2 = ScriptedChatModel([scripted_tool_call("slow_lookup", {"order_id": 4}), "found"])
    assert tool_contents(Swarm(chat_model=model2).run(agent, [user("x")])) == ["order 4"]


def test_accepts_langchain_messages_without_mutating_them():
    history = [HumanMessage("hi")]
    model = ScriptedChatModel(["hello"])
    Swarm(chat_model=model).run(Agent(), history)
    assert history[0].id is None


def test_usage_reports_tokens_sent():
    model = ScriptedChatModel(["hello"])
    response = Swarm(chat_model=model).run(Agent(), [user("hi " * 100)])
    assert response.usage["model_calls"] == 1
    assert response.usage["input_tokens"] > 50


# -- the graph ---------------------------------------------------------------------------------
def _bees():
    sales = Agent(name="Sales", instructions="Sell bees.")

    def transfer_to_sales():
        """Hand the customer to sales."""
        return sales

    refunds = Agent(name="Refunds")
    triage = Agent(
        name="Triage",
        instructions=lambda ctx: f"Greet {ctx['name']}.",
        functions=[transfer_to_sales],
        handoffs=[refunds],
    )
    return triage, sales, refunds


def test_graph_draws_each_handoff_as_an_edge():
    triage, _, _ = _bees()
    app = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile()
    drawn = app.get_graph()
    edges = {(e.source, e.target) for e in drawn.edges}
    assert ("Triage", "Sales") in edges and ("Triage", "Refunds") in edges
    assert ("Sales", "Triage") not in edges
    assert {"Triage", "Sales", "Refunds"} <= set(drawn.nodes)
    mermaid = app.get_graph().draw_mermaid()
    assert "Triage -.-> Sales" in mermaid


def test_agents_are_found_through_closures_and_globals():
    found_global = Agent(name="GlobalTarget")
    globals()["_GLOBAL_TARGET"] = found_global

    def to_global():
        return _GLOBAL_TARGET  # noqa: F821 - set above, read at call time

    def make(target):
        def to_closure():
            return target

        return to_closure

    closure_target = Agent(name="ClosureTarget")
    start = Agent(name="Start", functions=[to_global, make(closure_target)])
    app = build_swarm_graph([start], chat_model=ScriptedChatModel([])).compile()
    assert {"GlobalTarget", "ClosureTarget"} <= set(app.get_graph().nodes)


def test_a_tool_that_declares_its_destination_is_taken_at_its_word():
    from swarmgraph.graph.core.discovery import function_targets, handoff_targets

    declared, named = Agent(name="Declared"), Agent(name="OnlyNamed")

    def transfer(urgent: bool = False):
        return named if urgent else declared  # its code names both agents

    assert {a.name for a in function_targets(transfer)} == {"OnlyNamed", "Declared"}  # scanned
    transfer.__swarmgraph_target__ = declared  # as the generated transfer_to_* tools carry
    assert [a.name for a in function_targets(transfer)] == ["Declared"]  # read, not scanned
    # The generated tools and transfer_back declare theirs (CALLER is never a node).
    start = Agent(name="Start", handoffs=[declared], can_return=True)
    assert handoff_targets(start) == [declared]


def test_unforeseen_handoff_still_works():
    registry = {}

    def transfer_anywhere(name: str):
        return registry[name]

    start = Agent(name="Start", functions=[transfer_anywhere])
    registry["Ghost"] = Agent(name="Ghost", instructions="boo")
    model = ScriptedChatModel([scripted_tool_call("transfer_anywhere", {"name": "Ghost"}), "boo!"])
    response = Swarm(chat_model=model).run(start, [user("x")])
    assert response.agent is registry["Ghost"]
    assert response.messages[-1]["sender"] == "Ghost"
    assert model.calls[1][0].content == "boo"


def test_unknown_annotation_fails_at_build_time():
    class Opaque:
        pass

    def weird(x: Opaque) -> str:
        return "x"

    with pytest.raises(ToolSchemaError):
        build_swarm_graph([Agent(functions=[weird])])


def test_checkpointed_thread_resumes_with_active_agent_and_context():
    from langgraph.checkpoint.memory import InMemorySaver

    triage, _, _ = _bees()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees!", "More bees!"])
    app = build_swarm_graph([triage], chat_model=model).compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [("user", "bees")], "context_variables": {"name": "Ming"}}, thread)
    out = app.invoke({"messages": [("user", "more")]}, thread)
    assert out["active_agent"] == "Sales"
    assert out["context_variables"] == {"name": "Ming"}
    assert model.calls[-1][0].content == "Sell bees."  # Sales answered the second turn
    assert out["messages"][-1].name == "Sales"


def test_sqlite_saver_resumes_across_compilations(tmp_path):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    triage, _, _ = _bees()
    conn = sqlite3.connect(tmp_path / "ck.db", check_same_thread=False)
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees!", "Again!"])
    thread = {"configurable": {"thread_id": "t"}}
    app = build_swarm_graph([triage], chat_model=model).compile(checkpointer=SqliteSaver(conn))
    app.invoke({"messages": [("user", "bees")], "context_variables": {"name": "M"}}, thread)
    app2 = build_swarm_graph([triage], chat_model=model).compile(checkpointer=SqliteSaver(conn))
    out = app2.invoke({"messages": [("user", "again")]}, thread)
    assert out["active_agent"] == "Sales" and out["messages"][-1].content == "Again!"


def test_stream_modes_updates_and_messages():
    triage, _, _ = _bees()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees are great"])
    app = build_swarm_graph([triage], chat_model=model).compile()
    inp = {"messages": [("user", "bees")], "context_variables": {"name": "M"}}
    updates = [list(u) for u in app.stream(inp, stream_mode="updates")]
    assert updates == [["Triage"], ["Sales"]]
    model.reset()
    chunks = [
        (c, meta["langgraph_node"])
        for c, meta in app.stream(inp, stream_mode="messages")
        if isinstance(c, AIMessage) or c.type == "AIMessageChunk"
    ]
    text = "".join(c.content for c, node in chunks if node == "Sales")
    assert text == "Bees are great"


def test_runtime_schema_is_langgraphs_context_schema_passed_through():
    # context_schema= types context_variables now; LangGraph's run-time context is runtime_schema=
    from dataclasses import dataclass

    @dataclass
    class Ctx:
        user_id: str

    g = build_swarm_graph([Agent()], chat_model=ScriptedChatModel(["x"]), runtime_schema=Ctx)
    assert g.context_schema is Ctx
    out = g.compile().invoke({"messages": [("user", "hi")]}, context=Ctx(user_id="u1"))
    assert out["messages"][-1].content == "x"


# -- streaming in Swarm's shape ------------------------------------------------------------
def test_stream_true_yields_swarm_shaped_events():
    triage, sales, _ = _bees()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees are great"])
    events = list(Swarm(chat_model=model).run(triage, [user("bees")], {"name": "M"}, stream=True))
    delims = [e["delim"] for e in events if "delim" in e]
    assert delims == ["start", "end", "start", "end"]
    deltas = [e for e in events if "delim" not in e and "response" not in e]
    # as in Swarm, the sender rides on the first delta of each message (the one with the role)
    assert [d.get("sender") for d in deltas if d["role"]] == ["Triage", "Sales"]
    assert all("sender" not in d for d in deltas if not d["role"])
    assert "".join(d["content"] or "" for d in deltas) == "Bees are great"
    calls = [tc for d in deltas for tc in (d["tool_calls"] or [])]
    assert calls and calls[0]["function"]["name"] == "transfer_to_sales"
    final = events[-1]["response"]
    assert final.agent is sales and final.messages[-1]["content"] == "Bees are great"


def test_arun_stream():
    model = ScriptedChatModel(["one two three"])

    async def collect():
        stream = await Swarm(chat_model=model).arun(Agent(), [user("x")], stream=True)
        return [e async for e in stream]

    events = asyncio.run(collect())
    assert events[0] == {"delim": "start"}
    assert "".join(e.get("content") or "" for e in events if "delim" not in e) == "one two three"
    assert events[-1]["response"].messages[0]["content"] == "one two three"


def test_debug_prints_what_swarm_prints(capsys):
    def noop() -> str:
        return "ok"

    model = ScriptedChatModel([scripted_tool_call("noop"), "done"])
    Swarm(chat_model=model).run(Agent(functions=[noop]), [user("x")], debug=True)
    out = capsys.readouterr().out
    for line in (
        "Getting chat completion for...:",
        "Received completion:",
        "Processing tool call: noop",
        "Ending turn.",
    ):
        assert line in out


def test_graph_is_compiled_once_per_start_agent():
    model = ScriptedChatModel(["a", "b"])
    swarm = Swarm(chat_model=model)
    agent = Agent()
    swarm.run(agent, [user("1")])
    first = swarm.graph_for(agent)[0]
    swarm.run(agent, [user("2")])
    assert swarm.graph_for(agent)[0] is first


def test_agent_config_changes_are_read_on_every_run():
    model = ScriptedChatModel(["a", "b"])
    swarm = Swarm(chat_model=model)
    agent = Agent(instructions="first")
    swarm.run(agent, [user("1")])
    agent.instructions = "second"
    swarm.run(agent, [user("2")])
    assert [c[0].content for c in model.calls] == ["first", "second"]


def test_response_messages_are_json_serialisable():
    model = ScriptedChatModel([scripted_tool_call("f", {"x": 1}), "ok"])

    def f(x: int) -> str:
        return str(x)

    response = Swarm(chat_model=model).run(Agent(functions=[f]), [user("x")])
    json.dumps(response.messages)


def test_response_langchain_messages_are_the_runs_new_messages_as_langchain_objects():
    triage, _, _ = _bees()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees are $5."])
    response = Swarm(chat_model=model).run(triage, [user("bees")], context_variables={"name": "M"})
    native = response.langchain_messages
    assert [m.type for m in native] == ["ai", "tool", "ai"] and len(response.messages) == 3
    assert [m.name for m in native if m.type == "ai"] == ["Triage", "Sales"]
    assert native[-1].content == response.messages[-1]["content"] == "Bees are $5."
    assert Response(messages=response.messages).langchain_messages is None  # built by hand
    with pytest.raises(AttributeError):
        response.langchain_messages = []  # read-only


def test_compiles_with_a_user_store_and_checkpointer():
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    store.put(("prefs",), "ming", {"tone": "brief"})
    triage, _, _ = _bees()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees!"])
    app = build_swarm_graph([triage], chat_model=model).compile(
        checkpointer=InMemorySaver(), store=store
    )
    thread = {"configurable": {"thread_id": "s"}}
    out = app.invoke({"messages": [("user", "bees")], "context_variables": {"name": "M"}}, thread)
    assert out["active_agent"] == "Sales"
    assert app.store is store and store.get(("prefs",), "ming").value == {"tone": "brief"}


def test_agents_built_per_request_do_not_grow_the_caches():
    import swarmgraph.graph.swarm as swarm_module

    def fresh_helper():
        return Agent(name="Helper", instructions="help")  # a new object on every call

    model = ScriptedChatModel(
        [],
        respond=lambda msgs: (
            "done" if msgs[-1].type == "tool" else scripted_tool_call("fresh_helper")
        ),
    )
    swarm = Swarm(chat_model=model)
    start = Agent(name="Start", functions=[fresh_helper])
    for _ in range(5):
        response = swarm.run(start, [user("x")])
        assert response.agent.name == "Helper"
    runtime = swarm.graph_for(start)[1]
    assert not runtime.dynamic  # unforeseen agents belong to their run, not to the graph
    for _ in range(swarm_module.MAX_CACHED_STARTS + 10):  # a new start agent per request
        swarm.run(Agent(name="Per-request"), [user("x")])
    assert len(swarm._starts) == swarm_module.MAX_CACHED_STARTS
    assert len(swarm._graphs) == 2  # one compiled graph per topology, not per agent object


# -- a run that never answers ------------------------------------------------------------
def _runaway() -> tuple[Agent, ScriptedChatModel]:
    def lookup(order: str) -> str:
        """Look an order up."""
        return "still pending"

    # The model keeps calling a tool it lacks and one it has, and never answers.
    model = ScriptedChatModel(
        [],
        respond=lambda msgs: scripted_tool_calls([("nope", {}), ("lookup", {"order": "7"})]),
    )
    return Agent(name="Clerk", functions=[lookup]), model


def test_a_run_that_never_answers_stops_with_a_step_limit_error_holding_the_run():
    agent, model = _runaway()
    assert Swarm(chat_model=model).step_limit == 1000  # the default; tests need not wait for it
    with pytest.raises(StepLimitError) as info:
        Swarm(chat_model=model, step_limit=40).run(agent, messages=[user("where is order 7?")])
    error = info.value
    assert isinstance(error, SwarmError)
    assert type(error.__cause__).__name__ == "GraphRecursionError"
    assert error.agent == "Clerk" and error.limit == 40
    assert "The run took 40 steps without a final answer" in str(error)
    calls = len(model.calls)
    assert error.calls == {"nope": calls, "lookup": calls}
    assert "agent 'Clerk' kept calling tools (nope x" in str(error) and "max_turns" in str(error)
    # Nothing is lost: every reply is there, every tool call answered (the unknown one
    # with an error the model could read).
    messages = error.response.messages
    assert sum(m["role"] == "assistant" for m in messages) == calls
    asked, answered = answered_ids(error.response)
    assert asked == answered
    assert tool_contents(error.response)[:2] == ["Error: Tool nope not found.", "still pending"]
    assert error.response.agent is agent


def test_the_step_limit_error_comes_from_arun_and_streams_too():
    agent, model = _runaway()
    with pytest.raises(StepLimitError) as info:
        asyncio.run(Swarm(chat_model=model, step_limit=30).arun(agent, messages=[user("x")]))
    assert info.value.response.messages and info.value.limit == 30
    agent, model = _runaway()
    events = Swarm(chat_model=model, step_limit=30).run(agent, [user("x")], stream=True)
    with pytest.raises(StepLimitError) as info:
        for _ in events:
            pass
    assert info.value.response.messages and info.value.agent == "Clerk"
    agent, model = _runaway()

    async def drain() -> None:
        async for _ in await Swarm(chat_model=model, step_limit=30).arun(
            agent, [user("x")], stream=True
        ):
            pass

    with pytest.raises(StepLimitError) as info:
        asyncio.run(drain())
    assert info.value.response.messages and info.value.limit == 30


@pytest.mark.parametrize("limit", [0, -1, 2.5, True, "10"])
def test_a_step_limit_that_is_not_a_positive_int_is_a_clear_error(limit):
    with pytest.raises(ValueError, match="step_limit must be a positive int"):
        Swarm(chat_model=ScriptedChatModel([]), step_limit=limit)


def test_a_budget_or_max_turns_stops_the_same_run_early_without_an_error():
    agent, model = _runaway()
    response = Swarm(chat_model=model).run(agent=agent, messages=[user("x")], max_turns=9)
    assert len(response.messages) == 9 and len(model.calls) == 3


# -- a model call that may stream: the listener the API hands the builder ----------------------
def _unfinished_greeting() -> AIMessage:
    """A reply whose tool call's argument text the model never finished (streamed, LangChain's
    assembly would repair it into ``{"name": "Bo"}``)."""
    bad = {"name": "greet", "args": '{"name": "Bo"', "id": "c1", "error": None}
    return AIMessage(content="", invalid_tool_calls=[bad])


@pytest.mark.parametrize("use_async", [False, True])
def test_the_compiled_graph_streamed_answers_unfinished_arguments_with_an_error(use_async):
    ran: list[str] = []

    def greet(name: str) -> str:
        ran.append(name)
        return f"hi {name}"

    model = ScriptedChatModel([_unfinished_greeting(), "Sorry."])
    app = build_swarm_graph([Agent(functions=[greet])], chat_model=model).compile()
    given = {"messages": [HumanMessage("greet Bo")]}
    if use_async:

        async def stream() -> list:
            return [c async for c in app.astream(given, stream_mode=["messages", "values"])]

        chunks = asyncio.run(stream())
    else:
        chunks = list(app.stream(given, stream_mode=["messages", "values"]))
    final = [data for mode, data in chunks if mode == "values"][-1]
    answer = final["messages"][2]
    assert ran == []  # the tool never saw arguments the model did not finish
    assert answer.tool_call_id == "c1"
    assert answer.content.startswith("Error: greet: arguments are not valid JSON")
    assert final["messages"][-1].content == "Sorry."


def test_a_graph_built_without_a_listener_streams_as_langchain_assembles():
    """The listener is what the API hands the builder (``GraphSettings.listen``), not the core's
    own: a graph built without one runs the tool on LangChain's repaired arguments, and one
    built with a listener of its own hands it each call that may stream, then the reply."""
    from langchain_core.callbacks import BaseCallbackHandler
    from swarmgraph.graph.core.builder import GraphSettings, build_graph_and_runtime
    from swarmgraph.graph.core.discovery import find_topology
    from swarmgraph.graph.models import ModelResolver

    heard: list[str] = []

    class Listener(BaseCallbackHandler):  # it goes in the call's config
        def finish(self, reply: AIMessage) -> AIMessage:
            heard.append(reply.tool_calls[0]["name"] if reply.tool_calls else reply.content)
            return reply

    def greet(name: str) -> str:
        return f"hi {name}"

    given = {"messages": [HumanMessage("greet Bo")]}
    for listen in (None, lambda model, config, kwargs: Listener()):
        model = ScriptedChatModel([_unfinished_greeting(), "Done."])
        settings = GraphSettings(listen=listen)
        topology = find_topology([Agent(functions=[greet])])
        builder, _ = build_graph_and_runtime(topology, ModelResolver(chat_model=model), settings)
        chunks = list(builder.compile().stream(given, stream_mode=["messages", "values"]))
        final = [data for mode, data in chunks if mode == "values"][-1]
        assert final["messages"][2].content == "hi Bo"  # repaired: nothing held it to the rule
    assert heard == ["greet", "Done."]
