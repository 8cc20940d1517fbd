"""One run on Temporal is one trace (issue 32 item 4), on the real dev server.

Each scenario runs in a fresh interpreter: the plugin needs the *global* tracer provider to be
temporalio's replay-safe one, and a process sets its global provider once (the other tests
must keep seeing none). The spans come back from the SDK's in-memory exporter as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from swarmgraph.temporal import TemporalInputError, connect

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """
import asyncio, json, sys, uuid
sys.path.insert(0, "tests")
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.contrib.opentelemetry import create_tracer_provider

exporter = InMemorySpanExporter()
provider = create_tracer_provider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

import temporal_agents as agents
from swarmgraph import Swarm
from swarmgraph.temporal import (
    connect, decide_on_temporal, pending_on_temporal, result_of, run_on_temporal,
    start_on_temporal, worker,
)

REF = "temporal_agents:triage"
ADDRESS = sys.argv[1]


def serve(client, queue):
    return worker(client, queue, [REF], swarm=Swarm(chat_model=agents.rule_model()))


def user(text):
    return [{"role": "user", "content": text}]


def report(**extra):
    spans = [
        {
            "name": s.name,
            "trace": f"{s.context.trace_id:032x}",
            "id": f"{s.context.span_id:016x}",
            "parent": None if s.parent is None else f"{s.parent.span_id:016x}",
        }
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps({"spans": spans, **extra}))
"""


def scenario(address: str, body: str) -> dict[str, Any]:
    """Run ``PRELUDE + body`` against the dev server; what its ``report(...)`` printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body), address],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def by_id(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in spans}


def parent_name(spans: list[dict[str, Any]], span: dict[str, Any]) -> str | None:
    parent = by_id(spans).get(span["parent"] or "")
    return None if parent is None else str(parent["name"])


def one(spans: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [s for s in spans if s["name"] == name]
    assert len(found) == 1, (name, [s["name"] for s in spans])
    return found[0]


def test_a_run_on_temporal_is_one_trace_under_the_callers_span(temporal_address: str) -> None:
    out = scenario(
        temporal_address,
        """
        async def main():
            client = await connect(ADDRESS)
            queue = f"q-{uuid.uuid4()}"
            async with serve(client, queue):
                with trace.get_tracer("caller").start_as_current_span("caller"):
                    response = await run_on_temporal(
                        client, REF, user("lookup 7"), task_queue=queue
                    )
            return response.messages[-1]["content"]

        answer = asyncio.run(main())
        report(answer=answer, seen=agents.TRACE_SEEN)
        """,
    )
    spans = out["spans"]
    assert out["answer"] == "Sales: order 7: shipped"
    assert {s["trace"] for s in spans} == {one(spans, "caller")["trace"]}  # one trace
    root = one(spans, "invoke_workflow Triage")
    assert parent_name(spans, root) == "RunWorkflow:swarmgraph.SwarmRun"
    assert parent_name(spans, one(spans, "RunWorkflow:swarmgraph.SwarmRun")) == (
        "StartWorkflow:swarmgraph.SwarmRun"
    )
    assert parent_name(spans, one(spans, "StartWorkflow:swarmgraph.SwarmRun")) == "caller"
    assert parent_name(spans, one(spans, "invoke_agent Triage")) == "invoke_workflow Triage"
    assert parent_name(spans, one(spans, "invoke_agent Sales")) == "invoke_workflow Triage"
    tool = one(spans, "execute_tool lookup_order")
    assert parent_name(spans, tool) == "invoke_agent Sales"
    chats = [s for s in spans if s["name"] == "chat gpt-4o"]
    assert sorted(parent_name(spans, c) or "" for c in chats) == [
        "invoke_agent Sales",
        "invoke_agent Sales",
        "invoke_agent Triage",
    ]
    # Each call's activity runs under the span that scheduled it, on the worker...
    ran_under: dict[str, str] = {}
    for call in [*chats, tool]:
        [started] = [s for s in spans if s["parent"] == call["id"]]
        assert started["name"].startswith("StartActivity:swarmgraph.")
        [ran] = [s for s in spans if s["parent"] == started["id"]]
        assert ran["name"] == started["name"].replace("Start", "Run", 1)
        ran_under[call["id"]] = ran["id"]
    # ...so the tool itself runs inside its execute_tool span's subtree.
    [seen] = out["seen"]
    trace_id, span_id = seen.split("-")[1:3]
    assert (trace_id, span_id) == (tool["trace"], ran_under[tool["id"]])


APPROVAL = """
async def main(restart):
    client = await connect(ADDRESS)
    queue = f"q-{uuid.uuid4()}"
    async with serve(client, queue):
        handle = await start_on_temporal(client, REF, user("refund 7"), task_queue=queue)
        pending = []
        while not pending:
            pending = await pending_on_temporal(handle)
            await asyncio.sleep(0.05)
        if not restart:
            await decide_on_temporal(handle, {pending[0].id: True})
            return (await result_of(handle, REF)).messages[-1]["content"]
    # the first worker is gone: a new one replays the run from its history
    async with serve(client, queue):
        await decide_on_temporal(handle, {pending[0].id: True})
        return (await result_of(handle, REF)).messages[-1]["content"]

answer = asyncio.run(main(RESTART))
report(answer=answer)
"""


def run_trace(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spans of the run's trace (the client's queries and updates, made outside any span
    of the caller, are traces of their own)."""
    started = one(spans, "StartWorkflow:swarmgraph.SwarmRun")
    return [s for s in spans if s["trace"] == started["trace"]]


def test_an_approval_run_is_one_trace_and_a_replay_adds_no_span(temporal_address: str) -> None:
    kept, replaced = (
        scenario(temporal_address, f"RESTART = {restart}\n" + APPROVAL) for restart in (0, 1)
    )
    for out in (kept, replaced):
        assert out["answer"] == "Sales: refunded order 7"
        spans = run_trace(out["spans"])
        queries = [s for s in out["spans"] if s["name"] == "QueryWorkflow:pending"]
        assert queries and not any(q in spans for q in queries)  # made outside any span
        assert len({s["id"] for s in spans}) == len(spans)  # no span exported twice
        run = one(spans, "RunWorkflow:swarmgraph.SwarmRun")
        # the workflow's two engine runs (before and after the decision) under RunWorkflow
        roots = [s for s in spans if s["name"].startswith("invoke_workflow ")]
        assert sorted(s["name"] for s in roots) == [
            "invoke_workflow Sales",
            "invoke_workflow Triage",
        ]
        assert {s["parent"] for s in roots} == {run["id"]}
        refund = one(spans, "execute_tool refund")
        assert parent_name(spans, refund) == "invoke_agent Sales"
        assert parent_name(spans, by_id(spans)[refund["parent"]]) == "invoke_workflow Sales"
        assert [s["name"] for s in spans if s["parent"] not in by_id(spans)] == [
            "StartWorkflow:swarmgraph.SwarmRun"  # the one root: every other parent was exported
        ]
    # The run its second worker replayed from history exports what the one that never left
    # its worker did: the replayed spans are not ended (exported) again.
    names = [Counter(s["name"] for s in run_trace(out["spans"])) for out in (kept, replaced)]
    assert names[0] == names[1]
    assert names[0]["chat gpt-4o"] == 3 and names[0]["RunActivity:swarmgraph.model_call"] == 3


def test_tracing_asked_for_without_a_replay_safe_provider_is_refused() -> None:
    with pytest.raises(TemporalInputError, match="create_tracer_provider"):
        asyncio.run(connect("127.0.0.1:1", tracing=True))


def test_a_run_that_fails_still_exports_its_root_span_with_the_error(
    temporal_address: str,
) -> None:
    """temporalio's replay-safe span is not ended when it recorded an exception that is not a
    workflow failure (a task failure, retried); the run's own errors fail the workflow, so
    the worker counts them as failures and the root span is exported with its error."""
    out = scenario(
        temporal_address,
        """
        from swarmgraph.temporal import TemporalRunFailed

        async def main():
            client = await connect(ADDRESS)
            queue = f"q-{uuid.uuid4()}"
            strict = Swarm(chat_model=agents.rule_model(), max_consecutive_handoffs=1)
            async with worker(client, queue, [REF], swarm=strict):
                try:
                    await run_on_temporal(client, REF, user("lookup 7"), task_queue=queue)
                except TemporalRunFailed as failed:
                    return failed.kind

        kind = asyncio.run(main())
        status = {s.name: s.status.status_code.name for s in exporter.get_finished_spans()}
        report(answer=kind, status=status)
        """,
    )
    assert out["answer"] == "HandoffLoopError"
    spans = run_trace(out["spans"])
    root = one(spans, "invoke_workflow Triage")
    assert out["status"][root["name"]] == "ERROR"
    assert [s["name"] for s in spans if s["parent"] not in by_id(spans)] == [
        "StartWorkflow:swarmgraph.SwarmRun"
    ]
