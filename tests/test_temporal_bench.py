"""Smoke test of benchmarks/temporal_runs.py at minimal sizes: it runs and returns its
figures, with its comparisons computed. No timing is asserted (speed is what the benchmark
reports, not what tests check). The figures are the session's ``python -m benchmarks --quick``
run (conftest.py's ``quick``), which runs this section at these sizes (handoff_runs=2,
concurrent=4, latency=0.01): the section is not run twice more here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.temporal_runs import ACTIVITIES_PER_RUN, CAPACITY_SLOTS, SLOTS, ours_machine_pct
from swarmgraph.temporal.dev_server import PROMPT_TRANSFER

# the first test to ask for `quick` runs every benchmark section (conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_temporal_benchmark_runs_at_minimal_sizes(quick) -> None:
    figures = quick["temporal"]
    handoff, workers = figures["handoff"], figures["workers"]
    assert handoff["runs"] == 2 and handoff["in_process_ms"] > 0 and handoff["temporal_ms"] > 0
    # the ratio of the unrounded means: within rounding of the shown ones'
    shown = handoff["temporal_ms"] / handoff["in_process_ms"]
    assert handoff["ratio"] == pytest.approx(shown, rel=0.02, abs=0.1)
    assert workers["runs"] == 4 and workers["runs_per_s_1_worker"] > 0
    assert workers["ratio"] == pytest.approx(
        workers["runs_per_s_2_workers"] / workers["runs_per_s_1_worker"], abs=0.02
    )
    # the bare temporalio baseline ran on the same server, as many activities, and what ours
    # adds per activity is the difference of the two means
    assert handoff["bare_ms"] > 0 and handoff["bare"]["workflow_tasks"] == 6
    assert handoff["ours"]["workflow_tasks"] == handoff["bare"]["workflow_tasks"]
    assert handoff["ours_over_bare_per_activity_ms"] == pytest.approx(
        (handoff["temporal_ms"] - handoff["bare_ms"]) / ACTIVITIES_PER_RUN, abs=0.02
    )
    prompt = figures["handoff_prompt_transfer"]
    assert prompt["dynamic_config"] == dict(PROMPT_TRANSFER) and prompt["temporal_ms"] > 0
    bounded = figures["workers_bounded"]
    assert bounded["slots"] == SLOTS and bounded["runs_per_s_2_workers"] > 0
    # the capacity-bound row (issue 40): its own runs and model latency (the quick sizes),
    # workers of CAPACITY_SLOTS slots, the ratio of its two rates
    capacity = figures["workers_capacity"]
    assert (capacity["slots"], capacity["runs"], capacity["model_latency_s"]) == (
        CAPACITY_SLOTS,
        4,
        0.01,
    )
    assert capacity["ratio"] == pytest.approx(
        capacity["runs_per_s_2_workers"] / capacity["runs_per_s_1_worker"], abs=0.02
    )
    for row in (workers, bounded, capacity):
        for measured in (row["one"], row["two"]):
            # the CPU ceiling is the CPU left to ours over the CPU measured per run
            assert 0 < measured["cpu_left_pct"] <= figures["cpus"] * 100
            ceiling = measured["cpu_left_pct"] * 10 / measured["cpu_ms_per_run"]
            assert measured["cpu_ceiling_runs_per_s"] == pytest.approx(ceiling, rel=0.02)
            assert measured["runs_per_s_min"] <= measured["runs_per_s"]
            assert measured["runs_per_s"] <= measured["runs_per_s_max"]


def test_the_temporal_section_of_results_md_shows_the_figures_it_measured(quick) -> None:
    text = (quick.out / "RESULTS.md").read_text()
    figures = quick["temporal"]
    assert "## 4c. Durable runs on Temporal" in text
    assert (
        f"| on Temporal (server's start to close) | {figures['handoff']['temporal_ms']:,.2f} |"
        in text
    )
    workers = figures["workers"]
    bounded = figures["workers_bounded"]
    assert (
        f"Two workers run {workers['ratio']:.2f}x the runs per second of one. "
        f"With {SLOTS} slots each: {bounded['ratio']:.2f}x." in text
    )
    one = bounded["one"]
    assert f"| 1 | {SLOTS} | {one['runs_per_s']:,.2f} | " in text
    assert (
        f"against {figures['handoff']['bare_per_activity_ms']:,.2f} ms "
        f"({figures['handoff_prompt_transfer']['bare_per_activity_ms']:,.2f} ms) per activity"
        in text
    )
    capacity, cpus = figures["workers_capacity"], figures["cpus"]
    ours = ours_machine_pct(capacity["two"], cpus)
    assert (
        f"Capacity-bound, two workers run {capacity['ratio']:.2f}x the runs per second of one "
        f"(of the 2.00x their slots allow), the server, workers and client using "
        f"{ours_machine_pct(capacity['one'], cpus):.0f}% and {ours:.0f}% of the machine's "
        f"{cpus} CPUs" in text
    )
    assert f"| 2 | {CAPACITY_SLOTS} | {capacity['two']['runs_per_s']:,.2f} | " in text
    # its verdict needs both: the ratio, and the CPU low enough that CPU is not the bound
    met = "met" if capacity["ratio"] >= 1.7 and ours < 60 else "not met"
    assert (
        "| temporal, capacity-bound: 2 workers >= 1.7x the runs/s of 1 (4 concurrent runs, "
        f"{CAPACITY_SLOTS} activity slots a worker, 10 ms model, ours < 60% CPU) | {met} | "
        f"{capacity['ratio']:.2f}x; server, workers and client {ours:.0f}% of {cpus} CPUs" in text
    )
    met = "met" if workers["ratio"] >= 1.7 else "not met"
    assert (
        f"| temporal: 2 workers >= 1.7x the runs/s of 1 (4 concurrent runs, 10 ms model) | {met} |"
        in text
    )
