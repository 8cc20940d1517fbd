"""LangGraph's ``interrupt()`` inside a swarm tool: on the compiled graph with a checkpointer
it pauses the graph, as in a ``ToolNode``, and ``Command(resume=...)`` goes on with the tool's
call; the model is not asked again, and no other call of the reply runs twice
(graph/core/node.py, ``AgentNode._paused``). ``Swarm.run`` keeps no state to resume from: the
call is answered with an error the model reads."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware, wrap_tool_call
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt
from swarmgraph.graph import scripted_tool_calls

from swarmgraph import (
    Agent,
    Parallel,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    effect,
    needs_approval,
)

RAN: Counter[str] = Counter()


def look_up(order_id: int) -> str:
    """Look an order up."""
    RAN["look_up"] += 1
    return f"order {order_id}: 40 EUR"


def refund(order_id: int, context_variables: dict) -> str:
    """Refund an order, once a human said yes."""
    RAN["refund"] += 1
    answer = interrupt({"question": f"refund order {order_id}?"})
    context_variables["refunded"] = answer
    return "refunded" if answer is True else f"not refunded: {answer}"


def notify(text: str) -> str:
    """Tell the customer."""
    RAN["notify"] += 1
    return f"told: {text}"


@pytest.fixture(autouse=True)
def _fresh_counts():
    RAN.clear()


def _graph(script: list[Any], *, middleware: list[Any] | None = None):
    model = ScriptedChatModel(script)
    sales = Agent(name="Sales", functions=[look_up, refund, notify], middleware=middleware or [])
    graph = build_swarm_graph([sales], chat_model=model)
    return graph.compile(checkpointer=InMemorySaver()), model


def _answers(state: dict[str, Any]) -> list[str]:
    return [m.content for m in state["messages"] if isinstance(m, ToolMessage)]


THREAD = {"configurable": {"thread_id": "t1"}}
LOOK_UP = ("look_up", {"order_id": 7}, "c1")
REFUND = ("refund", {"order_id": 7}, "c2")
NOTIFY = ("notify", {"text": "refund on its way"}, "c3")
REPLY = scripted_tool_calls([LOOK_UP, REFUND, NOTIFY])


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "wrap_tool_call"])
def test_interrupt_in_a_tool_pauses_the_graph_and_resume_goes_on(wrapped: bool):
    @wrap_tool_call
    def passing(request, handler):  # type: ignore[no-untyped-def]
        return handler(request)

    app, model = _graph([REPLY, "Refunded, and you are told."], middleware=[passing] * wrapped)
    paused = app.invoke({"messages": [("user", "refund order 7")]}, THREAD)
    [asked] = paused["__interrupt__"]
    assert asked.value == {"question": "refund order 7?"}
    assert app.get_state(THREAD).next == ("Sales",)  # the agent's node waits
    assert _answers(paused) == ["order 7: 40 EUR"]  # the call before it ran; the rest wait
    done = app.invoke(Command(resume=True), THREAD)
    assert _answers(done) == ["order 7: 40 EUR", "refunded", "told: refund on its way"]
    assert done["context_variables"] == {"refunded": True}
    assert done["messages"][-1].content == "Refunded, and you are told."
    assert len(model.calls) == 2  # the reply was kept: the model was not asked again
    # no call ran twice; the paused one's code before interrupt() runs again on resume, as in
    # a ToolNode, and once more here: the step that got the reply wrote it before pausing
    assert (RAN["look_up"], RAN["notify"]) == (1, 1)
    assert RAN["refund"] == 3


def test_the_human_can_say_no():
    app, _ = _graph([scripted_tool_calls([REFUND]), "I could not refund it."])
    app.invoke({"messages": [("user", "refund order 7")]}, THREAD)
    done = app.invoke(Command(resume="no receipt"), THREAD)
    assert _answers(done) == ["not refunded: no receipt"]
    assert done["context_variables"] == {"refunded": "no receipt"}


async def test_two_calls_that_interrupt_pause_one_after_the_other_on_ainvoke():
    app, model = _graph(
        [scripted_tool_calls([REFUND, ("refund", {"order_id": 8}, "c4"), LOOK_UP]), "Done."]
    )
    first = await app.ainvoke({"messages": [("user", "refund 7 and 8")]}, THREAD)
    assert first["__interrupt__"][0].value == {"question": "refund order 7?"}
    second = await app.ainvoke(Command(resume=True), THREAD)
    assert second["__interrupt__"][0].value == {"question": "refund order 8?"}
    assert _answers(second) == ["refunded"]
    done = await app.ainvoke(Command(resume=False), THREAD)
    assert _answers(done) == ["refunded", "not refunded: False", "order 7: 40 EUR"]
    assert RAN["look_up"] == 1 and len(model.calls) == 2


def test_a_handoff_before_the_paused_call_is_not_taken_and_its_answer_says_so():
    billing = Agent(name="Billing")

    def to_billing() -> Agent:
        """Hand the customer to billing."""
        return billing

    sales = Agent(name="Sales", functions=[to_billing, refund])
    model = ScriptedChatModel(
        [scripted_tool_calls([("to_billing", {}, "h1"), REFUND]), "Refunded, still Sales."]
    )
    app = build_swarm_graph([sales, billing], chat_model=model).compile(
        checkpointer=InMemorySaver()
    )
    app.invoke({"messages": [("user", "refund")]}, THREAD)
    done = app.invoke(Command(resume=True), THREAD)
    first, second = _answers(done)
    assert first.startswith("Not transferred to Billing: a later call of this reply waits")
    assert second == "refunded"
    assert done.get("active_agent") in (None, "Sales") and done["messages"][-1].name == "Sales"


def test_swarm_run_cannot_resume_so_the_call_is_an_error_the_model_reads():
    model = ScriptedChatModel([REPLY, "I cannot refund without a human."])
    sales = Agent(name="Sales", functions=[look_up, refund, notify])
    response = Swarm(chat_model=model).run(sales, [{"role": "user", "content": "refund 7"}])
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers[0] == "order 7: 40 EUR" and answers[2] == "told: refund on its way"
    assert answers[1].startswith("Error: refund asked for a human's decision (LangGraph's")
    assert "keeps no state to resume from" in answers[1]
    assert response.messages[-1]["content"] == "I cannot refund without a human."


def ask(question: str) -> str:
    """Ask the human something."""
    RAN["ask"] += 1
    return f"human says {interrupt(question)}"


def test_a_tool_interrupt_and_human_in_the_loop_middleware_in_one_reply():
    hitl = HumanInTheLoopMiddleware(interrupt_on={"look_up": True})
    model = ScriptedChatModel(
        [scripted_tool_calls([LOOK_UP, ("ask", {"question": "ok?"}, "c5")]), "Done."]
    )
    agent = Agent(name="Sales", functions=[look_up, ask], middleware=[hitl])
    app = build_swarm_graph([agent], chat_model=model).compile(checkpointer=InMemorySaver())
    first = app.invoke({"messages": [("user", "go")]}, THREAD)
    [review] = first["__interrupt__"]
    assert review.value["action_requests"][0]["name"] == "look_up"  # the middleware asks first
    second = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), THREAD)
    assert second["__interrupt__"][0].value == "ok?"  # then the tool, once look_up ran
    done = app.invoke(Command(resume="yes"), THREAD)
    assert _answers(done) == ["order 7: 40 EUR", "human says yes"]
    assert RAN["look_up"] == 1 and len(model.calls) == 2


def test_a_tool_interrupt_and_an_approval_marked_tool_in_one_reply():
    @needs_approval
    def pay(amount: int) -> str:
        """Pay out."""
        RAN["pay"] += 1
        return f"paid {amount}"

    model = ScriptedChatModel(
        [
            scripted_tool_calls([("ask", {"question": "ok?"}, "c5"), ("pay", {"amount": 9}, "c6")]),
            "Done.",
        ]
    )
    agent = Agent(name="Sales", functions=[ask, pay])
    app = build_swarm_graph([agent], chat_model=model).compile(checkpointer=InMemorySaver())
    first = app.invoke({"messages": [("user", "go")]}, THREAD)
    [approval] = first["__interrupt__"][0].value  # the held call waits for its decision first
    assert approval["tool"] == "pay"
    second = app.invoke(Command(resume=True), THREAD)
    assert second["__interrupt__"][0].value == "ok?"
    done = app.invoke(Command(resume="yes"), THREAD)
    assert _answers(done) == ["human says yes", "paid 9"]
    assert RAN["pay"] == 1 and len(model.calls) == 2


def test_a_tool_interrupt_inside_a_parallel_branch_pauses_and_the_branch_goes_on():
    billing = Agent(name="Billing", model="billing", functions=[ask])
    tech = Agent(name="Tech", model="tech")

    def split() -> Parallel:
        """Split the work."""
        return Parallel({billing: "check invoice 7", tech: "check the router"})

    models = {  # one model per agent: branches run side by side
        "triage": ScriptedChatModel([scripted_tool_calls([("split", {}, "s1")]), "All done."]),
        "billing": ScriptedChatModel(
            [scripted_tool_calls([("ask", {"question": "invoice ok?"}, "q1")]), "Billing: ok."]
        ),
        "tech": ScriptedChatModel(["Tech: fine."]),
    }
    triage = Agent(name="Triage", model="triage", functions=[split])
    graph = build_swarm_graph([triage, billing, tech], chat_model=models.__getitem__)
    app = graph.compile(checkpointer=InMemorySaver())
    paused = app.invoke({"messages": [("user", "check both")]}, THREAD)
    assert paused["__interrupt__"][0].value == "invoice ok?"
    done = app.invoke(Command(resume="yes"), THREAD)
    assert _answers(done) == ['{"Billing": "Billing: ok.", "Tech": "Tech: fine."}']
    assert done["messages"][-1].content == "All done."
    assert [len(models[k].calls) for k in ("triage", "billing", "tech")] == [2, 2, 1]
    assert models["billing"].calls[-1][-1].content == "human says yes"  # what the branch read


EFFECTS: Counter[str] = Counter()


@effect
def pay(order_id: int) -> str:
    """Pay an order, once a human said yes (the payment comes after the question)."""
    if interrupt(f"pay order {order_id}?") is not True:
        return "not paid"
    EFFECTS[f"paid {order_id}"] += 1
    return f"paid {order_id}"


@effect
def pay_twice_asked(order_id: int) -> str:
    """Pay an order, then ask whether to tell the customer (the payment is between two
    questions: a pause at the second may come after it)."""
    if interrupt(f"pay order {order_id}?") is not True:
        return "not paid"
    EFFECTS[f"paid {order_id}"] += 1
    told = interrupt("tell the customer?")
    return f"paid {order_id}, told: {told}"


def _effect_graph(tool: Any, script: list[Any]):
    EFFECTS.clear()
    cashier = Agent(name="Cashier", functions=[tool])
    graph = build_swarm_graph([cashier], chat_model=ScriptedChatModel(script))
    return graph.compile(checkpointer=InMemorySaver(), store=InMemoryStore())


@pytest.mark.parametrize("way", ["plain", "wrap_tool_call", "ainvoke"])
def test_an_effect_tool_that_asks_before_its_effect_pauses_with_its_own_question(way: str):
    # The call stopped at interrupt() before anything happened: it is recorded paused, not
    # started, so resuming runs it from its start with the human's answer, not as a call in
    # doubt with a question of ours first.
    @wrap_tool_call
    def passing(request, handler):  # type: ignore[no-untyped-def]
        return handler(request)

    EFFECTS.clear()
    wrapped = way == "wrap_tool_call"
    cashier = Agent(name="Cashier", functions=[pay], middleware=[passing] * wrapped)
    script = [scripted_tool_calls([("pay", {"order_id": 7}, "p1")]), "Paid."]
    graph = build_swarm_graph([cashier], chat_model=ScriptedChatModel(script))
    app = graph.compile(checkpointer=InMemorySaver(), store=InMemoryStore())
    invoke = app.invoke if way != "ainvoke" else lambda *a: asyncio.run(app.ainvoke(*a))
    paused = invoke({"messages": [("user", "pay order 7")]}, THREAD)
    assert [i.value for i in paused["__interrupt__"]] == ["pay order 7?"]
    done = invoke(Command(resume=True), THREAD)
    assert "__interrupt__" not in done
    assert _answers(done) == ["paid 7"] and done["messages"][-1].content == "Paid."
    assert EFFECTS == {"paid 7": 1}
    # the ledger holds it done: the thread run again answers from there, never pays twice
    again = app.invoke(None, THREAD)
    assert _answers(again) == ["paid 7"] and EFFECTS == {"paid 7": 1}


def test_an_effect_tool_paused_after_an_answered_question_is_in_doubt_not_run_again():
    # The second question comes after the payment: resuming from its start would pay twice,
    # so that pause leaves the call in doubt, and a human decides it (as after a crash).
    app = _effect_graph(
        pay_twice_asked,
        [scripted_tool_calls([("pay_twice_asked", {"order_id": 7}, "p1")]), "Done."],
    )
    first = app.invoke({"messages": [("user", "pay order 7")]}, THREAD)
    assert [i.value for i in first["__interrupt__"]] == ["pay order 7?"]
    second = app.invoke(Command(resume=True), THREAD)
    assert [i.value for i in second["__interrupt__"]] == ["tell the customer?"]
    assert EFFECTS == {"paid 7": 1}
    third = app.invoke(Command(resume="yes"), THREAD)
    [asked] = third["__interrupt__"]
    assert asked.value[0]["in_doubt"] is True and asked.value[0]["tool"] == "pay_twice_asked"
    assert EFFECTS == {"paid 7": 1}  # not run again on a guess
    done = app.invoke(Command(resume="It was paid; the customer was told."), THREAD)
    assert _answers(done) == ["It was paid; the customer was told."]
    assert EFFECTS == {"paid 7": 1}
