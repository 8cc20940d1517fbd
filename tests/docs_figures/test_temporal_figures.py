"""What docs/temporal.md ("What it costs") and README's scaling-out line say of the Temporal
benchmark is what benchmarks/results.json holds (the run RESULTS.md section 4c reports): a new
``python -m benchmarks --only temporal --merge`` that moves a figure past a sentence fails here
until the sentence says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = json.loads((ROOT / "benchmarks" / "results.json").read_text(encoding="utf-8"))
README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
DOC = " ".join((ROOT / "docs" / "temporal.md").read_text(encoding="utf-8").split())
REPORT = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")

T: dict[str, Any] = RESULTS["temporal"]
AS_STARTED, PROMPT = T["handoff"], T["handoff_prompt_transfer"]


def test_the_readme_line_quotes_the_benchmark() -> None:
    bounded, unbounded = T["workers_bounded"], T["workers"]
    line = (
        f"at {PROMPT['overhead_per_activity_ms']:,.1f} ms per model or tool call on a dev server "
        f"that hands tasks on at once ({AS_STARTED['overhead_per_activity_ms']:,.1f} ms as it "
        f"starts); a second worker adds capacity, not CPU: {bounded['ratio']:.2f}x the runs per "
        f"second with {bounded['slots']} activity slots a worker, {unbounded['ratio']:.2f}x "
        f"unbounded on {T['cpus']} shared CPUs"
    )
    assert line in README
    # the same run's report: RESULTS.md says the same ratios
    assert (
        f"Two workers run {unbounded['ratio']:.2f}x the runs per second of one. "
        f"With {bounded['slots']} slots each: {bounded['ratio']:.2f}x." in REPORT
    )


def test_per_activity_the_cost_is_the_servers_not_ours() -> None:
    assert (
        "a bare temporalio workflow pays about as much per activity as ours (within a quarter)"
        in DOC
    )
    bare = AS_STARTED["bare_per_activity_ms"]
    assert abs(AS_STARTED["ours_over_bare_per_activity_ms"]) <= 0.25 * bare
    assert "the cost per activity falls to under half, for both" in DOC
    assert PROMPT["bare_per_activity_ms"] < 0.5 * bare
    assert PROMPT["overhead_per_activity_ms"] < 0.5 * AS_STARTED["overhead_per_activity_ms"]
    assert "what ours adds over the bare workflow" in DOC and "is less than Temporal's own" in DOC
    assert PROMPT["ours_over_bare_per_activity_ms"] < PROMPT["bare_per_activity_ms"]


def test_the_server_uses_more_cpu_per_run_and_the_history_is_the_bare_one() -> None:
    assert "The server uses more CPU per run than the worker and the client together" in DOC
    ours, bare = AS_STARTED["ours"], AS_STARTED["bare"]
    assert ours["server_cpu_ms"] > ours["cpu_ms"]
    assert "the same 35 events and 6 workflow tasks as the bare workflow's" in DOC
    assert (ours["events"], ours["workflow_tasks"]) == (bare["events"], bare["workflow_tasks"])
    assert (ours["events"], ours["workflow_tasks"]) == (35, 6)
    assert ours["history_bytes"] > bare["history_bytes"]
    assert "every workflow task after the first is handed to the worker's sticky queue" in DOC
    assert ours["sticky_workflow_tasks"] == ours["workflow_tasks"] - 1
    for row in (T["workers"], T["workers_bounded"]):  # "under load too"
        for measured in (row["one"], row["two"]):
            tasks = measured["last_run_workflow_tasks"]
            assert measured["last_run_sticky_workflow_tasks"] == tasks - 1


@pytest.mark.parametrize(
    "row,count", [(r, c) for r in ("workers", "workers_bounded") for c in (1, 2)]
)
def test_each_scaling_figure_sits_at_its_lower_ceiling(row: str, count: int) -> None:
    from benchmarks.temporal_runs import slot_ceiling

    assert "Its 2 CPUs run the server, the workers, the client and other work" in DOC
    assert T["cpus"] == 2
    assert "each scaling figure sits at the lower of its two ceilings (within a third" in DOC
    data = T[row]
    measured = data["one" if count == 1 else "two"]
    slots = slot_ceiling(data.get("slots"), count, data["model_latency_s"])
    lower = min(measured["cpu_ceiling_runs_per_s"], slots or float("inf"))
    assert abs(measured["runs_per_s"] - lower) <= lower / 3


def test_a_second_worker_adds_capacity_not_cpu() -> None:
    from benchmarks.temporal_runs import slot_ceiling

    bounded = T["workers_bounded"]
    slots, latency = bounded["slots"], bounded["model_latency_s"]
    assert "one worker's slots and the CPU left to it are close ceilings here" in DOC
    one_slots, one_cpu = slot_ceiling(slots, 1, latency), bounded["one"]["cpu_ceiling_runs_per_s"]
    assert 2 / 3 < one_slots / one_cpu < 3 / 2
    assert "two run more runs per second than one, up to the CPU ceiling" in DOC
    assert bounded["ratio"] > 1
    assert slot_ceiling(slots, 2, latency) > bounded["two"]["cpu_ceiling_runs_per_s"]
