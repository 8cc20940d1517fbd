"""``close_stores()`` (memory/store_closing.py): the descriptors a process's stores hold are
closed, nothing stored is lost, and a store opened before connects again when next used."""

from __future__ import annotations

import os

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
from swarmgraph.memory import LongTermMemory, Session, close_stores, open_store
from swarmgraph.memory.store import TurnWrite


def _open_files(folder) -> int:
    """Descriptors of this process open on files under ``folder`` (Linux's /proc)."""
    inside = str(folder)
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed between the listing and the read
            continue
        count += target.startswith(inside)
    return count


def test_sqlite_files_are_closed_and_open_again_on_next_use(tmp_path):
    urls = [f"sqlite:///{tmp_path / f'chat{i}.db'}" for i in range(5)]
    swarm = Swarm(chat_model=ScriptedChatModel(["ok"] * 5))
    for url in urls:
        Session("c", url=url).run(swarm, Agent(), "hi")
    held = open_store(urls[0])  # a store opened before the close
    assert _open_files(tmp_path) >= len(urls)  # each file (and its -wal) stays open
    assert close_stores("sqlite") >= len(urls)
    assert _open_files(tmp_path) == 0
    assert not any(p.name.endswith("-wal") for p in tmp_path.iterdir())  # all checkpointed
    assert [m.content for m in Session("c", url=urls[3]).messages] == ["hi", "ok"]
    assert held.save("c", TurnWrite(context={"n": 1}), expected_version=1) == 2
    assert Session("c", url=urls[0]).context_variables == {"n": 1}
    assert close_stores("sqlite") >= 1 and _open_files(tmp_path) == 0
    assert close_stores("sqlite") == 0  # nothing open: nothing to close


def test_long_term_stores_on_sqlite_are_closed_too(tmp_path):
    url = f"sqlite:///{tmp_path / 'facts.db'}"
    LongTermMemory(url, user_id="ming").remember("diet", "vegetarian")
    assert _open_files(tmp_path) >= 1
    close_stores("sqlite")
    assert _open_files(tmp_path) == 0
    recalled = LongTermMemory(url, user_id="ming").recall("diet")  # opened again
    assert [fact.value for fact in recalled] == ["vegetarian"]


def test_a_postgres_pool_is_closed_and_a_held_store_reconnects(postgres_url, tmp_path):
    cid = fresh_id("close")
    held = open_store(postgres_url)
    assert held.save(cid, TurnWrite(context={"n": 1}), expected_version=0) == 1
    sqlite_url = f"sqlite:///{tmp_path / 'kept.db'}"
    open_store(sqlite_url).save(cid, TurnWrite(context={}), expected_version=0)
    assert close_stores("postgresql") >= 1
    assert _open_files(tmp_path) >= 1  # only the scheme named was closed
    assert held.load(cid).context == {"n": 1}
    assert open_store(postgres_url) is not held  # forgotten: the next open makes a new one


def test_an_unknown_scheme_is_refused_before_anything_closes(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    open_store(url).save("c", TurnWrite(context={}), expected_version=0)
    with pytest.raises(ValueError, match="sqlite, postgresql, redis"):
        close_stores("sqlite", "mysql")
    assert _open_files(tmp_path) >= 1
