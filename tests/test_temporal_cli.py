"""``swarmgraph worker`` and ``swarmgraph run`` as a newcomer meets them (issue 40), without a
Temporal server: the help says what AGENT is (no default), an offline worker on your own
agents says why it only echoes, and a run that waits for approval prints the next step."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _swarmgraph(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    clean = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    command = [sys.executable, "-m", "swarmgraph", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**clean, **env}
    )


@pytest.mark.slow  # a subprocess each
def test_the_worker_help_says_agent_is_required_and_leaving_it_out_says_the_same():
    shown = _swarmgraph("worker", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "demo swarm" not in text  # there is no default: the help must not promise one
    assert "one or more" in text and "--chat-model" in text
    left_out = _swarmgraph("worker", "--temporal", "127.0.0.1:1", "--task-queue", "q")
    assert left_out.returncode == 2 and "AGENT" in left_out.stderr


@pytest.mark.slow
def test_an_offline_worker_on_your_agents_says_why_it_only_echoes():
    done = _swarmgraph(
        "worker", f"{TESTS}/temporal_agents.py:triage", "--temporal", "127.0.0.1:1",
        "--task-queue", "q",
    )  # fmt: skip
    assert done.returncode == 1  # no server there: it stops after the note
    note = " ".join(done.stdout.split())
    assert "offline demo model" in note and "only knows the demo agents" in note
    assert "--chat-model" in note and "OPENAI_API_KEY" in note


def test_a_run_waiting_for_approval_prints_the_next_step():
    from swarmgraph.graph.features.approvals import PendingApproval

    from swarmgraph.temporal.cli import waiting_lines

    call = PendingApproval(
        id="call_refund_1", agent="Sales", tool="refund", arguments={"order_id": 7}
    )
    lines = waiting_lines([call], "127.0.0.1:7233", "default", "swarm-42")
    assert lines[0] == "waiting for approval: call_refund_1 refund(order_id=7)"
    step = "\n".join(lines[1:])
    assert "decide_on_temporal" in step and "'swarm-42'" in step and "127.0.0.1:7233" in step
    assert "{'call_refund_1': True}" in step  # what to send, ready to edit
    assert "docs/temporal.md" in step
