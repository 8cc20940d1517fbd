"""The side-by-side table: every cell measured from a real run, refresh in a new process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from swarmgraph.memory.compare import compare_persistence, format_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_four_persist_choices_in_new_processes(tmp_path):
    rows = compare_persistence(tmp_path, new_process=True)
    by = {row["persist"]: row for row in rows}
    assert list(by) == ["messages+context", "messages", "context", "none"]
    assert [(r["model_saw_earlier_text"], r["tool_saw_field"]) for r in rows] == [
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    ]
    assert by["messages+context"]["reply_turn_2"] == "Xiaoming, Refund for order 7 was approved."
    assert by["none"]["reply_turn_2"].startswith("No order_id in context_variables")
    # Storing text costs bytes and tokens; storing only the fields is small.
    assert by["none"]["bytes_stored"] == 0
    assert 0 < by["context"]["bytes_stored"] < by["messages+context"]["bytes_stored"] / 10
    assert by["messages"]["tokens_sent"] > by["none"]["tokens_sent"]
    assert by["context"]["tokens_sent"] < by["none"]["tokens_sent"]  # no detour via Triage
    for name in ("messages+context", "messages", "context"):
        db = tmp_path / f"compare-{name}.db"
        assert db.exists()


def test_in_process_run_matches_and_table_prints(tmp_path):
    rows = compare_persistence(f"sqlite:///{tmp_path / 'one.db'}")
    fresh = compare_persistence(tmp_path / "dir")
    assert [(r["model_saw_earlier_text"], r["tool_saw_field"]) for r in rows] == [
        (r["model_saw_earlier_text"], r["tool_saw_field"]) for r in fresh
    ]
    assert [r["bytes_stored"] for r in rows] == [r["bytes_stored"] for r in fresh]
    table = format_table(rows).splitlines()
    assert table[0].split(" | ")[:3] == [
        "persist         ",
        "model saw earlier text",
        "tool saw field",
    ]
    assert table[2].startswith("messages+context | yes")
    assert table[5].startswith("none             | no")


@pytest.mark.slow
def test_memory_url_and_command_line(tmp_path):
    rows = compare_persistence(f"memory://{tmp_path.name}")
    assert [r["bytes_stored"] > 0 for r in rows] == [True, True, True, False]
    done = subprocess.run(
        [sys.executable, "-m", "swarmgraph.memory.compare", str(tmp_path / "cli")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "messages+context | yes" in done.stdout


def test_each_row_names_where_its_conversation_is_stored(tmp_path):
    """A new Session on a row's url and conversation_id sees what that choice stored (the
    refresh notebook 03 shows): messages only where they were kept, context likewise."""
    from swarmgraph.memory import Session

    rows = compare_persistence(tmp_path)
    stored = {}
    for row in rows:
        later = Session(row["conversation_id"], url=row["url"])
        stored[row["persist"]] = (len(later.messages) > 0, later.context_variables)
    customer = {"name": "Xiaoming", "order_id": 7}
    assert stored == {
        "messages+context": (True, customer),
        "messages": (True, {}),
        "context": (False, customer),
        "none": (False, {}),
    }


@pytest.mark.slow
def test_the_long_term_row_carries_the_customer_into_a_new_conversation(tmp_path):
    """The third kind, in the demo's table: only persist with long_term knows the customer in
    the next conversation; the two halves behave as without it."""
    from swarmgraph.memory.compare import WITH_LONG_TERM

    rows = compare_persistence(tmp_path, choices=WITH_LONG_TERM, new_process=True)
    by = {row["persist"]: row for row in rows}
    assert next(iter(by)) == "messages+context+long_term"
    assert {name: row["next_conversation_knew"] for name, row in by.items()} == {
        "messages+context+long_term": True,
        "messages+context": False,
        "messages": False,
        "context": False,
        "none": False,
    }
    long_term, halves = by["messages+context+long_term"], by["messages+context"]
    assert (long_term["model_saw_earlier_text"], long_term["tool_saw_field"]) == (True, True)
    assert long_term["reply_turn_2"] == halves["reply_turn_2"]
    assert long_term["bytes_stored"] > halves["bytes_stored"]  # the facts and their outbox
    table = format_table(rows).splitlines()
    assert table[0].rstrip().endswith("next conversation knew")
    assert table[2].rstrip().endswith("yes") and table[3].rstrip().endswith("no")
