"""Control of a running swarm (issue 14): approvals, budgets, handoff back, routes, history views.

Offline with ScriptedChatModel; one approval path over the loopback OpenAI stub.
"""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from openai_stub import OpenAIStub, StubReply, stub_text
from pydantic import ValidationError
from swarmgraph.graph.chat_models.scripted import scripted_tool_call, scripted_tool_calls

from swarmgraph import (
    CALLER,
    Agent,
    Budget,
    BudgetExceeded,
    Result,
    Route,
    ScriptedChatModel,
    Swarm,
    SwarmError,
    build_swarm_graph,
    needs_approval,
)
from swarmgraph.history import last, since_handoff, without_tool_calls


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def every_call_answered(messages: list[dict]) -> bool:
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in (m["tool_calls"] or [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(asked) == sorted(answered)


# -- approvals -----------------------------------------------------------------------------------
def refund_swarm(log: list):
    @needs_approval
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        return f"Refunded order {order_id}."

    def lookup_order(order_id: int) -> str:
        """Look an order up."""
        return f"Order {order_id}: 2 bees."

    refunds = Agent(name="Refunds", functions=[process_refund, lookup_order])
    triage = Agent(name="Triage", handoffs=[refunds])
    return triage, refunds


def test_approval_stops_before_the_marked_tool_and_resumes_statelessly():
    log: list = []
    triage, refunds = refund_swarm(log)
    model = ScriptedChatModel(
        [
            scripted_tool_call("transfer_to_refunds", id="t1"),
            scripted_tool_calls(
                [("lookup_order", {"order_id": 7}, "c1"), ("process_refund", {"order_id": 7}, "c2")]
            ),
            "Your refund is done.",
        ]
    )
    swarm = Swarm(chat_model=model)
    history = [user("refund order 7")]
    first = swarm.run(triage, history, context_variables={"name": "Ming"})

    assert log == []  # the marked tool did not run
    assert first.agent is refunds
    assert [(p.id, p.agent, p.tool, p.arguments) for p in first.pending] == [
        ("c2", "Refunds", "process_refund", {"order_id": 7})
    ]
    assert first.messages[-2]["tool_calls"][1]["id"] == "c2"  # the call is in the messages
    assert first.messages[-1]["content"] == "Order 7: 2 bees."  # the unmarked call ran
    assert not any(m.get("tool_call_id") == "c2" for m in first.messages)
    assert first.pending[0].describe() == "process_refund(order_id=7)"

    # No decision for a pending id: it stops again, with the same pending and nothing new.
    again = swarm.run(first.agent, history + first.messages, first.context_variables)
    assert again.pending == first.pending and again.messages == [] and log == []

    done = swarm.run(
        first.agent,
        history + first.messages,
        first.context_variables,
        approvals={"c2": True},
    )
    assert log == [7] and done.pending == []
    assert [m["content"] for m in done.messages] == ["Refunded order 7.", "Your refund is done."]
    assert every_call_answered(first.messages + done.messages)
    assert done.context_variables == {"name": "Ming"}


def test_a_reply_that_hands_off_and_calls_a_marked_tool_waits_for_its_own_agent():
    log: list = []
    triage, refunds = refund_swarm(log)

    @needs_approval
    def void_order(order_id: int) -> str:
        """Void an order."""
        log.append(("void", order_id))
        return "voided"

    triage.functions = [void_order]
    model = ScriptedChatModel(
        [
            scripted_tool_calls(
                [("void_order", {"order_id": 1}, "v1"), ("transfer_to_refunds", {}, "t1")]
            ),
            "Refunds here.",
        ]
    )
    swarm = Swarm(chat_model=model)
    first = swarm.run(triage, [user("void 1")])
    assert first.agent is refunds and [(p.agent, p.tool) for p in first.pending] == [
        ("Triage", "void_order")
    ]
    done = swarm.run(first.agent, [user("void 1"), *first.messages], approvals={"v1": True})
    assert log == [("void", 1)] and done.agent is refunds
    assert done.messages[-1] == {
        **done.messages[-1],
        "sender": "Refunds",
        "content": "Refunds here.",
    }

    # execute_tools=False: the caller runs the tools, so nothing is pending.
    model = ScriptedChatModel([scripted_tool_call("process_refund", {"order_id": 2})])
    held = Swarm(chat_model=model).run(refunds, [user("x")], execute_tools=False)
    assert held.pending == [] and log == [("void", 1)]


@pytest.mark.parametrize(
    ("decision", "text"),
    [(False, "Error: denied by the user."), ("no receipt", "Error: denied: no receipt")],
)
def test_a_denied_call_is_answered_with_an_error_and_the_model_goes_on(decision, text):
    log: list = []
    _, refunds = refund_swarm(log)
    model = ScriptedChatModel(
        [scripted_tool_call("process_refund", {"order_id": 7}, id="c9"), "I could not refund it."]
    )
    swarm = Swarm(chat_model=model)
    first = swarm.run(refunds, [user("refund 7")])
    done = swarm.run(refunds, [user("refund 7"), *first.messages], approvals={"c9": decision})
    assert log == []
    assert done.messages[0] == {
        "role": "tool",
        "tool_call_id": "c9",
        "tool_name": "process_refund",
        "content": text,
    }
    assert model.calls[-1][-1].content == text  # the model read the denial
    assert done.messages[-1]["content"] == "I could not refund it."


def test_bad_approvals_are_clear_errors():
    _, refunds = refund_swarm([])
    swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("process_refund", id="c1")]))
    first = swarm.run(refunds, [user("refund")])
    history = [user("refund"), *first.messages]
    with pytest.raises(ValueError, match="no tool call waits for approval with id 'c2'"):
        swarm.run(refunds, history, approvals={"c2": True})
    with pytest.raises(TypeError, match=r"approvals\['c1'\]: a decision is True"):
        swarm.run(refunds, history, approvals={"c1": 1})


def test_approvals_on_arun_and_stream():
    log: list = []
    _, refunds = refund_swarm(log)

    def script():
        return ScriptedChatModel(
            [scripted_tool_call("process_refund", {"order_id": 3}, id="c1"), "Done."]
        )

    swarm = Swarm(chat_model=script())
    first = asyncio.run(swarm.arun(refunds, [user("refund 3")]))
    assert [p.id for p in first.pending] == ["c1"] and log == []
    done = asyncio.run(
        swarm.arun(refunds, [user("refund 3"), *first.messages], approvals={"c1": True})
    )
    assert log == [3] and done.messages[-1]["content"] == "Done."

    swarm = Swarm(chat_model=script())
    events = list(swarm.run(refunds, [user("refund 3")], stream=True))
    streamed = events[-1]["response"]
    assert [p.id for p in streamed.pending] == ["c1"]
    events = list(
        swarm.run(refunds, [user("refund 3"), *streamed.messages], stream=True,
                  approvals={"c1": "not today"})
    )  # fmt: skip
    assert events[-1]["response"].messages[0]["content"] == "Error: denied: not today"


def test_approval_through_the_compiled_graph_with_sqlite_saver_across_a_restart(tmp_path):
    log: list = []
    db = str(tmp_path / "checkpoints.sqlite")
    config = {"configurable": {"thread_id": "order-7"}}

    def app_in_a_fresh_process(model):
        triage, _ = refund_swarm(log)
        builder = build_swarm_graph([triage], chat_model=model)
        return builder

    script = [
        scripted_tool_call("transfer_to_refunds", id="t1"),
        scripted_tool_call("process_refund", {"order_id": 7}, id="c1"),
        "Refunded.",
    ]
    model = ScriptedChatModel(script)
    with SqliteSaver.from_conn_string(db) as saver:
        app = app_in_a_fresh_process(model).compile(checkpointer=saver)
        out = app.invoke({"messages": [("user", "refund 7")]}, config)
        [waiting] = out["__interrupt__"]
        assert waiting.value == [
            {"id": "c1", "agent": "Refunds", "tool": "process_refund", "arguments": {"order_id": 7}}
        ]
        assert log == []

    # A new saver on the same file and a new graph: the interrupted thread resumes.
    model2 = ScriptedChatModel(script[2:])
    with SqliteSaver.from_conn_string(db) as saver:
        app = app_in_a_fresh_process(model2).compile(checkpointer=saver)
        out = app.invoke(Command(resume={"c1": True}), config)
    assert log == [7]
    assert [m.content for m in out["messages"][-2:]] == ["Refunded order 7.", "Refunded."]
    assert out["active_agent"] == "Refunds"
    assert len(model.calls) == 2 and len(model2.calls) == 1  # no model call was repeated


def test_compiled_graph_resume_with_one_decision_for_all_and_a_partial_dict():
    from langgraph.checkpoint.memory import InMemorySaver

    log: list = []
    _, refunds = refund_swarm(log)
    model = ScriptedChatModel(
        [
            scripted_tool_calls(
                [("process_refund", {"order_id": 1}, "a"), ("process_refund", {"order_id": 2}, "b")]
            ),
            "ok",
        ]
    )
    app = build_swarm_graph([refunds], chat_model=model).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [("user", "refund both")]}, config)
    assert [p["id"] for p in out["__interrupt__"][0].value] == ["a", "b"]
    out = app.invoke(Command(resume={"a": True}), config)  # b undecided: asked again
    assert [p["id"] for p in out["__interrupt__"][0].value] == ["b"] and log == []
    out = app.invoke(Command(resume="duplicate"), config)
    assert log == [1]
    answers = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert answers == {"a": "Refunded order 1.", "b": "Error: denied: duplicate"}


def test_approval_over_the_loopback_openai_stub():
    log: list = []
    _, refunds = refund_swarm(log)
    replies = [
        StubReply(tool_calls=[("call_1", "process_refund", '{"order_id": 7}')]),
        stub_text("Refund done."),
    ]
    with OpenAIStub(replies) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        swarm = Swarm(client=client)
        first = swarm.run(refunds, [user("refund 7")])
        assert [p.id for p in first.pending] == ["call_1"] and log == []
        done = swarm.run(refunds, [user("refund 7"), *first.messages], approvals={"call_1": True})
        sent = stub.requests[-1]["messages"]
    assert log == [7] and done.messages[-1]["content"] == "Refund done."
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert (sent[-1]["tool_call_id"], sent[-1]["content"]) == ("call_1", "Refunded order 7.")


# -- budgets -----------------------------------------------------------------------------------
def ping_pong():
    a = Agent(name="A")
    b = Agent(name="B", handoffs=[a])
    a.handoffs.append(b)
    return a, b


def test_a_budget_stops_a_handoff_ping_pong_with_every_tool_call_answered():
    a, b = ping_pong()
    model = ScriptedChatModel(
        [],
        respond=lambda msgs: scripted_tool_call(
            "transfer_to_b" if "A" in msgs[0].content else "transfer_to_a"
        ),
    )
    a.instructions, b.instructions = "You are A.", "You are B."
    with pytest.raises(BudgetExceeded) as caught:
        Swarm(chat_model=model).run(a, [user("go")], budget=Budget(max_handoffs=3))
    err = caught.value
    assert isinstance(err, SwarmError) and err.limit == "max_handoffs" and err.value == 3
    assert err.agent == "B"
    response = err.response
    assert response.usage["handoffs"] == 3
    assert every_call_answered(response.messages)
    assert response.messages[-1]["content"].startswith("Error: Budget exceeded: max_handoffs=3")
    assert [s["kind"] for s in response.trajectory].count("handoff") == 3
    assert response.agent is b  # the fourth handoff did not happen


def test_model_call_tool_call_and_per_agent_limits_are_never_passed():
    a, _ = ping_pong()
    model = ScriptedChatModel(["hi"] * 5)
    with pytest.raises(BudgetExceeded, match="max_model_calls=0") as caught:
        Swarm(chat_model=model).run(a, [user("x")], budget=Budget(max_model_calls=0))
    assert model.calls == [] and caught.value.response.messages == []

    def note(n: int) -> str:
        """Note a number."""
        return f"noted {n}"

    worker = Agent(name="Worker", functions=[note])
    model = ScriptedChatModel(
        [scripted_tool_calls([("note", {"n": i}, f"n{i}") for i in range(3)]), "done"]
    )
    with pytest.raises(BudgetExceeded) as caught:
        Swarm(chat_model=model).run(
            worker, [user("x")], budget=Budget(per_agent={"Worker": Budget(max_tool_calls=2)})
        )
    assert caught.value.limit == "per_agent['Worker'].max_tool_calls"
    response = caught.value.response
    assert [m["content"] for m in response.messages if m["role"] == "tool"] == [
        "Error: Budget exceeded: per_agent['Worker'].max_tool_calls=2 would be passed by agent "
        "'Worker'. The run stopped; .response holds what it produced so far.",
        "noted 0",
        "noted 1",
    ]
    assert every_call_answered(response.messages) and response.usage["tool_calls"] == 2

    model = ScriptedChatModel(["a long answer " * 20, "again"])
    swarm = Swarm(chat_model=model)
    with pytest.raises(BudgetExceeded, match="max_tokens"):
        swarm.run(worker, [user("x")] * 30, budget=Budget(max_tokens=50))
    assert model.calls == []


def test_usage_by_agent_sums_to_the_totals_and_the_trajectory_lists_every_step():
    log: list = []
    triage, _ = refund_swarm(log)
    model = ScriptedChatModel(
        [
            scripted_tool_call("transfer_to_refunds", id="t1"),
            scripted_tool_call("lookup_order", {"order_id": 7}, id="c1"),
            "It has 2 bees.",
        ]
    )
    response = Swarm(chat_model=model).run(triage, [user("order 7?")], budget=Budget())
    usage = response.usage
    assert set(usage["by_agent"]) == {"Triage", "Refunds"}
    for key in ("model_calls", "input_tokens", "output_tokens", "tool_calls", "handoffs"):
        assert sum(mine[key] for mine in usage["by_agent"].values()) == usage[key], key
    assert usage["model_calls"] == 3 and usage["by_agent"]["Refunds"]["model_calls"] == 2
    assert [(s["agent"], s["kind"], s["name"]) for s in response.trajectory] == [
        ("Triage", "model", "gpt-4o"),
        ("Triage", "tool", "transfer_to_refunds"),
        ("Triage", "handoff", "Refunds"),
        ("Refunds", "model", "gpt-4o"),
        ("Refunds", "tool", "lookup_order"),
        ("Refunds", "model", "gpt-4o"),
    ]
    assert response.trajectory[4]["arguments"] == {"order_id": 7}


def test_bad_budgets_are_clear_errors():
    with pytest.raises(ValueError, match="max_tokens"):
        Budget(max_tokens=1.5)
    with pytest.raises(TypeError, match=r"per_agent\['A'\] must be a Budget"):
        Budget(per_agent={"A": 3})
    with pytest.raises(TypeError, match="budget must be a Budget"):
        Swarm(chat_model=ScriptedChatModel(["x"])).run(Agent(), [user("x")], budget={"x": 1})


# -- handoff back -------------------------------------------------------------------------------
def test_caller_unwinds_two_levels():
    c = Agent(name="C", can_return=True)
    b = Agent(name="B", handoffs=[c], can_return=True)
    a = Agent(name="A", handoffs=[b])
    model = ScriptedChatModel(
        [
            scripted_tool_call("transfer_to_b"),
            scripted_tool_call("transfer_to_c"),
            scripted_tool_call("transfer_back"),  # C -> B
            scripted_tool_call("transfer_back"),  # B -> A
            "Back with A.",
            scripted_tool_call("transfer_back"),
            "A again.",
        ]
    )
    swarm = Swarm(chat_model=model)
    response = swarm.run(a, [user("go deep")])
    assert response.agent is a
    senders = [m["sender"] for m in response.messages if m["role"] == "assistant"]
    assert senders == ["A", "B", "C", "B", "A"]
    tools = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert tools == [
        '{"assistant": "B"}',
        '{"assistant": "C"}',
        '{"assistant": "B"}',
        '{"assistant": "A"}',
    ]
    # Stateless, as Swarm: a later run that starts at B finds its caller from the
    # conversation alone (A is not reachable from B; the Swarm knows it from the first run).
    history = [user("go"), *response.messages[:4], user("and back?")]  # A handed to B
    again = swarm.run(b, history)
    assert again.agent is a and again.messages[-1]["sender"] == "A"


def test_caller_with_nobody_to_return_to_is_an_error_for_the_model():
    def give_back():
        """Give the conversation back."""
        return Result(value="going back", agent=CALLER)

    lonely = Agent(name="Lonely", functions=[give_back])
    model = ScriptedChatModel([scripted_tool_call("give_back"), "Staying."])
    response = Swarm(chat_model=model).run(lonely, [user("hi")])
    assert response.agent is lonely
    assert response.messages[1]["content"].startswith("Error: nobody handed the conversation")


def test_transfer_back_is_drawn_to_the_callers():
    refunds = Agent(name="Refunds", can_return=True)
    triage = Agent(name="Triage", handoffs=[refunds])
    graph = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile().get_graph()
    edges = {(e.source, e.target) for e in graph.edges}
    assert ("Refunds", "Triage") in edges and "CALLER" not in graph.nodes
    assert "transfer_back" in [f.__name__ for f in refunds.tools]


# -- routes ----------------------------------------------------------------------------------------
def test_a_route_switches_agents_without_a_model_call_and_is_a_labelled_edge():
    triage = Agent(name="Triage", instructions="You are triage.")

    def approve_refund(context_variables: dict) -> Result:
        """Approve the refund."""
        return Result(value="approved", context_variables={"refund_status": "approved"})

    refunds = Agent(
        name="Refunds",
        instructions="You are refunds.",
        functions=[approve_refund],
        routes=[
            Route(
                when=lambda ctx: ctx.get("refund_status") == "approved", to=triage, name="refunded"
            )
        ],
    )
    model = ScriptedChatModel([scripted_tool_call("approve_refund"), "Anything else?"])
    response = Swarm(chat_model=model).run(refunds, [user("refund please")])
    assert response.agent is triage
    # Two model calls: Refunds (tool call), then Triage; Refunds' model was not asked again.
    assert [call[0].content for call in model.calls] == ["You are refunds.", "You are triage."]
    assert [(s["agent"], s["kind"], s["name"]) for s in response.trajectory][-2:] == [
        ("Refunds", "route", "refunded"),
        ("Triage", "model", "gpt-4o"),
    ]
    assert response.trajectory[-2]["to"] == "Triage"

    graph = build_swarm_graph([refunds], chat_model=model).compile().get_graph()
    labelled = {(e.source, e.target): e.data for e in graph.edges}
    assert labelled[("Refunds", "Triage")] == "refunded"
    assert "refunded" in graph.draw_mermaid()


def test_a_route_that_does_not_hold_lets_the_model_speak_again():
    triage = Agent(name="Triage")

    def check() -> str:
        """Check."""
        return "checked"

    refunds = Agent(
        name="Refunds",
        functions=[check],
        routes=[Route(when=lambda ctx: ctx.get("done"), to=triage)],
    )
    model = ScriptedChatModel([scripted_tool_call("check"), "Still with refunds."])
    response = Swarm(chat_model=model).run(refunds, [user("x")], context_variables={})
    assert response.agent is refunds and len(model.calls) == 2
    with pytest.raises(TypeError, match=r"Route\.to must be an Agent"):
        Route(when=lambda ctx: True, to="Triage")


# -- what the receiving agent sees ----------------------------------------------------------------
def test_a_since_handoff_agent_sees_only_what_happened_since_the_handoff():
    refunds = Agent(name="Refunds", instructions="Refunds.", history=since_handoff)
    triage = Agent(name="Triage", instructions="Triage.", handoffs=[refunds])
    model = ScriptedChatModel(
        [
            "Hello! How can I help?",
            scripted_tool_call("transfer_to_refunds", id="t1"),
            "Which order?",
        ]
    )
    swarm = Swarm(chat_model=model)
    first = swarm.run(triage, [user("hi")])
    history = [user("hi"), *first.messages, user("I want a refund")]
    response = swarm.run(triage, history)
    assert response.agent is refunds
    seen = model.calls[-1]
    assert [type(m) for m in seen] == [SystemMessage, HumanMessage]
    assert [m.content for m in seen] == ["Refunds.", "I want a refund"]
    # The state and the returned messages stay whole.
    assert len(response.messages) == 3


def test_without_tool_calls_and_last_views():
    sales = Agent(name="Sales", instructions="Sales.", history=without_tool_calls)
    triage = Agent(name="Triage", instructions="Triage.", handoffs=[sales])
    model = ScriptedChatModel(
        [scripted_tool_call("transfer_to_sales", content="Passing you on."), "Bees are $5."]
    )
    Swarm(chat_model=model).run(triage, [user("bees?")])
    seen = model.calls[-1]
    assert [(type(m).__name__, m.content) for m in seen] == [
        ("SystemMessage", "Sales."),
        ("HumanMessage", "bees?"),
        ("AIMessage", "Passing you on."),
    ]
    assert seen[2].tool_calls == []

    chat = [
        HumanMessage("a"),
        AIMessage("", name="X", tool_calls=[{"name": "f", "args": {}, "id": "1"}]),
        ToolMessage("r", tool_call_id="1"),
        AIMessage("b", name="X"),
    ]
    assert last(2)(chat) == [chat[3]]  # the orphaned tool answer is dropped
    assert last(3)(chat) == chat[1:]
    with pytest.raises(ValueError, match="non-negative"):
        last(-1)

    bad = Agent(name="Bad", history=lambda msgs: "nope")
    with pytest.raises(TypeError, match="history= must return a list"):
        Swarm(chat_model=ScriptedChatModel(["x"])).run(bad, [user("x")])


def test_route_and_budget_results_are_plain_json():
    # The trajectory is for evals: it must serialise as it is.
    a, _ = ping_pong()
    model = ScriptedChatModel([scripted_tool_call("transfer_to_b"), "hi"])
    response = Swarm(chat_model=model).run(a, [user("x")])
    json.dumps(response.trajectory)
    json.dumps(response.usage)


def test_budgets_stop_arun_and_stream_too():
    a, _ = ping_pong()
    a.instructions = "You are A."

    def bouncer():
        return ScriptedChatModel(
            [],
            respond=lambda msgs: scripted_tool_call(
                "transfer_to_b" if "A" in msgs[0].content else "transfer_to_a"
            ),
        )

    budget = Budget(max_model_calls=2)
    with pytest.raises(BudgetExceeded) as caught:
        asyncio.run(Swarm(chat_model=bouncer()).arun(a, [user("go")], budget=budget))
    assert caught.value.response.usage["model_calls"] == 2
    assert every_call_answered(caught.value.response.messages)
    events = []
    with pytest.raises(BudgetExceeded, match="max_model_calls=2") as caught:
        for event in Swarm(chat_model=bouncer()).run(a, [user("go")], budget=budget, stream=True):
            events.append(event)
    assert {"delim": "start"} in events and caught.value.response.usage["model_calls"] == 2


def test_a_route_that_is_not_a_route_is_a_clear_error_at_once_or_before_the_run():
    with pytest.raises(ValidationError, match="routes takes Route objects, not 'oops'"):
        Agent(name="A", routes=["oops"])
    appended = Agent(name="A")
    appended.routes.append("oops")  # past the validator: the first walk of the roster says so
    with pytest.raises(TypeError, match="agent 'A': routes must be Route objects"):
        Swarm(chat_model=ScriptedChatModel(["hi"])).run(appended, [user("x")])
