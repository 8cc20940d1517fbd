"""The async Postgres path pools its connections per event loop: turns reuse a few
connections, ``asyncio.run`` may be called again and again without hanging, and a server
that went away and came back between (or during) loops is picked up again."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time

import psycopg
import pytest
from scale_helpers import ENV, ROOT, fresh_id

from graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from memory import Session, StorageUnavailable
from memory.postgres_engine import async_pool, conninfo, sync_pool

pytestmark = pytest.mark.postgres

SECRET = "as7nc-Pa55"


def _backends(url: str) -> int:
    """Client connections to ``url``'s database, counted from a connection of our own."""
    with psycopg.connect(conninfo(url)[0], autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()
    return row[0]


def _counter_agent() -> Agent:
    def note(n: int) -> Result:
        """Note the turn number."""
        return Result(value="ok", context_variables={"n": n})

    return Agent(name="Clerk", functions=[note])


async def _turns(url: str, cids: list[str], turns: int) -> None:
    agent = _counter_agent()

    async def one(cid: str) -> None:
        session = Session(cid, url=url)
        for n in range(1, turns + 1):
            model = ScriptedChatModel([scripted_tool_call("note", {"n": n}), f"done {n}"])
            await session.arun(Swarm(chat_model=model), agent, f"turn {n}")

    await asyncio.gather(*(one(cid) for cid in cids))


def test_many_async_turns_share_a_bounded_pool_closed_when_the_loop_ends(postgres_server):
    url = postgres_server.new_database(fresh_id("pool").replace("-", "_")) + "?pool_max=3"
    cids = [fresh_id("pooled") for _ in range(20)]
    seen: dict = {}

    async def main() -> None:
        await _turns(url, cids, 3)
        seen["stats"] = (await async_pool(url)).get_stats()
        seen["during"] = _backends(url)

    asyncio.run(main())
    stats = seen["stats"]
    # 20 sessions x 3 turns, each several statements, through at most 3 connections ever.
    assert stats["requests_num"] >= 20 * 3 * 2
    assert stats["connections_num"] <= 3
    assert seen["during"] <= 3 + sync_pool(url).get_stats()["pool_size"]
    # After asyncio.run only the sync pool's connections are left: the loop closed its pool.
    # A server backend leaves pg_stat_activity a moment after its client closed, so poll
    # (bounded) rather than read once: the count must drop, not be low at one instant.
    left = _backends(url)
    for _ in range(50):
        if left <= sync_pool(url).get_stats()["pool_size"]:
            break
        time.sleep(0.1)
        left = _backends(url)
    assert left <= sync_pool(url).get_stats()["pool_size"]
    for cid in cids:
        later = Session(cid, url=url)
        assert [m.content for m in later.messages if m.type == "human"] == [
            "turn 1",
            "turn 2",
            "turn 3",
        ]
        assert later.store.load(cid).version == 3


SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path.insert(0, "tests")
    from test_postgres_async_pool import _turns
    from memory.postgres_engine import async_pool
    from memory import Session

    url, cid = sys.argv[1], sys.argv[2]
    pools = []

    async def main(round_):
        await _turns(url, [cid + "-" + str(round_)], 2)
        pools.append(await async_pool(url))  # the objects, so no id is reused after GC

    for round_ in range(3):
        asyncio.run(main(round_))
    turns = [len(Session(cid + "-" + str(r), url=url).messages) for r in range(3)]
    print(json.dumps({"pools": len({id(p) for p in pools}), "messages": turns}))
    """
)


def test_asyncio_run_three_times_in_one_process_neither_hangs_nor_shares_a_pool(
    postgres_url, tmp_path
):
    script = tmp_path / "three_loops.py"
    script.write_text(SCRIPT)
    cid = fresh_id("loops")
    done = subprocess.run(
        [sys.executable, str(script), postgres_url, cid],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,  # a hang at loop shutdown fails here instead of freezing pytest
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == '{"pools": 3, "messages": [8, 8, 8]}'


def test_a_restart_between_loops_and_during_one_is_picked_up(postgres_server):
    url = postgres_server.url.replace("postgres@", f"postgres:{SECRET}@", 1) + "?pool_timeout=2"
    cid = fresh_id("async-outage")
    asyncio.run(_turns(url, [cid], 1))
    postgres_server.stop(mode="immediate")
    postgres_server.start()
    asyncio.run(_turns(url, [cid], 1))  # a new loop, a new pool, the server back

    async def outage_inside_one_loop() -> str:
        await _turns(url, [cid], 1)  # this loop's pool now holds a live connection
        postgres_server.stop(mode="immediate")
        try:
            with pytest.raises(StorageUnavailable) as caught:
                await _turns(url, [cid], 1)
        finally:
            postgres_server.start()
        await _turns(url, [cid], 1)  # the dead pool was dropped; a fresh one connects
        return str(caught.value) + repr(caught.value)

    shown = asyncio.run(outage_inside_one_loop())
    assert "postgresql://postgres:***@127.0.0.1" in shown
    assert SECRET not in shown
    later = Session(cid, url=url)
    humans = [m.content for m in later.messages if m.type == "human"]
    assert humans == ["turn 1"] * 4  # the failed turn left nothing behind
    assert later.context_variables == {"n": 1}
    assert later.store.load(cid).version == 4
