"""A Session turn on Temporal keeps the Session rules, checked against a plain ``Session`` on
the same SQLite file: the memory policy's window is what the model saw, the long-term recall
is in the system prompt, and a stored turn id is never run twice (either way round).

The model is the offline stand-in ``rule_model`` (tests/temporal_agents.py); it records
every prompt (``ScriptedChatModel.calls``), on the worker (in process here) and in process.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
import temporal_agents as agents
from langchain_core.messages import BaseMessage
from swarmgraph.graph.features.effects import default_idempotency_key, effect_key
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.effect_ledger import EFFECT
from swarmgraph.memory.errors import TurnInProgress

from swarmgraph import Budget, BudgetExceeded, Session, Swarm
from swarmgraph.temporal import (
    connect,
    events_on_temporal,
    result_of,
    run_on_temporal,
    start_on_temporal,
    worker,
)
from swarmgraph.temporal.client import turn_workflow_id

REF = "temporal_agents:triage"


def seen(prompt: list[BaseMessage]) -> list[tuple[str, str]]:
    """A prompt as (type, text): what the model read, without message ids."""
    return [(m.type, str(m.content)) for m in prompt]


def on_temporal(address: str, model: Any, *turns: dict[str, Any]) -> list[Any]:
    """Each turn (``run_on_temporal`` keywords, ``text`` the user's words) in order, on a
    worker of ``Swarm(chat_model=model)`` serving a fresh task queue."""

    async def main() -> list[Any]:
        client = await connect(address)
        queue = f"q-{uuid.uuid4()}"
        out = []
        async with worker(client, queue, [REF], swarm=Swarm(chat_model=model)):
            for turn in turns:
                args = dict(turn)
                text = args.pop("text")
                run = run_on_temporal(
                    client, REF, [{"role": "user", "content": text}], task_queue=queue, **args
                )
                out.append(await asyncio.wait_for(run, 60))
        return out

    return asyncio.run(main())


def seed(url: str, conversation: str) -> None:
    """Three earlier turns, stored by a plain Session."""
    session = Session(conversation, url=url)
    for text in ("lookup 7", "greet", "lookup 7"):
        session.run(Swarm(chat_model=agents.rule_model()), agents.triage, text)


def test_the_memory_window_is_what_the_model_saw_as_in_a_plain_session(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    seed(url, "conv-plain")
    seed(url, "conv-temporal")
    plain = agents.rule_model()
    Session("conv-plain", url=url, window=3).run(Swarm(chat_model=plain), agents.triage, "hi")
    remote = agents.rule_model()
    on_temporal(
        temporal_address,
        remote,
        {"text": "hi", "conversation_id": "conv-temporal", "session_url": url,
         "session_options": {"window": 3}},
    )  # fmt: skip
    assert seen(remote.calls[0]) == seen(plain.calls[0])
    # the window: the Sales system prompt, the last 3 stored messages, the new input
    assert len(remote.calls[0]) == 1 + 3 + 1
    assert seen(remote.calls[0])[-1] == ("human", "hi")
    stored = seen(Session("conv-temporal", url=url).messages)
    assert stored == seen(Session("conv-plain", url=url).messages)


def test_long_term_recall_is_in_the_system_prompt_as_in_a_plain_session(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    LongTermMemory(url, user_id="ming").remember("dog_name", "Rex", text="My dog is Rex.")
    plain = agents.rule_model()
    Session("c-plain", url=url, user_id="ming", long_term=True).run(
        Swarm(chat_model=plain), agents.triage, "how is my dog?"
    )
    remote = agents.rule_model()
    on_temporal(
        temporal_address,
        remote,
        {"text": "how is my dog?", "conversation_id": "c-temporal", "session_url": url,
         "session_options": {"user_id": "ming", "long_term": True}},
    )  # fmt: skip
    system = str(remote.calls[0][0].content)
    assert '- dog_name: "Rex"' in system
    assert [seen(p)[0] for p in remote.calls] == [seen(p)[0] for p in plain.calls]
    # a Session without long-term memory has no recall block on Temporal either
    bare = agents.rule_model()
    on_temporal(
        temporal_address,
        bare,
        {"text": "how is my dog?", "conversation_id": "c-bare", "session_url": url},
    )
    assert "Rex" not in str(bare.calls[0][0].content)


def test_a_stored_turn_id_returns_the_stored_turn_without_running(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    model = agents.rule_model()
    where = {"conversation_id": "conv-t", "session_url": url}
    first, again = on_temporal(
        temporal_address,
        model,
        {"text": "lookup 7", "turn_id": "turn-1", **where},
        {"text": "lookup 7", "turn_id": "turn-1", **where},  # a new workflow, the same turn
    )
    calls = len(model.calls)
    assert calls == 3  # Triage, Sales (tool call), Sales (answer): once, not again
    said = [(m["role"], m.get("content")) for m in first.messages]
    assert [(m["role"], m.get("content")) for m in again.messages] == said
    assert again.context_variables == first.context_variables
    stored = Session("conv-t", url=url)
    assert len(stored.messages) == 1 + len(first.messages)  # one turn stored, not two
    # a plain Session replays the Temporal turn by its id, and Temporal a plain one's
    local = agents.rule_model()
    replay = stored.run(Swarm(chat_model=local), agents.triage, "lookup 7", turn_id="turn-1")
    assert local.calls == [] and replay.messages[-1]["content"] == first.messages[-1]["content"]
    Session("conv-t", url=url).run(Swarm(chat_model=local), agents.triage, "greet", turn_id="p-1")
    ran = len(local.calls)
    (back,) = on_temporal(temporal_address, model, {"text": "greet", "turn_id": "p-1", **where})
    assert len(model.calls) == calls and ran > 0
    assert back.messages[-1]["content"] == "Sales: noted"
    assert back.context_variables == {"greeted": True}


def test_session_options_are_checked_before_anything_starts(temporal_address: str) -> None:
    async def main(**start: Any) -> None:
        client = await connect(temporal_address)
        await run_on_temporal(client, REF, [{"role": "user", "content": "hi"}],
                              task_queue="nobody-serves-this", **start)  # fmt: skip

    with pytest.raises(TypeError, match="session_options takes"):
        asyncio.run(main(conversation_id="c", session_options={"windw": 3}))
    with pytest.raises(ValueError, match="unknown memory policy"):
        asyncio.run(main(conversation_id="c", session_options={"memory": "lots"}))
    with pytest.raises(TypeError, match="give conversation_id"):
        asyncio.run(main(turn_id="t-1"))


def test_a_budget_stop_keeps_what_ran_as_a_plain_session_does(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    with pytest.raises(BudgetExceeded):
        Session("c-plain", url=url).run(
            Swarm(chat_model=agents.rule_model()), agents.triage, "lookup 7",
            budget=Budget(max_handoffs=0),
        )  # fmt: skip
    with pytest.raises(BudgetExceeded) as caught:
        on_temporal(
            temporal_address,
            agents.rule_model(),
            {"text": "lookup 7", "conversation_id": "c-temporal", "session_url": url,
             "budget": Budget(max_handoffs=0), "turn_id": "t-stopped"},
        )  # fmt: skip
    assert caught.value.limit == "max_handoffs"
    kept = seen(Session("c-temporal", url=url).messages)
    assert kept == seen(Session("c-plain", url=url).messages)
    assert [kind for kind, _ in kept] == ["human", "ai", "tool"]  # the handoff call answered
    assert kept[-1][1].startswith("Error: Budget exceeded: max_handoffs=0")
    # the stopped turn is stored: its id is not run again
    model = agents.rule_model()
    (back,) = on_temporal(
        temporal_address,
        model,
        {"text": "lookup 7", "conversation_id": "c-temporal", "session_url": url,
         "turn_id": "t-stopped"},
    )  # fmt: skip
    assert model.calls == [] and back.messages[0]["tool_calls"][0]["function"]["name"] == (
        "transfer_to_sales"
    )


def _reply_id(history: Any, tool: str) -> str:
    """The id of the model reply (an activity's recorded result) that asked for ``tool``."""
    for event in history.events:
        done = event.activity_task_completed_event_attributes
        for payload in done.result.payloads:
            reply = json.loads(payload.data)
            data = reply.get("data", {}) if isinstance(reply, dict) else {}
            if any(c["name"] == tool for c in data.get("tool_calls") or []):
                return str(data["id"])
    raise AssertionError(f"no recorded reply asks for {tool}")


def test_an_effect_in_a_session_turn_is_keyed_by_workflow_and_call_and_runs_once(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Temporal's history is the turn's effect ledger: the key is the workflow id (named for
    the turn) and the call; the Session's own ledger keeps nothing of it (one bookkeeping),
    and a stored turn id charges nothing again, on Temporal or in a plain Session."""
    tally = tmp_path / "tally.db"
    monkeypatch.setenv("SWARMGRAPH_TEMPORAL_TALLY", str(tally))
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    where = {"conversation_id": "conv-e", "session_url": url, "turn_id": "t-charge"}
    model = agents.rule_model()

    async def main() -> Any:
        client = await connect(temporal_address)
        queue = f"q-{uuid.uuid4()}"
        async with worker(client, queue, [REF], swarm=Swarm(chat_model=model)):
            ask = [{"role": "user", "content": "charge 7"}]
            started = await start_on_temporal(client, REF, ask, task_queue=queue, **where)
            first = await result_of(started, REF)
            again = await run_on_temporal(client, REF, ask, task_queue=queue, **where)
            assert started.id == turn_workflow_id("conv-e", "t-charge")  # named for the turn
            ran = client.get_workflow_handle(started.id, run_id=started.result_run_id)
            return first, again, await ran.fetch_history()

    first, again, history = asyncio.run(asyncio.wait_for(main(), 60))
    with sqlite3.connect(tally) as db:
        charges = db.execute("SELECT key, order_id FROM charges").fetchall()
    call = next(
        c["id"] for m in first.messages for c in m.get("tool_calls") or []
        if c["function"]["name"] == "slow_charge"
    )  # fmt: skip
    raw = default_idempotency_key(effect_key(call, _reply_id(history, "slow_charge")))
    assert charges == [(default_idempotency_key(raw, "turn:conv-e:t-charge"), 7)]
    assert len(model.calls) == 3 and again.messages[-1]["content"] == "Sales: charged order 7"
    store = Session("conv-e", url=url).store
    assert (
        store.records("conv-e", EFFECT, [effect_key(call, _reply_id(history, "slow_charge"))]) == {}
    )
    local = agents.rule_model()
    replay = Session("conv-e", url=url).run(
        Swarm(chat_model=local), agents.triage, "charge 7", turn_id="t-charge"
    )
    assert local.calls == [] and replay.messages[-1]["content"] == "Sales: charged order 7"
    with sqlite3.connect(tally) as db:
        assert db.execute("SELECT COUNT(*) FROM charges").fetchone() == (1,)


def test_a_turn_a_workflow_is_running_is_in_progress_for_a_second_start(
    temporal_address: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"

    async def main() -> None:
        client = await connect(temporal_address)
        queue = f"nobody-serves-{uuid.uuid4()}"  # the first start waits: no worker takes it
        ask = [{"role": "user", "content": "hi"}]
        where = {"conversation_id": "c", "session_url": url, "turn_id": "t-1"}
        handle = await start_on_temporal(client, REF, ask, task_queue=queue, **where)
        try:
            with pytest.raises(TurnInProgress) as caught:
                await start_on_temporal(client, REF, ask, task_queue=queue, **where)
            assert caught.value.turn_id == "t-1"
        finally:
            await handle.terminate()

    asyncio.run(main())


def test_a_turn_saved_between_load_and_save_is_rebased_as_in_a_plain_session(
    tmp_path: Path,
) -> None:
    """The two activities' functions with a plain Session's turn saved in between, against a
    plain Session whose model call lets the same turn save in between: the conditional write
    fails on the version and the save rebases, the same way (both turns' messages kept, the
    same context)."""
    from langchain_core.messages import AIMessage, HumanMessage

    from swarmgraph import ScriptedChatModel
    from swarmgraph.temporal.session_turn import load_turn, save_turn
    from swarmgraph.temporal.wire import messages_out

    url = f"sqlite:///{tmp_path / 'chat.db'}"

    def other_turn(conversation: str) -> None:
        Session(conversation, url=url).run(
            Swarm(chat_model=agents.rule_model()), agents.triage, "lookup 7", {"order": 7}
        )

    def meanwhile(_messages: list[BaseMessage]) -> AIMessage:
        other_turn("c-plain")
        return AIMessage("Triage: noted")

    Session("c-plain", url=url).run(
        Swarm(chat_model=ScriptedChatModel([meanwhile])), agents.triage, "greet",
        {"user": "Ming", "seen": 1},
    )  # fmt: skip
    given = {"user": "Ming", "seen": 1}
    where = {"url": url, "conversation_id": "c-temporal", "turn_id": "t-temporal", "agent": REF,
             "new": messages_out([HumanMessage("greet")]), "context": given}  # fmt: skip
    loaded = load_turn(where)
    other_turn("c-temporal")
    ran = {"messages": [{"role": "assistant", "content": "Triage: noted", "sender": "Triage"}],
           "agent": "Triage", "context_variables": {"user": "Ming", "seen": 1}}  # fmt: skip
    assert save_turn({**where, **loaded, "response": ran}) == "saved"
    temporal, plain = Session("c-temporal", url=url), Session("c-plain", url=url)
    assert seen(temporal.messages) == seen(plain.messages)
    assert seen(temporal.messages)[-2:] == [("human", "greet"), ("ai", "Triage: noted")]
    assert temporal.context_variables == plain.context_variables
    assert temporal.context_variables["order"] == 7  # the other turn's change is kept
    assert save_turn({**where, **loaded, "response": ran}) == "saved before"


def test_a_caller_polls_the_events_of_a_run_while_it_goes_on(
    temporal_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARMGRAPH_TEMPORAL_NOTE_S", "1.5")  # the note tool is slow

    async def main() -> tuple[list[Any], list[Any], Any]:
        client = await connect(temporal_address)
        queue = f"q-{uuid.uuid4()}"
        model = agents.rule_model()
        async with worker(client, queue, [REF], swarm=Swarm(chat_model=model)):
            ask = [{"role": "user", "content": "note 7"}]
            handle = await start_on_temporal(client, REF, ask, task_queue=queue)
            seen_early: list[Any] = []
            while not any("slow_note" in e.get("tool_calls", []) for e in seen_early):
                seen_early += await events_on_temporal(handle, len(seen_early))
                await asyncio.sleep(0.05)
            running = (await handle.describe()).status
            response = await result_of(handle, REF)
            return seen_early, await events_on_temporal(handle), (running, response)

    early, every, (running, response) = asyncio.run(asyncio.wait_for(main(), 60))
    assert running is not None and running.name == "RUNNING"  # seen before the run ended
    assert [(e["kind"], e.get("tool") or e["tool_calls"]) for e in every] == [
        ("reply", ["transfer_to_sales"]),
        ("tool", "transfer_to_sales"),
        ("reply", ["slow_note"]),
        ("tool", "slow_note"),
        ("reply", []),
    ]
    assert every[: len(early)] == early
    assert every[-1]["content"] == response.messages[-1]["content"] == "Sales: noted order 7"
