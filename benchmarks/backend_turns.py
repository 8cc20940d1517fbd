"""Storage time per Session turn on SQLite, Postgres and Redis, and async concurrency on each.

    python -m benchmarks.backend_turns [--postgres URL] [--redis URL] [--turns N]
                                       [--sessions N] [--only storage,concurrency]

Without ``--postgres``/``--redis`` it starts throwaway servers the way the tests do
(``tests/servers.py``: loopback, a free port, deleted afterwards).

- **storage ms per turn**: ``Session(window=20).run`` minus the time inside ``swarm.run``
  (zero-latency scripted model, one tool call that writes the context, so each turn loads a
  window of 20, saves 4 messages and a new context version), at 100 and 10,000 stored
  messages; median and p90 over ``--turns`` turns.
- **async concurrency**: ``--sessions`` conversations x 5 turns through ``Session.arun`` at
  once on one event loop, with a 50 ms model; wall time, CPU ms per turn, and the stored
  message count checked against the expected one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session


def note(n: int) -> Result:
    """Note a number."""
    return Result(value=f"noted {n}", context_variables={"n": n})


def _rules(messages: list) -> Any:
    if isinstance(messages[-1], HumanMessage):
        return scripted_tool_call("note", {"n": len(messages)})
    return "ok"


class TimedSwarm:
    """A Swarm whose ``run`` wall and CPU time are summed, so storage = turn - run.
    ``model``: its chat model (default: one that calls ``note`` once, then answers)."""

    def __init__(self, latency: float = 0.0, model: ScriptedChatModel | None = None) -> None:
        self.model = model or ScriptedChatModel(respond=_rules, latency=latency)
        self.inner = Swarm(chat_model=self.model)
        self.spent = self.spent_cpu = 0.0

    def run(self, *args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return self.inner.run(*args, **kwargs)
        finally:
            self.spent += time.perf_counter() - start
            self.spent_cpu += time.process_time() - cpu

    async def arun(self, *args: Any, **kwargs: Any) -> Any:
        return await self.inner.arun(*args, **kwargs)


def storage_per_turn(
    url: str, stored: int, turns: int, cpu: list[float] | None = None
) -> list[float]:
    """Storage ms of each of ``turns`` turns in a conversation holding ``stored`` messages.

    ``cpu``, if given, gets this process's CPU ms of each turn's storage part: on a busy
    machine wall time also counts waiting for a core, CPU time does not (for SQLite it is
    the whole cost; for Postgres and Redis the server's share is not in it).
    """
    session = Session(f"bench-{uuid.uuid4().hex[:8]}", url=url, window=20)
    filler = [HumanMessage("q " * 20), AIMessage("a " * 40, name="Clerk")] * (stored // 2)
    for start in range(0, len(filler), 500):
        session.history.add_messages(filler[start : start + 500])
    swarm, agent = TimedSwarm(), Agent(name="Clerk", functions=[note])
    for i in range(3):  # warm-up: graph compiled, statements prepared, pool filled
        session.run(swarm, agent, f"warm up {i}")
    times = []
    for i in range(turns):
        swarm.spent = swarm.spent_cpu = 0.0
        start, cpu_start = time.perf_counter(), time.process_time()
        session.run(swarm, agent, f"turn {i}")
        times.append((time.perf_counter() - start - swarm.spent) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - cpu_start - swarm.spent_cpu) * 1000)
    return times


async def _conversation(url: str, cid: str, swarm: Any, agent: Agent, turns: int) -> None:
    session = Session(cid, url=url, window=20)
    for i in range(turns):
        await session.arun(swarm, agent, f"turn {i}")


def async_concurrency(url: str, sessions: int, turns: int = 5, latency: float = 0.05) -> dict:
    """``sessions`` conversations x ``turns`` turns at once through ``Session.arun``."""
    swarm, agent = TimedSwarm(latency), Agent(name="Clerk", functions=[note])
    prefix = f"conc-{uuid.uuid4().hex[:8]}"

    async def all_at_once(tag: str, n: int) -> None:
        await asyncio.gather(
            *(_conversation(url, f"{prefix}-{tag}-{k}", swarm, agent, turns) for k in range(n))
        )

    asyncio.run(all_at_once("warm", 2))
    cpu, wall = time.process_time(), time.perf_counter()
    error = None
    try:
        asyncio.run(all_at_once("run", sessions))
    except Exception as exc:  # reported, not raised: the "before" figures include failures
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stored = 0
    for k in range(sessions):
        with contextlib.suppress(Exception):
            stored += len(Session(f"{prefix}-run-{k}", url=url).messages)
    return {
        "wall_s": wall,
        "cpu_ms_per_turn": cpu * 1000 / (sessions * turns),
        "messages_expected": sessions * turns * 4,  # user, tool call, tool result, answer
        "messages_stored": stored,
        "error": error,
    }


@contextlib.contextmanager
def _servers(args: argparse.Namespace, tolerate: bool = False) -> Iterator[dict[str, Any]]:
    """``backend -> URL``; with ``tolerate``, a server that cannot start is left out and
    its reason put under ``"unavailable"`` instead of raising."""
    urls: dict[str, Any] = {"sqlite": "sqlite:///" + os.path.join(tempfile.mkdtemp(), "bench.db")}
    unavailable: dict[str, str] = {}
    started: list[Any] = []
    try:
        if args.postgres != "none" or args.redis != "none":
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
            from servers import PostgresServer, RedisServer  # type: ignore[import-not-found]
        for name, given, kind in (
            ("postgres", args.postgres, "PostgresServer"),
            ("redis", args.redis, "RedisServer"),
        ):
            if given == "none":
                continue
            if given:
                urls[name] = given
                continue
            try:
                server = {"PostgresServer": PostgresServer, "RedisServer": RedisServer}[kind]()
                server.start()
            except Exception as exc:  # missing binaries: reported, the other backends run
                if not tolerate:
                    raise
                unavailable[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
                continue
            started.append(server)
            urls[name] = server.url
        if tolerate:
            urls["unavailable"] = unavailable
        yield urls
    finally:
        for server in started:
            server.close()


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * 0.9) - 1, 0)]


def run_backends(
    *, sizes: tuple[int, ...] = (100, 10_000), turns: int = 40, sessions: int = 200
) -> dict[str, Any]:
    """``make bench``'s view of this module: storage ms per turn (median, p90, client CPU) at
    each size, and ``sessions`` concurrent async conversations, on SQLite, Postgres and Redis
    (throwaway loopback servers; a backend whose server binaries are missing reports why).

    Example:
        >>> out = run_backends(sizes=(4,), turns=2, sessions=2)
        >>> sorted(out["storage"]["sqlite"]), out["concurrency"]["sqlite"]["messages_stored"]
        (['4'], 40)
    """
    out: dict[str, Any] = {"turns": turns, "sessions": sessions, "storage": {}, "concurrency": {}}
    with _servers(argparse.Namespace(postgres="", redis=""), tolerate=True) as urls:
        out["unavailable"] = urls.pop("unavailable", {})
        for name, url in urls.items():
            rows = {}
            for stored in sizes:
                cpu: list[float] = []
                wall = storage_per_turn(url, stored, turns, cpu)
                rows[str(stored)] = {
                    "median_ms": statistics.median(wall),
                    "p90_ms": _p90(wall),
                    "cpu_median_ms": statistics.median(cpu),
                }
            out["storage"][name] = rows
            out["concurrency"][name] = async_concurrency(url, sessions)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.backend_turns")
    parser.add_argument("--postgres", default="", help="URL, or 'none' (default: throwaway)")
    parser.add_argument("--redis", default="", help="URL, or 'none' (default: throwaway)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--only", default="storage,concurrency")
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    with _servers(args) as urls:
        if "storage" in parts:
            header = f"{'backend':<10}{'stored':>8}{'storage median ms':>19}{'p90 ms':>9}"
            print(header + f"{'client CPU median ms':>22}")
            for name, url in urls.items():
                for stored in (100, 10_000):
                    cpu: list[float] = []
                    t = storage_per_turn(url, stored, args.turns, cpu)
                    p90 = _p90(t)
                    print(
                        f"{name:<10}{stored:>8}{statistics.median(t):>19.2f}{p90:>9.2f}"
                        f"{statistics.median(cpu):>22.2f}"
                    )
        if "concurrency" in parts:
            print(f"\n{args.sessions} sessions x 5 turns via Session.arun, 50 ms model")
            print(f"{'backend':<10}{'wall s':>8}{'CPU ms/turn':>13}{'stored/expected':>17}  error")
            for name, url in urls.items():
                r = async_concurrency(url, args.sessions)
                seen = f"{r['messages_stored']}/{r['messages_expected']}"
                print(
                    f"{name:<10}{r['wall_s']:>8.2f}{r['cpu_ms_per_turn']:>13.2f}{seen:>17}  "
                    f"{r['error'] or ''}"
                )


if __name__ == "__main__":
    main()
