"""Context stores: one JSON document per conversation, versions, clear errors, size warning."""

from __future__ import annotations

import datetime
import math
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from sqlalchemy import text
from swarmgraph.memory import (
    ContextSerializationError,
    ContextVersionConflict,
    open_context_store,
    open_history,
)
from swarmgraph.memory.context_store import ContextStore
from swarmgraph.memory.errors import ContextSizeWarning

ROOT = Path(__file__).resolve().parents[1]
PROCS = Path(__file__).parent / "procs"


#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory")


def test_save_and_load_round_trip_with_versions_agent_and_meta(url):
    store = open_context_store(url)
    assert isinstance(store, ContextStore)
    empty = store.load("c")
    assert (empty.context, empty.version, empty.active_agent, empty.meta) == ({}, 0, None, {})
    value = {"name": "小明 🙂", "order_id": 7, "vip": True, "tags": ("a", "b"), "n": {"x": None}}
    assert store.save("c", value, active_agent="Refunds") == 1
    # Meta is part of the record: writing it bumps the version like a context save.
    assert store.save_meta("c", {"summary": "Ming wants a refund", "summarized": 4}) == 2
    assert store.save("c", {**value, "order_id": 8}) == 3  # active_agent=None keeps the stored one
    record = open_context_store(url).load("c")
    assert record.context == {**value, "tags": ["a", "b"], "order_id": 8}
    assert (record.version, record.active_agent) == (3, "Refunds")
    assert record.meta == {"summary": "Ming wants a refund", "summarized": 4}  # meta=None keeps it
    record.context["order_id"] = 99  # a copy: editing it changes nothing stored
    assert store.load("c").context["order_id"] == 8
    assert store.save("c", {"order_id": 9}, expected_version=3, meta={"turns": []}) == 4
    assert (store.load("c").context, store.load("c").meta) == ({"order_id": 9}, {"turns": []})
    store.delete("c")
    cleared = store.load("c")
    assert (cleared.context, cleared.active_agent, cleared.meta) == ({}, None, {})
    assert cleared.version == 5  # a tombstone: versions never go back


def test_expected_version_detects_a_concurrent_write(url):
    store = open_context_store(url)
    store.save("c", {"a": 1})
    with pytest.raises(ContextVersionConflict, match="version 1, not 0"):
        store.save("c", {"a": 2}, expected_version=0)
    assert store.save("c", {"a": 3}, expected_version=1) == 2
    assert store.load("c").context == {"a": 3}


@pytest.mark.parametrize(
    ("value", "path", "kind"),
    [
        ({"when": datetime.datetime(2024, 5, 1)}, "context_variables['when']", "datetime"),
        ({"user": {"tags": {1, 2}}}, "context_variables['user']['tags']", "set"),
        ({"items": [1, object()]}, "context_variables['items'][1]", "object"),
        ({"scores": {3: "x"}}, "context_variables['scores'][3] (the key)", "int"),
        ({"ratio": math.nan}, "context_variables['ratio']", "float"),
        ({"raw": b"\x00"}, "context_variables['raw']", "bytes"),
    ],
)
def test_unserialisable_values_are_refused_naming_the_key(url, value, path, kind):
    store = open_context_store(url)
    store.save("c", {"kept": 1})
    with pytest.raises(ContextSerializationError) as info:
        store.save("c", value)
    assert str(info.value).startswith(f"{path} is a") and kind in str(info.value)
    assert info.value.path == path
    assert store.load("c").context == {"kept": 1}  # nothing half-written
    assert store.load("c").version == 1


def test_size_warning_above_the_limit_and_configurable(url):
    store = open_context_store(url)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.save("small", {"text": "x" * 60_000})  # under 64 KiB: silent
    with pytest.warns(ContextSizeWarning, match="above the 65536-byte limit"):
        store.save("big", {"text": "x" * 70_000})
    assert store.load("big").context["text"] == "x" * 70_000  # a warning, not a refusal
    tight = open_context_store(url, size_limit=100)
    with pytest.warns(ContextSizeWarning, match="100-byte limit"):
        tight.save("c", {"text": "y" * 200})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        open_context_store(url, size_limit=None).save("c", {"text": "y" * 100_000})


def test_sqlite_context_lives_next_to_the_history_in_one_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    history = open_history(url, "c")
    open_context_store(url).save("c", {"a": 1})
    with history.store.engine.connect() as conn:
        tables = {row[0] for row in conn.execute(text("SELECT name FROM sqlite_master"))}
    assert {"message_store", "swarm_context"} <= tables
    assert list(tmp_path.glob("*.db")) == [tmp_path / "chat.db"]


def test_odd_ids_are_isolated(url):
    store = open_context_store(url)
    ids = ["a'b", "x'; DELETE FROM swarm_context; --", "小明", "k" * 1024, "%"]
    for n, cid in enumerate(ids):
        store.save(cid, {"n": n})
    assert [store.load(cid).context for cid in ids] == [{"n": n} for n in range(len(ids))]
    for bad in ("", "a\x00"):
        with pytest.raises(ValueError, match="conversation id"):
            store.load(bad)


def test_save_is_a_conditional_write_on_the_expected_version(url):
    store = open_context_store(url)
    assert store.save_meta("c", {"summary": "s"}, expected_version=0) == 1  # a first write
    with pytest.raises(ContextVersionConflict) as conflict:  # a meta write bumps the version
        store.save("c", {"a": 1}, expected_version=0, active_agent="Sales")
    assert (conflict.value.stored, conflict.value.expected) == (1, 0)
    assert store.save("c", {"a": 1}, expected_version=1, active_agent="Sales") == 2
    with pytest.raises(ContextVersionConflict):
        store.save_meta("c", {"summary": "stale"}, expected_version=1)
    with pytest.raises(ContextVersionConflict):
        store.save("c", {"a": 2}, expected_version=5)
    with pytest.raises(ContextVersionConflict):
        store.save("never-saved", {"a": 2}, expected_version=1)
    assert store.save("c", {"a": 3}, expected_version=2) == 3
    assert store.save("c", {"a": 4}) == 4  # no expected version: whatever is stored, plus one
    record = store.load("c")
    assert (record.context, record.version, record.active_agent, record.meta) == (
        {"a": 4},
        4,
        "Sales",
        {"summary": "s"},
    )
    assert store.load("never-saved").version == 0


def _increment(store, cid: str) -> None:
    """Read, add one, write on the version read; a lost race reads again."""
    while True:
        record = store.load(cid)
        counter = record.context.get("counter", 0) + 1
        try:
            store.save(cid, {"counter": counter}, expected_version=record.version)
            return
        except ContextVersionConflict:
            continue


def test_read_modify_write_from_threads_loses_no_update(url):
    store = open_context_store(url)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(30):
                _increment(open_context_store(url), "c")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.load("c").context == {"counter": 180}
    assert store.load("c").version == 180


@pytest.mark.slow
def test_read_modify_write_from_processes_loses_no_update(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(PROCS / "context_incrementer.py"), url, "c", "40"],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert open_context_store(url).load("c").context == {"counter": 120}


def test_a_meta_only_row_an_earlier_release_left_at_version_0_takes_a_first_save(tmp_path):
    """Earlier releases wrote meta without bumping the version; such a row still counts as
    "nothing saved yet" for a first save, and its meta is kept."""
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    store = open_context_store(url)
    with store.store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO swarm_context (conversation_id, meta, updated_at) "
                """VALUES ('c', '{"summary": "s"}', 0)"""
            )
        )
    assert store.load("c").version == 0
    assert store.save("c", {"a": 1}, expected_version=0) == 1
    assert (store.load("c").context, store.load("c").meta) == ({"a": 1}, {"summary": "s"})
