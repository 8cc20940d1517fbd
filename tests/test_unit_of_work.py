"""The unit of work on every backend (real SQLite, Postgres, Redis and memory://): one load
reads the record and a window of messages, one save writes messages, context, agent, meta and
records atomically or nothing at all, put-if-absent records have exactly one winner (threads
and processes racing), and stores written in the earlier layout still load."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from scale_helpers import BACKENDS, fresh_id, worker
from swarmgraph.memory import ContextVersionConflict, Session, open_store
from swarmgraph.memory.errors import RecordExists
from swarmgraph.memory.store import NO_MESSAGES, Record, TurnWrite, Window

from swarmgraph import Agent, ScriptedChatModel, Swarm

PROCESS_BACKENDS = [b for b in BACKENDS if b != "memory"]  # memory:// lives in one process


def _turn(n: int) -> list:
    return [HumanMessage(f"q{n}"), AIMessage(f"a{n}", name="Clerk")]


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_a_save_writes_messages_context_agent_meta_and_records_at_once(backend_url):
    store, cid = open_store(backend_url), fresh_id("uow")
    write = TurnWrite(
        _turn(1),
        context={"order_id": 7},
        active_agent="Refunds",
        meta={"turns": [{"id": "t1"}]},
        records=[Record("effect", "call_1", {"status": "done"}), Record("turn", "t1", 1)],
    )
    assert store.save(cid, write, expected_version=0) == 1
    loaded = store.load(cid, window=Window(last=1))
    assert (loaded.context, loaded.version, loaded.active_agent) == ({"order_id": 7}, 1, "Refunds")
    assert loaded.meta == {"turns": [{"id": "t1"}]} and loaded.start is None
    assert [m.content for m in loaded.messages] == ["a1"]
    assert store.records(cid, "effect") == {"call_1": {"status": "done"}}
    assert store.records(cid, "turn", keys=["t1", "t9"]) == {"t1": 1}
    assert store.records(cid, "approval") == {}

    # A save in the middle of a turn (an effect ledger's "started"), then the rest of the
    # turn, each conditional on the version the previous one returned.
    started = Record("effect", "call_2", {"status": "started"})
    assert store.save(cid, TurnWrite(records=[started]), expected_version=1) == 2
    done = TurnWrite(_turn(2), records=[Record("effect", "call_2", {"status": "done"})])
    assert store.save(cid, done, expected_version=2) == 3
    with pytest.raises(ContextVersionConflict):  # a writer still on version 2
        store.save(cid, TurnWrite(_turn(3), context={"stale": True}), expected_version=2)
    everything = store.load(cid)
    assert [m.content for m in everything.messages] == ["q1", "a1", "q2", "a2"]
    assert everything.context == {"order_id": 7} and everything.start == 0
    assert store.records(cid, "effect")["call_2"] == {"status": "done"}
    since = store.load(cid, window=Window(start=3))
    assert [m.content for m in since.messages] == ["a2"] and since.start == 3


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_a_save_that_fails_writes_nothing_of_itself(backend_url):
    store, cid = open_store(backend_url), fresh_id("nothing")
    first = TurnWrite(_turn(1), context={"a": 1}, records=[Record("approval", "c1", True)])
    store.save(cid, first, expected_version=0)
    before = store.load(cid), store.records(cid, "approval")

    lost_cas = TurnWrite(
        _turn(2),
        context={"a": 2},
        active_agent="Other",
        meta={"x": 1},
        records=[Record("effect", "e1", "new"), Record("approval", "c1", False, if_absent=True)],
    )
    with pytest.raises(RecordExists) as caught:
        store.save(cid, lost_cas, expected_version=1)
    assert (caught.value.kind, caught.value.key, caught.value.stored) == ("approval", "c1", True)
    stale = TurnWrite(_turn(2), records=[Record("effect", "e1", "new")])
    with pytest.raises(ContextVersionConflict):
        store.save(cid, stale, expected_version=0)
    with pytest.raises(ValueError, match="JSON"):  # a value JSON cannot hold: refused first
        store.save(
            cid, TurnWrite(_turn(2), records=[Record("effect", "e1", {1, 2})]), expected_version=1
        )
    with pytest.raises(ValueError, match="record kind"):
        store.save(
            cid, TurnWrite(_turn(2), records=[Record("Bad:kind", "k", 1)]), expected_version=1
        )

    after = store.load(cid), store.records(cid, "approval")
    assert after == before  # messages, context, agent, meta, version, records: all as they were
    assert store.records(cid, "effect") == {}


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_clear_forgets_records_with_the_context_and_never_rewinds_the_version(backend_url):
    store, cid = open_store(backend_url), fresh_id("clear")
    store.save(
        cid,
        TurnWrite(_turn(1), context={"a": 1}, records=[Record("turn", "t", 1)]),
        expected_version=0,
    )
    store.clear(cid, only="context")  # the context store's delete: the messages stay
    assert store.count(cid) == 2 and store.records(cid, "turn") == {}
    assert (store.load(cid).context, store.load(cid).version) == ({}, 2)
    store.save(
        cid, TurnWrite(context={"a": 1}, records=[Record("turn", "t", 1)]), expected_version=2
    )
    store.clear(cid, only="messages")  # a LangChain history's clear: the context stays
    assert store.count(cid) == 0 and store.records(cid, "turn") == {"t": 1}
    assert store.load(cid).version == 3 and store.load(cid).context == {"a": 1}
    store.clear(cid)
    cleared = store.load(cid)
    assert (cleared.context, cleared.active_agent, cleared.meta, cleared.version) == (
        {},
        None,
        {},
        4,
    )
    assert store.records(cid, "turn") == {}
    # A put-if-absent after the clear wins again.
    store.save(cid, TurnWrite(records=[Record("turn", "t", 2, if_absent=True)]), expected_version=4)
    assert store.records(cid, "turn") == {"t": 2}


def _race(store, cid: str, writers: int) -> list[str]:
    """``writers`` threads put the same key if absent at the same moment; each result is
    "won" or "lost:<the value stored>"."""
    start, results = threading.Barrier(writers), [""] * writers

    def attempt(i: int) -> None:
        write = TurnWrite(
            [HumanMessage(f"w{i}")], records=[Record("approval", "call_1", f"w{i}", if_absent=True)]
        )
        start.wait()
        try:
            store.save(cid, write, expected_version=None)
            results[i] = "won"
        except RecordExists as lost:
            results[i] = f"lost:{lost.stored}"

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_put_if_absent_from_racing_threads_has_exactly_one_winner(backend_url):
    for _ in range(5):
        store, cid = open_store(backend_url), fresh_id("cas-threads")
        results = _race(store, cid, writers=8)
        winner = results.index("won")
        assert results.count("won") == 1
        assert all(r == f"lost:w{winner}" for i, r in enumerate(results) if i != winner)
        assert store.records(cid, "approval") == {"call_1": f"w{winner}"}
        assert [m.content for m in store.messages(cid)] == [f"w{winner}"]  # losers wrote nothing


@pytest.mark.slow
@pytest.mark.parametrize("backend_url", PROCESS_BACKENDS, indirect=True)
def test_put_if_absent_from_racing_processes_has_exactly_one_winner(backend_url):
    cid = fresh_id("cas-procs")
    at = f"{time.time() + 3:.3f}"  # all start together, once their imports are done
    procs = [worker("record_racer.py", backend_url, cid, f"p{i}", at) for i in range(4)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    winners = [r["writer"] for r in results if r["won"]]
    assert len(winners) == 1
    assert all(r["stored"] == winners[0] for r in results if not r["won"])
    store = open_store(backend_url)
    assert store.records(cid, "approval") == {"call_1": winners[0]}
    assert [m.content for m in store.messages(cid)] == [winners[0]]


@pytest.mark.slow
@pytest.mark.parametrize("backend_url", PROCESS_BACKENDS, indirect=True)
def test_kill_9_inside_a_save_leaves_none_of_it(backend_url, tmp_path):
    """A writer killed after every statement of its save ran, before the commit (SQLite,
    Postgres) or before EXEC (Redis): its messages, context and records are all absent."""
    cid, ready = fresh_id("killed-save"), tmp_path / "ready"
    proc = worker("record_racer.py", backend_url, cid, "killed", "0", str(ready))
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = open_store(backend_url)
    loaded = store.load(cid)
    assert (loaded.messages, loaded.context, loaded.version) == ([], {}, 0)
    assert store.records(cid, "approval") == {}
    store.save(
        cid,
        TurnWrite(records=[Record("approval", "call_1", "next", if_absent=True)]),
        expected_version=0,
    )


# -- stores written by the earlier layout (0f7c1d9: no records table or hash) -------------------
OLD_SQLITE = (
    "CREATE TABLE message_store (id INTEGER NOT NULL PRIMARY KEY, session_id TEXT, message TEXT)",
    "CREATE INDEX ix_message_store_session_id_id ON message_store (session_id, id)",
    "CREATE TABLE swarm_context (conversation_id TEXT NOT NULL PRIMARY KEY, context TEXT NOT "
    "NULL DEFAULT '{}', version INTEGER NOT NULL DEFAULT 0, active_agent TEXT, meta TEXT NOT "
    "NULL DEFAULT '{}', updated_at REAL NOT NULL)",
)


def _old_message(text: str, kind: str = "human") -> str:
    return json.dumps({"type": kind, "data": {"content": text, "type": kind}})


def test_a_sqlite_file_of_the_earlier_layout_loads_and_takes_new_turns(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        for statement in OLD_SQLITE:
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO message_store (session_id, message) VALUES ('c', ?)",
            [(_old_message("refund order 7"),), (_old_message("Done.", "ai"),)],
        )
        turns = json.dumps({"turns": [{"id": "t-old", "new": 1, "run": 1, "agent": "Refunds"}]})
        conn.execute(
            "INSERT INTO swarm_context VALUES ('c', '{\"order_id\":7}', 1, 'Refunds', ?, 0)",
            (turns,),
        )
    url = f"sqlite:///{path}"
    session = Session("c", url=url)
    assert [m.content for m in session.messages] == ["refund order 7", "Done."]
    assert session.context_variables == {"order_id": 7} and session.active_agent_name == "Refunds"
    refunds = Agent(name="Refunds")
    model = ScriptedChatModel(["replayed?"])
    replay = session.run(Swarm(chat_model=model), refunds, "again", turn_id="t-old")
    assert model.calls == [] and replay.messages[-1]["content"] == "Done."  # the old turn log
    session.run(Swarm(chat_model=model), refunds, "is it refunded?")
    assert len(Session("c", url=url).messages) == 4
    assert open_store(url).records("c", "turn") == {}


@pytest.mark.redis
def test_redis_keys_of_the_earlier_layout_load_and_take_new_turns(redis_url):
    import redis

    cid = fresh_id("old-redis")
    client = redis.Redis.from_url(redis_url)
    # LPUSH, as upstream writes: the list is newest first.
    client.lpush(f"message_store:{cid}", _old_message("hi"), _old_message("hello", "ai"))
    client.hset(
        f"swarm_context:{cid}",
        mapping={"context": '{"n":1}', "version": 1, "active_agent": "A", "meta": "{}"},
    )
    store = open_store(redis_url)
    loaded = store.load(cid, window=Window(last=1))
    assert ([m.content for m in loaded.messages], loaded.context, loaded.version) == (
        ["hello"],
        {"n": 1},
        1,
    )
    assert store.load(cid, window=NO_MESSAGES).active_agent == "A"
    assert (
        store.save(cid, TurnWrite(_turn(2), records=[Record("turn", "t", 1)]), expected_version=1)
        == 2
    )
    assert [m.content for m in store.messages(cid)] == ["hi", "hello", "q2", "a2"]
    client.close()
