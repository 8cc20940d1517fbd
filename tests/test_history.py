"""Chat histories: exact round-trips, windowed O(k) reads, isolation, concurrency."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
import swarmgraph.memory.backends.sqlite.store as sqlite_store
import swarmgraph.memory.store as unit_of_work
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
)
from sqlalchemy import text
from swarmgraph.memory import open_history
from swarmgraph.memory.backends.sqlite.engine import sync_engine
from swarmgraph.memory.store import Window

ROOT = Path(__file__).resolve().parents[1]
PROCS = Path(__file__).parent / "procs"


def every_kind() -> list:
    return [
        SystemMessage("You are Triage.", id="sys-1"),
        HumanMessage("我叫小明 🙂, order #7", name="ming", id="h-1", additional_kwargs={"x": [1]}),
        AIMessage(
            "",
            name="Triage",
            id="a-1",
            tool_calls=[
                {
                    "name": "lookup",
                    "args": {"order_id": 7, "q": "é"},
                    "id": "c1",
                    "type": "tool_call",
                }
            ],
            invalid_tool_calls=[
                {
                    "name": "broken",
                    "args": "{not json",
                    "id": "c2",
                    "error": "bad",
                    "type": "invalid_tool_call",
                }
            ],
            response_metadata={"model_name": "scripted", "finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
        ),
        ToolMessage(
            "order 7: shipped",
            tool_call_id="c1",
            name="lookup",
            artifact={"rows": [1, 2]},
            id="t-1",
        ),
        ToolMessage("oops", tool_call_id="c2", name="broken", status="error"),
        AIMessage([{"type": "text", "text": "Done."}], name="Refunds"),
        HumanMessage("x" * (1 << 20)),  # 1 MB
        HumanMessage("lone surrogate \udc80 and NUL \x00 inside"),
    ]


#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory")


def test_every_message_kind_round_trips_exactly(url):
    history = open_history(url, "conv")
    assert isinstance(history, BaseChatMessageHistory)
    original = every_kind()
    history.add_messages(original)
    loaded = open_history(url, "conv").get_messages()
    assert [message_to_dict(m) for m in loaded] == [message_to_dict(m) for m in original]
    assert [type(m) for m in loaded] == [type(m) for m in original]


def test_async_round_trip_and_sync_async_see_each_other(url):
    history = open_history(url, "conv")

    async def go():
        await history.aadd_messages(every_kind()[:4])
        history.add_messages([HumanMessage("sync")])
        return await history.aget_messages(), await history.aget_messages(limit=2)

    everything, last_two = asyncio.run(go())
    assert [message_to_dict(m) for m in everything[:4]] == [
        message_to_dict(m) for m in every_kind()[:4]
    ]
    assert [m.content for m in last_two] == ["order 7: shipped", "sync"]
    asyncio.run(history.aclear())
    assert history.get_messages() == []


def test_window_is_the_last_k_in_order(url):
    history = open_history(url, "conv")
    history.add_messages([HumanMessage(str(i)) for i in range(30)])
    assert [m.content for m in history.get_messages(limit=3)] == ["27", "28", "29"]
    assert history.get_messages(limit=0) == []
    assert len(history.get_messages(limit=100)) == 30
    since = history.store.load("conv", window=Window(start=28))
    assert [m.content for m in since.messages] == ["28", "29"] and since.start == 28
    assert history.count() == 30
    with pytest.raises(ValueError, match="limit"):
        history.get_messages(limit=-1)


def test_window_reads_decode_only_k_rows_and_use_the_index(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    history = open_history(url, "big")
    history.add_messages([HumanMessage(f"m{i}") for i in range(2000)])
    open_history(url, "other").add_messages([HumanMessage("x")] * 500)

    decoded: list[int] = []
    real = unit_of_work.messages_from_dict

    def counting(dicts):
        decoded.append(len(dicts))
        return real(dicts)

    monkeypatch.setattr(unit_of_work, "messages_from_dict", counting)
    window = history.get_messages(limit=20)
    assert [m.content for m in window] == [f"m{i}" for i in range(1980, 2000)]
    assert decoded == [20]

    engine = sync_engine(tmp_path / "chat.db")
    with engine.connect() as conn:
        plan = " | ".join(
            row[-1]
            for row in conn.execute(
                text("EXPLAIN QUERY PLAN " + sqlite_store.WINDOW_SQL), {"sid": "big", "limit": 20}
            )
        )
    assert "ix_message_store_session_id_id" in plan
    assert "TEMP B-TREE" not in plan  # no sort of the whole conversation

    # SQLite's virtual-machine steps for the window query do not grow with the history.
    open_history(url, "small").add_messages([HumanMessage(f"s{i}") for i in range(40)])
    raw = sqlite3.connect(tmp_path / "chat.db")
    sql = sqlite_store.WINDOW_SQL.replace(":sid", "?").replace(":limit", "?")

    def vm_steps(sql: str, params: tuple) -> int:
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        raw.set_progress_handler(tick, 1)
        rows = raw.execute(sql, params).fetchall()
        raw.set_progress_handler(None, 1)
        assert rows
        return steps[0]

    big, small = vm_steps(sql, ("big", 20)), vm_steps(sql, ("small", 20))
    whole = vm_steps(sqlite_store.ALL_SQL.replace(":sid", "?"), ("big",))
    raw.close()
    assert big <= 2 * small  # same order as a 40-message conversation, not 50x more
    assert whole > 20 * big


def test_odd_conversation_ids_are_isolated(url):
    ids = [
        "a'b",
        'q"uote',
        "x'; DROP TABLE message_store; --",
        "1 OR 1=1",
        "小明-🙂",
        "%_*",
        "k" * 1024,
    ]
    for cid in ids:
        open_history(url, cid).add_messages([HumanMessage(f"for {cid}")])
    for cid in ids:
        assert [m.content for m in open_history(url, cid).get_messages()] == [f"for {cid}"]
    open_history(url, "%_*").clear()
    assert open_history(url, "%_*").get_messages() == []
    assert open_history(url, "1 OR 1=1").count() == 1


@pytest.mark.parametrize("bad", ["", "a\x00b", None, 7])
def test_bad_conversation_ids_are_a_clear_value_error(url, bad):
    with pytest.raises(ValueError, match="conversation id"):
        open_history(url, bad)


def test_unknown_and_in_memory_sqlite_urls_are_refused_without_leaking_passwords():
    with pytest.raises(ValueError, match=r"mongodb://u:\*\*\*@h") as info:
        open_history("mongodb://u:s3cret@h/db", "c")
    assert "s3cret" not in str(info.value)
    with pytest.raises(ValueError, match="memory://"):
        open_history("sqlite://", "c")
    with pytest.raises(ValueError, match="memory://"):
        open_history("sqlite:///:memory:", "c")


def test_memory_namespaces_are_separate_and_shared_within(tmp_path):
    a = open_history(f"memory://{tmp_path.name}-a", "c")
    a.add_messages([HumanMessage("hi")])
    assert open_history(f"memory://{tmp_path.name}-a", "c").count() == 1
    assert open_history(f"memory://{tmp_path.name}-b", "c").count() == 0
    a.get_messages()[0].content = "edited"  # callers get copies
    assert a.get_messages()[0].content == "hi"


def test_sqlite_settings_and_one_engine_per_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    first, second = open_history(url, "a"), open_history(url, "b")
    assert first.store.engine is second.store.engine
    assert first.store.engine is open_history(f"sqlite:///{tmp_path}/./chat.db", "c").store.engine
    with first.store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000


def test_files_stay_compatible_with_plain_langchain(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import SQLChatMessageHistory
    path = tmp_path / "chat.db"
    plain = SQLChatMessageHistory(session_id="c", connection=f"sqlite:///{path}")
    plain.add_messages([HumanMessage("from upstream")])
    ours = open_history(f"sqlite:///{path}", "c")
    ours.add_messages([AIMessage("from us", name="Triage")])
    assert [m.content for m in plain.messages] == ["from upstream", "from us"]
    assert [m.content for m in ours.get_messages()] == ["from upstream", "from us"]


def test_opening_a_history_shows_no_deprecation_warning(tmp_path):
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "from swarmgraph.memory import open_history\n"
        f"open_history('sqlite:///{tmp_path / 'w.db'}', 'c').get_messages()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _turn(i: int, writer: str) -> list:
    return [
        HumanMessage(f"{writer}:{i}:q"),
        AIMessage(f"{writer}:{i}:a"),
        AIMessage(f"{writer}:{i}:z"),
    ]


def _assert_whole_turns(contents: list[str], expected_turns: int) -> None:
    assert len(contents) == 3 * expected_turns
    for start in range(0, len(contents), 3):
        turn = contents[start : start + 3]
        prefix = turn[0].rsplit(":", 1)[0]
        assert turn == [f"{prefix}:q", f"{prefix}:a", f"{prefix}:z"], turn
    assert len({c.rsplit(":", 1)[0] for c in contents}) == expected_turns


def test_threads_writing_one_history_lose_nothing_and_never_interleave(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            history = open_history(url, "shared")
            for i in range(25):
                history.add_messages(_turn(i, name))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    _assert_whole_turns([m.content for m in open_history(url, "shared").get_messages()], 200)


@pytest.mark.slow
def test_processes_writing_one_history_lose_nothing_and_never_interleave(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(PROCS / "history_writer.py"), url, "shared", f"p{n}", "40"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    _assert_whole_turns([m.content for m in open_history(url, "shared").get_messages()], 120)
