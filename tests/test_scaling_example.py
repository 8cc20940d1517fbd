"""The README's scaling-out example, run for real: two workers at once on one Postgres, then a
third process that continues the conversation."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

WORKER = Path(__file__).resolve().parents[1] / "docs" / "scaling_out_worker.py"


def _parse(line: str) -> tuple[str, dict, int]:
    agent, rest = line.split(" ", 1)
    context, count = rest.rsplit(" ", 1)
    return agent, ast.literal_eval(context), int(count)


@pytest.mark.postgres
def test_two_workers_then_a_third_continue_one_conversation(postgres_server):
    url = postgres_server.new_database("scaling_example")
    first = [
        subprocess.Popen(
            [sys.executable, str(WORKER), url, text],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for text in ("refund order 7", "order 7 again")
    ]
    outs = [p.communicate(timeout=120) for p in first]
    assert all(p.returncode == 0 for p in first), [err for _, err in outs]
    third = subprocess.run(
        [sys.executable, str(WORKER), url, "did it go through?"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = [_parse(out.strip().splitlines()[-1]) for out, _ in outs]
    rows.append(_parse(third.stdout.strip().splitlines()[-1]))
    for agent, context, _ in rows:
        assert agent == "Refunds" and context == {"order_id": 7}
    counts = sorted(c for _, _, c in rows[:2])
    # Each concurrent turn is stored whole: a turn adds 6 messages starting at Triage, or 4
    # when it already found Refunds active. A worker counts after its own turn, so the first
    # to count sees its turn alone (6) or, when the other worker saved before it counted, both.
    both = counts[1]
    assert both - 6 in (4, 6), counts
    assert counts[0] in (6, both), counts
    # The third process appends one whole turn (Refunds is already active).
    assert rows[2][2] - both == 4
