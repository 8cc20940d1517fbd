"""Typed context: ``Swarm(context_schema=Model)`` / ``build_swarm_graph(..., context_schema=)``.

Validated on entry and after every tool call, reducers per key, a typed instance for tools
that ask for one, the graph's state declaring the fields. Without a schema nothing changes
(tests/test_swarm_differential.py keeps the plain-dict runs identical to Swarm's).
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, ConfigDict
from swarmgraph.graph import ContextValidationError
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from swarmgraph.graph.features.context_schema import ContextSchema, context_reducers
from typing_extensions import NotRequired, TypedDict

from swarmgraph import (
    Agent,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)


class Desk(BaseModel):
    """The desk's key fields."""

    order_id: int | None = None
    visits: Annotated[int, operator.add] = 0
    tags: Annotated[list[str], operator.add] = []
    status: Literal["open", "closed"] = "open"


class Booking(TypedDict):
    customer: str
    seat: NotRequired[int]
    changes: NotRequired[Annotated[int, operator.add]]


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def run_tools(schema, tools, calls, context=None, **run):
    """One agent with ``tools``; the model makes ``calls`` (one reply each), then answers."""
    replies = [scripted_tool_call(name, args, id=f"c{i}") for i, (name, args) in enumerate(calls)]
    model = ScriptedChatModel([*replies, "Done."])
    agent = Agent(name="Desk", functions=tools)
    response = Swarm(chat_model=model, context_schema=schema).run(
        agent, [user("go")], context_variables=context, **run
    )
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    return response, answers, model


# -- entry ---------------------------------------------------------------------------------
def test_defaults_are_filled_and_values_coerced_on_entry():
    response, _, model = run_tools(Desk, [], [], context={"order_id": "7"})
    assert response.context_variables == {
        "order_id": 7,
        "visits": 0,
        "tags": [],
        "status": "open",
    }
    assert len(model.calls) == 1


@pytest.mark.parametrize(
    ("context", "problem"),
    [
        ({"order_id": "seven"}, "'order_id' expects int | None, got 'seven' (str)"),
        ({"colour": "red"}, "unknown key 'colour' (the schema Desk has: order_id, visits"),
        ({"status": "pending"}, "'status' expects Literal['open', 'closed'], got 'pending'"),
    ],
)
def test_bad_caller_input_is_a_clear_error_before_any_model_call(context, problem):
    model = ScriptedChatModel(["never"])
    with pytest.raises(ContextValidationError) as caught:
        Swarm(chat_model=model, context_schema=Desk).run(Agent(), [user("hi")], context)
    assert problem in str(caught.value) and caught.value.schema == "Desk"
    assert model.calls == []


def test_a_typed_dict_schema_requires_its_required_keys():
    model = ScriptedChatModel(["hi"])
    swarm = Swarm(chat_model=model, context_schema=Booking)
    with pytest.raises(ContextValidationError, match="'customer' is required \\(str\\)"):
        swarm.run(Agent(), [user("hi")], {})
    response = swarm.run(Agent(), [user("hi")], {"customer": "Ming", "seat": "12"})
    assert response.context_variables == {"customer": "Ming", "seat": 12}


def test_a_pydantic_instance_is_accepted_as_the_context():
    response, _, _ = run_tools(Desk, [], [], context=Desk(order_id=3, tags=["vip"]))
    assert response.context_variables["order_id"] == 3
    assert response.context_variables["tags"] == ["vip"]


# -- tool updates ----------------------------------------------------------------------------
def set_order(order_id: str) -> Result:
    """Set the order id (as the model sends it)."""
    return Result(value="noted", context_variables={"order_id": order_id})


def visit() -> Result:
    """Count a visit."""
    return Result(value="counted", context_variables={"visits": 1, "tags": ["seen"]})


def test_a_tool_writing_a_wrong_type_is_answered_and_the_context_kept():
    response, answers, model = run_tools(
        Desk,
        [set_order],
        [("set_order", {"order_id": "7"}), ("set_order", {"order_id": "seven"})],
    )
    assert answers["c0"] == "noted"
    assert answers["c1"] == (
        "Error: set_order wrote context_variables that do not fit Desk: 'order_id' expects "
        "int | None, got 'seven' (str). The context keeps its last valid values."
    )
    assert response.context_variables["order_id"] == 7  # the last valid value
    # the model read the error before it answered
    assert model.calls[-1][-1].content.startswith("Error: set_order wrote context_variables")


def test_an_unknown_key_from_a_tool_is_refused():
    def colour() -> Result:
        """Note a colour."""
        return Result(value="ok", context_variables={"colour": "red", "visits": 1})

    response, answers, _ = run_tools(Desk, [colour], [("colour", {})])
    assert "unknown key 'colour'" in answers["c0"]
    assert response.context_variables["visits"] == 0  # the whole update was refused


def test_result_updates_go_through_the_reducers():
    response, answers, _ = run_tools(Desk, [visit], [("visit", {})] * 3)
    assert set(answers.values()) == {"counted"}
    assert response.context_variables["visits"] == 3
    assert response.context_variables["tags"] == ["seen", "seen", "seen"]


def test_in_place_writes_set_the_value_without_the_reducer():
    def reset_visits(context_variables: dict) -> str:
        """Reset the visit count (a direct write: Swarm's way)."""
        context_variables["visits"] = 10
        return "reset"

    response, _, _ = run_tools(
        Desk, [visit, reset_visits], [("visit", {}), ("reset_visits", {}), ("visit", {})]
    )
    assert response.context_variables["visits"] == 11  # 0 + 1, set to 10, + 1


def test_deleting_a_key_resets_a_default_and_refuses_a_required_key():
    def forget(key: str, context_variables: dict) -> str:
        """Forget a key."""
        del context_variables[key]
        return "forgotten"

    response, answers, _ = run_tools(
        Desk,
        [forget, set_order],
        [("set_order", {"order_id": "7"}), ("forget", {"key": "order_id"})],
    )
    assert answers["c1"] == "forgotten" and response.context_variables["order_id"] is None
    response, answers, _ = run_tools(
        Booking, [forget], [("forget", {"key": "seat"}), ("forget", {"key": "customer"})],
        context={"customer": "Ming", "seat": 3},
    )  # fmt: skip
    assert answers["c0"] == "forgotten"
    assert "'customer' is required (str) but missing" in answers["c1"]
    assert response.context_variables == {"customer": "Ming"}


def test_a_reducer_that_cannot_take_the_value_is_a_bad_update():
    def tag(value: str) -> Result:
        """Tag (the model sends a bare string where a list belongs)."""
        return Result(value="tagged", context_variables={"tags": value})

    response, answers, _ = run_tools(Desk, [tag], [("tag", {"value": "vip"})])
    assert answers["c0"].startswith("Error: tag wrote context_variables that do not fit Desk:")
    assert "'tags': its reducer add refused 'vip' (str)" in answers["c0"]
    assert response.context_variables["tags"] == []


def test_an_invalid_update_is_not_a_handoff():
    refunds = Agent(name="Refunds")

    def to_refunds(order_id: str) -> Result:
        """Hand to Refunds with the order."""
        return Result(agent=refunds, context_variables={"order_id": order_id})

    response, answers, _ = run_tools(Desk, [to_refunds], [("to_refunds", {"order_id": "x"})])
    assert answers["c0"].startswith("Error: to_refunds wrote") and response.agent.name == "Desk"


def test_a_tool_annotated_with_the_model_gets_an_instance_and_its_changes_flow_back():
    seen = []

    def close(context_variables: Desk) -> str:
        """Close the ticket."""
        seen.append(type(context_variables))
        context_variables.status = "closed"
        context_variables.visits += 5  # an assignment: a direct write, no reducer
        return "closed"

    def break_it(context_variables: Desk) -> str:
        """Write a wrong type (pydantic does not check assignments by default)."""
        context_variables.status = "exploded"  # type: ignore[assignment]
        return "broken"

    response, answers, _ = run_tools(Desk, [close, break_it], [("close", {}), ("break_it", {})])
    assert seen == [Desk] and answers["c0"] == "closed"
    assert "'status' expects Literal['open', 'closed'], got 'exploded'" in answers["c1"]
    assert response.context_variables["status"] == "closed"
    assert response.context_variables["visits"] == 5


class Order(BaseModel):
    order_id: int = 0


def test_a_model_annotated_tool_works_without_a_schema_too():
    def bump(context_variables: Order) -> str:
        """Bump the order id."""
        context_variables.order_id += 1
        return "bumped"

    model = ScriptedChatModel([scripted_tool_call("bump"), "ok"])
    agent = Agent(functions=[bump])
    response = Swarm(chat_model=model).run(agent, [user("go")], {"order_id": 6, "name": "M"})
    assert response.context_variables == {"order_id": 7, "name": "M"}


def test_strict_models_refuse_coercion():
    class Strict(BaseModel):
        model_config = ConfigDict(strict=True)
        order_id: int = 0

    _, answers, _ = run_tools(Strict, [set_order], [("set_order", {"order_id": "7"})])
    assert answers["c0"].startswith("Error: set_order wrote context_variables")


def test_instructions_and_tools_read_the_validated_dict():
    def whoami(context_variables: dict) -> str:
        """Say the order."""
        return f"order {context_variables['order_id']!r} ({type(context_variables).__name__})"

    model = ScriptedChatModel([scripted_tool_call("whoami", id="w"), "ok"])
    agent = Agent(instructions=lambda ctx: f"Visits so far: {ctx['visits']}.", functions=[whoami])
    response = Swarm(chat_model=model, context_schema=Desk).run(
        agent, [user("hi")], {"order_id": "5"}
    )
    assert model.calls[0][0].content == "Visits so far: 0."
    assert response.messages[1]["content"] == "order 5 (dict)"


# -- the compiled graph ---------------------------------------------------------------------
def test_the_graph_state_declares_the_typed_fields():
    app = build_swarm_graph([Agent()], chat_model=ScriptedChatModel([]), context_schema=Desk)
    schema = app.compile().get_input_jsonschema()
    context = schema["$defs"][schema["properties"]["context_variables"]["$ref"].split("/")[-1]]
    assert set(context["properties"]) == {"order_id", "visits", "tags", "status"}
    assert context["properties"]["status"]["enum"] == ["open", "closed"]


def test_the_compiled_graph_validates_its_input_and_fills_defaults():
    model = ScriptedChatModel(["hi", "again"])
    app = build_swarm_graph([Agent()], chat_model=model, context_schema=Desk).compile()
    with pytest.raises(ContextValidationError, match="'order_id' expects int"):
        app.invoke({"messages": [("user", "x")], "context_variables": {"order_id": "x"}})
    assert model.calls == []
    out = app.invoke({"messages": [("user", "x")]})
    assert out["context_variables"] == {"order_id": None, "visits": 0, "tags": [], "status": "open"}


def test_writes_from_outside_the_nodes_go_through_the_reducers():
    model = ScriptedChatModel(["hi", "again"])
    app = build_swarm_graph([Agent()], chat_model=model, context_schema=Desk).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [("user", "x")], "context_variables": {"visits": 2}}, thread)
    # LangGraph's semantics: a caller's write is an update, reduced key by key
    app.update_state(thread, {"context_variables": {"visits": 1, "tags": ["vip"]}})
    state = app.get_state(thread).values["context_variables"]
    assert state["visits"] == 3 and state["tags"] == ["vip"]
    out = app.invoke({"messages": [("user", "y")], "context_variables": {"visits": 1}}, thread)
    assert out["context_variables"]["visits"] == 4
    with pytest.raises(ContextValidationError):
        app.update_state(thread, {"context_variables": {"status": "gone"}})


def test_context_reducers_and_the_schema_cache():
    assert context_reducers(Desk) == {"visits": operator.add, "tags": operator.add}
    assert context_reducers(Booking) == {"changes": operator.add}
    assert ContextSchema.of(Desk) is ContextSchema.of(Desk)
    with pytest.raises(TypeError, match="runtime_schema"):
        ContextSchema.of(dict)


def test_runtime_schema_and_context_schema_live_side_by_side():
    from dataclasses import dataclass

    from langgraph.runtime import get_runtime

    @dataclass
    class Who:
        user_id: str

    def whoami(context_variables: dict) -> str:
        """Say who asks."""
        return get_runtime(Who).context.user_id

    model = ScriptedChatModel([scripted_tool_call("whoami"), "ok"])
    app = build_swarm_graph(
        [Agent(functions=[whoami])], chat_model=model, context_schema=Desk, runtime_schema=Who
    ).compile()
    out = app.invoke({"messages": [("user", "hi")]}, context=Who(user_id="u1"))
    assert out["messages"][2].content == "u1" and out["context_variables"]["visits"] == 0


class MemberState(TypedDict):
    messages: Annotated[list, operator.add]
    context_variables: dict


def test_a_langgraph_members_context_is_validated_too():
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, StateGraph

    def member(visits):
        def write(state: MemberState) -> dict:
            context = {**state["context_variables"], "visits": visits}
            return {"messages": [AIMessage("counted")], "context_variables": context}

        graph = StateGraph(MemberState)
        graph.add_node("write", write)
        graph.add_edge(START, "write")
        graph.add_edge("write", END)
        return graph.compile(name="counter")

    for visits, expected in ((5, 5), ("many", 0)):
        counter = member(visits)
        desk = Agent(name="Desk", handoffs=[counter])
        model = ScriptedChatModel([scripted_tool_call("transfer_to_counter")])
        response = Swarm(chat_model=model, context_schema=Desk).run(desk, [user("count")])
        assert response.context_variables["visits"] == expected  # final values, not reduced
        dropped = [s for s in response.trajectory if s["kind"] == "context"]
        assert bool(dropped) == (visits == "many")


# -- property: 100 generated tool updates ----------------------------------------------------
VALID = {
    "order_id": st.one_of(st.none(), st.integers(-(10**6), 10**6)),
    "visits": st.integers(-100, 100),
    "tags": st.lists(st.sampled_from(["vip", "late", "eu"]), max_size=3),
    "status": st.sampled_from(["open", "closed"]),
}
INVALID = {
    "order_id": st.sampled_from(["seven", [7], {"id": 7}, 1.5]),
    "visits": st.sampled_from(["many", None, [1], 2.5]),
    "tags": st.sampled_from(["vip", [1, 2], None, ["ok", 3]]),
    "status": st.sampled_from(["pending", 3, None]),
    "colour": st.sampled_from(["red", 1]),  # a key the schema does not have
}
DEFAULTS = Desk().model_dump()


@st.composite
def operation(draw):
    """(how, update, valid): a Result update, in-place writes, or in-place deletions."""
    how = draw(st.sampled_from(["result", "in_place", "delete"]))
    keys = draw(st.lists(st.sampled_from(list(VALID)), min_size=1, max_size=3, unique=True))
    if how == "delete":
        return how, dict.fromkeys(keys), True
    bad = draw(st.booleans()) and draw(st.sampled_from([*VALID, "colour"]))
    update = {key: draw(VALID[key]) for key in keys}
    if bad:
        update[bad] = draw(INVALID[bad])
    return how, update, not bad


def expected(ops):
    """The oracle: each valid operation applied, reducers on Result updates only."""
    context = dict(DEFAULTS)
    for how, update, valid in ops:
        if not valid:
            continue
        for key, value in update.items():
            if how == "delete":
                context[key] = DEFAULTS[key]
            elif how == "result" and key == "visits":
                context[key] += value
            elif how == "result" and key == "tags":
                context[key] = context[key] + value
            else:
                context[key] = value
    return context


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation(), min_size=100, max_size=100))
def test_generated_tool_updates_keep_the_context_valid(ops):
    stored = []

    def write(n: int, context_variables: dict):
        """Apply operation n."""
        # the context every tool call starts from is valid: known keys, valid values
        assert set(context_variables) <= set(Desk.model_fields)
        stored.append(Desk.model_validate(context_variables))
        how, update, _ = ops[n]
        if how == "result":
            return Result(value="ok", context_variables=update)
        if how == "in_place":
            context_variables.update(update)
        else:
            for key in update:
                del context_variables[key]
        return "ok"

    # three calls per model reply: the step's context is written once, after all three
    replies = [
        scripted_tool_calls([("write", {"n": n}, f"w{n}") for n in range(i, min(i + 3, 100))])
        for i in range(0, 100, 3)
    ]
    model = ScriptedChatModel([*replies, "Done."])
    response = Swarm(chat_model=model, context_schema=Desk).run(
        Agent(functions=[write]), [user("go")]
    )
    assert len(stored) == 100
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    for n, (_, update, valid) in enumerate(ops):
        if valid:
            assert answers[f"w{n}"] == "ok", (n, ops[n], answers[f"w{n}"])
        else:
            assert answers[f"w{n}"].startswith("Error: write wrote context_variables"), ops[n]
            assert any(f"'{key}" in answers[f"w{n}"] for key in update)  # names the key
    final = response.context_variables
    Desk.model_validate(final)
    assert final == expected(ops)  # the reducers' totals included


def test_the_core_asks_any_middleware_that_rules_the_context():
    """The core names no schema: a typed context is a middleware, and any middleware with the
    same swarm hooks is asked the same way (graph/core/tool_calls.py's ``ContextWrites``, through
    ``tool_context``; ``before_step`` at each step's start). Rules of one's own (every value an
    ``int``) are asked at the step's start and after each tool, and a tool's write they refuse
    is answered ``Error: ...`` and undone, as a ``context_schema=`` would have it."""
    from langchain.agents.middleware import AgentMiddleware

    asked: list[dict] = []

    class Ints:
        def update(self, context, update):
            context.update(update)

        def validate(self, data):
            asked.append(dict(data))
            bad = [f"{k!r} expects int" for k, v in data.items() if not isinstance(v, int)]
            if bad:
                raise ContextValidationError("Ints", bad)
            return dict(data)

    class IntsOnly(AgentMiddleware):
        async def before_step(self, start):
            Ints().validate(start.turn.context)
            return False

        def tool_context(self, control):
            return Ints()

    def count(n: int, context_variables: dict):
        return Result(value="counted", context_variables={"n": n})

    def spoil(context_variables: dict):
        context_variables["n"] = "many"
        return "spoilt"

    model = ScriptedChatModel(
        [scripted_tool_call("count", {"n": 2}), scripted_tool_call("spoil"), "Done."]
    )
    graph = build_swarm_graph(
        [Agent(functions=[count, spoil])], chat_model=model, middleware=[IntsOnly()]
    ).compile()
    out = graph.invoke({"messages": [("user", "go")], "context_variables": {"n": 1}})
    answers = [m.content for m in out["messages"] if m.type == "tool"]
    assert answers[0] == "counted"
    assert (
        answers[1] == "Error: spoil wrote context_variables that do not fit Ints: 'n' expects "
        "int. The context keeps its last valid values."
    )
    assert out["context_variables"] == {"n": 2}
    assert {"n": 1} in asked and {"n": "many"} in asked
    with pytest.raises(ContextValidationError):  # checked at the step's start
        graph.invoke({"messages": [("user", "go")], "context_variables": {"n": "one"}})


@pytest.mark.parametrize("how", ["swarm", "graph"])
def test_the_typed_context_is_the_outermost_middleware_the_users_run_inside(how):
    """``context_schema=`` installs a middleware, first of the graph's run middleware: the
    user's ``before_model`` and ``wrap_tool_call`` run inside it, so they read the context as
    it validated it (defaults filled in, ``"7"`` made ``7``), and a tool's write they wrap is
    checked by it (refused: ``Error: ...``, undone)."""
    from langchain.agents.middleware import before_model, wrap_tool_call
    from swarmgraph.graph.features.context_middleware import ContextSchemaMiddleware

    seen: list[dict] = []
    wrapped: list[str] = []

    @before_model
    def look(state, runtime):
        seen.append(dict(state["context_variables"]))

    @wrap_tool_call
    def watch(request, handler):
        wrapped.append(request.tool_call["name"])
        return handler(request)

    def spoil(context_variables: dict):
        context_variables["order_id"] = "seven"
        return "spoilt"

    model = ScriptedChatModel([scripted_tool_call("spoil"), "Done."])
    agent = Agent(name="Desk", functions=[spoil])
    if how == "swarm":
        swarm = Swarm(chat_model=model, context_schema=Desk, middleware=[look, watch])
        _, runtime = swarm.graph_for(agent)
        stack = runtime.stack_for(agent)
        assert stack is not None and [type(m) for m in stack.run[:1]] == [ContextSchemaMiddleware]
        assert stack.run[1:] == [look, watch]  # the user's, inside it
        response = swarm.run(agent, [user("go")], context_variables={"order_id": "7"})
        messages, context = response.messages, response.context_variables
        answers = [m["content"] for m in messages if m["role"] == "tool"]
    else:
        graph = build_swarm_graph(
            [agent], chat_model=model, context_schema=Desk, middleware=[look, watch]
        ).compile()
        out = graph.invoke({"messages": [("user", "go")], "context_variables": {"order_id": "7"}})
        context = out["context_variables"]
        answers = [m.content for m in out["messages"] if m.type == "tool"]
    valid = {"order_id": 7, "visits": 0, "tags": [], "status": "open"}
    assert seen[0] == valid  # the user's hook reads the context the middleware validated
    assert wrapped == ["spoil"]
    assert answers[0].startswith("Error: spoil wrote context_variables that do not fit Desk")
    assert context == valid  # the refused write is undone
    if how == "graph":  # no context given: the middleware fills the defaults in, at the start
        seen.clear()
        model.reset()
        out = graph.invoke({"messages": [("user", "go")]})
        defaults = {"order_id": None, "visits": 0, "tags": [], "status": "open"}
        assert seen[0] == defaults and out["context_variables"] == defaults
