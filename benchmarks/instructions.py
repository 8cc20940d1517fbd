"""A plain handoff against the LangGraph node-per-agent floor, counted in CPU instructions.

Timing on a shared 2-CPU machine moves ±10% between rounds (``floor_pair`` in
benchmarks/handoff.py says how far); an instruction count does not move with the load. Each
contender runs in its own process under valgrind's callgrind twice, with 0 and with ``N``
handoffs after the same warm-up: the difference over ``N`` is one handoff's instructions, the
start-up and imports cancelled out. Instructions are not time (cache misses and allocation
are not counted), so this complements the timed ratio; it does not replace it.

With ``--features``, each feature's row of ``feature_costs`` (benchmarks/handoff.py
``FEATURES``: a budget, a no-op middleware...) is counted too, over the plain handoff.

With ``--tracing``, the rows of benchmarks/tracing.py instead (no OpenTelemetry, tracing off
and on, the handoff then the SDK alone making the same spans, a no-op middleware with
tracing's hooks): what a traced handoff adds, split into the SDK's own work, the middleware
machinery and tracing's own code, with no machine load in the figures (issue 40). Those count
one process each: only what runs inside ``operator.call`` (the timed loop; nothing else calls
it) is collected (``--collect-atstart=no --toggle-collect=_operator_call``), so imports and
warm-up are left out without a second run.

With ``--ui``, the rows of benchmarks/ui_stream.py instead (``Session.run``, its floor with the
page's hooks, the same in one of the page's worker threads, the page's run with no client):
what the page's event stream adds to a turn nobody streams (issue 38). Collected as for
``--tracing`` (only inside ``operator.call``), with the page's worker threads' jobs run in an
``operator.call`` of their own once warm, so the turn driven in a worker is counted with the
main thread's start and wait (callgrind's collection state is per thread). The event-log flusher
thread is kept off (its ticks come with the clock, which valgrind slows): a turn's events are
written by its finish, in the worker, as a short turn's are (counted).

Run (needs Debian's ``valgrind``; about 5 minutes, 2 more a feature)::

    python -m benchmarks.instructions [N] [--features | --tracing | --ui]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

#: What one process runs: the contender's warm-up, then ``n`` handoffs.
_BODY = """
import sys
from benchmarks.handoff import langgraph_node_per_agent, ours_swarm_run, ours_with
which, n = sys.argv[1], int(sys.argv[2])
if which == "ours":
    fn = ours_swarm_run()
elif which == "floor":
    fn = langgraph_node_per_agent()
else:  # one feature on its own (benchmarks/handoff.py FEATURES)
    fn = ours_with(which)
for _ in range(20):
    fn()
for _ in range(n):
    fn()
"""

CONTENDERS = {"ours": "ours: Swarm.run", "floor": "LangGraph node/agent"}

#: What one process of ``--tracing`` runs: one row of benchmarks/tracing.py warmed up, then
#: ``n`` of it inside ``operator.call``, the only part callgrind collects.
_TRACING_BODY = """
import operator, sys
from benchmarks.tracing import contenders
which, n = sys.argv[1], int(sys.argv[2])
fn = contenders()[which]
for _ in range(20):
    fn()

def timed():
    for _ in range(n):
        fn()

operator.call(timed)
"""


#: What one process of ``--ui`` runs: one row of benchmarks/ui_stream.py warmed up, then ``n``
#: turns of it inside ``operator.call``; a worker thread's job runs in one too (collected).
_UI_BODY = """
import operator, sys
from swarmgraph.app.ui import turn
from swarmgraph.memory import turn_events
from benchmarks.ui_stream import check_one_turn_each, contenders
which, n = sys.argv[1], int(sys.argv[2])
turn_events._flusher.add = lambda writer: None  # its ticks come with the clock
fn = contenders()[which]
for _ in range(20):
    fn()
# Only now: a warm-up turn in a worker would be collected too (in its own operator.call).
hand = turn._workers.run
turn._workers.run = lambda target, *args: hand(operator.call, target, *args)

def timed():
    for _ in range(n):
        fn()

operator.call(timed)
assert check_one_turn_each() == 20 + n
"""

#: The rows ``--ui`` counts (benchmarks/ui_stream.py ``CONTENDERS``).
UI_ROWS = (
    "Session.run",
    "floor: the page's hooks, no-op",
    "floor, in a worker thread",
    "page, no client",
)


def ui_per_turn(n: int = 20, rows: Sequence[str] = UI_ROWS) -> dict[str, float]:
    """One handoff turn's instructions for each of ``rows`` of benchmarks/ui_stream.py (the
    worker thread's part included)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    flags = ["--collect-atstart=no", "--toggle-collect=_operator_call"]
    with tempfile.TemporaryDirectory() as folder:
        return {w: _callgrind(_UI_BODY, "ui_rows.py", w, n, folder, flags) / n for w in rows}


def tracing_collected(which: str, n: int, folder: str) -> int:
    """Instructions of ``n`` runs of benchmarks/tracing.py's row ``which``, warm (only the
    timed loop is collected: ``operator.call`` runs it)."""
    flags = ["--collect-atstart=no", "--toggle-collect=_operator_call"]
    return _callgrind(_TRACING_BODY, "tracing_rows.py", which, n, folder, flags)


def collected(which: str, n: int, folder: str) -> int:
    """Instructions callgrind counts for one process of ``which`` running ``n`` handoffs."""
    return _callgrind(_BODY, "handoffs.py", which, n, folder, [])


def _callgrind(body: str, name: str, which: str, n: int, folder: str, flags: list[str]) -> int:
    """Instructions callgrind counts for ``body`` (written to ``folder/name``) run with
    ``which n``."""
    stderr = run_callgrind(body, name, which, n, folder, flags)
    found = re.search(r"Collected : (\d+)", stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{stderr[-2000:]}")
    return int(found.group(1))


def run_callgrind(
    body: str,
    name: str,
    which: str,
    n: int,
    folder: str,
    flags: list[str],
    env: dict[str, str] | None = None,
) -> str:
    """Run ``body`` (written to ``folder/name``) with ``which n`` under callgrind with
    ``flags`` (and ``env`` over this process's environment); its summary (stderr). Raises
    with the tail of it when the run failed."""
    script = os.path.join(folder, name)
    with open(script, "w") as f:
        f.write(body)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(folder, f"callgrind.{name}.{which}.{n}")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", *flags, f"--callgrind-out-file={out}",
         sys.executable, script, which, str(n)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "PYTHONPATH": root},
        cwd=root,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{which} {n}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done.stderr


def tracing_per_handoff(n: int = 20) -> dict[str, float]:
    """One handoff's instructions for each row of benchmarks/tracing.py that runs one."""
    from benchmarks.tracing import FLOOR, HOOKS

    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    rows = ["no OpenTelemetry", "tracing off", "tracing on", FLOOR, HOOKS]
    with tempfile.TemporaryDirectory() as folder:
        return {w: tracing_collected(w, n, folder) / n for w in rows}


def per_handoff(n: int = 100, features: Sequence[str] = ()) -> dict[str, float]:
    """One handoff's instructions for each contender (and each of ``features``, a row of
    ``benchmarks.handoff.FEATURES``)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as folder:
        return {
            w: (collected(w, n, folder) - collected(w, 0, folder)) / n
            for w in [*CONTENDERS, *features]
        }


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 100
    features: Sequence[str] = ()
    if "--ui" in sys.argv:
        turns = ui_per_turn(int(args[0]) if args else 20)
        plain = turns["Session.run"]
        for which, count in turns.items():
            print(f"{which}: {count / 1e6:.3f}M instructions per turn, {count / plain:.3f}x")
        return
    if "--tracing" in sys.argv:
        from benchmarks.tracing import FLOOR, HOOKS

        rows = tracing_per_handoff(int(args[0]) if args else 20)
        plain = rows["no OpenTelemetry"]
        for which, count in rows.items():
            print(f"{which}: {count / 1e6:.3f}M instructions per handoff, {count / plain:.3f}x")
        on, floor, hooks = rows["tracing on"], rows[FLOOR], rows[HOOKS]
        print(
            f"tracing on adds {(on - plain) / 1e6:.3f}M: the SDK's own work "
            f"{(floor - plain) / 1e6:.3f}M, the middleware machinery {(hooks - plain) / 1e6:.3f}M, "
            f"tracing's own code {(on - floor - hooks + plain) / 1e6:.3f}M"
        )
        return
    if "--features" in sys.argv:
        from benchmarks.handoff import FEATURES

        features = FEATURES
    counts = per_handoff(n, features)
    for which, label in CONTENDERS.items():
        print(f"{label}: {counts[which] / 1e6:.2f}M instructions per handoff")
    print(f"ours / floor: {counts['ours'] / counts['floor']:.3f} ({n} handoffs each, callgrind)")
    for feature in features:
        print(f"{feature} / plain: {counts[feature] / counts['ours']:.3f}")


if __name__ == "__main__":
    main()
