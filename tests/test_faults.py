"""Faults: kill -9 at random moments of a turn (SQLite and Postgres) leaves whole turns only;
Postgres stopped mid-run gives a clear, credential-free error and the next turn works."""

from __future__ import annotations

import logging
import random
import signal
import time

import pytest
from langchain_core.messages import HumanMessage
from scale_helpers import fresh_id, whole_turns, worker
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session, open_history
from swarmgraph.memory.errors import StorageConfigurationError, StorageUnavailable

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

KILL_ROUNDS = 6
SECRET = "s3cret-Pa55"


def _kill_rounds(url: str, seed: int) -> tuple[int, int, list]:
    """Start a writer, SIGKILL it at a random moment, check; repeat: (rounds, torn, turns)."""
    rng = random.Random(seed)
    cid = fresh_id("killed")
    history = open_history(url, cid)
    torn_total, rounds = 0, 0
    for round_ in range(KILL_ROUNDS):
        before = history.count()
        proc = worker("pg_session_worker.py", url, cid, f"k{round_}", "400")
        deadline = time.monotonic() + 120
        while history.count() == before:  # wait out the imports: kill while turns run
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL  # killed mid-run, not finished or crashed
        rounds += 1
        turns, torn = whole_turns(url, cid)
        torn_total += torn
        record = Session(cid, url=url).store.load(cid)
        assert record.version == len(turns)  # context saved with exactly the whole turns
        for writer in {w for w, _ in turns}:
            mine = [i for w, i in turns if w == writer]
            assert mine == list(range(len(mine)))
            assert record.context[writer] == mine[-1]
    return rounds, torn_total, turns


def test_kill_9_at_random_moments_leaves_whole_turns_on_sqlite(tmp_path):
    rounds, torn, turns = _kill_rounds(f"sqlite:///{tmp_path / 'k.db'}", seed=11)
    assert (rounds, torn) == (KILL_ROUNDS, 0)
    assert len({w for w, _ in turns}) == KILL_ROUNDS


@pytest.mark.postgres
def test_kill_9_at_random_moments_leaves_whole_turns_on_postgres(postgres_url):
    rounds, torn, turns = _kill_rounds(postgres_url, seed=12)
    assert (rounds, torn) == (KILL_ROUNDS, 0)
    assert len({w for w, _ in turns}) == KILL_ROUNDS


def _with_password(url: str) -> str:
    return url.replace("postgres@", f"postgres:{SECRET}@", 1)  # the test server trusts all


def _counter_agent():
    def note(n: int) -> Result:
        """Note a number."""
        return Result(value=f"noted {n}", context_variables={"n": n})

    return Agent(name="Clerk", functions=[note])


@pytest.mark.postgres
def test_postgres_stopped_mid_run_gives_a_clear_error_and_the_next_turn_works(
    postgres_server, caplog
):
    url = _with_password(postgres_server.url) + "?pool_timeout=2"
    cid = fresh_id("outage")
    agent = _counter_agent()
    session = Session(cid, url=url)
    session.run(
        Swarm(chat_model=ScriptedChatModel([scripted_tool_call("note", {"n": 1}), "1"])),
        agent,
        "one",
    )

    def stop_then_answer(messages):  # the database goes away while the model "thinks"
        if isinstance(messages[-1], HumanMessage):
            postgres_server.stop(mode="immediate")
            return scripted_tool_call("note", {"n": 2})
        return "2"

    caplog.set_level(logging.DEBUG)
    with pytest.raises(StorageUnavailable) as caught:
        session.run(Swarm(chat_model=ScriptedChatModel(respond=stop_then_answer)), agent, "two")
    error = caught.value
    assert "storage at postgresql://postgres:***@127.0.0.1" in str(error)
    assert SECRET not in str(error) and SECRET not in repr(error)
    assert SECRET not in caplog.text and SECRET not in repr(session.history)
    assert isinstance(error, ConnectionError)

    with pytest.raises(StorageUnavailable):  # still down: every call says so, none hangs
        Session(cid, url=url).context_variables  # noqa: B018

    postgres_server.start()
    model = ScriptedChatModel([scripted_tool_call("note", {"n": 3}), "3"])
    session.run(Swarm(chat_model=model), agent, "three")  # the pool recovered on its own
    after = Session(cid, url=url)
    humans = [m.content for m in after.messages if m.type == "human"]
    assert humans == ["one", "three"]  # turn one kept, turn two never half-written
    assert after.context_variables == {"n": 3}
    assert after.store.load(cid).version == 2


def _turn(session: Session, n: int) -> None:
    model = ScriptedChatModel([scripted_tool_call("note", {"n": n}), str(n)])
    session.run(Swarm(chat_model=model), _counter_agent(), f"turn {n}")


@pytest.mark.postgres
@pytest.mark.timeout(120)  # without client-side timeouts the frozen turn would wait forever
def test_a_frozen_postgres_gives_storage_unavailable_and_the_next_turn_works(postgres_server):
    url = postgres_server.url + "?statement_timeout=1&connect_timeout=1&pool_timeout=2"
    cid = fresh_id("frozen")
    session = Session(cid, url=url)
    _turn(session, 1)
    with postgres_server.frozen():  # a network partition: sockets open, nothing answers
        with pytest.raises(StorageUnavailable) as caught:
            _turn(session, 2)
        assert "frozen or unreachable" in str(caught.value) or "timeout" in str(caught.value)
        with pytest.raises(StorageUnavailable):  # a fresh connection times out as well
            Session(cid, url=url).context_variables  # noqa: B018
    _turn(session, 3)
    after = Session(cid, url=url)
    assert [m.content for m in after.messages if m.type == "human"] == ["turn 1", "turn 3"]
    assert after.context_variables == {"n": 3} and after.store.load(cid).version == 2


@pytest.mark.redis
@pytest.mark.timeout(120)
def test_a_frozen_redis_gives_storage_unavailable_and_the_next_turn_works(redis_server):
    url = redis_server.url + "?socket_timeout=1&socket_connect_timeout=1"
    cid = fresh_id("frozen")
    session = Session(cid, url=url)
    _turn(session, 1)
    with redis_server.frozen(), pytest.raises(StorageUnavailable):
        _turn(session, 2)
    _turn(session, 3)
    after = Session(cid, url=url)
    assert [m.content for m in after.messages if m.type == "human"] == ["turn 1", "turn 3"]
    assert after.context_variables == {"n": 3} and after.store.load(cid).version == 2


@pytest.mark.postgres
def test_a_wrong_database_or_user_fails_with_the_servers_reason(postgres_server):
    port_url = postgres_server.url.rsplit("/", 1)[0]
    for url, reason in [
        (port_url + "/no_such_db?pool_timeout=3", 'database "no_such_db" does not exist'),
        (
            port_url.replace("postgres@", "no_such_role@") + "/swarmgraph_test?pool_timeout=3",
            'role "no_such_role" does not exist',
        ),
    ]:
        with pytest.raises(StorageConfigurationError) as caught:
            Session(fresh_id(), url=url)
        assert reason in str(caught.value)
        assert "pool timeout" not in str(caught.value)
        assert isinstance(caught.value, StorageUnavailable)


@pytest.mark.redis
def test_a_wrong_redis_password_or_database_number_fails_with_the_servers_reason(redis_url):
    base = redis_url.rsplit("/", 1)[0]
    for url, reason in [
        (base.replace("redis://", "redis://bob:wrong@") + "/0", "invalid username-password"),
        (base + "/99", "DB index is out of range"),
    ]:
        with pytest.raises(StorageConfigurationError) as caught:
            Session(fresh_id(), url=url).context_variables  # noqa: B018
        assert reason in str(caught.value)
