"""Memory one handoff touches, in 4 KiB pages: ours (``Swarm.run``) against the LangGraph
node-per-agent floor, counted by the kernel.

Why (issue 37): callgrind counts ours at ~0.98x the floor's instructions per handoff, and its
simulated caches and branch predictor favour ours as well, yet ``floor_pair``
(benchmarks/handoff.py) times ours at ~1.04-1.06x in CPU time. What neither simulation sees is
how many distinct pages a handoff works on: each needs a TLB entry, and on a virtual machine a
TLB miss walks two page tables. CPython keeps each function's code object, constants, names
and module globals wherever its import put them, so every distinct function a run calls costs
a page or two of its own; ours calls ~110 functions (28 files) that the floor does not (the
swarm's own step, tool runner, books, message conversion) and skips ~40 of the floor's.

How: write ``1`` to ``/proc/self/clear_refs`` (the kernel clears every page's referenced bit),
run one warm handoff with the collector off (as ``floor_pair`` times it), read ``Referenced:``
from ``/proc/self/smaps_rollup``. Rounds alternate the two; each figure is the median of its
rounds. Reading the file touches pages of its own (the same for both: ``reader``). Linux only.

With ``--cache``, valgrind's cache simulator instead, with its last level sized as one core's
L2, read from this host (``/sys/devices/system/cpu/cpu0/cache``; 1 MiB, AMD Zen 4's, where it
cannot be read: callgrind's default last level is the host's whole L3, which every contender
fits in, so it shows no difference) and the hash seed fixed (``PYTHONHASHSEED=0``: dicts laid
out another way move a count by 1-2%): instructions, L1 instruction and data misses and L2
misses per handoff, ``N`` warm handoffs each with the collector off, only those collected. On
the issue's machine ours had ~0.97x the floor's instructions and L1 misses but ~1.33x its L2
misses (~3,700 more per handoff, each an L3 access of ~50 cycles): the CPU time that the
instruction count does not show. On stop 49's (512 KiB L2s): 0.971x the instructions, 0.94x
the L1 instruction misses, 1.11x the L2 misses, and a timed pair of 1.01x quiet, up to 1.05x
loaded, where a miss costs more.

Run::

    python -m benchmarks.pages [ROUNDS]
    python -m benchmarks.pages --cache [N]    # needs valgrind; a few minutes
"""

from __future__ import annotations

import gc
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

CLEAR = "/proc/self/clear_refs"
ROLLUP = "/proc/self/smaps_rollup"


def referenced_kb() -> int:
    """KiB of this process's memory whose pages were touched since their bits were cleared."""
    with open(ROLLUP) as f:
        for line in f:
            if line.startswith("Referenced:"):
                return int(line.split()[1])
    raise RuntimeError(f"no Referenced: line in {ROLLUP}")


def touched_kb(fn: Callable[[], Any] | None) -> int:
    """KiB touched by one call of ``fn`` (None: by the reading alone).

    Example:
        >>> block = bytearray(1 << 20)  # 256 pages
        >>> touched_kb(lambda: sum(block[::4096])) >= 1024  # one byte read from each
        True
    """
    with open(CLEAR, "w") as f:
        f.write("1")
    if fn is not None:
        fn()
    return referenced_kb()


def pages_per_handoff(rounds: int = 7) -> dict[str, float]:
    """Median KiB one warm handoff touches, for ``ours``, the ``floor`` and the ``reader``
    alone (over ``rounds`` alternating rounds), and ``ratio`` (ours over the floor)."""
    from benchmarks.handoff import langgraph_node_per_agent, ours_swarm_run

    try:
        touched_kb(None)
    except OSError as exc:  # not Linux, or the file is not writable here
        raise SystemExit(f"cannot clear the referenced bits ({CLEAR}): {exc}") from exc
    fns: dict[str, Callable[[], Any] | None] = {
        "ours": ours_swarm_run(),
        "floor": langgraph_node_per_agent(),
    }
    for fn in fns.values():
        for _ in range(20):
            fn()  # type: ignore[misc]
    fns["reader"] = None
    samples: dict[str, list[int]] = {name: [] for name in fns}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(rounds):
            names = list(fns) if i % 2 == 0 else list(reversed(fns))
            for name in names:
                samples[name].append(touched_kb(fns[name]))
    finally:
        if enabled:
            gc.enable()
    out: dict[str, float] = {name: statistics.median(s) for name, s in samples.items()}
    out["ratio"] = out["ours"] / out["floor"]
    return out


#: What one process of ``--cache`` runs: a contender warmed up, then ``n`` handoffs inside
#: ``operator.call`` (the only part callgrind collects), the collector off as in ``floor_pair``.
_CACHE_BODY = """
import gc, operator, sys
from benchmarks.handoff import langgraph_node_per_agent, ours_swarm_run
which, n = sys.argv[1], int(sys.argv[2])
fn = ours_swarm_run() if which == "ours" else langgraph_node_per_agent()
for _ in range(20):
    fn()

def timed():
    gc.disable()
    for _ in range(n):
        fn()
    gc.enable()

operator.call(timed)
"""

#: Where Linux describes the first CPU's caches (``index<i>/level``, ``size``, ``ways_of_...``).
CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


def l2_flag(caches: Path = CACHES) -> str:
    """callgrind's last level as one core's L2 (size, ways, line), read from ``caches``; AMD
    Zen 4's (1 MiB, 8-way) where the host does not say.

    Example:
        >>> l2_flag(Path("/nonexistent"))
        '--LL=1048576,8,64'
    """
    for index in sorted(caches.glob("index*")):
        try:
            if (index / "level").read_text().strip() != "2":
                continue
            size = int((index / "size").read_text().strip().rstrip("K")) * 1024
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            break
        return f"--LL={size},{ways},{line}"
    return "--LL=1048576,8,64"


def cache_summary(text: str) -> dict[str, int]:
    """Instructions, L1 data misses and last-level misses from callgrind's summary ``text``.

    Example:
        >>> cache_summary("==1== I   refs:      1,000\\n==1== I1  misses:  9\\n"
        ...               "==1== D1  misses:  20  (15 rd + 5 wr)\\n"
        ...               "==1== LL misses:   3  (2 rd + 1 wr)\\n")
        {'instructions': 1000, 'L1i_misses': 9, 'L1d_misses': 20, 'L2_misses': 3}
    """
    found = {}
    for key, label in (("instructions", "I   refs"), ("L1i_misses", "I1  misses"),
                       ("L1d_misses", "D1  misses"), ("L2_misses", "LL misses")):  # fmt: skip
        match = re.search(rf"{label}:\s+([\d,]+)", text)
        if match is None:
            raise RuntimeError(f"no {label!r} in callgrind's summary:\n{text[-2000:]}")
        found[key] = int(match.group(1).replace(",", ""))
    return found


def cache_per_handoff(n: int = 50) -> dict[str, dict[str, float]]:
    """Per handoff, for ``ours`` and the ``floor``: :func:`cache_summary`'s counts over ``n``
    warm handoffs (callgrind, last level sized as this host's L2: :func:`l2_flag`, the hash
    seed fixed), divided by ``n``."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    from benchmarks.instructions import run_callgrind

    flags = [
        "--cache-sim=yes",
        l2_flag(),
        "--collect-atstart=no",
        "--toggle-collect=_operator_call",
    ]
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for which in ("ours", "floor"):
            summary = run_callgrind(
                _CACHE_BODY, "cache_rows.py", which, n, folder, flags, {"PYTHONHASHSEED": "0"}
            )
            out[which] = {k: v / n for k, v in cache_summary(summary).items()}
    return out


def main() -> None:
    if "--cache" in sys.argv:
        args = [a for a in sys.argv[1:] if not a.startswith("--")]
        n = int(args[0]) if args else 50
        rows = cache_per_handoff(n)
        for key in ("instructions", "L1i_misses", "L1d_misses", "L2_misses"):
            ours, floor = rows["ours"][key], rows["floor"][key]
            print(f"{key} per handoff: ours {ours:,.0f}, floor {floor:,.0f}, {ours / floor:.3f}x")
        print(f"({n} handoffs each, callgrind, last level as this host's L2: {l2_flag()})")
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    out = pages_per_handoff(rounds)
    for name in ("ours", "floor", "reader"):
        print(f"{name}: {out[name]:.0f} KiB ({out[name] / 4:.0f} pages) touched per handoff")
    print(f"ours / floor: {out['ratio']:.3f} ({rounds} rounds, medians)")


if __name__ == "__main__":
    main()
