"""OpenTelemetry tracing (graph/features/tracing.py), a middleware the API installs per run
when a tracer provider is configured: the span
trees of a handoff, a fan-out, an approval, a budget stop and a Session turn, read back from
the SDK's in-memory exporter; no content unless asked; nothing without a provider, nor without
``opentelemetry-api``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from swarmgraph.graph.features import tracing

from swarmgraph import (
    Agent,
    Budget,
    BudgetExceeded,
    GuardrailTripped,
    Parallel,
    Route,
    ScriptedChatModel,
    Session,
    Swarm,
    needs_approval,
    scripted_tool_call,
)

ROOT = Path(__file__).resolve().parent.parent
SECRET = "Ming's card ends 4242"  # text that must not reach a span unless content is captured


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Every run traced into an in-memory exporter (a provider passed in, not the global)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_tracer_provider(provider, capture_content=False)
    yield exporter
    tracing.use_tracer_provider(None)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    [span] = by_name(exporter)[name]
    return span


def parent_name(exporter: InMemorySpanExporter, span: ReadableSpan) -> str | None:
    if span.parent is None:
        return None
    ids = {s.context.span_id: s.name for s in exporter.get_finished_spans()}
    return ids[span.parent.span_id]


def tree(exporter: InMemorySpanExporter) -> list[tuple[str, str | None]]:
    """``(span, its parent)`` in start order."""
    ordered = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    return [(s.name, parent_name(exporter, s)) for s in ordered]


def events(span: ReadableSpan) -> dict[str, dict]:
    return {event.name: dict(event.attributes or {}) for event in span.events}


def stamped(span: ReadableSpan, name: str) -> int:
    """When event ``name`` of ``span`` was added (ns)."""
    [event] = [e for e in span.events if e.name == name]
    return event.timestamp


def within(span: ReadableSpan, time: int) -> bool:
    assert span.start_time is not None and span.end_time is not None
    return span.start_time <= time <= span.end_time


def all_text(exporter: InMemorySpanExporter) -> str:
    """Every attribute and event attribute value of every span, as one text."""
    parts = []
    for span in exporter.get_finished_spans():
        parts += [str(v) for v in (span.attributes or {}).values()]
        for event in span.events:
            parts += [str(v) for v in (event.attributes or {}).values()]
    return "\n".join(parts)


def handoff_swarm() -> tuple[Swarm, Agent]:
    triage, models = handoff_agents()
    return Swarm(chat_model=models.__getitem__), triage


def handoff_agents() -> tuple[Agent, dict[str, ScriptedChatModel]]:
    """Triage looks an order up and hands off to Sales; the scripted models by name."""
    sales = Agent(name="Sales", model="sales-model", instructions="Sell bees.")

    def transfer_to_sales(note: str = ""):
        """Hand the customer to sales."""
        return sales

    def lookup(order_id: int) -> str:
        """Look an order up."""
        return f"Order {order_id}: {SECRET}"

    triage = Agent(name="Triage", functions=[transfer_to_sales, lookup])
    models = {
        "gpt-4o": ScriptedChatModel(
            [
                scripted_tool_call("lookup", {"order_id": 7}, id="c1"),
                scripted_tool_call("transfer_to_sales", {"note": SECRET}, id="c2"),
            ]
        ),
        "sales-model": ScriptedChatModel([f"Bees are $5, {SECRET}."]),
    }
    return triage, models


# -- a handoff ---------------------------------------------------------------------------------
def test_a_handoff_is_one_trace_of_agent_model_and_tool_spans(spans):
    swarm, triage = handoff_swarm()
    response = swarm.run(triage, [user(f"where is order 7? {SECRET}")])
    assert response.agent.name == "Sales"

    assert tree(spans) == [
        ("invoke_workflow Triage", None),
        ("invoke_agent Triage", "invoke_workflow Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
        ("execute_tool lookup", "invoke_agent Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
        ("execute_tool transfer_to_sales", "invoke_agent Triage"),
        ("invoke_agent Sales", "invoke_workflow Triage"),
        ("chat sales-model", "invoke_agent Sales"),
    ]
    assert len({s.context.trace_id for s in spans.get_finished_spans()}) == 1
    triage_span = one(spans, "invoke_agent Triage")
    assert triage_span.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert triage_span.attributes["gen_ai.agent.name"] == "Triage"
    assert events(triage_span)["swarmgraph.handoff"] == {"swarmgraph.handoff.to": "Sales"}
    assert "gen_ai.conversation.id" not in triage_span.attributes  # not a Session turn
    # stamped at the switch: after Triage's last call, before Sales' turn began
    handed = stamped(triage_span, "swarmgraph.handoff")
    assert one(spans, "execute_tool transfer_to_sales").end_time <= handed
    assert handed <= one(spans, "invoke_agent Sales").start_time
    assert handed < one(spans, "invoke_workflow Triage").end_time

    chat = by_name(spans)["chat gpt-4o"][0]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "gpt-4o"
    assert chat.attributes["gen_ai.provider.name"] == "scriptedchatmodel"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    assert one(spans, "chat sales-model").attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tool = one(spans, "execute_tool lookup")
    assert tool.attributes["gen_ai.tool.name"] == "lookup"
    assert tool.attributes["gen_ai.tool.call.id"] == "c1"
    assert "gen_ai.transfer.mode" not in tool.attributes  # not a handoff
    transfer = one(spans, "execute_tool transfer_to_sales").attributes
    assert (
        transfer["gen_ai.transfer.mode"],
        transfer["gen_ai.transfer.target.type"],
        transfer["gen_ai.transfer.target.name"],
    ) == ("pass_control", "agent", "Sales")
    root = one(spans, "invoke_workflow Triage")
    assert root.attributes["gen_ai.workflow.name"] == "Triage"
    assert root.attributes["swarmgraph.agent.first"] == "Triage"
    assert "gen_ai.agent.name" not in root.attributes  # a workflow, not an agent
    assert root.attributes["swarmgraph.agent.final"] == "Sales"
    assert root.attributes["gen_ai.usage.input_tokens"] == response.usage["input_tokens"]
    assert root.status.status_code is StatusCode.UNSET


def test_no_content_by_default_and_content_when_asked(spans, monkeypatch):
    swarm, triage = handoff_swarm()
    swarm.run(triage, [user(f"where is order 7? {SECRET}")])
    assert SECRET not in all_text(spans)
    assert "gen_ai.input.messages" not in by_name(spans)["chat gpt-4o"][0].attributes

    spans.clear()
    tracing.use_tracer_provider(tracing._chosen["provider"], capture_content=None)
    # the switch the community GenAI instrumentations read
    monkeypatch.setenv(tracing.CAPTURE_CONTENT_ENV, "true")
    swarm, triage = handoff_swarm()
    swarm.run(triage, [user(f"where is order 7? {SECRET}")])
    tool = one(spans, "execute_tool lookup")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"order_id": 7}
    assert tool.attributes["gen_ai.tool.call.result"] == f"Order 7: {SECRET}"
    sent = json.loads(by_name(spans)["chat gpt-4o"][0].attributes["gen_ai.input.messages"])
    asked = f"where is order 7? {SECRET}"
    assert sent[-1] == {"role": "user", "parts": [{"type": "text", "content": asked}]}
    said = json.loads(one(spans, "chat sales-model").attributes["gen_ai.output.messages"])
    assert said[0]["parts"][0]["content"] == f"Bees are $5, {SECRET}."

    spans.clear()
    monkeypatch.setenv(tracing.CAPTURE_CONTENT_ENV, "false")
    swarm, triage = handoff_swarm()
    swarm.run(triage, [user(f"where is order 7? {SECRET}")])
    assert spans.get_finished_spans() and SECRET not in all_text(spans)


def test_async_runs_trace_the_same_tree(spans):
    swarm, triage = handoff_swarm()
    asyncio.run(swarm.arun(triage, [user("where is order 7?")]))
    async_tree = tree(spans)
    spans.clear()
    swarm, triage = handoff_swarm()
    swarm.run(triage, [user("where is order 7?")])
    assert async_tree == tree(spans) and len(async_tree) == 8


def test_a_route_is_an_event_of_the_agent_that_routes(spans):
    vip = Agent(name="VIP", model="vip")
    desk = Agent(name="Desk", routes=[Route(lambda ctx: ctx.get("vip"), vip, name="vip")])

    def note() -> str:
        """Take a note."""
        return "noted"

    desk.functions = [note]
    models = {
        "gpt-4o": ScriptedChatModel([scripted_tool_call("note", id="n1")]),
        "vip": ScriptedChatModel(["Welcome back."]),
    }
    Swarm(chat_model=models.__getitem__).run(desk, [user("hi")], context_variables={"vip": True})
    routed = events(one(spans, "invoke_agent Desk"))["swarmgraph.route"]
    assert routed == {"swarmgraph.route.label": "vip", "swarmgraph.handoff.to": "VIP"}
    assert parent_name(spans, one(spans, "invoke_agent VIP")) == "invoke_workflow Desk"


# -- a fan-out ----------------------------------------------------------------------------------
def test_parallel_branches_are_sibling_spans_under_the_agent_that_fanned_out(spans):
    billing = Agent(name="Billing", model="billing")
    tech = Agent(name="Tech", model="tech")

    def ask_both():
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both", id="f1"), "Both checked."]),
        "billing": ScriptedChatModel(["Invoice 7 is paid."]),
        "tech": ScriptedChatModel(["The router is fine."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(desk, [user("invoice and router?")])
    assert response.messages[-1]["content"] == "Both checked."

    parents = dict(tree(spans))
    assert parents["branch Billing"] == parents["branch Tech"] == "invoke_agent Desk"
    assert parents["invoke_agent Billing"] == "branch Billing"
    assert parents["invoke_agent Tech"] == "branch Tech"
    assert parents["chat billing"] == "invoke_agent Billing"
    assert parents["chat tech"] == "invoke_agent Tech"
    assert parents["execute_tool ask_both"] == "invoke_agent Desk"
    assert len(by_name(spans)["chat desk"]) == 2  # the fan-out's call, then the answer
    branch = one(spans, "branch Billing")
    assert branch.attributes["swarmgraph.branch"] == "Billing"
    assert one(spans, "invoke_agent Tech").attributes["swarmgraph.branch"] == "Tech"
    # each branch's agent span ends inside its branch span
    for label in ("Billing", "Tech"):
        outer, inner = one(spans, f"branch {label}"), one(spans, f"invoke_agent {label}")
        assert outer.start_time <= inner.start_time and inner.end_time <= outer.end_time


def test_an_approval_asked_inside_a_branch_is_an_event_of_that_branchs_turn(spans):
    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        return "Refunded."

    billing = Agent(name="Billing", model="billing", functions=[refund])
    tech = Agent(name="Tech", model="tech")

    def ask_both():
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both", id="f1")]),
        "billing": ScriptedChatModel([scripted_tool_call("refund", {"order_id": 7}, id="r7")]),
        "tech": ScriptedChatModel(["The router is fine."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(desk, [user("refund 7, check router")])
    assert [p.id for p in response.pending] == ["r7"]
    billing_turn = one(spans, "invoke_agent Billing")
    assert events(billing_turn)["swarmgraph.approval.asked"]["gen_ai.tool.call.id"] == "r7"
    asked = stamped(billing_turn, "swarmgraph.approval.asked")
    assert one(spans, "chat billing").end_time <= asked and within(billing_turn, asked)
    for other in ("invoke_agent Tech", "invoke_agent Desk", "invoke_workflow Desk"):
        assert "swarmgraph.approval.asked" not in events(one(spans, other))


# -- approvals, budgets, guardrails ------------------------------------------------------------
def test_an_approval_asked_then_answered_are_events_of_their_runs(spans):
    log: list = []

    @needs_approval
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        return "Refunded."

    refunds = Agent(name="Refunds", functions=[process_refund])
    model = ScriptedChatModel(
        [scripted_tool_calls([("process_refund", {"order_id": 7}, "r1")]), "Your refund is done."]
    )
    swarm = Swarm(chat_model=model)
    history = [user("refund order 7")]
    first = swarm.run(refunds, history)
    assert [p.id for p in first.pending] == ["r1"] and log == []
    turn = one(spans, "invoke_agent Refunds")
    asked = events(turn)["swarmgraph.approval.asked"]
    # asked in the turn, once its model call had asked for the call
    assert one(spans, "chat gpt-4o").end_time <= stamped(turn, "swarmgraph.approval.asked")
    assert within(turn, stamped(turn, "swarmgraph.approval.asked"))
    assert "swarmgraph.approval.asked" not in events(one(spans, "invoke_workflow Refunds"))
    assert asked == {
        "gen_ai.tool.name": "process_refund",
        "gen_ai.tool.call.id": "r1",
        "gen_ai.agent.name": "Refunds",
        "swarmgraph.effect.in_doubt": False,
    }
    assert "execute_tool process_refund" not in by_name(spans)  # held, not run

    spans.clear()
    swarm.run(refunds, history + first.messages, approvals={"r1": "No: " + SECRET})
    root = one(spans, "invoke_workflow Refunds")
    assert events(root)["swarmgraph.approval.answered"] == {
        "gen_ai.tool.call.id": "r1",
        "swarmgraph.approval.approved": False,
    }
    assert SECRET not in all_text(spans)


def test_a_budget_stop_is_an_error_span_with_its_limit(spans):
    swarm, triage = handoff_swarm()
    with pytest.raises(BudgetExceeded):
        swarm.run(triage, [user("where is order 7?")], budget=Budget(max_model_calls=1))
    root = one(spans, "invoke_workflow Triage")
    assert root.status.status_code is StatusCode.ERROR
    turn = one(spans, "invoke_agent Triage")
    # stopped in Triage's turn, as its first tool call ended (the second model call refused)
    stop = stamped(turn, "swarmgraph.budget.exceeded")
    assert one(spans, "execute_tool lookup").end_time <= stop and within(turn, stop)
    assert events(turn)["swarmgraph.budget.exceeded"] == {
        "swarmgraph.budget.limit": "max_model_calls",
        "swarmgraph.budget.value": 1,
        "gen_ai.agent.name": "Triage",
    }
    assert len(by_name(spans)["chat gpt-4o"]) == 1  # the second call was never made
    assert all(s.end_time is not None for s in spans.get_finished_spans())


def test_a_guardrail_trip_is_an_event_without_its_reason(spans):
    def no_cards(context_variables, messages):
        return f"no card numbers: {SECRET}"

    guarded = Agent(name="Guarded", input_guardrails=[no_cards])
    with pytest.raises(GuardrailTripped):
        Swarm(chat_model=ScriptedChatModel(["Hi."])).run(guarded, [user("my card is 4242")])
    root = one(spans, "invoke_workflow Guarded")
    turn = one(spans, "invoke_agent Guarded")  # the turn the trip ended, before a model call
    tripped = events(turn)["swarmgraph.guardrail.tripped"]
    assert within(turn, stamped(turn, "swarmgraph.guardrail.tripped"))
    assert "chat gpt-4o" not in by_name(spans)
    assert tripped["swarmgraph.guardrail.name"] == "no_cards"
    assert tripped["gen_ai.agent.name"] == "Guarded"
    assert root.status.status_code is StatusCode.ERROR and SECRET not in all_text(spans)


def test_a_failing_run_ends_its_spans_with_the_error(spans):
    class Broken(ScriptedChatModel):
        def _generate(self, *args, **kwargs):
            raise RuntimeError("the model is down")

    with pytest.raises(RuntimeError, match="the model is down"):
        Swarm(chat_model=Broken([])).run(Agent(), [user("hi")])
    names = {s.name: s for s in spans.get_finished_spans()}
    assert set(names) == {"invoke_workflow Agent", "invoke_agent Agent", "chat gpt-4o"}
    chat = names["chat gpt-4o"]
    assert chat.status.status_code is StatusCode.ERROR
    # as OpenTelemetry's use_span records it (the chat span makes itself current without it)
    assert chat.status.description == "RuntimeError: the model is down"
    assert [e.attributes["exception.type"] for e in chat.events] == ["RuntimeError"]
    assert names["invoke_workflow Agent"].status.status_code is StatusCode.ERROR


# -- a compiled graph invoked directly ------------------------------------------------------------
def test_a_compiled_graph_invoked_itself_is_one_trace_per_invoke(spans):
    from langgraph.checkpoint.memory import InMemorySaver

    from swarmgraph import build_swarm_graph

    triage, models = handoff_agents()
    models["sales-model"] = ScriptedChatModel(["Bees are $5.", "Still $5."])
    app = build_swarm_graph([triage], chat_model=models.__getitem__).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t-7"}}
    out = app.invoke({"messages": [("user", f"where is order 7? {SECRET}")]}, thread)
    assert out["messages"][-1].name == "Sales"
    assert tree(spans) == [
        ("invoke_workflow Triage", None),
        ("invoke_agent Triage", "invoke_workflow Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
        ("execute_tool lookup", "invoke_agent Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
        ("execute_tool transfer_to_sales", "invoke_agent Triage"),
        ("invoke_agent Sales", "invoke_workflow Triage"),
        ("chat sales-model", "invoke_agent Sales"),
    ]
    assert len({s.context.trace_id for s in spans.get_finished_spans()}) == 1
    triage_span = one(spans, "invoke_agent Triage")
    handed = stamped(triage_span, "swarmgraph.handoff")
    assert handed <= one(spans, "invoke_agent Sales").start_time
    root = one(spans, "invoke_workflow Triage")
    assert root.attributes["gen_ai.conversation.id"] == "t-7"  # the LangGraph thread
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert root.attributes["gen_ai.usage.input_tokens"] == sum(
        c.attributes["gen_ai.usage.input_tokens"] for c in chats
    )
    assert SECRET not in all_text(spans)

    spans.clear()  # a second invoke on the thread: a trace of its own
    asyncio.run(app.ainvoke({"messages": [("user", "and now?")]}, thread))
    assert tree(spans) == [
        ("invoke_workflow Triage", None),
        ("invoke_agent Sales", "invoke_workflow Triage"),
        ("chat sales-model", "invoke_agent Sales"),
    ]


def test_a_compiled_graph_read_partly_or_failing_ends_its_trace(spans):
    from swarmgraph import build_swarm_graph

    class Broken(ScriptedChatModel):
        def _generate(self, *args, **kwargs):
            raise RuntimeError("the model is down")

    app = build_swarm_graph([Agent()], chat_model=Broken([])).compile()
    with pytest.raises(RuntimeError, match="the model is down"):
        app.invoke({"messages": [("user", "hi")]})
    root = one(spans, "invoke_workflow Agent")
    assert root.status.status_code is StatusCode.ERROR
    assert {s.name for s in spans.get_finished_spans()} == {
        "invoke_workflow Agent",
        "invoke_agent Agent",
        "chat gpt-4o",
    }

    spans.clear()  # a stream the caller stops reading after the first update
    two = Agent(name="Two")
    one_ = Agent(name="One", handoffs=[two])
    model = ScriptedChatModel([scripted_tool_call("transfer_to_two"), "Hi from two."])
    stream = (
        build_swarm_graph([one_], chat_model=model).compile().stream({"messages": [("user", "hi")]})
    )
    next(stream)
    stream.close()
    assert "invoke_workflow One" in by_name(spans)
    assert all(s.end_time is not None for s in spans.get_finished_spans())


def test_the_served_graph_is_traced_and_a_copy_of_it_too(spans):
    from swarmgraph.app.served import make_graph

    served = make_graph(offline=True).copy({"name": "served_demo"})  # as the server copies it
    served.invoke({"messages": [("user", "hi")]})
    roots = [s for s in spans.get_finished_spans() if s.parent is None]
    assert [s.name for s in roots] == ["invoke_workflow served_demo"]  # the graph's name
    assert roots[0].attributes["gen_ai.workflow.name"] == "served_demo"
    assert any(s.name.startswith("chat ") for s in spans.get_finished_spans())


def test_an_untraced_compiled_graph_traces_nothing():
    from swarmgraph.graph.observed_graph import _traced_run

    from swarmgraph import build_swarm_graph

    app = build_swarm_graph([Agent()], chat_model=ScriptedChatModel(["Hi."])).compile()
    assert _traced_run(app, None) is None  # no provider set: the invoke is LangGraph's own
    assert app.invoke({"messages": [("user", "hi")]})["messages"][-1].content == "Hi."


# -- a LangGraph member ---------------------------------------------------------------------------
@pytest.mark.parametrize("run_async", [False, True])
def test_a_langgraph_members_turn_is_an_invoke_agent_span_current_while_it_runs(spans, run_async):
    from langchain.agents import create_agent
    from opentelemetry import trace

    from swarmgraph import handoff_tool

    seen: list = []

    class Recording(ScriptedChatModel):  # the member's own model: which span is current
        def _generate(self, *args, **kwargs):
            seen.append(trace.get_current_span().get_span_context().span_id)
            return super()._generate(*args, **kwargs)

        async def _agenerate(self, *args, **kwargs):
            return self._generate(*args, **kwargs)

    triage = Agent(name="Triage")
    research = create_agent(
        Recording([scripted_tool_call("transfer_to_triage", id="h1")]),
        tools=[handoff_tool(triage)],
        name="research",
    )
    triage.handoffs.append(research)
    model = ScriptedChatModel([scripted_tool_call("transfer_to_research"), "Back with Triage."])
    swarm = Swarm(chat_model=model)
    history = [user("What do bees see?")]
    run = swarm.arun(triage, history) if run_async else None
    response = asyncio.run(run) if run is not None else swarm.run(triage, history)
    assert response.agent.name == "Triage"
    assert tree(spans) == [
        ("invoke_workflow Triage", None),
        ("invoke_agent Triage", "invoke_workflow Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
        ("execute_tool transfer_to_research", "invoke_agent Triage"),
        ("invoke_agent research", "invoke_workflow Triage"),
        ("invoke_agent Triage", "invoke_workflow Triage"),
        ("chat gpt-4o", "invoke_agent Triage"),
    ]
    member = one(spans, "invoke_agent research")
    assert member.attributes["gen_ai.agent.name"] == "research"
    assert seen == [member.context.span_id]  # the member's model call ran inside its turn
    handed = stamped(member, "swarmgraph.handoff")
    assert events(member)["swarmgraph.handoff"] == {"swarmgraph.handoff.to": "Triage"}
    later = by_name(spans)["invoke_agent Triage"][1]
    assert handed <= later.start_time


# -- a Session turn -----------------------------------------------------------------------------
def test_a_session_turn_carries_its_conversation_id(spans, url):
    swarm, triage = handoff_swarm()
    Session("conv-42", url=url).run(swarm, triage, "where is order 7?")
    traced = spans.get_finished_spans()
    agents = [s for s in traced if s.name.startswith(("invoke_", "chat "))]
    assert agents and all(s.attributes["gen_ai.conversation.id"] == "conv-42" for s in agents)
    text = all_text(spans)
    assert "://" not in text and Path(url.split("///")[-1]).name not in text


# -- nobody observes: nothing at all ------------------------------------------------------------
def test_without_a_provider_nothing_is_emitted_and_no_middleware_is_installed(spans):
    tracing.use_tracer_provider(None)  # the global provider is the API's default proxy here
    swarm, triage = handoff_swarm()
    run = swarm._start(
        __import__("swarmgraph.graph.prepared_run", fromlist=["RunRequest"]).RunRequest(
            triage, [user("hi")]
        )
    )
    assert run.traced is None and run.control.middleware is None
    swarm.run(triage, [user("where is order 7?")])
    assert spans.get_finished_spans() == ()


def test_tracing_is_the_runs_own_middleware_around_a_budgets(spans):
    from langchain.agents.middleware import AgentMiddleware
    from swarmgraph.graph.prepared_run import RunRequest

    swarm, triage = handoff_swarm()
    run = swarm._start(RunRequest(triage, [user("hi")], budget=Budget(max_handoffs=3)))
    installed = run.control.middleware.of(triage)
    assert [type(m).__name__ for m in installed] == ["BudgetMiddleware", "TracingMiddleware"]
    assert isinstance(installed[-1], AgentMiddleware)
    assert tracing.traced_run() is run.traced is not None
    run.traced.ended(None)


@pytest.mark.parametrize("verdict", ["refused", "redirected"])
def test_a_handoff_event_names_the_switch_that_happened_after_the_hooks(spans, verdict):
    """Tracing hears a switch as the ledger books it, after every ``before_handoff`` hook:
    a refused switch ends no turn; a redirected one names the agent that took over."""
    from langchain.agents.middleware import AgentMiddleware
    from swarmgraph.graph.core.handoffs import HandTo

    humans = Agent(name="Humans", instructions="Humans.")

    class Door(AgentMiddleware):
        def before_handoff(self, handoff):
            if handoff.target.name != "Sales":
                return None
            return "sales is closed" if verdict == "refused" else HandTo(humans)

    triage, models = handoff_agents()
    models["gpt-4o"] = ScriptedChatModel(
        [scripted_tool_call("transfer_to_sales", {}, id="c2"), "Sorry, sales is closed."]
    )
    swarm = Swarm(chat_model=models.__getitem__, middleware=[Door()])
    response = swarm.run(triage, [user("bees?")])
    triage_turns = by_name(spans)["invoke_agent Triage"]
    if verdict == "refused":
        assert response.agent.name == "Triage"
        assert [events(s).get("swarmgraph.handoff") for s in triage_turns] == [None]
        assert "invoke_agent Sales" not in by_name(spans)
    else:
        assert response.agent.name == "Humans"
        [turn] = triage_turns
        assert events(turn)["swarmgraph.handoff"] == {"swarmgraph.handoff.to": "Humans"}
        assert parent_name(spans, one(spans, "invoke_agent Humans")) == "invoke_workflow Triage"


def test_a_traced_run_is_freed_as_its_caller_drops_it_without_the_garbage_collector(spans):
    """The run and its control refer to each other while it runs; once it ended nothing of
    it may wait for the cyclic garbage collector (an untraced run never does)."""
    import gc
    import weakref

    from langchain.agents.middleware import AgentMiddleware

    seen: list[weakref.ref] = []

    class Grab(AgentMiddleware):
        def wrap_model_call(self, request, handler):
            seen.append(weakref.ref(tracing.traced_run()))
            return handler(request)

    triage, models = handoff_agents()
    swarm = Swarm(chat_model=models.__getitem__, middleware=[Grab()])
    gc.collect()
    gc.disable()
    try:
        response = swarm.run(triage, [user("where is order 7?")])
        assert response.agent.name == "Sales" and seen
        assert all(ref() is None for ref in seen)
    finally:
        gc.enable()
    assert [s.name for s in spans.get_finished_spans()][-1].startswith("invoke_workflow")


@pytest.mark.parametrize("traced", [False, True])
def test_a_callers_middleware_sees_each_model_and_tool_call_in_order_traced_or_not(
    traced: bool, request: pytest.FixtureRequest
) -> None:
    """What the web UI's page attaches by (``RunHooks(middleware=)``), around tracing's."""
    from langchain.agents.middleware import AgentMiddleware
    from swarmgraph.graph.core.run_control import RunHooks

    exporter = request.getfixturevalue("spans") if traced else None
    seen: list[str] = []

    class Log(AgentMiddleware):
        def wrap_model_call(self, request, handler):
            seen.append(f"model {request.state['active_agent']}")
            return handler(request)

        def wrap_tool_call(self, request, handler):
            answer = handler(request)
            seen.append(f"tool {request.tool_call['name']} {request.tool_call['id']}")
            return answer

    swarm, triage = handoff_swarm()
    swarm.run(triage, [user("where is order 7?")], hooks=RunHooks(middleware=[Log()]))
    assert seen == [
        "model Triage",
        "tool lookup c1",
        "model Triage",
        "tool transfer_to_sales c2",
        "model Sales",
    ]
    if exporter is not None:  # tracing ran inside the caller's middleware, its spans whole
        names = [span.name for span in exporter.get_finished_spans()]
        assert names.count("chat gpt-4o") == 2 and "execute_tool lookup" in names


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(tracing.CAPTURE_CONTENT_ENV, None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def test_a_plain_program_runs_without_opentelemetry_installed():
    done = _python(
        """
        import sys

        class NoOpenTelemetry:  # as if opentelemetry-api were not installed
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ModuleNotFoundError(f"No module named {name!r}")
                return None

        sys.meta_path.insert(0, NoOpenTelemetry())
        from swarmgraph import Agent, ScriptedChatModel, Swarm

        reply = Swarm(chat_model=ScriptedChatModel(["Hi."])).run(
            Agent(), [{"role": "user", "content": "hi"}]
        )
        print(reply.messages[-1]["content"])
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        print("swarmgraph.graph.features.tracing" in sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["Hi.", "[]", "False"]


def test_the_global_provider_is_used_once_it_is_set():
    done = _python(
        """
        import sys
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from swarmgraph import Agent, ScriptedChatModel, Swarm

        swarm = Swarm(chat_model=ScriptedChatModel(["Hi.", "Hi again."]))
        swarm.run(Agent(), [{"role": "user", "content": "hi"}])
        print("swarmgraph.graph.features.tracing" in sys.modules)  # the default proxy: none
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        swarm.run(Agent(), [{"role": "user", "content": "hi"}])
        print([s.name for s in exporter.get_finished_spans()])
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [
        "False",
        "['chat gpt-4o', 'invoke_agent Agent', 'invoke_workflow Agent']",
    ]


def test_a_trip_that_on_trip_answers_is_still_an_event(spans):
    def no_cards(context_variables, messages):
        return "no card numbers"

    fallback = Agent(name="Fallback", model="fallback")
    guarded = Agent(name="Guarded", input_guardrails=[no_cards], on_trip=fallback)
    models = {
        "gpt-4o": ScriptedChatModel(["never"]),
        "fallback": ScriptedChatModel(["A human will call."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(guarded, [user("my card is 4242")])
    assert response.agent.name == "Fallback"
    root = one(spans, "invoke_workflow Guarded")
    guarded_turn = one(spans, "invoke_agent Guarded")
    tripped = stamped(guarded_turn, "swarmgraph.guardrail.tripped")
    assert events(guarded_turn)["swarmgraph.guardrail.tripped"]["swarmgraph.guardrail.name"] == (
        "no_cards"
    )
    assert tripped <= one(spans, "chat fallback").start_time  # tripped, then Fallback spoke
    assert root.status.status_code is StatusCode.UNSET  # the run went on
    assert "chat gpt-4o" not in by_name(spans) and "chat fallback" in by_name(spans)


def test_docs_name_every_span_and_event_the_tracer_emits():
    import re

    doc = (ROOT / "docs" / "tracing.md").read_text()
    source = (ROOT / "graph" / "features" / "tracing.py").read_text()
    emitted = set(re.findall(r'"(swarmgraph\.[a-z_.]+)"', source))
    emitted |= {f"swarmgraph.{kind}.tripped" for kind in ("guardrail", "precondition")}
    assert emitted and {name for name in emitted if f"`{name}`" not in doc} == set()
    for span in (
        "invoke_workflow {workflow}",
        "invoke_agent {agent}",
        "chat {model}",
        "execute_tool {tool}",
        "branch {path}",
        "search_memory",
    ):
        assert f"| `{span}` |" in doc


def test_demo_trace_prints_each_turns_span_tree(capsys, tmp_path):
    from swarmgraph.app.cli import main

    assert main(["demo", "--trace", "--no-color", "--db", f"sqlite:///{tmp_path}/demo.db"]) == 0
    out = capsys.readouterr().out
    turn_one = out.split("── turn 1")[1].split("── turn 2")[0]
    tree_lines = turn_one.split("trace (OpenTelemetry spans")[1].splitlines()[1:]
    shown = [line[3:] for line in tree_lines if line.strip()]  # the demo indents by 3
    expected = [
        "invoke_workflow Triage",
        "├─ invoke_agent Triage",
        "│  │ • handoff → Refunds",
        "│  ├─ chat gpt-4o-mini",
        "│  ├─ execute_tool set_name",
        "│  ├─ execute_tool record_order",
        "│  ├─ chat gpt-4o-mini",
        "│  └─ execute_tool transfer_to_refunds",
        "└─ invoke_agent Refunds",
        "   ├─ chat gpt-4o-mini",
        "   ├─ execute_tool process_refund",
        "   └─ chat gpt-4o-mini",
    ]
    assert len(shown) == len(expected)
    assert all(line.startswith(want) for line, want in zip(shown, expected, strict=True)), shown
    assert "conversation=demo" in tree_lines[0] and out.count("invoke_workflow") == 3
    assert tracing._chosen["provider"] is None  # the demo stops tracing when it is done

    assert main(["demo", "--no-color", "--db", f"sqlite:///{tmp_path}/plain.db"]) == 0
    assert "invoke_workflow" not in capsys.readouterr().out


def test_the_tracing_benchmark_runs_each_contender_and_counts_the_spans(tmp_path):
    from benchmarks.__main__ import main as bench
    from benchmarks.tracing import PAIRED_RATIOS, RATIOS, run_tracing

    out = run_tracing(number=2, repeat=2, rounds=3)
    assert out["spans_per_run"] == 6  # invoke_workflow, 2 invoke_agent, 2 chat, 1 execute_tool
    assert sorted(out["ratios"]) == sorted(RATIOS) and all(r > 0 for r in out["ratios"].values())
    # the ratios the verdicts read, again in adjacent pairs: three rounds each
    assert sorted(out["paired"]) == sorted(PAIRED_RATIOS)
    for pair in out["paired"].values():
        low, high = pair["quartiles"]
        assert len(pair["rounds"]) == 3 and 0 < low <= pair["ratio"] <= high
    assert "swarmgraph.graph.features.tracing" in sys.modules  # put back after the hidden ones
    assert tracing._chosen["provider"] is None  # the traced contender leaves tracing off
    bench(["--quick", "--only", "tracing", "--out", str(tmp_path)])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "## 1c. What tracing costs a handoff" in text
    assert "tracing off (no provider) <= 1.02x the untraced handoff" in text
    assert "median of 2 rounds of two adjacent batches" in text  # what the verdicts read


def test_long_term_recall_is_a_search_memory_span_and_remember_a_tool_span(spans, url):
    agent = Agent(name="Triage", memory_tools=True)
    model = ScriptedChatModel(
        [scripted_tool_call("remember", {"key": "dog_name", "value": "Rex"}), "Noted.", "Hi!"]
    )
    swarm = Swarm(chat_model=model)
    first = Session("conv-a", url=url, user_id="ming", long_term=True)
    first.run(swarm, agent, "My dog is called Rex, remember it.")
    staged, applied = sorted(by_name(spans)["update_memory"], key=lambda s: s.start_time)
    write = staged  # the tool's write, staged in the turn's outbox; applied after the turn
    assert parent_name(spans, write) == "execute_tool remember"
    assert applied.attributes["swarmgraph.memory.step"] == "apply"
    assert parent_name(spans, applied) == "invoke_workflow Triage"
    assert write.attributes["gen_ai.operation.name"] == "update_memory"
    assert write.attributes["swarmgraph.memory.scope"] == "user"
    spans.clear()
    Session("conv-b", url=url, user_id="ming", long_term=True).run(swarm, agent, "My dog?")
    [search] = by_name(spans)["search_memory"]
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["swarmgraph.memory.recalled"] is True
    assert parent_name(spans, search) == "invoke_agent Triage"
    assert "Rex" not in all_text(spans)  # what was recalled is content


@pytest.mark.parametrize("run_async", [False, True])
def test_a_sessions_writes_after_the_turn_are_update_memory_spans_of_its_trace(
    spans, url, run_async
):
    def city_rule(text: str) -> dict:  # a stand-in extractor: one rule, no model
        return {"home_city": "Porto"} if "Porto" in text else {}

    swarm, triage = handoff_swarm()
    session = Session("conv-9", url=url, user_id="ming", long_term=True, extract=city_rule)
    said = "I moved to Porto; where is order 7?"
    if run_async:
        asyncio.run(session.arun(swarm, triage, said, turn_id="turn-1"))
    else:
        session.run(swarm, triage, said, turn_id="turn-1")
    root = one(spans, "invoke_workflow Triage")
    writes = sorted(by_name(spans)["update_memory"], key=lambda s: s.start_time)
    assert [w.attributes["swarmgraph.memory.step"] for w in writes] == ["extract", "apply"]
    extract, apply = writes
    for write in writes:  # in the turn's trace, under its run, after the run
        assert write.context.trace_id == root.context.trace_id
        assert parent_name(spans, write) == "invoke_workflow Triage"
        assert write.start_time >= root.end_time
        assert write.attributes["gen_ai.operation.name"] == "update_memory"
        assert write.attributes["gen_ai.conversation.id"] == "conv-9"
        assert write.attributes["swarmgraph.memory.turn_id"] == "turn-1"
    assert extract.end_time <= apply.start_time
    assert extract.attributes["swarmgraph.memory.staged"] == 1
    assert apply.attributes["swarmgraph.memory.remembered"] == 1
    assert apply.attributes["swarmgraph.memory.forgotten"] == 0
    assert "Porto" not in all_text(spans) and "home_city" not in all_text(spans)
    assert [f.value for f in session.long_term.facts()] == ["Porto"]  # the write happened

    spans.clear()  # with content capture: the keys written, still no values
    tracing.use_tracer_provider(tracing._chosen["provider"], capture_content=True)
    swarm, triage = handoff_swarm()  # fresh scripts: the turn goes on with Sales
    session.run(swarm, triage, "I moved to Porto again.", turn_id="turn-2")
    [applied] = [
        w
        for w in by_name(spans)["update_memory"]
        if w.attributes["swarmgraph.memory.step"] == "apply"
    ]
    assert applied.attributes["swarmgraph.memory.keys"] == ("home_city",)


def test_the_tool_call_span_is_current_while_the_tool_runs(spans):
    """What a driver of another process (a Temporal activity) injects to stay in the trace."""
    from opentelemetry import propagate

    carried: dict = {}

    def lookup(order_id: int) -> str:
        """Look an order up."""
        propagate.inject(carried)
        return "ok"

    model = ScriptedChatModel([scripted_tool_call("lookup", {"order_id": 7}, id="c1"), "Done."])
    Swarm(chat_model=model).run(Agent(functions=[lookup]), [user("order 7?")])
    tool = one(spans, "execute_tool lookup")
    trace_id, span_id = carried["traceparent"].split("-")[1:3]
    assert (int(trace_id, 16), int(span_id, 16)) == (tool.context.trace_id, tool.context.span_id)


def test_a_streamed_and_an_async_fan_out_trace_like_a_plain_run(spans):
    billing, tech = Agent(name="Billing", model="billing"), Agent(name="Tech", model="tech")

    def ask_both():
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    def swarm() -> Swarm:
        models = {
            "desk": ScriptedChatModel([scripted_tool_call("ask_both", id="f1"), "Both."]),
            "billing": ScriptedChatModel(["Paid."]),
            "tech": ScriptedChatModel(["Fine."]),
        }
        return Swarm(chat_model=models.__getitem__)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    asyncio.run(swarm().arun(desk, [user("both?")]))
    async_parents = sorted(tree(spans))
    spans.clear()
    events_seen = list(swarm().run(desk, [user("both?")], stream=True))
    assert "response" in events_seen[-1]
    assert sorted(tree(spans)) == async_parents
    assert ("branch Billing", "invoke_agent Desk") in async_parents


# -- a compiled graph invoked directly: approvals through interrupt(), its own recall -----------
def test_a_compiled_graphs_approval_is_asked_at_the_interrupt_and_answered_at_the_resume(spans):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from swarmgraph import build_swarm_graph

    log: list = []

    @needs_approval
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        return "Refunded."

    refunds = Agent(name="Refunds", functions=[process_refund])
    model = ScriptedChatModel(
        [scripted_tool_calls([("process_refund", {"order_id": 7}, "r1")]), "Not refunded."]
    )
    app = build_swarm_graph([refunds], chat_model=model).compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t-refund"}}
    out = app.invoke({"messages": [("user", "refund order 7")]}, thread)
    assert out["__interrupt__"] and log == []  # LangGraph's own report of the stop
    first = spans.get_finished_spans()
    assert len({s.context.trace_id for s in first}) == 1
    turn = one(spans, "invoke_agent Refunds")
    assert events(turn)["swarmgraph.approval.asked"] == {
        "gen_ai.tool.name": "process_refund",
        "gen_ai.tool.call.id": "r1",
        "gen_ai.agent.name": "Refunds",
        "swarmgraph.effect.in_doubt": False,
    }
    assert one(spans, "chat gpt-4o").end_time <= stamped(turn, "swarmgraph.approval.asked")
    assert within(turn, stamped(turn, "swarmgraph.approval.asked"))
    assert "swarmgraph.approval.answered" not in events(one(spans, "invoke_workflow Refunds"))

    spans.clear()  # the resume: a trace of its own, its root says what was decided
    app.invoke(Command(resume={"r1": "No: " + SECRET}), thread)
    assert log == []  # denied
    second = spans.get_finished_spans()
    assert len({s.context.trace_id for s in second}) == 1
    assert {s.context.trace_id for s in second}.isdisjoint({s.context.trace_id for s in first})
    root = one(spans, "invoke_workflow Refunds")
    assert events(root)["swarmgraph.approval.answered"] == {
        "gen_ai.tool.call.id": "r1",
        "swarmgraph.approval.approved": False,
    }
    assert "swarmgraph.approval.asked" not in events(one(spans, "invoke_agent Refunds"))
    assert SECRET not in all_text(spans)


def test_a_compiled_graphs_async_resume_with_one_decision_for_all_is_answered(spans):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from swarmgraph import build_swarm_graph

    @needs_approval
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        return "Refunded."

    refunds = Agent(name="Refunds", functions=[process_refund])
    model = ScriptedChatModel(
        [
            scripted_tool_calls(
                [
                    ("process_refund", {"order_id": 7}, "r1"),
                    ("process_refund", {"order_id": 8}, "r2"),
                ]
            ),
            "Both refunded.",
        ]
    )
    app = build_swarm_graph([refunds], chat_model=model).compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t-refund-async"}}
    asyncio.run(app.ainvoke({"messages": [("user", "refund 7 and 8")]}, thread))
    asked = [e for e in one(spans, "invoke_agent Refunds").events if e.name.endswith("asked")]
    assert [e.attributes["gen_ai.tool.call.id"] for e in asked] == ["r1", "r2"]
    spans.clear()
    out = asyncio.run(app.ainvoke(Command(resume=True), thread))
    assert out["messages"][-1].content == "Both refunded."
    answered = [e for e in one(spans, "invoke_workflow Refunds").events]
    assert [(e.name, e.attributes["gen_ai.tool.call.id"]) for e in answered] == [
        ("swarmgraph.approval.answered", "r1"),
        ("swarmgraph.approval.answered", "r2"),
    ]
    assert all(e.attributes["swarmgraph.approval.approved"] is True for e in answered)
    assert len(by_name(spans)["execute_tool process_refund"]) == 2


def test_a_compiled_graphs_own_recall_is_a_search_memory_span(spans):
    from swarmgraph import build_swarm_graph

    asked: list = []

    def recall(agent, messages):
        asked.append(agent.name)
        return f"The user's card: {SECRET}" if agent.name == "Sales" else None

    triage, models = handoff_agents()
    app = build_swarm_graph([triage], chat_model=models.__getitem__, prompt_context=recall)
    app.compile().invoke({"messages": [("user", "where is order 7?")]})
    searches = by_name(spans)["search_memory"]
    assert len(searches) == len(asked) and asked  # one span per recall the graph asked
    assert [parent_name(spans, s) for s in searches] == [f"invoke_agent {a}" for a in asked]
    assert [s.attributes["swarmgraph.memory.recalled"] for s in searches] == [
        a == "Sales" for a in asked
    ]
    assert searches[0].attributes["gen_ai.operation.name"] == "search_memory"
    assert SECRET not in all_text(spans)


def test_a_compiled_graphs_branch_asks_on_that_branchs_turn_and_resumes_answered(spans):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from swarmgraph import build_swarm_graph

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        return "Refunded."

    billing = Agent(name="Billing", model="billing", functions=[refund])
    tech = Agent(name="Tech", model="tech")

    def ask_both():
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both", id="f1"), "Both checked."]),
        "billing": ScriptedChatModel(
            [scripted_tool_call("refund", {"order_id": 7}, id="r7"), "Refunded 7."]
        ),
        "tech": ScriptedChatModel(["The router is fine."]),
    }
    app = build_swarm_graph([desk], chat_model=models.__getitem__).compile(
        checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t-branch"}}
    out = app.invoke({"messages": [("user", "refund 7, check router")]}, thread)
    assert out["__interrupt__"]
    billing_turn = one(spans, "invoke_agent Billing")
    assert events(billing_turn)["swarmgraph.approval.asked"]["gen_ai.tool.call.id"] == "r7"
    asked = stamped(billing_turn, "swarmgraph.approval.asked")
    assert one(spans, "chat billing").end_time <= asked and within(billing_turn, asked)
    for other in ("invoke_agent Tech", "invoke_agent Desk", "invoke_workflow Desk"):
        assert "swarmgraph.approval.asked" not in events(one(spans, other))

    spans.clear()
    out = app.invoke(Command(resume=True), thread)
    assert out["messages"][-1].content == "Both checked."
    root = one(spans, "invoke_workflow Desk")
    assert events(root)["swarmgraph.approval.answered"] == {
        "gen_ai.tool.call.id": "r7",
        "swarmgraph.approval.approved": True,
    }
    assert parent_name(spans, one(spans, "execute_tool refund")) == "invoke_agent Billing"


def test_an_outbox_applied_later_in_another_process_is_under_the_applier_linked_to_its_turn(
    spans, url
):
    """The turn's process saved its turn and died before applying its outbox; the next turn,
    in this process, applies it: under the span current there, with a link to the turn that
    staged it (its trace ended elsewhere), and that next turn's own apply in its own trace."""

    def city_rule(text: str) -> dict:  # a stand-in extractor: one rule, no model
        return {"home_city": "Porto"} if "Porto" in text else {}

    done = _python(
        f"""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import swarmgraph.memory.session as session_module
        from swarmgraph import Agent, ScriptedChatModel, Session, Swarm

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        session_module.deliver_outbox = lambda *args: None  # the process dies after the save
        rule = lambda text: {{"home_city": "Porto"}} if "Porto" in text else {{}}
        session = Session("conv-far", url={url!r}, user_id="ming", long_term=True, extract=rule)
        swarm = Swarm(chat_model=ScriptedChatModel(["Noted."]))
        session.run(swarm, Agent(name="Triage"), "I moved to Porto.", turn_id="far-1")
        [root] = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_work")]
        print(root.context.trace_id, root.context.span_id)
        """
    )
    assert done.returncode == 0, done.stderr
    trace_id, span_id = map(int, done.stdout.split())

    session = Session("conv-far", url=url, user_id="ming", long_term=True, extract=city_rule)
    assert session.long_term.facts() == []  # staged and saved, not applied yet
    swarm = Swarm(chat_model=ScriptedChatModel(["Welcome back."]))
    provider = tracing._chosen["provider"]
    with provider.get_tracer("test").start_as_current_span("request"):
        session.run(swarm, Agent(name="Triage"), "I moved to Porto, yes.", turn_id="near-2")
    assert [f.value for f in session.long_term.facts()] == ["Porto"]
    applies = {
        w.attributes["swarmgraph.memory.turn_id"]: w
        for w in by_name(spans)["update_memory"]
        if w.attributes["swarmgraph.memory.step"] == "apply"
    }
    late, own = applies["far-1"], applies["near-2"]
    request = one(spans, "request")
    assert parent_name(spans, late) == "request"  # the applier's time, the applier's trace
    assert late.context.trace_id == request.context.trace_id != trace_id
    [link] = late.links
    assert (link.context.trace_id, link.context.span_id) == (trace_id, span_id)
    assert link.attributes["swarmgraph.memory.link"] == "staged_by"
    assert late.end_time <= one(spans, "invoke_workflow Triage").start_time  # before the run
    assert parent_name(spans, own) == "invoke_workflow Triage"  # its own, right after it
    assert not own.links


def test_a_chat_span_names_the_chat_models_own_model_not_the_agents(spans):
    """A fixed ``chat_model=`` answers whatever ``agent.model`` says: the span names the
    model that was asked (its ``ls_model_name``); a stand-in without a name of its own
    (``ScriptedChatModel()``) reports the agent's."""
    haiku = ScriptedChatModel(["Hi."], model_name="claude-3-5-haiku")
    Swarm(chat_model=haiku).run(Agent(name="Named"), [user("hi")])
    Swarm(chat_model=ScriptedChatModel(["Hi."])).run(Agent(name="Stand-in"), [user("hi")])
    chat = one(spans, "chat claude-3-5-haiku")
    assert chat.attributes["gen_ai.request.model"] == "claude-3-5-haiku"
    assert parent_name(spans, chat) == "invoke_agent Named"
    assert one(spans, "chat gpt-4o").attributes["gen_ai.request.model"] == "gpt-4o"


# -- what the tracing hot path must keep (issue 40 made it leaner) -------------------------------
@pytest.mark.parametrize("run_async", [False, True])
def test_the_chat_and_tool_spans_are_current_inside_the_call(spans, run_async):
    """A LangChain or HTTP instrumentation's own spans nest under the call they belong to:
    inside the model call the current span is its ``chat`` span, inside the tool its
    ``execute_tool`` span (spans started with a parent context only, never made current,
    would leave the agent's span or none current there)."""
    from opentelemetry import trace

    current: dict[str, int] = {}

    class Recording(ScriptedChatModel):
        def _generate(self, *args, **kwargs):
            current.setdefault("chat", trace.get_current_span().get_span_context().span_id)
            return super()._generate(*args, **kwargs)

        async def _agenerate(self, *args, **kwargs):
            return self._generate(*args, **kwargs)

    def lookup(order_id: int) -> str:
        """Look an order up."""
        current["tool"] = trace.get_current_span().get_span_context().span_id
        return "shipped"

    agent = Agent(name="Desk", functions=[lookup])
    model = Recording([scripted_tool_call("lookup", {"order_id": 7}, id="c1"), "Shipped."])
    swarm = Swarm(chat_model=model)
    run = swarm.arun(agent, [user("where is 7?")]) if run_async else None
    response = asyncio.run(run) if run is not None else swarm.run(agent, [user("where is 7?")])
    assert response.messages[-1]["content"] == "Shipped."
    first_chat = min(by_name(spans)["chat gpt-4o"], key=lambda s: s.start_time or 0)
    assert current["chat"] == first_chat.context.span_id
    assert current["tool"] == one(spans, "execute_tool lookup").context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # and nothing left current after


def test_a_provider_named_by_the_environment_is_found_by_the_runs_check():
    """The run's check (``provider_maybe_set``) reads OpenTelemetry's own global and its
    ``OTEL_PYTHON_TRACER_PROVIDER`` variable without asking ``get_tracer_provider``: with the
    variable set, a run is traced by the provider it names; unset again, the next plain run
    loads nothing."""
    done = _python(
        """
        import os, sys
        from opentelemetry import trace
        from swarmgraph import Agent, ScriptedChatModel, Swarm

        swarm = Swarm(chat_model=ScriptedChatModel(["Hi.", "Hi again.", "Hi there."]))
        swarm.run(Agent(), [{"role": "user", "content": "hi"}])
        print("swarmgraph.graph.features.tracing" in sys.modules)  # no provider: not loaded
        os.environ["OTEL_PYTHON_TRACER_PROVIDER"] = "sdk_tracer_provider"
        swarm.run(Agent(), [{"role": "user", "content": "hi"}])
        print("swarmgraph.graph.features.tracing" in sys.modules)
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        provider = trace.get_tracer_provider()  # the one the variable named, loaded by the run
        print(type(provider) is TracerProvider)
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        swarm.run(Agent(), [{"role": "user", "content": "hi"}])
        print([s.name for s in exporter.get_finished_spans()])
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == [
        "False",
        "True",
        "True",
        "['chat gpt-4o', 'invoke_agent Agent', 'invoke_workflow Agent']",
    ]


def test_the_runs_check_without_the_api_global_asks_get_tracer_provider():
    """An OpenTelemetry API that keeps its provider elsewhere (no ``_TRACER_PROVIDER``): the
    check asks ``get_tracer_provider`` the long way, so a provider set there still traces."""
    import types

    from swarmgraph.graph.prepared_run import provider_maybe_set

    class Proxy:
        pass

    class NoOp:
        pass

    found: list[object] = [Proxy()]
    api = types.SimpleNamespace(
        get_tracer_provider=lambda: found[0], ProxyTracerProvider=Proxy, NoOpTracerProvider=NoOp
    )
    assert provider_maybe_set(api) is False
    found[0] = TracerProvider()
    assert provider_maybe_set(api) is True


def test_the_captured_prompt_is_what_reaches_the_run_level_tracing_hook(spans):
    """docs/tracing.md (Privacy): ``gen_ai.input.messages`` holds what the run's options add
    outside tracing (``Swarm.run(prompt_context=)``, a Session's recall) and not what an agent's
    own options change inside it (a history view; a compiled graph's ``prompt_context=``,
    whose text its ``search_memory`` span holds)."""
    from swarmgraph.graph.features.history_views import last

    from swarmgraph import build_swarm_graph

    tracing.use_tracer_provider(tracing._chosen["provider"], capture_content=True)

    def recall(agent, messages):
        return "RECALLED"

    def chat_input() -> str:
        [chat] = [s for s in spans.get_finished_spans() if s.name.startswith("chat")]
        return chat.attributes["gen_ai.input.messages"]

    said = [user("first"), {"role": "assistant", "content": "ok", "sender": "A"}, user("second")]
    agent = Agent(name="A", history=last(1))
    Swarm(chat_model=ScriptedChatModel(["ok"])).run(agent, said, prompt_context=recall)
    assert "RECALLED" in chat_input() and "first" in chat_input()  # the view is inside
    spans.clear()
    app = build_swarm_graph([agent], chat_model=ScriptedChatModel(["ok"]), prompt_context=recall)
    app.compile().invoke({"messages": said})
    assert "RECALLED" not in chat_input()
    assert one(spans, "search_memory").attributes["swarmgraph.memory.text"] == "RECALLED"
