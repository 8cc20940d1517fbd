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


def test_the_temporal_section_of_results_md_shows_the_figures_it_measured(tmp_path: Path) -> None:
    from benchmarks.__main__ import main

    results = main(["--quick", "--only", "temporal", "--out", str(tmp_path)])
    text = (tmp_path / "RESULTS.md").read_text()
    figures = results["temporal"]
    assert "## 4c. Durable runs on Temporal" in text
    assert (
        f"| on Temporal (server's start to close) | {figures['handoff']['temporal_ms']:,.2f} |"
        in text
    )
    workers = figures["workers"]
    assert f"Two workers run {workers['ratio']:.2f}x the runs per second of one." in text
    met = "met" if workers["ratio"] >= 1.7 else "not met"
    assert (
        f"| temporal: 2 workers >= 1.7x the runs/s of 1 (4 concurrent runs, 10 ms model) | {met} |"
        in text
    )
