"""Storage at the edges, the same on every backend (real SQLite, Postgres and Redis):
conversation-id rules checked before the model runs, context returned exactly as saved,
nesting limited at save time, older Postgres tables migrated in place, a SQLite file on
read-only media still readable."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import warnings

import psycopg
import pytest
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import (
    ContextSerializationError,
    ContextVersionConflict,
    Session,
    open_context_store,
    open_history,
)
from swarmgraph.memory.context_json import MAX_DEPTH
from swarmgraph.memory.errors import ContextDepthWarning
from swarmgraph.memory.ids import MAX_ID_BYTES
from swarmgraph.memory.turn_index import stored_turns


def _echo_swarm() -> tuple[Swarm, ScriptedChatModel]:
    model = ScriptedChatModel(respond=lambda msgs: f"seen {len(msgs)}")
    return Swarm(chat_model=model), model


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_long_conversation_ids_work_on_every_backend(backend_url):
    swarm, _ = _echo_swarm()
    # Postgres refused ids over ~2.7 kB (btree key limit) as an "outage", after the model ran.
    for cid in [fresh_id("long") + "x" * 10_000, fresh_id("wide") + "小明🙂" * 4000]:
        Session(cid, url=backend_url).run(swarm, Agent(), "hello", context_variables={"n": 1})
        again = Session(cid, url=backend_url)
        assert [m.content for m in again.messages] == ["hello", "seen 2"]
        assert again.context_variables == {"n": 1}
        assert again.store.load(cid).version == 1


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_ids_no_backend_can_store_are_refused_before_the_model_runs(backend_url):
    swarm, model = _echo_swarm()
    too_long = "x" * (MAX_ID_BYTES + 1)
    cases = [
        ("conv-\ud800", "unpaired surrogate"),  # was a raw UnicodeEncodeError on some backends
        ("\udfff", "unpaired surrogate"),
        (too_long, f"at most {MAX_ID_BYTES}"),
        ("nul\x00", "NUL"),
        ("", "non-empty"),
    ]
    for cid, reason in cases:
        with pytest.raises(ValueError, match=reason) as caught:
            Session(cid, url=backend_url).run(swarm, Agent(), "hi")
        assert "conversation id" in str(caught.value)
        with pytest.raises(ValueError, match=reason):
            open_history(backend_url, cid)
        with pytest.raises(ValueError, match=reason):
            open_context_store(backend_url).load(cid)
    assert model.calls == []
    edge = "y" * MAX_ID_BYTES  # exactly at the limit is fine everywhere
    Session(edge, url=backend_url).run(swarm, Agent(), "hi")
    assert len(open_history(backend_url, edge).get_messages()) == 2
    Session(edge, url=backend_url).clear()


def _exactly(a, b) -> bool:
    """Equal, with key order, -0.0 versus 0.0 and int versus float all telling apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_exactly(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_exactly, a, b))
    return a == b


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_context_round_trips_exactly(backend_url):
    store = open_context_store(backend_url, size_limit=None)
    cid = fresh_id("exact")
    context = {
        "zeta": -0.0,  # JSONB read this back as 0.0
        "alpha": {"b": 1, "a": [0.0, -0.0, 1e20, 1.5e-7]},  # and sorted these keys
        "big": 10**30,
        "text": "nul\x00 and lone \ud800",
        "": None,
    }
    store.save(cid, context)
    assert _exactly(store.load(cid).context, context)
    store.save_meta(cid, {"y": -0.0, "x": 1})
    assert _exactly(store.load(cid).meta, {"y": -0.0, "x": 1})
    swarm, _ = _echo_swarm()
    session = Session(cid, url=backend_url)
    response = session.run(swarm, Agent(), "hi")
    assert _exactly(response.context_variables, context)
    assert _exactly(Session(cid, url=backend_url).context_variables, context)


OLD_CONTEXT_TABLE = (
    "CREATE TABLE swarm_context (conversation_id TEXT PRIMARY KEY, "
    "context JSONB NOT NULL DEFAULT '{}', version BIGINT NOT NULL DEFAULT 0, "
    "active_agent TEXT, meta JSONB NOT NULL DEFAULT '{}', "
    "updated_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)
OLD_ID_TABLE = (
    "CREATE TABLE swarm_conversations (session_id UUID PRIMARY KEY, "
    "conversation_id TEXT NOT NULL UNIQUE, created_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)


@pytest.mark.postgres
def test_tables_of_the_earlier_layout_are_migrated_in_place(postgres_server):
    url = postgres_server.new_database(fresh_id("old_layout").replace("-", "_").lower())
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(OLD_CONTEXT_TABLE)
        conn.execute(OLD_ID_TABLE)
        conn.execute(
            "INSERT INTO swarm_context (conversation_id, context, version, active_agent, meta) "
            "VALUES ('old', '{\"order_id\": 7}', 3, 'Refunds', '{\"summary\": \"s\"}'), "
            '(\'wrapped\', \'{"$swarmgraph_json": "{\\"nul\\":\\"a\\\\u0000b\\"}"}\', 1, '
            "NULL, '{}')"
        )
    store = open_context_store(url)
    old = store.load("old")
    assert (old.context, old.version, old.active_agent) == ({"order_id": 7}, 3, "Refunds")
    assert old.meta == {"summary": "s"}
    assert store.load("wrapped").context == {"nul": "a\x00b"}
    assert store.save("old", {"order_id": 8}, expected_version=3) == 4
    swarm, _ = _echo_swarm()
    long_id = "z" * 5000
    Session(long_id, url=url).run(swarm, Agent(), "hi", context_variables={"n": 1})
    assert Session(long_id, url=url).context_variables == {"n": 1}
    with psycopg.connect(url, autocommit=True) as conn:
        kinds = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'swarm_context'"
            ).fetchall()
        )
    assert kinds["context"] == kinds["meta"] == "json"
    assert kinds["conversation_key"] == "bytea"


@contextlib.contextmanager
def _read_only_folder(path):
    """``path`` made read-only the way media is: a read-only mount when we are root (root
    ignores file modes), file modes otherwise."""
    if os.geteuid() == 0:
        staged = path.parent / (path.name + "-staged")
        shutil.copytree(path, staged)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(path)], check=True)
        try:
            shutil.copytree(staged, path, dirs_exist_ok=True)
            subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)
            yield
        finally:
            subprocess.run(["umount", "-l", str(path)], check=False)
        return
    modes = {p: p.stat().st_mode for p in [path, *path.iterdir()]}
    for p in modes:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_a_sqlite_file_on_read_only_media_can_be_read(tmp_path):
    folder = tmp_path / "media"
    folder.mkdir()
    url = f"sqlite:///{folder / 'chat.db'}"
    swarm, _ = _echo_swarm()
    Session("c", url=url).run(swarm, Agent(name="A"), "hi", context_variables={"n": 1})
    _dispose_engines(folder / "chat.db")  # a fresh process: nothing cached
    with _read_only_folder(folder):
        session = Session("c", url=url)
        assert [m.content for m in session.messages] == ["hi", "seen 2"]
        assert session.context_variables == {"n": 1} and session.active_agent_name == "A"
        assert [m.content for m in open_history(url, "c").get_messages(limit=1)] == ["seen 2"]
        with pytest.raises(Exception, match=r"(?i)read.?only"):
            session.run(swarm, Agent(name="A"), "more")


def _dispose_engines(path) -> None:
    from swarmgraph.memory.backends.sqlite.engine import dispose_engine

    dispose_engine(path)


def _nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_context_nested_too_deep_is_refused_at_save_and_the_messages_are_kept(backend_url):
    def dig(levels: int) -> Result:
        """Store a deeply nested value."""
        return Result(value="dug", context_variables={"deep": _nested(levels)})

    cid = fresh_id("deep")
    session = Session(cid, url=backend_url)
    agent = Agent(name="Digger", functions=[dig])
    model = ScriptedChatModel([scripted_tool_call("dig", {"levels": 1}), "shallow"])
    session.run(Swarm(chat_model=model), agent, "first", context_variables={"keep": 1})
    for levels in (MAX_DEPTH + 5, 600, 990):  # 600 used to be saved, 990 lost the turn
        model = ScriptedChatModel([scripted_tool_call("dig", {"levels": levels}), "deep"])
        with pytest.raises(ContextSerializationError, match="nested deeper") as caught:
            session.run(Swarm(chat_model=model), agent, f"dig {levels}")
        assert caught.value.response is not None
    again = Session(cid, url=backend_url)
    humans = [m.content for m in again.messages if m.type == "human"]
    assert humans == ["first", f"dig {MAX_DEPTH + 5}", "dig 600", "dig 990"]  # messages kept
    assert again.context_variables == {"keep": 1, "deep": []}  # context unchanged
    # Each refused turn still stored its id: one write of the row, one version each.
    assert again.store.load(cid).version == 4
    assert len(stored_turns(again.store, cid)) == 4
    model = ScriptedChatModel([scripted_tool_call("dig", {"levels": 3}), "fine"])
    assert again.run(Swarm(chat_model=model), agent, "later").context_variables["deep"] == [[[]]]


def _store_raw_context(url: str, cid: str, text: str) -> None:
    """Write context JSON past our checks, as an earlier version without limits did."""
    if url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(url.split("///", 1)[1]) as conn:
            conn.execute(
                "UPDATE swarm_context SET context = ? WHERE conversation_id = ?", (text, cid)
            )
    elif url.startswith("postgresql"):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE swarm_context SET context = %s::json WHERE conversation_id = %s",
                (text, cid),
            )
    else:
        import redis

        with redis.Redis.from_url(url) as client:
            client.hset(f"swarm_context:{cid}", "context", text)


@pytest.mark.parametrize("backend_url", [b for b in BACKENDS if b != "memory"], indirect=True)
def test_a_stored_deep_value_never_makes_later_turns_fail(backend_url):
    cid = fresh_id("legacy-deep")
    swarm, _ = _echo_swarm()
    Session(cid, url=backend_url).run(swarm, Agent(), "one", context_variables={"keep": 1})
    deep = "[" * 600 + "]" * 600
    _store_raw_context(backend_url, cid, '{"keep":1,"deep":' + deep + "}")
    with pytest.warns(ContextDepthWarning, match="deep"):
        response = Session(cid, url=backend_url).run(swarm, Agent(), "two")
    assert response.context_variables == {"keep": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContextDepthWarning)  # the turn's save dropped the key
        later = Session(cid, url=backend_url)
        assert later.context_variables == {"keep": 1}
    assert [m.content for m in later.messages if m.type == "human"] == ["one", "two"]


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_clear_never_makes_versions_go_backwards(backend_url):
    """A turn that loaded version 1 before a clear must not find "version 1" again and
    overwrite the context saved after the clear with its stale copy."""
    cid = fresh_id("cleared")
    swarm, _ = _echo_swarm()
    Session(cid, url=backend_url).run(swarm, Agent(), "one", context_variables={"old": 1})
    stale = Session(cid, url=backend_url)
    loaded = stale.store.load(cid)  # what a slow turn read before the clear
    assert loaded.version == 1
    Session(cid, url=backend_url).clear()
    after_clear = stale.store.load(cid)
    assert after_clear.version > loaded.version and after_clear.context == {}
    fresh = Session(cid, url=backend_url).run(swarm, Agent(), "two", context_variables={"new": 2})
    assert fresh.context_variables == {"new": 2}
    versions = [loaded.version, after_clear.version, stale.store.load(cid).version]
    assert versions == sorted(set(versions))  # strictly increasing, never repeated
    with pytest.raises(ContextVersionConflict):  # the stale turn's save cannot slip in
        open_context_store(backend_url).save(
            cid, {"old": 1, "stale": True}, expected_version=loaded.version
        )
    assert Session(cid, url=backend_url).context_variables == {"new": 2}


def test_the_deadline_watchdog_fires_a_short_deadline_armed_behind_a_long_one():
    import socket as socket_module
    import time

    from swarmgraph.memory.backends.postgres.deadline import guard

    slow_a, slow_b = socket_module.socketpair()
    fast_a, fast_b = socket_module.socketpair()
    with guard(slow_a.fileno(), 60) as slow:  # the watchdog now sleeps for ~60 s ...
        time.sleep(0.05)
        with guard(fast_a.fileno(), 0.1) as fast:  # ... so this one must wake it
            fast_a.settimeout(5)
            start = time.monotonic()
            assert fast_a.recv(1) == b""  # the shut-down socket reads end-of-file
            assert time.monotonic() - start < 2
        assert fast.fired and not slow.fired
    for sock in (slow_a, slow_b, fast_a, fast_b):
        sock.close()
