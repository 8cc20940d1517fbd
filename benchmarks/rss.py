"""Peak RSS of one Session turn when 10,000 vs 100 messages are stored (window=20), and a
long-running service's RSS over many turns with agents built per request (``run_service``).

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
    from swarmgraph.graph.core.messages import to_langchain
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


SERVICE = r"""
import gc, json, sys
import psutil
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core import schema
from swarmgraph.memory import Session

mode, path, marks = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
users = int(sys.argv[4])

def agents_for(user):
    # What a service that builds its agents per request does: per-user instructions,
    # fresh tool functions, a fresh handoff target.
    def lookup_order(order_id: str, context_variables: dict):
        "Look an order up."
        return Result(value=f"order {order_id} for {user}", context_variables={"order": order_id})

    sales = Agent(name="Sales", instructions=f"Sell to {user}.", functions=[lookup_order])
    triage = Agent(name="Triage", instructions=f"Greet {user}.", handoffs=[sales])
    return triage, sales

def respond(messages):
    last = messages[-1]
    if last.type == "human":
        return scripted_tool_call("transfer_to_sales") if "Greet" in messages[0].content else "ok"
    return "Sold."

swarm = Swarm(chat_model=ScriptedChatModel([], respond=respond))
model = swarm.resolver.chat_model
reused = {}
out = {}
for turn in range(1, max(marks) + 1):
    user = f"user{turn % users}"
    if mode == "per-request":
        triage, sales = agents_for(user)
    else:
        triage, sales = reused.get(user) or reused.setdefault(user, agents_for(user))
    session = Session(user, url="sqlite:///" + path, window=20, agents=[triage, sales])
    session.run(swarm, triage, f"turn {turn}: any news?")
    model.reset()  # the scripted model records calls; a real one keeps nothing
    if turn in marks:
        gc.collect()
        out[str(turn)] = {
            "rss_mb": psutil.Process().memory_info().rss / 2**20,
            "compiled_graphs": len(swarm._graphs),
            "remembered_starts": len(swarm._starts),
            "tool_specs_by_function": len(schema._functions),
            "tool_specs_by_code": len(schema._by_code),
            "agents_alive": sum(1 for o in gc.get_objects() if isinstance(o, Agent)),
        }
print(json.dumps(out))
"""


def run_service(
    *,
    marks: tuple[int, ...] = (1_000, 10_000),
    users: int = 1_000,
    modes: tuple[str, ...] = ("per-request", "reused"),
) -> dict[str, Any]:
    """RSS of one process after ``marks`` turns of a service through one ``Swarm`` and
    per-request ``Session`` objects over SQLite, ``users`` conversations, with agents built
    per request (fresh Agent objects and tool functions each turn) and, for contrast, reused."""
    cases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            path = os.path.join(tmp, f"{mode}.db")
            args = (mode, path, ",".join(map(str, marks)), str(users))
            cases[mode] = _run_child(SERVICE, *args, timeout=3600)
    lo, hi = str(min(marks)), str(max(marks))
    growth = {mode: rows[hi]["rss_mb"] / rows[lo]["rss_mb"] - 1 for mode, rows in cases.items()}
    return {"marks": list(marks), "users": users, "cases": cases, "growth": growth}


def _prefill(path: str, n: int, naive: bool) -> None:
    from benchmarks.persistence import make_history

    if naive:
        import warnings

        with warnings.catch_warnings():  # langchain-community warns at import that it is sunset
            warnings.simplefilter("ignore")
            from langchain_community.chat_message_histories import SQLChatMessageHistory

            SQLChatMessageHistory(session_id="bench", connection="sqlite:///" + path).add_messages(
                make_history(n)
            )
    else:
        from swarmgraph.memory import open_history

        open_history("sqlite:///" + path, "bench").add_messages(make_history(n))


def _run_child(code: str, *args: str, timeout: int) -> Any:
    """Run ``code`` in a fresh Python (this checkout importable); its last stdout line as JSON."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env=env,
        timeout=timeout,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(mode: str, path: str) -> dict[str, float]:
    data = _run_child(CHILD, mode, path, timeout=300)
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
