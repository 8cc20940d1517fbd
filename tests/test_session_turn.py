"""One pass through a Session turn, on every backend: the conversation is read once (the
context record and the window of messages in one load), the context encoded once and the turn
written once (messages, context and turn log in one conditional save), Session
deep-copies nothing (Swarm.run makes its one copy), the run's LangChain messages
are stored as the engine made them (no dict round trip), and async turns share the sync
backends' bounded pools (many concurrent ``Session.arun`` against a connection-limited
Postgres all succeed, and the loop shuts down cleanly)."""

from __future__ import annotations

import asyncio
import copy
import importlib
import threading
from collections import Counter
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import ContextVersionConflict, Session, open_context_store
from swarmgraph.memory.turn_index import stored_turns

PROBE = "probe_f3a9"  # a key only this test's context holds, to spot copies of it


#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")


def note(n: int) -> Result:
    """Note a number."""
    return Result(value=f"noted {n}", context_variables={"n": n})


def _swarm() -> Swarm:
    def respond(messages: list) -> Any:
        if isinstance(messages[-1], HumanMessage):
            return scripted_tool_call("note", {"n": len(messages)})
        return "ok"

    return Swarm(chat_model=ScriptedChatModel(respond=respond))


class _Calls:
    """Counts, per turn, what touches storage and the context: the store's loads, saves and
    other reads, encodes, deep copies, and dict -> LangChain conversions made by Session."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, session: Session) -> None:
        self.counts: Counter[str] = Counter()
        store = type(session.store)
        self._wrap(monkeypatch, store, "load", "load")
        self._wrap(monkeypatch, store, "save", "save")
        for read in ("messages", "count", "records"):  # none of them: the load has it all
            self._wrap(monkeypatch, store, read, "other read")
        # Every backend's save encodes through StoreBase.encode, in memory.store.
        writer = importlib.import_module("swarmgraph.memory.store")
        self._wrap(monkeypatch, writer, "encode_context", "encode")
        messages = importlib.import_module("swarmgraph.graph.core.messages")
        self._wrap(monkeypatch, messages, "to_langchain", "dict -> LangChain in Session")
        original = copy.deepcopy

        def deepcopy(value: Any, memo: Any = None, *rest: Any) -> Any:
            if memo is None and isinstance(value, dict) and PROBE in value:
                self.counts["context deep copy"] += 1
            return original(value, memo, *rest)

        monkeypatch.setattr(copy, "deepcopy", deepcopy)

    def _wrap(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.counts[label] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)


def _prime(url: str) -> tuple[Session, Agent]:
    session = Session(fresh_id("turn"), url=url, window=20)
    agent = Agent(name="Clerk", functions=[note])
    session.run(_swarm(), agent, "first", context_variables={PROBE: True, "nested": {"k": [1]}})
    return session, agent


EXPECTED = {
    "load": 1,
    "save": 1,
    "encode": 1,
    "context deep copy": 1,
}


def _engine_messages(response: Any) -> list:
    """The run's messages as the engine made them (LangChain objects)."""
    native = getattr(response, "langchain_messages", None)
    return native if native is not None else response._langchain_messages


def test_a_sync_turn_reads_encodes_and_writes_the_context_once_and_copies_it_only_in_swarm(
    url, monkeypatch
):
    session, agent = _prime(url)
    calls = _Calls(monkeypatch, session)
    response = session.run(_swarm(), agent, "second", context_variables={"extra": 1})
    # One deep copy: Swarm.run's own (Swarm deep-copies its input); none in Session.
    assert dict(calls.counts) == EXPECTED
    assert session.context_variables == {PROBE: True, "nested": {"k": [1]}, "extra": 1, "n": 6}
    # The run's messages were stored as the engine made them: ids and the model's usage
    # survive, which a trip through Swarm's dicts would have dropped.
    stored = session.messages[-3:]
    assert [m.id for m in stored] == [m.id for m in _engine_messages(response)]
    assert stored[0].usage_metadata == _engine_messages(response)[0].usage_metadata
    assert stored[0].usage_metadata is not None


def test_an_async_turn_makes_the_same_single_pass(url, monkeypatch):
    session, agent = _prime(url)
    calls = _Calls(monkeypatch, session)
    asyncio.run(session.arun(_swarm(), agent, "second"))
    assert dict(calls.counts) == EXPECTED
    assert [m.type for m in session.messages] == ["human", "ai", "tool", "ai"] * 2


def test_a_turn_that_keeps_no_context_still_logs_its_turn_in_one_write(url, monkeypatch):
    session, agent = _prime(url)
    messages_only = Session(session.conversation_id, url=url, persist=("messages",), window=20)
    calls = _Calls(monkeypatch, messages_only)
    messages_only.run(_swarm(), agent, "second", turn_id="t-2")
    # The turn log only: the stored context is not encoded again.
    assert (calls.counts["load"], calls.counts["save"], calls.counts["other read"]) == (1, 1, 0)
    assert calls.counts["encode"] == 0
    record = session.store.load(session.conversation_id)
    assert stored_turns(session.store, session.conversation_id)[-1] == "t-2"
    assert record.version == 2
    assert record.context == {PROBE: True, "nested": {"k": [1]}, "n": 2}  # as primed


def test_a_save_racing_the_turn_is_merged_key_by_key(url):
    session, agent = _prime(url)
    racer = open_context_store(url)

    class RacingSwarm:
        """Another writer saves between this turn's load and its save."""

        def run(self, **kwargs: Any) -> Any:
            stored = racer.load(session.conversation_id)
            racer.save(
                session.conversation_id,
                {**stored.context, "theirs": 1},
                expected_version=stored.version,
            )
            return _swarm().run(**kwargs)

    version = racer.load(session.conversation_id).version
    session.run(RacingSwarm(), agent, "second")
    record = racer.load(session.conversation_id)
    assert record.context == {PROBE: True, "nested": {"k": [1]}, "n": 6, "theirs": 1}
    assert record.version == version + 2
    with pytest.raises(ContextVersionConflict):
        racer.save(session.conversation_id, {}, expected_version=version + 1)


@pytest.mark.slow
@pytest.mark.postgres
def test_many_concurrent_async_turns_stay_within_the_pool_on_a_connection_limited_server(
    postgres_server,
):
    """Issue 12.5: 200 concurrent ``Session.arun`` against a database that admits 8
    connections. The async path used to open a connection per operation (and failed with
    "too many clients"); now every turn goes through the sync pool (``pool_max=4``)."""
    name = fresh_id("limited").replace("-", "_").lower()
    postgres_server.new_database(name)
    with psycopg.connect(postgres_server.url_for("postgres"), autocommit=True) as conn:
        # Superusers are exempt from connection limits: the app logs in as its own role.
        conn.execute(f"CREATE ROLE {name} LOGIN CONNECTION LIMIT 8")
        conn.execute(f"ALTER DATABASE {name} OWNER TO {name}")
    url = postgres_server.url_for(name).replace("//postgres@", f"//{name}@", 1)
    url += "?pool_max=4&pool_timeout=60"
    sessions, turns = 200, 2
    swarm, agent = _swarm(), Agent(name="Clerk", functions=[note])
    peak = {"backends": 0}

    async def conversation(k: int) -> None:
        session = Session(f"c{k}", url=url, window=20)
        for i in range(turns):
            await session.arun(swarm, agent, f"turn {i}")

    async def watch(done: asyncio.Event) -> None:
        while not done.is_set():
            with psycopg.connect(postgres_server.url_for("postgres"), autocommit=True) as c:
                n = c.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (name,)
                ).fetchone()[0]
            peak["backends"] = max(peak["backends"], n)
            await asyncio.sleep(0.05)

    async def main() -> None:
        done = asyncio.Event()
        watcher = asyncio.create_task(watch(done))
        try:
            await asyncio.gather(*(conversation(k) for k in range(sessions)))
        finally:
            done.set()
            await watcher

    errors: list[BaseException] = []

    def run_loops() -> None:
        try:
            asyncio.run(main())
            asyncio.run(conversation(sessions))  # a second loop in the same process
        except BaseException as exc:
            errors.append(exc)

    # asyncio.run's shutdown used to hang with a per-loop async pool: run it on a thread
    # that must finish, so a hang fails this test instead of the whole run.
    runner = threading.Thread(target=run_loops, daemon=True)
    runner.start()
    runner.join(timeout=600)
    assert not runner.is_alive(), "asyncio.run did not return (shutdown hung)"
    assert errors == []
    counts = [len(Session(f"c{k}", url=url).messages) for k in range(sessions + 1)]
    assert counts == [4 * turns] * (sessions + 1)
    assert 1 <= peak["backends"] <= 4
