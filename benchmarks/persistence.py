"""Persistence per turn vs history length: what one turn costs when N messages are stored.

For N in ``sizes`` a SQLite file is prefilled with N messages, then ``turns`` turns are
timed, each "one user message in, one answer out" against a zero-latency model:

- ``ours: Session(window=20)``  - ``memory.Session`` loading only the last 20 messages
- ``naive SQLChatMessageHistory`` - langchain_community's history: load everything, run on
  everything, save the new messages (what the LangChain docs show)
- ``LangGraph SqliteSaver``      - our graph compiled with ``SqliteSaver``; the thread's
  checkpoints hold the messages (the full ``add_messages`` channel, re-written per step)
- ``LangGraph DeltaChannel``     - the same with ``messages`` on LangGraph 1.2's (beta)
  ``DeltaChannel``, which checkpoints only each step's new messages

Reported: ms per turn, storage ms per turn (load + save, i.e. the turn minus the model
run; for LangGraph the time inside the checkpointer's methods), and bytes on disk per
stored message after the turns (WAL checkpointed into the file first).

Example:
    >>> out = run_persistence(sizes=(10,), turns=1, saver_sizes=(10,))
    >>> sorted(out["results"]["10"]) == sorted(CONTENDERS)
    True
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
from swarmgraph.graph.core.state import SwarmState, merge_context
from typing_extensions import NotRequired, TypedDict

from benchmarks.backend_turns import TimedSwarm

WINDOW = 20


def make_history(n: int) -> list[BaseMessage]:
    """``n`` realistic-looking messages (user questions and named agent answers)."""
    out: list[BaseMessage] = []
    for i in range(n):
        if i % 2 == 0:
            out.append(HumanMessage(f"Question {i}: where is order {1000 + i}, can I change it?"))
        else:
            out.append(
                AIMessage(
                    f"Answer {i}: order {999 + i} ships tomorrow; you can change the address "
                    "until it leaves the warehouse.",
                    name="Helper",
                )
            )
    return out


def _model() -> ScriptedChatModel:
    return ScriptedChatModel([], respond=lambda msgs: "Noted.")


def _file_bytes(path: str) -> int:
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


# ---------------------------------------------------------------------------------- ours
def ours_session(path: str, n: int, turns: int) -> tuple[list[float], list[float], int]:
    from swarmgraph.memory import Session

    url = "sqlite:///" + path
    agent = Agent(name="Helper")
    Session("bench", url=url).history.add_messages(make_history(n))
    swarm = TimedSwarm(model=_model())
    session = Session("bench", url=url, window=WINDOW)
    session.run(swarm, agent, "warm-up")  # engine compiled, statements prepared
    per_turn, storage = [], []
    for i in range(turns):
        swarm.spent = 0.0
        start = time.perf_counter()
        session.run(swarm, agent, f"turn {i}")
        total = time.perf_counter() - start
        per_turn.append(total)
        storage.append(total - swarm.spent)
    return per_turn, storage, n + 2 * (turns + 1)


# ---------------------------------------------------------------------------------- naive
def naive_history(path: str, n: int, turns: int) -> tuple[list[float], list[float], int]:
    with warnings.catch_warnings():  # langchain-community warns at import that it is sunset
        warnings.simplefilter("ignore")
        from langchain_community.chat_message_histories import SQLChatMessageHistory

        history = SQLChatMessageHistory(session_id="bench", connection="sqlite:///" + path)
    history.add_messages(make_history(n))
    agent = Agent(name="Helper")
    swarm = TimedSwarm(model=_model())

    def turn(text: str) -> None:
        from swarmgraph.graph.core.messages import to_langchain

        messages = [*history.messages, HumanMessage(text)]
        response = swarm.run(agent, messages)
        history.add_messages([HumanMessage(text), *to_langchain(response.messages)])

    turn("warm-up")
    per_turn, storage = [], []
    for i in range(turns):
        swarm.spent = 0.0
        start = time.perf_counter()
        turn(f"turn {i}")
        total = time.perf_counter() - start
        per_turn.append(total)
        storage.append(total - swarm.spent)
    return per_turn, storage, n + 2 * (turns + 1)


# ---------------------------------------------------------------------------------- LangGraph
def _timed_saver(path: str) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    class TimedSaver(SqliteSaver):
        spent = 0.0

        def _timed(self, name: str, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return getattr(super(), name)(*args, **kwargs)
            finally:
                TimedSaver.spent += time.perf_counter() - start

        def get_tuple(self, *a: Any, **k: Any) -> Any:
            return self._timed("get_tuple", *a, **k)

        def put(self, *a: Any, **k: Any) -> Any:
            return self._timed("put", *a, **k)

        def put_writes(self, *a: Any, **k: Any) -> Any:
            return self._timed("put_writes", *a, **k)

        def get_delta_channel_history(self, *a: Any, **k: Any) -> Any:
            return self._timed("get_delta_channel_history", *a, **k)

    return TimedSaver(sqlite3.connect(path, check_same_thread=False)), TimedSaver


try:  # LangGraph 1.2's (beta) delta channel; older versions do not have it
    from langgraph.channels.delta import DeltaChannel
    from langgraph.graph.message import _messages_delta_reducer

    class DeltaSwarmState(TypedDict):
        """``SwarmState`` with ``messages`` checkpointed as deltas."""

        messages: Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer)]
        context_variables: NotRequired[Annotated[dict[str, Any], merge_context]]
        active_agent: NotRequired[str]
        handoff_trail: NotRequired[list[str]]

except ImportError:  # pragma: no cover
    DeltaSwarmState = None  # type: ignore[assignment,misc]


def _langgraph(state_schema: type | None) -> Callable[[str, int, int], Any]:
    def run(path: str, n: int, turns: int) -> tuple[list[float], list[float], int]:
        if state_schema is None:
            raise RuntimeError("not available in this LangGraph")
        saver, cls = _timed_saver(path)
        app = build_swarm_graph(
            [Agent(name="Helper")], chat_model=_model(), state_schema=state_schema
        ).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "bench"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DeltaChannel is beta and says so
            app.invoke({"messages": make_history(n)}, config)  # prefill (+ one answer)
            app.invoke({"messages": [HumanMessage("warm-up")]}, config)
            per_turn, storage = [], []
            for i in range(turns):
                cls.spent = 0.0
                start = time.perf_counter()
                app.invoke({"messages": [HumanMessage(f"turn {i}")]}, config)
                per_turn.append(time.perf_counter() - start)
                storage.append(cls.spent)
        saver.conn.close()
        return per_turn, storage, n + 1 + 2 * (turns + 1)

    return run


CONTENDERS: dict[str, Callable[[str, int, int], Any]] = {
    "ours: Session(window=20)": ours_session,
    "naive SQLChatMessageHistory": naive_history,
    "LangGraph SqliteSaver": _langgraph(SwarmState),
    "LangGraph DeltaChannel": _langgraph(DeltaSwarmState),
}
#: Contenders whose cost grows with N fast enough that they only run at ``saver_sizes``.
SLOW = {"LangGraph SqliteSaver"}


def _stats(samples: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms)}


def run_persistence(
    *,
    sizes: tuple[int, ...] = (100, 1_000, 10_000),
    turns: int = 5,
    saver_sizes: tuple[int, ...] = (100, 1_000, 10_000),
    ours_turns: int | None = None,
) -> dict[str, Any]:
    """ms per turn, storage ms per turn and bytes per stored message, per contender and N.

    ``ours_turns`` (default: ``turns``) lets our Session, which costs milliseconds a turn,
    run enough turns for a median that machine noise does not move.
    """
    ours_turns = turns if ours_turns is None else ours_turns
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:  # first-use costs (engines, imports) paid here
        for i, fn in enumerate(CONTENDERS.values()):
            with contextlib.suppress(Exception):  # the timed call below reports errors
                fn(os.path.join(tmp, f"warm{i}.db"), 4, 1)
    for n in sizes:
        row: dict[str, Any] = {}
        for name, fn in CONTENDERS.items():
            if name in SLOW and n not in saver_sizes:
                row[name] = {"skipped": f"not run at {n:,} messages (time budget)"}
                continue
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "bench.db")
                runs = ours_turns if name == "ours: Session(window=20)" else turns
                try:
                    per_turn, storage, stored = fn(path, n, runs)
                except Exception as exc:
                    row[name] = {"error": f"{type(exc).__name__}: {exc}"}
                    continue
                size = _file_bytes(path)
            row[name] = {
                "turn_ms": _stats(per_turn),
                "storage_ms": _stats(storage),
                "bytes_per_message": size / stored,
                "file_bytes": size,
                "stored_messages": stored,
            }
        results[str(n)] = row
    ours = "ours: Session(window=20)"
    lo, hi = str(min(sizes)), str(max(sizes))
    ratios: dict[str, float] = {}
    if "turn_ms" in results[lo].get(ours, {}) and "turn_ms" in results[hi].get(ours, {}):
        ratios["ours turn ms, largest / smallest N"] = (
            results[hi][ours]["turn_ms"]["median"] / results[lo][ours]["turn_ms"]["median"]
        )
        ratios["ours bytes/message, largest / smallest N"] = (
            results[hi][ours]["bytes_per_message"] / results[lo][ours]["bytes_per_message"]
        )
    # Marginal bytes per message between consecutive sizes: the file's fixed part (schema,
    # empty pages) dominates small files, so the slope is what says "constant per message".
    marginal: dict[str, dict[str, float]] = {}
    for name in CONTENDERS:
        for a, b in itertools.pairwise(sizes):
            ra, rb = results[str(a)].get(name, {}), results[str(b)].get(name, {})
            if "file_bytes" in ra and "file_bytes" in rb:
                grown = rb["stored_messages"] - ra["stored_messages"]
                marginal.setdefault(name, {})[f"{a:,}->{b:,}"] = (
                    rb["file_bytes"] - ra["file_bytes"]
                ) / grown
    slopes = list(marginal.get(ours, {}).values())
    if len(slopes) >= 2:
        ratios["ours marginal bytes/message, last / first interval"] = slopes[-1] / slopes[0]
    return {
        "sizes": list(sizes),
        "turns": turns,
        "ours_turns": ours_turns,
        "results": results,
        "marginal_bytes_per_message": marginal,
        "ratios": ratios,
    }


if __name__ == "__main__":  # pragma: no cover
    import json
    import sys

    sizes = tuple(int(x) for x in sys.argv[1:]) or (100, 1_000, 10_000)
    print(json.dumps(run_persistence(sizes=sizes, turns=3, saver_sizes=sizes), indent=1))
