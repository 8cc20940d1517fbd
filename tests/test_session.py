"""Session: load / run / save across refreshes, processes, kills and concurrent writers."""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core.messages import to_openai
from swarmgraph.memory import ContextSerializationError, Session, open_context_store, open_history
from swarmgraph.memory.backends import open_store
from swarmgraph.memory.compare import TURN_1, TURN_2, refund_agents, refund_rules
from swarmgraph.memory.errors import UnknownAgentWarning
from swarmgraph.memory.turn_index import stored_turns

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "session_worker", ROOT / "tests/procs/session_worker.py"
)
session_worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(session_worker)
PROCS = Path(__file__).parent / "procs"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def refund_setup():
    tool_log: list[dict] = []
    triage, refunds = refund_agents(tool_log)
    model = ScriptedChatModel(respond=refund_rules)
    return Swarm(chat_model=model), model, triage, refunds, tool_log


def test_issue_example_both_halves_survive_a_refresh(url):
    swarm, model, triage, refunds, tool_log = refund_setup()
    first = Session("conv-42", url=url)
    response = first.run(swarm, triage, TURN_1)
    assert response.agent is refunds

    later = Session("conv-42", url=url)  # a refresh: nothing shared but the file
    assert later.context_variables == {"name": "Xiaoming", "order_id": 7}
    assert later.active_agent_name == "Refunds"
    assert [m.type for m in later.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert later.messages[3].name == "Triage" and later.messages[-1].name == "Refunds"

    model.reset()
    second = later.run(swarm, triage, TURN_2)  # given Triage, continues with Refunds
    first_call = model.calls[0]
    assert isinstance(first_call[0], SystemMessage) and "You are Refunds" in first_call[0].content
    assert any(m.content == TURN_1 for m in first_call)  # the model read the earlier text
    assert tool_log == [{"name": "Xiaoming", "order_id": 7}]  # the tool got the field
    assert second.messages[-1]["content"] == "Xiaoming, Refund for order 7 was approved."
    assert len(Session("conv-42", url=url).messages) == 6 + 4


@pytest.mark.parametrize(
    ("persist", "messages", "context", "agent"),
    [
        (("messages", "context"), 6, {"name": "Xiaoming", "order_id": 7}, "Refunds"),
        (("messages",), 6, {}, None),
        (("context",), 0, {"name": "Xiaoming", "order_id": 7}, "Refunds"),
        ((), 0, {}, None),
    ],
)
def test_each_persist_choice_stores_and_restores_only_its_halves(
    url, persist, messages, context, agent
):
    swarm, model, triage, _, tool_log = refund_setup()
    Session("c", url=url, persist=persist).run(swarm, triage, TURN_1)
    stored = Session("c", url=url, persist=persist)
    assert len(stored.messages) == messages
    assert stored.context_variables == context
    assert stored.active_agent_name == agent

    model.reset()
    response = stored.run(swarm, triage, TURN_2)
    sent_text = [m.content for call in model.calls for m in call]
    assert (TURN_1 in sent_text) == ("messages" in persist)
    assert model.calls[0][0].content.startswith("You are Refunds" if agent else "You are Triage")
    assert tool_log[-1].get("order_id") == context.get("order_id")
    assert response.agent.name == "Refunds"


def test_a_messages_only_session_starts_fresh_on_a_conversation_others_keep_context_for(url):
    # One conversation, two Sessions: the default one stores context and the active agent;
    # the messages-only one reads the text but, as documented, starts with an empty context
    # and the agent it is given, even though the row it loads for the turn log holds both.
    swarm, model, triage, _, tool_log = refund_setup()
    Session("shared", url=url).run(swarm, triage, TURN_1)
    model.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownAgentWarning)  # no resume attempted
        response = Session("shared", url=url, persist=("messages",)).run(swarm, triage, TURN_2)
    assert model.calls[0][0].content.startswith("You are Triage")
    assert any(m.content == TURN_1 for m in model.calls[0])  # it did read the text
    assert tool_log[-1].get("order_id") is None  # the stored fields never reached the tool
    assert "name" not in response.context_variables
    # ... and the default Session still finds its own context where it left it.
    assert Session("shared", url=url).context_variables == {"name": "Xiaoming", "order_id": 7}


@pytest.mark.parametrize("store", ["sqlite", "memory"])
def test_a_conversation_resumes_the_right_one_of_two_agents_sharing_a_name(url, store):
    # Two distinct agents may share a name (DESIGN.md): the stored name alone would resume
    # the first one discovery finds (billing) after the conversation had gone to tech.
    billing = Agent(name="Support", instructions="You are billing support.")
    tech = Agent(name="Support", instructions="You are technical support.")

    def to_billing():
        """Billing questions."""
        return billing

    def to_tech():
        """Technical questions."""
        return tech

    triage = Agent(name="Triage", functions=[to_billing, to_tech])
    model = ScriptedChatModel(
        respond=lambda msgs: (
            scripted_tool_call("to_tech") if msgs[0].content == "You are a helpful agent." else "ok"
        )
    )
    triage.instructions = "You are a helpful agent."
    url = url if store == "sqlite" else "memory://namesakes"
    first = Session("c", url=url).run(Swarm(chat_model=model), triage, "my router is broken")
    assert first.agent is tech
    model.reset()
    again = Session("c", url=url)  # a refresh
    second = again.run(Swarm(chat_model=model), triage, "still broken")
    assert model.calls[0][0].content == "You are technical support."
    assert second.agent is tech
    # A retried turn id replays with the same agent, from the turn log.
    replay = again.run(Swarm(chat_model=model), triage, turn_id=_last_turn_id(url))
    assert replay.agent is tech


def _last_turn_id(url: str) -> str:
    return stored_turns(open_store(url), "c")[-1]


def test_caller_context_is_merged_over_stored_and_never_mutated(url):
    seen: list[dict] = []

    def peek(context_variables: dict) -> Result:
        """Look at the context."""
        seen.append(dict(context_variables))
        return Result(value="ok", context_variables={"peeked": True})

    agent = Agent(name="A", functions=[peek])
    swarm = Swarm(chat_model=ScriptedChatModel(respond=_peek_rules))
    session = Session("c", url=url)
    session.run(swarm, agent, "one", context_variables={"a": 1, "b": 1})
    mine = {"b": 2, "nested": {"x": [1]}}
    snapshot = json.dumps(mine)
    session.run(swarm, agent, "two", context_variables=mine)
    assert json.dumps(mine) == snapshot
    assert seen[-1] == {"a": 1, "b": 2, "nested": {"x": [1]}, "peeked": True}
    assert session.context_variables == {"a": 1, "b": 2, "nested": {"x": [1]}, "peeked": True}


def _peek_rules(messages):
    if isinstance(messages[-1], ToolMessage):
        return "done"
    return scripted_tool_call("peek", {}, id=f"p{len(messages)}")


def test_unserialisable_context_saves_the_messages_and_raises_naming_the_key(url):
    def stamp() -> Result:
        """Stamp the time."""
        return Result(value="stamped", context_variables={"when": datetime.datetime(2024, 5, 1)})

    agent = Agent(name="A", functions=[stamp])
    model = ScriptedChatModel([scripted_tool_call("stamp", {}, id="s1"), "stamped it"])
    session = Session("c", url=url)
    open_context_store(url).save("c", {"kept": 1})
    with pytest.raises(
        ContextSerializationError, match=r"context_variables\['when'\] is a datetime"
    ) as info:
        session.run(Swarm(chat_model=model), agent, "stamp please")
    assert info.value.response.messages[-1]["content"] == "stamped it"
    assert [m.content for m in session.messages][::3] == ["stamp please", "stamped it"]
    record = session.store.load("c")
    # The context stays as stored, the active agent too (docs/storage.md, "What context can
    # hold"); the turn's id was logged (that write bumped the version).
    assert (record.context, record.version) == ({"kept": 1}, 2)
    assert record.active_agent is None  # the turn's agent A was not stored with it
    assert len(stored_turns(session.store, "c")) == 1


def test_window_limits_what_the_model_sees_and_the_tokens_sent(url):
    history = open_history(url, "long")
    for i in range(50):
        history.add_messages([HumanMessage(f"question {i} " * 5), AIMessage(f"answer {i} " * 5)])
    tokens = {}
    for window in (None, 6):
        model = ScriptedChatModel(respond=lambda msgs: "ok")
        session = Session("long", url=url, persist=("messages",), window=window)
        session.run(Swarm(chat_model=model), Agent(), "new question")
        shown = [m for m in model.calls[0] if not isinstance(m, SystemMessage)]
        assert len(shown) == (101 if window is None else 7)
        assert shown[-1].content == "new question"
        assert session.last_usage["source"] == "engine"
        tokens[window] = session.last_usage["input_tokens"]
    assert tokens[6] * 5 < tokens[None]


def test_message_forms_str_dict_list_and_langchain(url):
    model = ScriptedChatModel(respond=lambda msgs: "ok")
    swarm, agent = Swarm(chat_model=model), Agent()
    session = Session("c", url=url)
    session.run(swarm, agent, "plain")
    session.run(swarm, agent, {"role": "user", "content": "as dict"})
    session.run(swarm, agent, [HumanMessage("lc"), {"role": "user", "content": "and dict"}])
    assert [m.content for m in session.messages if m.type == "human"] == [
        "plain",
        "as dict",
        "lc",
        "and dict",
    ]
    with pytest.raises(TypeError, match="message must be"):
        session.run(swarm, agent, 42)
    with pytest.raises(ValueError, match="does not stream"):
        session.run(swarm, agent, "x", stream=True)


def test_odd_conversation_ids_are_isolated_and_bad_ones_refused(url):
    model = ScriptedChatModel(respond=lambda msgs: f"seen {len(msgs)}")
    swarm = Swarm(chat_model=model)
    ids = ["it's", "x'; DROP TABLE swarm_context; --", "小明🙂", "i" * 1024]
    for n, cid in enumerate(ids):
        Session(cid, url=url).run(swarm, Agent(), f"hello {n}", context_variables={"n": n})
    for n, cid in enumerate(ids):
        session = Session(cid, url=url)
        assert [m.content for m in session.messages] == [f"hello {n}", "seen 2"]
        assert session.context_variables == {"n": n}
    for bad in ("", "nul\x00"):
        with pytest.raises(ValueError, match="conversation id"):
            Session(bad, url=url)
    with pytest.raises(ValueError, match="persist may only name"):
        Session("c", url=url, persist=("messages", "ctx"))


def test_stored_agent_comes_from_the_registry_or_warns(url):
    helper = Agent(name="Helper")
    lonely = Agent(name="Lonely")
    swarm = Swarm(chat_model=ScriptedChatModel(respond=lambda msgs: msgs[0].content))
    open_context_store(url).save("c", {}, active_agent="Helper")
    response = Session("c", url=url, agents=[helper]).run(swarm, lonely, "hi")
    assert response.agent is helper
    open_context_store(url).save("d", {}, active_agent="Gone")
    with pytest.warns(UnknownAgentWarning, match="'Gone'"):
        response = Session("d", url=url).run(swarm, lonely, "hi")
    assert response.agent is lonely
    with pytest.raises(ValueError, match="two different agents"):
        Session("e", url=url, agents=[Agent(name="X"), Agent(name="X")])


def test_async_run_matches_sync(url):
    swarm, _, triage, refunds, tool_log = refund_setup()

    async def go():
        await Session("c", url=url).arun(swarm, triage, TURN_1)
        return await Session("c", url=url).arun(swarm, triage, TURN_2)

    response = asyncio.run(go())
    assert response.agent is refunds
    assert tool_log == [{"name": "Xiaoming", "order_id": 7}]
    session = Session("c", url=url)
    assert session.context_variables == {"name": "Xiaoming", "order_id": 7}
    assert len(session.messages) == 10
    asyncio.run(session.aclear())
    assert session.messages == [] and session.context_variables == {}


def test_clear_forgets_both_halves(url):
    swarm, _, triage, _, _ = refund_setup()
    session = Session("c", url=url)
    session.run(swarm, triage, TURN_1)
    Session("other", url=url).run(swarm, triage, TURN_1)
    session.clear()
    assert (session.messages, session.context_variables, session.active_agent_name) == (
        [],
        {},
        None,
    )
    assert Session("other", url=url).context_variables["order_id"] == 7


def test_memory_url_works_in_process(tmp_path):
    swarm, _, triage, _, _ = refund_setup()
    url = f"memory://{tmp_path.name}"
    Session("c", url=url).run(swarm, triage, TURN_1)
    assert Session("c", url=url).context_variables == {"name": "Xiaoming", "order_id": 7}


def _turn(url: str, message: str) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "swarmgraph.memory.compare",
            "--turn",
            url,
            "conv-42",
            message,
            "messages",
            "context",
        ],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_restart_across_real_processes_continues_with_agent_and_context(url):
    first = _turn(url, TURN_1)
    assert first["agent"] == "Refunds"
    second = _turn(url, TURN_2)
    assert second["agent"] == "Refunds"
    assert second["model_saw_earlier_text"] and second["tool_saw_field"]
    assert second["reply"] == "Xiaoming, Refund for order 7 was approved."
    assert Session("conv-42", url=url).context_variables == {"name": "Xiaoming", "order_id": 7}


def _worker(url: str, writer: str, turns: int, *extra: str) -> subprocess.Popen:
    args = [sys.executable, str(PROCS / "session_worker.py"), url, "shared", writer, str(turns)]
    return subprocess.Popen(
        [*args, *extra],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _turns_in(url: str) -> list[tuple[str, int]]:
    """The stored turns, checking each is whole and contiguous: user, call, result, reply."""
    messages = open_history(url, "shared").get_messages()
    assert len(messages) % 4 == 0
    turns = []
    for start in range(0, len(messages), 4):
        human, call, result, reply = messages[start : start + 4]
        writer, i = human.content.split(":")
        assert isinstance(human, HumanMessage)
        assert call.tool_calls[0]["args"] == {"writer": writer, "i": int(i)}
        assert isinstance(result, ToolMessage) and result.content == f"{writer}:{i} recorded"
        assert reply.content == f"{writer}:{i} done"
        turns.append((writer, int(i)))
    return turns


@pytest.mark.slow
def test_processes_and_threads_on_one_session_lose_nothing_and_never_interleave(url):
    procs = [_worker(url, f"p{n}", 12) for n in range(3)]
    errors: list[BaseException] = []

    def in_thread(writer: str) -> None:
        try:
            session_worker.run_turns(url, "shared", writer, 12)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=in_thread, args=(f"t{n}",)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    assert errors == []
    turns = _turns_in(url)
    writers = [f"p{n}" for n in range(3)] + [f"t{n}" for n in range(3)]
    assert sorted(turns) == sorted((w, i) for w in writers for i in range(12))
    for w in writers:  # each writer's own turns stay in order
        assert [i for who, i in turns if who == w] == list(range(12))
    # Concurrent runs changed different keys: the key-by-key merge kept every writer's last.
    assert Session("shared", url=url).context_variables == {w: 11 for w in writers}


@pytest.mark.slow
def test_kill_9_inside_the_save_transaction_leaves_whole_turns(url, tmp_path):
    ready = tmp_path / "ready"
    proc = _worker(url, "k", 10, "3", str(ready))
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _turns_in(url) == [("k", 0), ("k", 1), ("k", 2)]  # turn 3 was rolled back whole
    record = Session("shared", url=url).store.load("shared")
    assert (record.context, record.version) == ({"k": 2}, 3)


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_whole_turns(url):
    rng = random.Random(7)
    history = open_history(url, "shared")
    for round_ in range(4):
        before = history.count()
        proc = _worker(url, f"r{round_}", 400)
        deadline = time.monotonic() + 120
        while history.count() == before:  # wait out the imports: kill while turns run
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL  # killed mid-run, not finished or crashed
        turns = _turns_in(url)  # raises on any torn turn
        record = Session("shared", url=url).store.load("shared")
        assert record.version == len(turns)
        for writer in {w for w, _ in turns}:
            mine = [i for w, i in turns if w == writer]
            assert mine == list(range(len(mine)))
            assert record.context[writer] == mine[-1]
    assert len({w for w, _ in turns}) == 4


def test_an_input_messages_own_keys_are_stored_with_it_and_a_value_json_cannot_hold_is_not(url):
    """A dict message's own keys (``timestamp``, ``id``) are stored with it and come back on
    the next turn; a value JSON cannot hold stays out instead of failing the turn's save."""
    swarm = Swarm(chat_model=ScriptedChatModel(["a", "b"]))
    given = {"role": "user", "content": "hi", "id": "m1", "at": datetime.datetime(2026, 12, 2)}
    Session("extras", url=url).run(swarm, Agent(), given)
    stored = Session("extras", url=url).messages[0]
    assert stored.content == "hi"
    assert to_openai([stored]) == [{"role": "user", "content": "hi", "id": "m1"}]
