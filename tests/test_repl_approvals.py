"""``swarmgraph chat --approve TOOL``: the REPL asks before a marked tool runs, and a turn left
waiting is asked about again when the chat starts in a new process."""

from __future__ import annotations

from pathlib import Path

import pytest
from swarmgraph.memory import Session
from test_repl import _pipe_chat

pytestmark = pytest.mark.slow
ASK = "approve process_refund()? [y/N/reason]"


def _stored(cwd: Path, session: str) -> Session:
    return Session(session, url=f"sqlite:///{cwd / '.swarmgraph' / 'swarmgraph.db'}")


def test_the_repl_asks_before_a_marked_tool_runs(tmp_path):
    lines = "I'm Ada, refund order 12\ny\n/context\n"
    done = _pipe_chat(tmp_path, lines, "--session", "ask", "--approve", "process_refund",
                      NO_COLOR="1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert ASK in done.stdout
    assert "the refund for order 12 is approved" in done.stdout
    assert '"refund_status": "approved"' in done.stdout
    assert _stored(tmp_path, "ask").pending == []


def test_a_turn_left_waiting_is_asked_again_after_a_restart_and_a_reason_denies(tmp_path):
    first = _pipe_chat(tmp_path, "I'm Ada, refund order 12\n", "--session", "later",
                       "--approve", "process_refund", NO_COLOR="1")  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert ASK in first.stdout and "left waiting" in first.stdout
    assert [p.tool for p in _stored(tmp_path, "later").pending] == ["process_refund"]

    second = _pipe_chat(tmp_path, "not without a receipt\n", "--session", "later",
                        "--approve", "process_refund", NO_COLOR="1")  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert second.stdout.count(ASK) == 1  # asked at start, before any new line
    session = _stored(tmp_path, "later")
    assert session.pending == []
    tools = [m.content for m in session.messages if m.type == "tool"]
    assert "Error: denied: not without a receipt" in tools
    assert "refund_status" not in session.context_variables


def test_approve_names_an_unknown_tool(tmp_path):
    done = _pipe_chat(tmp_path, "", "--session", "x", "--approve", "nope")
    assert done.returncode != 0 and "no tool named nope" in done.stderr
