"""kill -9 of a Temporal worker process mid-run: a second worker finishes every run.

The workers are ``swarmgraph worker`` processes (the CLI) on one task queue, the dev server is
the session's (tests/temporal_server.py). The tools count their runs in a SQLite side table
(tests/temporal_agents.py), the witness of what really ran; afterwards Temporal's replayer
replays every recorded history against the workflow code.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from swarmgraph.temporal import (
    ActivityOptions,
    SwarmRun,
    connect,
    decide_on_temporal,
    pending_on_temporal,
    result_of,
    start_on_temporal,
)

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
REF = "temporal_agents:triage"
RUNS = 10


class WorkerProcess:
    """``swarmgraph worker`` in a process of its own; ``kill()`` is kill -9."""

    def __init__(self, address: str, queue: str, tally: Path, **slow: float) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
            "SWARMGRAPH_TEMPORAL_TALLY": str(tally),
            # how long the stand-in model and the slow tools take in this worker
            **{f"SWARMGRAPH_TEMPORAL_{name.upper()}": str(value) for name, value in slow.items()},
        }
        command = [sys.executable, "-m", "swarmgraph", "worker", REF, "--temporal", address]
        command += ["--task-queue", queue, "--chat-model", "temporal_agents:rule_model"]
        self.proc = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until it is polling (or has died)
        assert line.startswith("worker ready"), line + self.proc.stdout.read()

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def rows(tally: Path, sql: str) -> list[tuple[Any, ...]]:
    if not tally.exists():
        return []
    with sqlite3.connect(tally, timeout=30) as db:
        try:
            return list(db.execute(sql))
        except sqlite3.OperationalError:  # the table does not exist yet
            return []


async def wait_for(check: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def replay_all(client: Client, handles: list[Any]) -> None:
    """Temporal's replayer accepts every recorded history (the workflow is deterministic)."""
    replayer = Replayer(workflows=[SwarmRun], workflow_runner=UnsandboxedWorkflowRunner())
    for handle in handles:
        result = await replayer.replay_workflow(
            await handle.fetch_history(), raise_on_replay_failure=False
        )
        assert result.replay_failure is None, handle.id


def kill_during(
    address: str,
    tally: Path,
    text: str,
    slow: dict[str, float],
    started: tuple[str, int],
    finished: str,
    in_doubt: str = "ask",
    then: Any = None,
) -> list[Any]:
    """Start ``RUNS`` runs of ``text`` on a worker made slow by ``slow``; once ``started``
    (a ``starts`` key prefix, how many) are in flight and no ``finished`` row exists, kill -9
    it; a second, fast worker finishes them. Their responses; their histories replayed."""
    queue = f"faults-{uuid.uuid4()}"
    # a dead worker's calls are noticed within a second (they heartbeat)
    options = ActivityOptions(tool_heartbeat_s=1.0, model_heartbeat_s=1.0, in_doubt=in_doubt)
    prefix, count = started

    def in_flight() -> int:
        return len(rows(tally, f"SELECT * FROM starts WHERE key LIKE '{prefix}%'"))

    async def main() -> list[Any]:
        client = await connect(address)
        first = WorkerProcess(address, queue, tally, **slow)
        second = None
        try:
            handles = [
                await start_on_temporal(
                    client,
                    REF,
                    [{"role": "user", "content": text}],
                    task_queue=queue,
                    id=f"{queue}-{n}",
                    options=options,
                )
                for n in range(RUNS)
            ]
            await wait_for(lambda: in_flight() >= count)
            assert rows(tally, finished) == []  # every run is inside the slow call: now
            first.kill()
            second = WorkerProcess(address, queue, tally)
            if then is not None:  # e.g. decide what waits
                await then(handles)
            responses = [await asyncio.wait_for(result_of(h, REF), 90) for h in handles]
            await replay_all(client, handles)
            return responses
        finally:
            first.stop()
            if second is not None:
                second.stop()

    return asyncio.run(main())


def test_kill_9_during_a_tool_call_a_second_worker_finishes_every_run(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    responses = kill_during(
        temporal_address,
        tally,
        "charge 7",
        {"charge_s": 6.0},
        ("charge", RUNS),  # all ten inside the slow charge
        "SELECT * FROM charges",
    )
    assert all(r.messages[-1]["content"] == "Sales: charged order 7" for r in responses)
    # each run's charge completed exactly once, under its own key
    charges = rows(tally, "SELECT key FROM charges")
    done = rows(tally, "SELECT key, COUNT(*) FROM runs WHERE tool = 'slow_charge' GROUP BY key")
    assert len(charges) == RUNS and sorted(done) == sorted((k, 1) for (k,) in charges)
    # the killed attempts started and never finished; the second worker's started again
    assert len(rows(tally, "SELECT * FROM starts WHERE key LIKE 'charge%'")) == 2 * RUNS


def test_kill_9_during_a_model_call_a_second_worker_finishes_every_run(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    responses = kill_during(
        temporal_address,
        tally,
        "lookup 7",
        {"model_s": 6.0},
        ("model", RUNS),  # every run's first model call (Triage's) is waiting
        "SELECT * FROM runs",
    )
    assert all(r.messages[-1]["content"] == "Sales: order 7: shipped" for r in responses)
    assert all(r.agent.name == "Sales" and r.usage["model_calls"] == 3 for r in responses)
    # the lookup each run made ran once: the model calls were retried, no tool twice
    assert rows(tally, "SELECT COUNT(*) FROM runs WHERE tool = 'lookup_order'") == [(RUNS,)]


def test_kill_9_during_a_fan_out_a_second_worker_finishes_every_run(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    responses = kill_during(
        temporal_address,
        tally,
        "ask both",
        {"stock_s": 6.0},
        ("stock", 2 * RUNS),  # both branches of every run inside their stock check
        "SELECT * FROM stock",
    )
    assert all(r.messages[-1]["content"].startswith("Sales: both answered") for r in responses)
    assert all([b["status"] for b in r.branches] == ["answered"] * 2 for r in responses)
    # each branch's check completed once (on the second worker), for every run
    assert rows(tally, "SELECT COUNT(*) FROM stock") == [(2 * RUNS,)]


def test_kill_9_during_a_tool_that_is_not_idempotent_asks_a_human(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    asked: list[Any] = []

    async def decide(handles: list[Any]) -> None:
        """Half run again, half answered by hand ("it did")."""
        for n, handle in enumerate(handles):
            found: list[Any] = []
            while not found:
                found = await pending_on_temporal(handle)
                await asyncio.sleep(0.1)
            asked.append(found)
            answer = True if n % 2 == 0 else "noted by hand"
            await decide_on_temporal(handle, {found[0].id: answer})

    responses = kill_during(
        temporal_address,
        tally,
        "note 7",
        {"note_s": 6.0},
        ("note", RUNS),  # every run inside its (not idempotent) note
        "SELECT * FROM runs",
        then=decide,
    )
    assert all(
        [(p.tool, p.arguments, p.in_doubt) for p in found] == [("slow_note", {"order_id": 7}, True)]
        for found in asked
    )
    answers = [r.messages[-1]["content"] for r in responses]
    assert answers == ["Sales: noted order 7", "Sales: noted by hand"] * (RUNS // 2)
    # ten attempts lost, five run again (each once), none run twice without a decision
    assert len(rows(tally, "SELECT * FROM starts WHERE key LIKE 'note%'")) == RUNS + RUNS // 2
    assert rows(tally, "SELECT COUNT(*) FROM runs WHERE tool = 'slow_note'") == [(RUNS // 2,)]


def test_kill_9_during_a_tool_that_is_not_idempotent_leaves_it_in_doubt(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    responses = kill_during(
        temporal_address,
        tally,
        "note 7",
        {"note_s": 6.0},
        ("note", RUNS),  # every run inside its (not idempotent) note
        "SELECT * FROM runs",
        in_doubt="error",
    )
    # the second worker finished every run; the model read that the note is in doubt
    for response in responses:
        answer = response.messages[-2]["content"]
        assert answer.startswith("Error: slow_note raised ToolInDoubt:"), answer
        assert "may or may not have happened" in answer
    # and no note was run again: ten attempts started (all killed), none on the second worker
    assert len(rows(tally, "SELECT * FROM starts WHERE key LIKE 'note%'")) == RUNS
    assert rows(tally, "SELECT * FROM runs") == []


def test_an_approval_is_answered_after_the_worker_was_killed(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"
    queue = f"approve-{uuid.uuid4()}"

    async def main() -> None:
        client = await connect(temporal_address)
        first = WorkerProcess(temporal_address, queue, tally)
        second = None
        try:
            handles = [
                await start_on_temporal(
                    client, REF, [{"role": "user", "content": "refund 7"}], task_queue=queue
                )
                for _ in range(RUNS)
            ]
            pending = []
            for handle in handles:
                found: list[Any] = []
                while not found:
                    found = await pending_on_temporal(handle)
                    await asyncio.sleep(0.05)
                pending.append(found)
            first.kill()  # nothing holds the waiting runs: a new worker takes them up
            second = WorkerProcess(temporal_address, queue, tally)
            for handle, found in zip(handles, pending, strict=True):
                await decide_on_temporal(handle, {found[0].id: True})
            responses = [await asyncio.wait_for(result_of(h, REF), 60) for h in handles]
            assert all(r.messages[-1]["content"] == "Sales: refunded order 7" for r in responses)
            assert rows(tally, "SELECT COUNT(*) FROM runs WHERE tool = 'refund'") == [(RUNS,)]
            await replay_all(client, handles)
        finally:
            first.stop()
            if second is not None:
                second.stop()

    asyncio.run(main())


def test_the_worker_command_serves_with_the_cli_model_and_stops_on_sigterm(
    temporal_address: str,
) -> None:
    command = [sys.executable, "-m", "swarmgraph", "worker", f"{TESTS}/temporal_agents.py:triage"]
    command += ["--temporal", temporal_address, "--task-queue", f"cli-{uuid.uuid4()}", "--offline"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    note, line = proc.stdout.readline(), proc.stdout.readline()
    assert "only knows the demo agents" in note, note  # why your agents' runs get echoes
    assert line.startswith("worker ready") and "agents Triage, Sales" in line, line
    assert "offline demo model" in line  # --offline: the model swarmgraph chat would use
    proc.terminate()
    assert proc.wait(timeout=30) == 0


def test_the_run_command_starts_a_run_the_workers_answer(
    temporal_address: str, tmp_path: Path
) -> None:
    queue = f"cli-run-{uuid.uuid4()}"
    served = WorkerProcess(temporal_address, queue, tmp_path / "tally.sqlite")
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    env = {**os.environ, "PYTHONPATH": str(TESTS)}

    def run(*words: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "swarmgraph", "run", REF, *words]
        command += ["--temporal", temporal_address, "--task-queue", queue]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    try:
        done = run("lookup 7", "--session", "conv-cli", "--db", url)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "Sales: Sales: order 7: shipped"
        assert done.stdout.startswith("workflow swarm-")
        waiting = run("refund 7")
        assert waiting.returncode == 3, waiting.stderr
        assert "waiting for approval: call_refund_" in waiting.stdout
        assert "refund(order_id=7)" in waiting.stdout
        assert "decide_on_temporal(client.get_workflow_handle(" in waiting.stdout  # what next
    finally:
        served.stop()
    from swarmgraph import Session

    stored = Session("conv-cli", url=url)
    assert [m.content for m in stored.messages][-1] == "Sales: order 7: shipped"
