"""swarmgraph.temporal against a real Temporal dev server (tests/temporal_server.py).

Each test runs an in-process worker on its own task queue; the agents live in
tests/temporal_agents.py and are named by path, as a worker in another process would load
them. The model is the offline stand-in ``rule_model`` (a function of the prompt).
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import temporal_agents as agents
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner
from temporalio.workflow import NondeterminismError

from swarmgraph import Budget, BudgetExceeded, GuardrailTripped, Session, Swarm
from swarmgraph.temporal import (
    SwarmRun,
    TemporalInputError,
    TemporalRunFailed,
    TemporalUnavailable,
    connect,
    decide_on_temporal,
    pending_on_temporal,
    result_of,
    run_on_temporal,
    start_on_temporal,
    worker,
)

REF = "temporal_agents:triage"  # tests/ is on sys.path here, as a worker's own package would be


def on_worker(
    address: str, body: Callable[[Client, str], Awaitable[Any]], swarm: Swarm | None = None
) -> Any:
    """Run ``body(client, task_queue)`` while a worker (of ``swarm``, default one on the
    stand-in model) serves a fresh task queue."""

    async def main() -> Any:
        client = await connect(address)
        queue = f"q-{uuid.uuid4()}"
        served = swarm or Swarm(chat_model=agents.rule_model())
        async with worker(client, queue, [REF], swarm=served):
            return await asyncio.wait_for(body(client, queue), 60)

    return asyncio.run(main())


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_a_handoff_on_temporal_returns_what_swarm_run_returns(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        return await run_on_temporal(client, REF, user("lookup 7"), task_queue=queue)

    response = on_worker(temporal_address, body)
    local = Swarm(chat_model=agents.rule_model()).run(agents.triage, user("lookup 7"))
    assert response.agent is agents.sales  # the caller's own object: its module imports here
    assert response.messages == local.messages
    assert response.context_variables == local.context_variables
    assert response.usage == local.usage
    assert [step["kind"] for step in response.trajectory] == [
        step["kind"] for step in local.trajectory
    ]


def test_a_tool_changes_the_context_in_place_across_the_activity(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        return await run_on_temporal(client, REF, user("greet"), {"user": "Ming"}, task_queue=queue)

    response = on_worker(temporal_address, body)
    assert response.context_variables == {"user": "Ming", "greeted": True}
    assert response.messages[-1]["content"] == "Sales: noted"


def test_an_approval_waits_for_the_decide_update(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        handle = await start_on_temporal(client, REF, user("refund 7"), task_queue=queue)
        pending: list[Any] = []
        while not pending:
            pending = await pending_on_temporal(handle)
            await asyncio.sleep(0.05)
        with pytest.raises(WorkflowUpdateFailedError):  # an id nobody waits on is refused
            await decide_on_temporal(handle, {"call_nope": True})
        await decide_on_temporal(handle, {pending[0].id: True})
        return pending, await result_of(handle, REF)

    pending, response = on_worker(temporal_address, body)
    assert [(p.tool, p.arguments) for p in pending] == [("refund", {"order_id": 7})]
    assert [m.get("content") for m in response.messages][-2:] == [
        "refunded order 7",
        "Sales: refunded order 7",
    ]
    assert response.pending == []


def test_a_budget_stop_raises_budget_exceeded_with_the_response(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        with pytest.raises(BudgetExceeded) as caught:
            await run_on_temporal(
                client, REF, user("lookup 7"), task_queue=queue, budget=Budget(max_handoffs=0)
            )
        return caught.value

    error = on_worker(temporal_address, body)
    assert error.limit == "max_handoffs" and error.agent == "Triage"
    assert error.response.messages[0]["tool_calls"][0]["function"]["name"] == "transfer_to_sales"


def test_unserialisable_context_is_refused_before_anything_starts(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        with pytest.raises(TemporalInputError, match="context_variables must be plain JSON"):
            await start_on_temporal(client, REF, user("hi"), {"when": object()}, task_queue=queue)
        listed = [w async for w in client.list_workflows(f"TaskQueue = '{queue}'")]
        return listed

    assert on_worker(temporal_address, body) == []  # nothing was started


def test_an_agent_the_worker_cannot_import_fails_the_run_at_once(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        with pytest.raises(TemporalInputError, match="cannot import agent 'no_such_app:triage'"):
            await run_on_temporal(client, "no_such_app:triage", user("hi"), task_queue=queue)

    on_worker(temporal_address, body)


def test_a_worker_refuses_an_agent_it_cannot_import_before_polling(temporal_address: str) -> None:
    async def main() -> None:
        client = await connect(temporal_address)
        with pytest.raises(TemporalInputError, match="cannot import agent"):
            worker(client, "q", ["no_such_app:triage"], chat_model=agents.rule_model())

    asyncio.run(main())


def test_a_server_that_is_down_is_a_clear_error() -> None:
    from servers import free_port

    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(TemporalUnavailable, match=f"no Temporal server answered at {address}"):
        asyncio.run(connect(address))


def test_an_error_of_the_run_fails_it_with_its_kind_and_response(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        with pytest.raises(TemporalRunFailed) as caught:
            await run_on_temporal(client, REF, user("lookup 7"), task_queue=queue)
        return caught.value

    strict = Swarm(chat_model=agents.rule_model(), max_consecutive_handoffs=1)
    error = on_worker(temporal_address, body, swarm=strict)
    assert error.kind == "HandoffLoopError"
    assert "Triage" in str(error) and "Sales" in str(error)


def test_each_run_gets_its_own_idempotency_keys(temporal_address: str, tmp_path: Path) -> None:
    """The same conversation (same call ids) in two workflows: two keys, so a payment API
    told to de-duplicate on them charges each run once, not the second run never."""
    tally = tmp_path / "tally.sqlite"

    async def body(client: Client, queue: str) -> Any:
        for run in ("a", "b"):
            response = await run_on_temporal(
                client, REF, user("charge 7"), task_queue=queue, id=f"{queue}-{run}"
            )
            assert response.messages[-1]["content"] == "Sales: charged order 7"

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWARMGRAPH_TEMPORAL_TALLY", str(tally))
        on_worker(temporal_address, body)
    with sqlite3.connect(tally) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM charges")]
    assert len(keys) == 2 and len(set(keys)) == 2 and all(len(k) == 32 for k in keys)


def test_a_fan_out_runs_its_branches_at_once_and_joins_as_in_process(
    temporal_address: str, tmp_path: Path
) -> None:
    tally = tmp_path / "tally.sqlite"

    async def body(client: Client, queue: str) -> Any:
        return await run_on_temporal(client, REF, user("ask both"), task_queue=queue)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWARMGRAPH_TEMPORAL_TALLY", str(tally))
        patch.setenv("SWARMGRAPH_TEMPORAL_STOCK_S", "1.0")
        response = on_worker(temporal_address, body)
        with sqlite3.connect(tally) as db:
            spans = sorted(db.execute("SELECT item, began, ended FROM stock"))
        local = Swarm(chat_model=agents.rule_model()).run(agents.triage, user("ask both"))
    assert response.messages == local.messages
    assert [(b["branch"], b["status"], b["answer"]) for b in response.branches] == [
        (b["branch"], b["status"], b["answer"]) for b in local.branches
    ]
    # the two branches' tool calls (activities) were running at the same time
    (_, began_a, ended_a), (_, began_b, ended_b) = spans
    assert began_a < ended_b and began_b < ended_a


def test_a_session_turn_is_saved_by_an_activity_and_read_by_a_plain_session(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"

    async def body(client: Client, queue: str) -> Any:
        first = await run_on_temporal(
            client,
            REF,
            user("lookup 7"),
            {"user": "Ming"},
            task_queue=queue,
            conversation_id="conv-7",
            session_url=url,
        )
        second = await run_on_temporal(
            client,
            REF,
            user("greet"),
            task_queue=queue,
            conversation_id="conv-7",
            session_url=url,
        )
        return first, second

    first, second = on_worker(temporal_address, body)
    assert first.agent is agents.sales
    # the second turn starts where the first left: at Sales, with the stored context
    assert second.messages[0]["sender"] == "Sales"
    assert second.context_variables == {"user": "Ming", "greeted": True}
    stored = Session("conv-7", url=url)
    assert stored.context_variables == {"user": "Ming", "greeted": True}
    contents = [m.content for m in stored.messages]
    assert contents[0] == "lookup 7" and "greet" in contents
    assert contents[-1] == "Sales: noted"
    assert len(contents) == 1 + len(first.messages) + 1 + len(second.messages)
    # and a plain Session goes on from it, in process, at the stored agent
    later = Session("conv-7", url=url).run(
        Swarm(chat_model=agents.rule_model()), agents.triage, "lookup 7"
    )
    assert later.messages[0]["sender"] == "Sales"


def test_a_replay_that_would_send_another_prompt_is_caught(temporal_address: str) -> None:
    """The recorded history replays as it is; after the instructions change (a function of
    the clock, say), the same history no longer fits the code, and Temporal says so."""

    async def body(client: Client, queue: str) -> Any:
        handle = await start_on_temporal(client, REF, user("lookup 7"), task_queue=queue)
        await result_of(handle, REF)
        return await handle.fetch_history()

    history = on_worker(temporal_address, body)

    def replay() -> Any:
        replayer = Replayer(workflows=[SwarmRun], workflow_runner=UnsandboxedWorkflowRunner())
        return asyncio.run(replayer.replay_workflow(history, raise_on_replay_failure=False))

    assert replay().replay_failure is None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agents.sales, "instructions", "Sales: answer orders, it is 9 o'clock.")
        failure = replay().replay_failure
    assert isinstance(failure, NondeterminismError), failure


def test_a_tool_that_puts_what_json_cannot_hold_in_the_context_is_told(
    temporal_address: str,
) -> None:
    async def body(client: Client, queue: str) -> Any:
        return await run_on_temporal(client, REF, user("greet"), {"odd": True}, task_queue=queue)

    response = on_worker(temporal_address, body)
    answer = response.messages[-2]["content"]
    assert answer.startswith("Error: remember raised TemporalInputError:"), answer
    assert "must be plain JSON" in answer and "the change was dropped" in answer
    assert response.context_variables == {"odd": True}  # the stored context stays whole


@pytest.mark.parametrize(
    "text,context",
    [("money back", {}), ("money back", {"order_id": 7})],
    ids=["refused", "admitted"],
)
def test_a_precondition_decides_a_handoff_as_in_process(
    temporal_address: str, text: str, context: dict
) -> None:
    async def body(client: Client, queue: str) -> Any:
        return await run_on_temporal(client, REF, user(text), context, task_queue=queue)

    response = on_worker(temporal_address, body)
    local = Swarm(chat_model=agents.rule_model()).run(agents.triage, user(text), context)
    assert response.agent is local.agent and response.messages == local.messages
    assert [s["kind"] for s in response.trajectory] == [s["kind"] for s in local.trajectory]
    assert "precondition" in [s["kind"] for s in response.trajectory]


def test_a_tripped_guardrail_fails_the_run_with_its_response(temporal_address: str) -> None:
    async def body(client: Client, queue: str) -> Any:
        with pytest.raises(TemporalRunFailed) as caught:
            await run_on_temporal(client, REF, user("LOOKUP NOW"), task_queue=queue)
        return caught.value

    error = on_worker(temporal_address, body)
    with pytest.raises(GuardrailTripped) as local:
        Swarm(chat_model=agents.rule_model()).run(agents.triage, user("LOOKUP NOW"))
    assert error.kind == "GuardrailTripped" and str(error) == str(local.value)
    assert error.response.messages == local.value.response.messages


def test_a_typed_context_is_validated_and_reduced_in_the_workflow_as_in_process(
    temporal_address: str,
) -> None:
    """``Swarm(context_schema=)`` on the worker: the input validated (``"7"`` read as 7), a
    reducer applied, a tool's ``context_variables: Desk`` instance written back, a refused
    write answered to the model, as in-process; the Response holds the JSON of the context."""
    from swarmgraph import ScriptedChatModel, scripted_tool_call
    from swarmgraph.temporal.wire import context_out

    def script() -> ScriptedChatModel:
        calls = ["count_visit", "count_visit", "book_day", "spoil"]
        replies = [scripted_tool_call(name, id=f"c{n}") for n, name in enumerate(calls)]
        return ScriptedChatModel([*replies, "Done."])

    here = Swarm(chat_model=script(), context_schema=agents.Desk).run(
        agents.typed_desk, user("hi"), {"order_id": "7"}
    )

    async def body(client: Client, queue: str) -> Any:
        ref = "temporal_agents:typed_desk"
        with pytest.raises(TemporalRunFailed) as refused:
            await run_on_temporal(client, ref, user("hi"), {"order_id": "seven"}, task_queue=queue)
        done = await run_on_temporal(client, ref, user("hi"), {"order_id": "7"}, task_queue=queue)
        return refused.value, done

    typed = Swarm(chat_model=script(), context_schema=agents.Desk)
    refused, there = on_worker(temporal_address, body, swarm=typed)
    assert refused.kind == "ContextValidationError" and "order_id" in str(refused)
    assert there.context_variables == {"order_id": 7, "visits": 2, "day": "2024-05-01"}
    assert context_out(here.context_variables) == there.context_variables
    said = [m.get("content") for m in there.messages]
    assert said == [m.get("content") for m in here.messages]
    assert said[-2].startswith("Error:") and "visits" in said[-2]  # spoil's write refused


class _CountingModel(agents.RuleModel):
    """The stand-in, noting how many of its calls wait at once (``peak``)."""

    async def _agenerate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        _CALLS["now"] += 1
        _CALLS["peak"] = max(_CALLS["peak"], _CALLS["now"])
        try:
            return await super()._agenerate(messages, *args, **kwargs)
        finally:
            _CALLS["now"] -= 1


_CALLS = {"now": 0, "peak": 0}


def test_a_worker_of_bounded_capacity_runs_that_many_calls_at_once(temporal_address: str) -> None:
    # max_concurrent_activities is a worker's capacity: six runs started at once, each
    # model call waiting 100 ms, never have more than two calls in flight on this worker
    _CALLS.update(now=0, peak=0)
    model = _CountingModel([agents.rule] * 1_000, latency=0.1)

    async def main() -> list[Any]:
        client = await connect(temporal_address)
        queue = f"q-{uuid.uuid4()}"
        async with worker(
            client, queue, [REF], swarm=Swarm(chat_model=model), max_concurrent_activities=2
        ):
            handles = [
                await start_on_temporal(client, REF, user("lookup 7"), task_queue=queue)
                for _ in range(6)
            ]
            return await asyncio.wait_for(asyncio.gather(*(result_of(h) for h in handles)), 60)

    responses = asyncio.run(main())
    local = Swarm(chat_model=agents.rule_model()).run(agents.triage, user("lookup 7"))
    assert all(r.messages == local.messages for r in responses)
    assert _CALLS["peak"] == 2  # bounded, and the bound was reached (the runs overlapped)


def test_the_worker_command_refuses_a_capacity_below_one_before_connecting() -> None:
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    command = [sys.executable, "-m", "swarmgraph", "worker", f"{tests}/temporal_agents.py:triage"]
    command += ["--temporal", "127.0.0.1:1", "--task-queue", "q", "--offline"]
    done = subprocess.run(
        [*command, "--max-concurrent-activities", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "--max-concurrent-activities must be 1 or more, got 0" in done.stderr
    assert "no Temporal server answered" not in done.stderr  # refused before connecting


def test_what_a_temporal_run_does_not_carry_is_refused_before_it_starts(
    temporal_address: str, tmp_path: Path
) -> None:
    app = tmp_path / "memo_app.py"
    app.write_text(
        "from swarmgraph import Agent\n"
        "memo = Agent(name='Memo', memory_tools=True)\n"
        "desk = Agent(name='Desk', handoffs=[memo])\n"
    )
    ref = f"{app}:desk"

    async def main() -> None:
        client = await connect(temporal_address)
        # an agent reaching memory tools: no worker serves it, no run of it starts
        with pytest.raises(TemporalInputError, match="agent 'Memo' has memory_tools=True"):
            worker(client, "q-memo", [ref], chat_model=agents.rule_model())
        with pytest.raises(TemporalInputError, match="the memory tools are not carried"):
            await start_on_temporal(client, ref, user("hi"), task_queue="q-memo")
        turn = {"conversation_id": "conv-carried", "session_url": f"sqlite:///{tmp_path}/c.db"}
        with pytest.raises(TemporalInputError, match="summary memory policy is not carried"):
            await start_on_temporal(
                client, REF, user("hi"), task_queue="q", session_options={"memory": "summary:5"},
                **turn,
            )  # fmt: skip
        for option in ("merge", "extract"):
            with pytest.raises(TypeError, match=f"not \\['{option}'\\]"):
                await start_on_temporal(
                    client, REF, user("hi"), task_queue="q", session_options={option: "x"}, **turn
                )
        with pytest.raises(TypeError, match="a LongTermMemory object cannot cross"):
            await start_on_temporal(
                client, REF, user("hi"), task_queue="q", session_options={"long_term": object()},
                **turn,
            )  # fmt: skip
        # nothing of any of them started on the server
        count = await client.count_workflows("TaskQueue = 'q-memo' OR TaskQueue = 'q'")
        assert count.count == 0

    asyncio.run(main())


def test_the_dev_server_is_ready_only_once_its_frontend_serves_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A listening port is not a serving frontend: a loaded machine answered "Frontend is not
    healthy yet" to the first test's call. ``start()`` returns only once a namespace read works,
    and says why when it never does."""
    from swarmgraph.temporal import dev_server

    answers = ["Frontend is not healthy yet", "Frontend is not healthy yet", ""]
    probes: list[list[str]] = []
    real_run = subprocess.run

    def probe(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if command[1:4] != ["operator", "namespace", "describe"]:
            return real_run(command, **kwargs)
        probes.append(command)
        said = answers.pop(0) if answers else "Frontend is not healthy yet"
        return subprocess.CompletedProcess(command, 1 if said else 0, "", said)

    monkeypatch.setattr(dev_server.subprocess, "run", probe)
    with dev_server.DevServer() as server:
        assert len(probes) == 3 and server.address in probes[0]
    with pytest.raises(dev_server.DevServerError, match="not ready: Frontend is not healthy yet"):
        dev_server.DevServer().start(timeout=1.5)
