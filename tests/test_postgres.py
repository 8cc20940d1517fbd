"""Postgres: history and context store behind our protocols, Session across processes,
concurrent writers, windowed reads on an index. Real server (``postgres_url`` fixture)."""

from __future__ import annotations

import asyncio
import itertools

import psycopg
import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage
from scale_helpers import every_kind_of_message, fresh_id, run_worker, whole_turns, worker
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import (
    ContextVersionConflict,
    Session,
    open_context_store,
    open_history,
)
from swarmgraph.memory.backends.postgres.engine import conversation_uuid
from swarmgraph.memory.backends.postgres.store import (
    LOAD_SQL,
    WINDOW_SQL,
    conversation_id_of,
    conversation_key,
)
from swarmgraph.memory.store import Window

pytestmark = pytest.mark.postgres


def test_every_message_kind_round_trips_and_the_original_id_stays_readable(postgres_url):
    cid = fresh_id("conv 'odd' id")
    history = open_history(postgres_url, cid)
    assert isinstance(history, BaseChatMessageHistory)
    sent = every_kind_of_message()
    history.add_messages(sent[:2])
    history.add_messages(sent[2:])
    assert history.get_messages() == sent
    assert history.get_messages(limit=2) == sent[-2:]
    assert history.store.load(cid, window=Window(start=3)).messages == sent[3:]
    assert history.count() == 5
    assert conversation_id_of(postgres_url, conversation_uuid(cid)) == cid
    assert asyncio.run(history.aget_messages(limit=3)) == sent[-3:]
    history.clear()
    assert history.get_messages() == [] and history.count() == 0


def test_windowed_read_walks_the_session_index_backwards(postgres_url):
    cid = fresh_id()
    history = open_history(postgres_url, cid)
    for i in range(40):
        history.add_messages([HumanMessage(f"q{i}")] + [AIMessage(f"a{i}")] * 49)
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # later conversations' rows
        conn.execute(
            "INSERT INTO swarm_messages (session_id, message) "
            "SELECT gen_random_uuid(), '{}'::json FROM generate_series(1, 20000)"
        )
    assert [m.content for m in history.get_messages(limit=3)] == ["a39"] * 3
    assert [m.content for m in history.store.load(cid, window=Window(last=3)).messages] == [
        "a39"
    ] * 3
    load = {"key": conversation_key(cid), "sid": conversation_uuid(cid), "limit": 20}
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE swarm_messages")  # what autovacuum does in production
        # Which plan the planner costs cheapest depends on the statistics of a table every
        # test shares and on the machine's load (it picked a sequential scan on a busy one):
        # what this test proves is that the statements *can* walk the session index and then
        # read only the window. With full scans priced out, a missing or unusable index still
        # shows as a Seq Scan (the planner has nothing else) and fails the asserts below.
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")  # a bitmap scan reads the whole session
        plans = [
            conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params).fetchone()[0]
            for sql, params in [
                (WINDOW_SQL, (conversation_uuid(cid), 20)),  # history.get_messages(limit=20)
                (LOAD_SQL["last"], load),  # a Session's load: the record and the window
            ]
        ]
    for plan in plans:
        scans = list(_scans(plan[0]["Plan"]))
        assert {s.get("Index Name") for s in scans} >= {"ix_swarm_messages_session_id_id"}
        assert all("Seq Scan" not in s["Node Type"] for s in scans)
        # O(k): the scans touch the 20 window rows (ids, then messages), nothing else (and
        # the one context row, by its key, in the load).
        assert sum(s["Actual Rows"] * s["Actual Loops"] for s in scans) <= 41
        assert sum(s.get("Rows Removed by Filter", 0) for s in scans) == 0


def _scans(node: dict):
    if "Scan" in node["Node Type"]:
        yield node
    for child in node.get("Plans", []):
        yield from _scans(child)


def test_context_store_is_jsonb_with_versions(postgres_url):
    store = open_context_store(postgres_url)
    cid = fresh_id()
    assert store.load(cid).version == 0
    assert store.save(cid, {"name": "Ming", "order_id": 7}, active_agent="Refunds") == 1
    with pytest.raises(ContextVersionConflict):
        store.save(cid, {}, expected_version=0)
    assert store.save(cid, {"name": "Ming", "big": 1e20, "nul": "a\x00b"}, expected_version=1) == 2
    assert store.save_meta(cid, {"summary": "refund"}, expected_version=2) == 3
    with pytest.raises(ContextVersionConflict):  # a meta write conflicts like a context save
        store.save_meta(cid, {"summary": "stale"}, expected_version=2)
    record = store.load(cid)
    assert record.context == {"name": "Ming", "big": 1e20, "nul": "a\x00b"}
    assert isinstance(record.context["big"], float)
    assert (record.version, record.active_agent) == (3, "Refunds")
    assert record.meta == {"summary": "refund"}
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        kind = conn.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'swarm_context' AND column_name = 'context'"
        ).fetchone()[0]
    assert kind == "json"  # keeps the exact text; JSONB would normalise it
    store.delete(cid)
    cleared = store.load(cid)
    assert (cleared.context, cleared.meta, cleared.active_agent) == ({}, {}, None)
    assert cleared.version == 4  # a tombstone: versions never go back


def _remember_agent():
    def remember(order_id: int) -> Result:
        """Remember the order."""
        return Result(value="noted", context_variables={"order_id": order_id})

    return Agent(name="Clerk", functions=[remember])


def test_session_saves_a_turn_and_async_matches_sync(postgres_url):
    agent = _remember_agent()
    cid = fresh_id()
    model = ScriptedChatModel([scripted_tool_call("remember", {"order_id": 7}), "OK."])
    Session(cid, url=postgres_url).run(Swarm(chat_model=model), agent, "refund 7")
    model = ScriptedChatModel([scripted_tool_call("remember", {"order_id": 8}), "OK 8."])
    session = Session(cid, url=postgres_url, window=20)
    asyncio.run(session.arun(Swarm(chat_model=model), agent, "and 8"))
    later = Session(cid, url=postgres_url)
    assert later.context_variables == {"order_id": 8}
    assert [m.type for m in later.messages] == ["human", "ai", "tool", "ai"] * 2
    assert later.active_agent_name == "Clerk"
    assert later.store.load(cid).version == 2


@pytest.mark.slow
def test_a_conversation_relayed_through_six_processes_keeps_order_agent_and_context(
    postgres_url,
):
    cid = fresh_id("relay")
    results = [run_worker("relay_worker.py", postgres_url, cid) for _ in range(6)]
    assert [r["ran"] for r in results] == ["Ping", "Pong"] * 3
    assert [r["holder"] for r in results] == ["Pong", "Ping"] * 3
    assert [r["turn"] for r in results] == [1, 2, 3, 4, 5, 6]
    assert results[0]["previous_reply"] is None
    for before, after in itertools.pairwise(results):
        assert after["previous_reply"].startswith(before["holder"])  # the model read it
    session = Session(cid, url=postgres_url)
    assert session.context_variables["turn"] == 6
    assert len(set(session.context_variables["pids"])) == 6
    humans = [m.content for m in session.messages if m.type == "human"]
    assert humans == [f"go {i}" for i in range(6)]


@pytest.mark.slow
def test_concurrent_processes_on_one_conversation_lose_nothing_and_never_interleave(
    postgres_url,
):
    cid = fresh_id("shared")
    writers, turns = [f"p{n}" for n in range(4)], 10
    procs = [worker("pg_session_worker.py", postgres_url, cid, w, str(turns)) for w in writers]
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    stored, torn = whole_turns(postgres_url, cid)
    assert torn == 0
    assert sorted(stored) == sorted((w, i) for w in writers for i in range(turns))
    for w in writers:
        assert [i for who, i in stored if who == w] == list(range(turns))
    record = open_context_store(postgres_url).load(cid)
    assert record.context == {w: turns - 1 for w in writers}
    assert record.version == len(writers) * turns


@pytest.mark.slow
def test_context_increments_from_three_processes_are_never_lost(postgres_url):
    cid = fresh_id("counter")
    procs = [worker("context_incrementer.py", postgres_url, cid, "25") for _ in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    record = open_context_store(postgres_url).load(cid)
    assert (record.context, record.version) == ({"counter": 75}, 75)
