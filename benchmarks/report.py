"""RESULTS.md: one table per measurement, the machine, the versions, and each target's verdict.

Example:
    >>> verdict(0.05, 0.1)
    'met'
    >>> verdict(0.25, 0.1).startswith('not met')
    True
"""

from __future__ import annotations

import datetime
import os
import platform
from importlib import metadata
from typing import Any

PACKAGES = ("langgraph", "langchain-core", "langgraph-swarm", "langchain-community")


def machine() -> dict[str, str]:
    """nproc, CPU model and RAM of this machine (Linux /proc; "unknown" elsewhere)."""
    cpu, ram = "unknown", "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    ram = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                    break
    except OSError:
        pass
    return {"nproc": str(os.cpu_count()), "cpu": cpu, "ram": ram, "os": platform.platform()}


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def verdict(measured: float, limit: float) -> str:
    """'met' when ``measured <= limit``, else the distance as a factor."""
    if measured <= limit:
        return "met"
    return f"not met: {measured:.3g} vs target {limit:.3g} ({measured / limit:.1f}x over)"


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def _span(s: dict[str, float], scale: float = 1.0, fmt: str = "{:,.0f}") -> list[str]:
    return [
        fmt.format(s["median"] * scale),
        fmt.format(s["min"] * scale),
        fmt.format(s["max"] * scale),
    ]


# ------------------------------------------------------------------------------ sections
def handoff_section(h: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    c = h["contenders"]
    ours = c["ours: Swarm.run"]["median"]
    rows = [[name, *_span(s, 1e6), f"{s['median'] / ours:.2f}"] for name, s in c.items()]
    lines = [
        "## 1. Handoff overhead",
        "",
        f"One run = A hands off to B (tool call, tool, agent switch) and B answers; zero-latency "
        f"scripted model. Median of {h['repeat']} interleaved batches of {h['number']} runs; "
        "µs per handoff.",
        "",
        *_table(["contender", "median µs", "min µs", "max µs", "x ours (Swarm.run)"], rows),
        "",
        *_table(["ratio (same run)", "value"], [[k, f"{v:.3f}"] for k, v in h["ratios"].items()]),
        "",
        f"Our overhead above the LangGraph floor for the same two-node shape: "
        f"{h['overhead_above_floor_s'] * 1e6:,.0f} µs per handoff "
        f"(floor {c['LangGraph floor']['median'] * 1e6:,.0f} µs; one empty LangGraph step "
        f"{c['LangGraph empty step']['median'] * 1e6:,.0f} µs).",
        "",
    ]
    for name, why in h.get("missing", {}).items():
        lines += [f"- {name}: {why}", ""]
    if "profile" in h:
        lines += [
            "Where one `Swarm.run` handoff's time goes (cProfile own time, "
            f"{h.get('profile_runs', '')} runs; the profiler inflates small calls, so read "
            "shares, not µs):",
            "",
            *_table(["bucket", "share"], [[k, f"{v:.1%}"] for k, v in h["profile"].items()]),
            "",
        ]
    floor_ratio = h["ratios"].get("ours Swarm.run / LangGraph node/agent")
    if floor_ratio is not None:
        v0 = verdict(floor_ratio, 1.05)
        ours_share = h.get("profile", {}).get("ours (swarmgraph)")
        targets.append(
            {
                "target": "handoff floor: ours <= 1.05x LangGraph node/agent (same chat model)",
                "verdict": v0,
                "why": f"{floor_ratio:.3f}x"
                + (f"; ours is {ours_share:.0%} of a handoff's time" if ours_share else ""),
            }
        )
    lgs = c["langgraph-swarm"]["median"]
    loop = c["minimal loop"]["median"]
    floor = c["LangGraph floor"]["median"]
    empty = c["LangGraph empty step"]["median"]
    v1 = verdict(h["ratios"]["ours Swarm.run / langgraph-swarm"], 0.1)
    v2 = verdict(h["ratios"]["ours Swarm.run / minimal loop"], 3.0)
    targets.append(
        {
            "target": "handoff: ours <= 0.1x langgraph-swarm",
            "verdict": v1,
            "why": ""
            if v1 == "met"
            else (
                f"LangGraph's own floor for a run with two agent steps is {floor * 1e6:,.0f} µs "
                f"= {floor / lgs:.2f}x langgraph-swarm before any model call; 0.1x would need "
                f"{0.1 * lgs * 1e6:,.0f} µs. Ours adds {(ours - floor) * 1e6:,.0f} µs to that "
                "floor, mostly two BaseChatModel.invoke calls (callback manager, run "
                "bookkeeping) that every LangChain-model contender pays as well."
            ),
        }
    )
    targets.append(
        {
            "target": "handoff: ours <= 3x minimal loop",
            "verdict": v2,
            "why": ""
            if v2 == "met"
            else (
                f"one empty LangGraph step alone costs {empty * 1e6:,.0f} µs = "
                f"{empty / loop:.0f}x the whole minimal loop ({loop * 1e6:,.0f} µs), so no "
                "LangGraph-based engine can be within 3x of a plain Python loop on this "
                "machine; ours is within "
                f"{c['ours: Swarm.run']['median'] / c['LangGraph node/agent']['median']:.2f}x of "
                "the best plain-LangGraph design (one node per agent)."
            ),
        }
    )
    return lines


def persistence_section(p: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    rows = []
    for n, row in p["results"].items():
        for name, r in row.items():
            if "turn_ms" not in r:
                rows.append([f"{int(n):,}", name, r.get("skipped") or r.get("error"), "", "", ""])
                continue
            t, s = r["turn_ms"], r["storage_ms"]
            rows.append(
                [
                    f"{int(n):,}",
                    name,
                    f"{t['median']:.1f} ({t['min']:.1f}-{t['max']:.1f})",
                    f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})",
                    f"{r['bytes_per_message']:,.0f}",
                    f"{r['file_bytes'] / 1024:,.0f}",
                ]
            )
    marginal_rows = [
        [name, *(f"{v:,.0f}" for v in slopes.values())]
        for name, slopes in p["marginal_bytes_per_message"].items()
    ]
    intervals = next(iter(p["marginal_bytes_per_message"].values()), {})
    lines = [
        "## 2. Persistence per turn vs history length",
        "",
        f"SQLite file prefilled with N messages, then {p['turns']} timed turns "
        f"({p.get('ours_turns', p['turns'])} for ours) (one user message "
        "in, one answer out, zero-latency model). Storage ms = load + save (turn minus model "
        "run; for LangGraph the time inside the checkpointer, which with the default async "
        "durability overlaps the run and can exceed it).",
        "",
        *_table(
            [
                "N stored",
                "contender",
                "ms/turn median (min-max)",
                "storage ms/turn",
                "bytes/message (file/N)",
                "file KiB",
            ],
            rows,
        ),
        "",
        "Marginal bytes on disk per added message (file growth / messages added):",
        "",
        *_table(["contender", *intervals.keys()], marginal_rows),
        "",
    ]
    ours = "ours: Session(window=20)"
    sizes = p["sizes"]
    lo, hi = (
        p["results"][str(min(sizes))].get(ours, {}),
        p["results"][str(max(sizes))].get(ours, {}),
    )
    if "turn_ms" in lo and "turn_ms" in hi:
        ratio = hi["turn_ms"]["median"] / lo["turn_ms"]["median"]
        v = verdict(ratio, 1.2)
        targets.append(
            {
                "target": f"persistence: ours at {max(sizes):,} msgs <= 1.2x ours at "
                f"{min(sizes):,}",
                "verdict": v,
                "why": "" if v == "met" else "see the per-turn table (noise or a per-N cost)",
            }
        )
        storage = hi["storage_ms"]["median"]
        v = verdict(storage, 2.0)
        targets.append(
            {
                "target": f"persistence: ours storage < 2 ms per turn (at {max(sizes):,} msgs)",
                "verdict": v,
                "why": ""
                if v == "met"
                else (
                    "one SQLite write transaction (WAL) plus the windowed read and the context "
                    "record's read/write; see memory/session.py"
                ),
            }
        )
        slopes = list(p["marginal_bytes_per_message"].get(ours, {}).values())
        if len(slopes) >= 2:
            drift = slopes[-1] / slopes[0]
            ok = 0.85 <= drift <= 1.15
            targets.append(
                {
                    "target": "persistence: ours bytes per message constant",
                    "verdict": "met" if ok else f"not met: marginal slope changed {drift:.2f}x",
                    "why": "marginal bytes/message per interval: "
                    + ", ".join(
                        f"{k}: {v:,.0f}" for k, v in p["marginal_bytes_per_message"][ours].items()
                    ),
                }
            )
    return lines


def tokens_section(t: dict[str, Any], plot_name: str | None) -> list[str]:
    rows = [
        [name, f"{p['total']:,}", f"{p['mean']:,.0f}", f"{p['last']:,}", f"{p['max']:,}"]
        for name, p in t["policies"].items()
    ]
    lines = [
        "## 3. Tokens sent per turn, by memory policy",
        "",
        f"{t['turns']} scripted turns through `memory.Session` over SQLite; tokens = what the "
        "engine reports as sent to the model (instructions included) plus the summariser's "
        "input for `summary`.",
        "",
        *_table(["policy", "total", "mean/turn", "last turn", "max turn"], rows),
        "",
        *_table(["ratio", "value"], [[k, f"{v:.3f}"] for k, v in t["ratios"].items()]),
        "",
    ]
    if plot_name:
        lines += [f"![tokens per turn]({plot_name})", ""]
    return lines


def concurrency_section(c: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    s = c["swarm"]
    rows = [
        ["one session's turns alone", *_span(s["one_session_s"], 1.0, "{:.3f}")],
        [f"{c['sessions']} sessions, asyncio.gather", *_span(s["all_concurrent_s"], 1.0, "{:.3f}")],
        [
            f"{c['sessions']} sessions sequentially (measured on "
            f"{s['sequential_measured_sessions']}, scaled)",
            f"{s['all_sequential_s']:.3f}",
            "",
            "",
        ],
    ]
    lines = [
        "## 4. Concurrency",
        "",
        f"{c['sessions']} sessions x {c['turns']} turns through `Swarm.arun`, model sleeps "
        f"{c['latency_s'] * 1000:.0f} ms per call (asyncio.sleep). Wall seconds.",
        "",
        *_table(["run", "median s", "min s", "max s"], rows),
        "",
        f"CPU used by the concurrent run: {s['all_concurrent_cpu_s']['median']:.2f} s. "
        f"Concurrent / one session: {s['ratio_concurrent_to_one']:.2f}x; sequential / "
        f"concurrent: {s['speedup_vs_sequential']:.1f}x. Messages returned: "
        f"{s['messages_seen']:,} of {s['messages_expected']:,} expected.",
        "",
    ]
    turns_total = c["sessions"] * c["turns"]
    cpu = s["all_concurrent_cpu_s"]["median"]
    v = verdict(s["ratio_concurrent_to_one"], 1.3)
    targets.append(
        {
            "target": "concurrency: async wall <= 1.3x one session's turns",
            "verdict": v,
            "why": ""
            if v == "met"
            else (
                f"the {turns_total:,} turns share one event loop (one core) and used "
                f"{cpu:.2f} s of CPU ({cpu / turns_total * 1000:.2f} ms per turn, mostly "
                "LangGraph's async step machinery), more than 1.3x one session's "
                f"{s['one_session_s']['median']:.2f} s of mostly sleeping; 1.3x would need "
                f"<= {1.3 * s['one_session_s']['median'] / turns_total * 1000:.2f} ms of CPU "
                "per turn. The overlap itself works: "
                f"{s['speedup_vs_sequential']:.0f}x faster than sequential."
            ),
        }
    )
    lost = s["messages_expected"] - s["messages_seen"]
    targets.append(
        {
            "target": "concurrency: no lost messages",
            "verdict": "met" if lost == 0 else f"not met: {lost} missing",
            "why": f"{s['messages_seen']:,} / {s['messages_expected']:,}",
        }
    )
    se = c.get("session")
    if se and "error" not in se:
        lines += [
            "Same through `memory.Session(window=20).arun` over one SQLite file (load + save "
            "per turn):",
            "",
            *_table(
                ["run", "median s", "min s", "max s"],
                [
                    ["one session's turns alone", *_span(se["one_session_s"], 1.0, "{:.3f}")],
                    [
                        f"{c['sessions']} sessions, asyncio.gather",
                        *_span(se["all_concurrent_s"], 1.0, "{:.3f}"),
                    ],
                ],
            ),
            "",
            f"Concurrent / one session: {se['ratio_concurrent_to_one']:.2f}x. Messages stored: "
            f"{se['messages_stored']:,} of {se['messages_expected']:,} expected.",
            "",
        ]
        lost = se["messages_expected"] - se["messages_stored"]
        targets.append(
            {
                "target": "concurrency (Session over SQLite): no lost messages",
                "verdict": "met" if lost == 0 else f"not met: {lost} missing",
                "why": f"{se['messages_stored']:,} / {se['messages_expected']:,} stored",
            }
        )
    elif se:
        lines += [f"Session part: {se['error']}", ""]
    return lines


def rss_section(r: dict[str, Any]) -> list[str]:
    rows = [
        [name, f"{v['before_turn_mb']:.1f}", f"{v['peak_mb']:.1f}", f"{v['turn_mb']:.1f}"]
        for name, v in r["cases"].items()
    ]
    return [
        "## 5. Memory (peak RSS of one turn)",
        "",
        "Each case in a fresh subprocess: RSS after imports and opening the history, then the "
        "process's peak (VmHWM) after one turn.",
        "",
        *_table(["case", "RSS before turn MiB", "peak MiB", "turn added MiB"], rows),
        "",
        *_table(["ratio", "value"], [[k, f"{v:.3f}"] for k, v in r["ratios"].items()]),
        "",
    ]


def render(
    results: dict[str, Any], *, command: str, elapsed_s: float, plot_name: str | None
) -> str:
    """The whole RESULTS.md text."""
    targets: list[dict[str, str]] = []
    body: list[str] = []
    if "handoff" in results:
        body += handoff_section(results["handoff"], targets)
    if "persistence" in results:
        body += persistence_section(results["persistence"], targets)
    if "tokens" in results:
        body += tokens_section(results["tokens"], plot_name)
    if "concurrency" in results:
        body += concurrency_section(results["concurrency"], targets)
    if "rss" in results:
        body += rss_section(results["rss"])
    m, v = machine(), versions()
    head = [
        "# swarmgraph benchmarks",
        "",
        f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by "
        f"`{command}` in {elapsed_s:.0f} s. Every ratio compares figures from this one run.",
        "",
        f"Machine: {m['nproc']} CPUs, {m['cpu']}, {m['ram']} RAM, {m['os']}.",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        "## Targets",
        "",
        *_table(
            ["target", "verdict", "measured distance / reason"],
            [[t["target"], t["verdict"], t["why"]] for t in targets],
        ),
        "",
    ]
    return "\n".join(head + body)
