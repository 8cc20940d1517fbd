"""Peak RSS of one Session turn when 10,000 vs 100 messages are stored (window=20).

Each case runs in a fresh subprocess (so one case's heap never inflates another's): the
SQLite file is prefilled here, the child imports everything, opens the Session, records its
RSS (``psutil``), takes one turn, and reports its peak (``VmHWM``; ``ru_maxrss`` would
include the parent's peak, which Linux carries across fork + exec). The naive
load-everything pattern at the largest size is run the same way for contrast.

Example:
    >>> out = run_rss(sizes=(10,), naive=False)
    >>> out["cases"]["ours window=20, 10 messages"]["peak_mb"] > 0
    True
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

CHILD = r"""
import json, resource, sys, warnings
import psutil
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
from langchain_core.messages import HumanMessage
mode, path = sys.argv[1], sys.argv[2]
swarm = Swarm(chat_model=ScriptedChatModel([], respond=lambda m: "Noted."))
agent = Agent(name="Helper")
if mode == "ours":
    from swarmgraph.memory import Session
    session = Session("bench", url="sqlite:///" + path, window=20)
    before = psutil.Process().memory_info().rss
    session.run(swarm, agent, "one more question")
else:
    from langchain_community.chat_message_histories import SQLChatMessageHistory
    from swarmgraph.graph.messages import to_langchain
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = SQLChatMessageHistory(session_id="bench", connection="sqlite:///" + path)
    before = psutil.Process().memory_info().rss
    messages = [*history.messages, HumanMessage("one more question")]
    response = swarm.run(agent, messages)
    history.add_messages([messages[-1], *to_langchain(response.messages)])

def high_water():
    # VmHWM is this process's own peak; ru_maxrss would carry over the parent's peak,
    # which Linux keeps across fork/vfork + exec.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"before": before, "peak": high_water()}))
"""


def _prefill(path: str, n: int, naive: bool) -> None:
    from benchmarks.persistence import make_history

    if naive:
        import warnings

        from langchain_community.chat_message_histories import SQLChatMessageHistory

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SQLChatMessageHistory(session_id="bench", connection="sqlite:///" + path).add_messages(
                make_history(n)
            )
    else:
        from swarmgraph.memory import open_history

        open_history("sqlite:///" + path, "bench").add_messages(make_history(n))


def _child(mode: str, path: str) -> dict[str, float]:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, path],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env=env,
        timeout=300,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "before_turn_mb": data["before"] / 2**20,
        "peak_mb": data["peak"] / 2**20,
        "turn_mb": (data["peak"] - data["before"]) / 2**20,
    }


def run_rss(*, sizes: tuple[int, ...] = (100, 10_000), naive: bool = True) -> dict[str, Any]:
    """Peak RSS per case (MiB) and the ratio largest / smallest for ours."""
    cases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"ours{n}.db")
            _prefill(path, n, naive=False)
            cases[f"ours window=20, {n:,} messages"] = _child("ours", path)
        if naive:
            n = max(sizes)
            path = os.path.join(tmp, f"naive{n}.db")
            _prefill(path, n, naive=True)
            cases[f"naive load-all, {n:,} messages"] = _child("naive", path)
    lo, hi = (
        cases[f"ours window=20, {min(sizes):,} messages"],
        cases[f"ours window=20, {max(sizes):,} messages"],
    )
    return {
        "cases": cases,
        "ratios": {"ours peak, largest / smallest N": hi["peak_mb"] / lo["peak_mb"]},
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run_rss(), indent=1))
