"""Smoke test of benchmarks/temporal_runs.py at minimal sizes: it runs and returns its
figures, with its comparisons computed. No timing is asserted (speed is what the benchmark
reports, not what tests check)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.temporal_runs import run_temporal

pytestmark = pytest.mark.slow


def test_the_temporal_benchmark_runs_at_minimal_sizes() -> None:
    figures = run_temporal(handoff_runs=2, concurrent=4, latency=0.01)
    handoff, workers = figures["handoff"], figures["workers"]
    assert handoff["runs"] == 2 and handoff["in_process_ms"] > 0 and handoff["temporal_ms"] > 0
    # the ratio of the unrounded means: within rounding of the shown ones'
    shown = handoff["temporal_ms"] / handoff["in_process_ms"]
    assert handoff["ratio"] == pytest.approx(shown, rel=0.02, abs=0.1)
    assert workers["runs"] == 4 and workers["runs_per_s_1_worker"] > 0
    assert workers["ratio"] == pytest.approx(
        workers["runs_per_s_2_workers"] / workers["runs_per_s_1_worker"], abs=0.02
    )
