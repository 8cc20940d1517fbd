"""Redis: history (upstream's list layout, windowed reads, TTL) and context store, Session
across processes and concurrent writers. Real server (``redis_url`` fixture)."""

from __future__ import annotations

import asyncio

import pytest
import redis
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import HumanMessage
from scale_helpers import every_kind_of_message, fresh_id, run_worker, whole_turns, worker
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import ContextVersionConflict, Session, open_context_store, open_history
from swarmgraph.memory.errors import TurnInterrupted
from swarmgraph.memory.store import TurnWrite, Window

pytestmark = pytest.mark.redis


def test_every_message_kind_round_trips_with_windowed_reads(redis_url):
    cid = fresh_id("odd 'id' ;")
    history = open_history(redis_url, cid)
    assert isinstance(history, BaseChatMessageHistory)
    sent = every_kind_of_message()
    history.add_messages(sent[:2])
    history.add_messages(sent[2:])
    assert history.get_messages() == sent
    assert history.get_messages(limit=2) == sent[-2:]
    assert history.store.load(cid, window=Window(start=3)).messages == sent[3:]
    assert history.count() == 5
    assert asyncio.run(history.aget_messages(limit=1)) == sent[-1:]
    history.clear()
    assert history.get_messages() == []


def test_ttl_from_the_url_expires_messages_and_context(redis_url):
    cid = fresh_id()
    url = redis_url + "?ttl=120"
    open_history(url, cid).add_messages(every_kind_of_message()[:1])
    open_context_store(url).save(cid, {"a": 1})
    client = redis.Redis.from_url(redis_url)
    assert 0 < client.ttl(f"message_store:{cid}") <= 120
    assert 0 < client.ttl(f"swarm_context:{cid}") <= 120
    plain = fresh_id()
    open_history(redis_url, plain).add_messages(every_kind_of_message()[:1])
    assert client.ttl(f"message_store:{plain}") == -1  # no ttl: lives until cleared
    with pytest.raises(ValueError, match="ttl"):
        open_history(redis_url + "?ttl=soon", cid)


def test_context_store_versions_and_conflicts(redis_url):
    store = open_context_store(redis_url)
    cid = fresh_id()
    assert store.save(cid, {"x": "\x00"}, active_agent="A") == 1
    with pytest.raises(ContextVersionConflict):
        store.save(cid, {}, expected_version=0)
    assert store.save(cid, {"y": 2}, expected_version=1) == 2
    record = store.load(cid)
    assert (record.context, record.version, record.active_agent) == ({"y": 2}, 2, "A")
    assert store.save_meta(cid, {"turns": []}, expected_version=2) == 3  # the context stays
    with pytest.raises(ContextVersionConflict):
        store.save(cid, {"y": 3}, expected_version=2, meta={"turns": ["stale"]})
    assert store.save(cid, {"y": 4}, expected_version=3, meta={"turns": ["t"]}) == 4
    record = store.load(cid)
    assert (record.context, record.version, record.meta) == ({"y": 4}, 4, {"turns": ["t"]})


@pytest.mark.slow
def test_relay_through_processes_and_concurrent_writers(redis_url):
    cid = fresh_id("relay")
    results = [run_worker("relay_worker.py", redis_url, cid) for _ in range(4)]
    assert [r["ran"] for r in results] == ["Ping", "Pong", "Ping", "Pong"]
    assert Session(cid, url=redis_url).context_variables["turn"] == 4
    shared = fresh_id("shared")
    writers = ["r0", "r1", "r2"]
    procs = [worker("pg_session_worker.py", redis_url, shared, w, "8") for w in writers]
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    stored, torn = whole_turns(redis_url, shared)
    assert torn == 0
    assert sorted(stored) == sorted((w, i) for w in writers for i in range(8))
    record = open_context_store(redis_url).load(shared)
    assert record.context == {w: 7 for w in writers} and record.version == 24


@pytest.mark.slow
def test_context_increments_from_three_processes_are_never_lost(redis_url):
    cid = fresh_id("counter")
    procs = [worker("context_incrementer.py", redis_url, cid, "20") for _ in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert open_context_store(redis_url).load(cid).context == {"counter": 60}


@pytest.mark.slow
def test_a_dead_writers_lock_is_short_lived_and_the_next_turn_goes_through(redis_url):
    from swarmgraph.memory.backends.redis.engine import (
        LOCK_LEASE_S,
        LOCK_PREFIX,
        conversation_lock,
    )

    cid = fresh_id("dead-writer")
    client = redis.Redis.from_url(redis_url)
    dead = conversation_lock(client, cid)  # a worker that takes the lock, then is killed
    assert dead.acquire()
    lease_ms = client.pttl(LOCK_PREFIX + cid)
    assert 0 < lease_ms <= 2000 and LOCK_LEASE_S <= 2  # documented bound: 2 s
    agent = Agent(name="Clerk", functions=[_note])
    model = ScriptedChatModel([scripted_tool_call("_note", {"n": 1}), "ok"])
    Session(cid, url=redis_url).run(Swarm(chat_model=model), agent, "after the crash")
    assert Session(cid, url=redis_url).context_variables == {"n": 1}
    client.close()


def test_a_writer_whose_lease_ran_out_is_fenced_and_writes_nothing(redis_url, monkeypatch):
    from swarmgraph.memory.backends.redis.engine import LOCK_PREFIX
    from swarmgraph.memory.backends.redis.store import RedisStore

    cid = fresh_id("fenced")
    client = redis.Redis.from_url(redis_url)
    slow = Session(cid, url=redis_url).store
    original = RedisStore._stored_version

    def lease_runs_out(self, pipe, conversation_id):
        """The slow writer holds the lock and WATCHes; its lease runs out (the key goes, as
        expiry does) and another writer appends messages in between."""
        version = original(self, pipe, conversation_id)
        monkeypatch.setattr(RedisStore, "_stored_version", original)
        client.delete(LOCK_PREFIX + cid)
        open_history(redis_url, cid).add_messages([HumanMessage("other turn")])
        return version

    monkeypatch.setattr(RedisStore, "_stored_version", lease_runs_out)
    with pytest.raises(TurnInterrupted):
        slow.save(cid, TurnWrite([HumanMessage("slow turn")], context={"a": 1}), expected_version=0)
    assert [m.content for m in Session(cid, url=redis_url).messages] == ["other turn"]
    assert Session(cid, url=redis_url).context_variables == {}
    client.close()


def _note(n: int) -> Result:
    """Note a number."""
    return Result(value="noted", context_variables={"n": n})
