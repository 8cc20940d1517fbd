"""Turn latency on Postgres vs SQLite with window=20 (offline scripted model).

    python -m benchmarks.pg_turn_latency POSTGRES_URL [TURNS]

For each backend: fill a conversation with 100 and 10,000 stored messages, then time
Session.run turns (load window of 20, run a scripted tool call + reply, save 4 messages and
the context in one transaction); prints the median and p90 in milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid

from langchain_core.messages import AIMessage, HumanMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session


def note(n: int) -> Result:
    """Note a number."""
    return Result(value=f"noted {n}", context_variables={"n": n})


def rules(messages):
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return scripted_tool_call("note", {"n": len(messages)})
    return "ok"


def measure(url: str, stored: int, turns: int) -> list[float]:
    cid = f"bench-{uuid.uuid4().hex[:8]}"
    session = Session(cid, url=url, window=20)
    filler = [HumanMessage("q " * 20), AIMessage("a " * 40, name="Clerk")] * (stored // 2)
    for start in range(0, len(filler), 500):
        session.history.add_messages(filler[start : start + 500])
    swarm, agent = (
        Swarm(chat_model=ScriptedChatModel(respond=rules)),
        Agent(name="Clerk", functions=[note]),
    )
    session.run(swarm, agent, "warm up")
    times = []
    for i in range(turns):
        start = time.perf_counter()
        session.run(swarm, agent, f"turn {i}")
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    pg = sys.argv[1]
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    sqlite = "sqlite:///" + tempfile.mkdtemp() + "/bench.db"
    print(f"{'backend':<10}{'stored':>8}{'median ms':>11}{'p90 ms':>9}")
    for name, url in (("sqlite", sqlite), ("postgres", pg)):
        for stored in (100, 10_000):
            t = sorted(measure(url, stored, turns))
            p90 = t[int(len(t) * 0.9) - 1]
            print(f"{name:<10}{stored:>8}{statistics.median(t):>11.2f}{p90:>9.2f}")


if __name__ == "__main__":
    main()
