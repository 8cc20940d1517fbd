"""Smoke test for ``benchmarks/backend_turns.py`` (storage time per turn and async concurrency
per backend) on SQLite and the throwaway Postgres and Redis. Nothing is timed here: the
benchmark reports speed; this checks it runs and that no message is lost."""

from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/ is a top-level folder, not an installed package: import it from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.backend_turns import async_concurrency, storage_per_turn

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "postgres", "redis")


def test_storage_per_turn_and_async_concurrency_run_and_lose_nothing(url):
    assert len(storage_per_turn(url, stored=10, turns=2)) == 2
    result = async_concurrency(url, sessions=3, turns=2, latency=0.001)
    assert result["error"] is None
    assert result["messages_stored"] == result["messages_expected"] == 3 * 2 * 4
