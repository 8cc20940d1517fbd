"""Concurrency: many sessions' turns overlapping on one event loop through ``Swarm.arun``.

``sessions`` conversations each take ``turns`` turns against a model that waits ``latency``
seconds per call (``asyncio.sleep``, as a network call would). Three timings, same process:

- one session's turns alone (the floor the overlapped run is compared with),
- all sessions at once (``asyncio.gather``; each session's turns are sequential),
- all sessions one after the other, measured on ``sequential_sample`` sessions and scaled
  to ``sessions`` (running 200 x 5 x 50 ms sequentially would take ~50 s of the budget).

The same is then done through ``memory.Session.arun`` over one SQLite file (``window=20``),
where each turn also loads and saves. Every session's stored/returned message count is
checked, so "no lost messages" is a count, not a hope.

Side by side on the same loop and model latency (``compare``): CPU seconds per turn for
ours with one reused agent, ours with the agent (instructions and a tool function) built
anew for every request, as a web service building per-user agents does, and the OpenAI
Agents SDK (``Runner.run`` over a scripted ``Model``).

Example:
    >>> out = run_concurrency(sessions=3, turns=2, latency=0.001, sequential_sample=1,
    ...                       with_session=False)
    >>> out["swarm"]["messages_expected"] == out["swarm"]["messages_seen"]
    True
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from swarmgraph.graph import Agent, ScriptedChatModel, Swarm


def _model(latency: float) -> ScriptedChatModel:
    return ScriptedChatModel([], respond=lambda msgs: f"ok {len(msgs)}", latency=latency)


async def _swarm_session(swarm: Swarm, agent: Agent | Callable[[], Agent], turns: int) -> int:
    history: list[dict] = []
    for i in range(turns):
        history.append({"role": "user", "content": f"turn {i}"})
        response = await swarm.arun(agent() if callable(agent) else agent, history)
        history.extend(response.messages)
    return len(history)


def per_request_agent(user: str = "user") -> Agent:
    """What a service that builds agents per request does: fresh instructions and tools."""

    def lookup_order(order_id: str, context_variables: dict) -> str:
        """Look an order up."""
        return f"order {order_id} for {user}"

    return Agent(name="Helper", instructions=f"Answer {user} briefly.", functions=[lookup_order])


async def _sdk_session(agent: Any, turns: int) -> int:
    from agents import Runner

    items: list[Any] = []
    for i in range(turns):
        result = await Runner.run(agent, [*items, {"role": "user", "content": f"turn {i}"}])
        items = result.to_input_list()
    return len(items)


def _timed_cpu(coroutine_factory: Callable[[], Any]) -> tuple[float, float, Any]:
    cpu = time.process_time()
    start = time.perf_counter()
    result = asyncio.run(coroutine_factory())
    return time.perf_counter() - start, time.process_time() - cpu, result


def _compare_part(sessions: int, turns: int, latency: float, repeat: int) -> dict[str, Any]:
    """Wall and CPU per turn, same loop and latency: ours reused, ours per request, SDK."""
    swarm = Swarm(chat_model=_model(latency))
    reused = per_request_agent()
    runs: dict[str, Callable[[int], Any]] = {
        "ours: reused agent": lambda n: asyncio.gather(
            *(_swarm_session(swarm, reused, turns) for _ in range(n))
        ),
        "ours: agent built per request": lambda n: asyncio.gather(
            *(
                _swarm_session(swarm, lambda u=u: per_request_agent(f"u{u}"), turns)
                for u in range(n)
            )
        ),
    }
    expected = {name: turns * 2 for name in runs}
    try:
        from agents import Agent as SdkAgent
        from agents import set_tracing_disabled

        from benchmarks.peers import scripted_sdk_model

        set_tracing_disabled(True)
        sdk_agent = SdkAgent(
            name="Helper",
            instructions="Answer briefly.",
            model=scripted_sdk_model(lambda items: ("text", f"ok {len(items)}"), latency),
        )
        runs["OpenAI Agents SDK"] = lambda n: asyncio.gather(
            *(_sdk_session(sdk_agent, turns) for _ in range(n))
        )
        expected["OpenAI Agents SDK"] = turns * 2
    except ImportError as exc:
        missing = f"openai-agents not installed: {exc}"
    else:
        missing = ""
    for run in runs.values():  # warm-up: imports, compiled graphs, schemas
        asyncio.run(_gather(run, 2))
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    seen: dict[str, int] = {}
    for _ in range(repeat):
        for name, run in runs.items():
            w, c, counts = _timed_cpu(lambda run=run: _gather(run, sessions))
            wall[name].append(w)
            cpu[name].append(c)
            seen[name] = sum(counts)
    total = sessions * turns
    out: dict[str, Any] = {
        "contenders": {
            name: {
                "wall_s": _median_of(wall[name]),
                "cpu_ms_per_turn": _median_of([c / total * 1000 for c in cpu[name]]),
                "messages_expected": expected[name] * sessions,
                "messages_seen": seen[name],
            }
            for name in runs
        },
        "missing": missing,
    }
    c = out["contenders"]
    out["ratios"] = {
        "ours per request / ours reused (CPU per turn)": c["ours: agent built per request"][
            "cpu_ms_per_turn"
        ]["median"]
        / c["ours: reused agent"]["cpu_ms_per_turn"]["median"]
    }
    if "OpenAI Agents SDK" in c:
        out["ratios"]["ours reused / Agents SDK (CPU per turn)"] = (
            c["ours: reused agent"]["cpu_ms_per_turn"]["median"]
            / c["OpenAI Agents SDK"]["cpu_ms_per_turn"]["median"]
        )
        out["ratios"]["ours per request / Agents SDK (CPU per turn)"] = (
            c["ours: agent built per request"]["cpu_ms_per_turn"]["median"]
            / c["OpenAI Agents SDK"]["cpu_ms_per_turn"]["median"]
        )
    return out


async def _gather(run: Callable[[int], Any], n: int) -> Any:
    return await run(n)


async def _timed_swarm(swarm: Swarm, agent: Agent, sessions: int, turns: int) -> tuple[float, int]:
    start = time.perf_counter()
    counts = await asyncio.gather(*(_swarm_session(swarm, agent, turns) for _ in range(sessions)))
    return time.perf_counter() - start, sum(counts)


async def _timed_sequential(swarm: Swarm, agent: Agent, sessions: int, turns: int) -> float:
    start = time.perf_counter()
    for _ in range(sessions):
        await _swarm_session(swarm, agent, turns)
    return time.perf_counter() - start


def _median_of(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def _swarm_part(
    sessions: int, turns: int, latency: float, repeat: int, sequential_sample: int
) -> dict[str, Any]:
    agent = Agent(name="Helper", instructions="Answer briefly.")
    swarm = Swarm(chat_model=_model(latency))
    one, many, cpu, seen = [], [], [], 0
    asyncio.run(_timed_swarm(swarm, agent, 2, 1))  # warm-up: graph compiled, imports done
    for _ in range(repeat):
        one.append(asyncio.run(_timed_swarm(swarm, agent, 1, turns))[0])
        cpu_start = time.process_time()
        wall, seen = asyncio.run(_timed_swarm(swarm, agent, sessions, turns))
        cpu.append(time.process_time() - cpu_start)
        many.append(wall)
    sequential = asyncio.run(_timed_sequential(swarm, agent, sequential_sample, turns))
    sequential_all = sequential * sessions / sequential_sample
    one_s, many_s = _median_of(one), _median_of(many)
    return {
        "one_session_s": one_s,
        "all_concurrent_s": many_s,
        # CPU the overlapped run used: the floor its wall time cannot go below on one loop.
        "all_concurrent_cpu_s": _median_of(cpu),
        "all_sequential_s": sequential_all,
        "sequential_measured_sessions": sequential_sample,
        "ratio_concurrent_to_one": many_s["median"] / one_s["median"],
        "speedup_vs_sequential": sequential_all / many_s["median"],
        "messages_expected": sessions * turns * 2,  # a user message and an answer per turn
        "messages_seen": seen,
    }


async def _session_conv(url: str, cid: str, swarm: Swarm, agent: Agent, turns: int) -> None:
    from swarmgraph.memory import Session

    session = Session(cid, url=url, window=20)
    for i in range(turns):
        await session.arun(swarm, agent, f"turn {i}")


async def _timed_sessions(
    url: str, prefix: str, swarm: Swarm, agent: Agent, sessions: int, turns: int
) -> float:
    start = time.perf_counter()
    await asyncio.gather(
        *(_session_conv(url, f"{prefix}-{n}", swarm, agent, turns) for n in range(sessions))
    )
    return time.perf_counter() - start


def _session_part(sessions: int, turns: int, latency: float, repeat: int) -> dict[str, Any]:
    from swarmgraph.memory import Session

    agent = Agent(name="Helper", instructions="Answer briefly.")
    swarm = Swarm(chat_model=_model(latency))
    with tempfile.TemporaryDirectory() as tmp:
        url = "sqlite:///" + os.path.join(tmp, "concurrency.db")
        asyncio.run(_timed_sessions(url, "warm", swarm, agent, 2, 1))
        one, many = [], []
        for r in range(repeat):
            one.append(asyncio.run(_timed_sessions(url, f"one{r}", swarm, agent, 1, turns)))
            wall = asyncio.run(_timed_sessions(url, f"many{r}", swarm, agent, sessions, turns))
            many.append(wall)
        stored = sum(
            len(Session(f"many{repeat - 1}-{n}", url=url).messages) for n in range(sessions)
        )
    one_s, many_s = _median_of(one), _median_of(many)
    return {
        "one_session_s": one_s,
        "all_concurrent_s": many_s,
        "ratio_concurrent_to_one": many_s["median"] / one_s["median"],
        "messages_expected": sessions * turns * 2,
        "messages_stored": stored,
    }


def run_concurrency(
    *,
    sessions: int = 200,
    turns: int = 5,
    latency: float = 0.05,
    repeat: int = 3,
    sequential_sample: int = 10,
    with_session: bool = True,
    session_sessions: int | None = None,
    compare: bool = True,
) -> dict[str, Any]:
    """Overlapped vs single vs sequential wall time, with message counts; ``compare`` adds
    CPU per turn for ours (reused and per-request agents) and the Agents SDK side by side.
    ``session_sessions`` sizes the Session-over-SQLite part (default: ``sessions``)."""
    out: dict[str, Any] = {
        "sessions": sessions,
        "turns": turns,
        "latency_s": latency,
        "swarm": _swarm_part(sessions, turns, latency, repeat, sequential_sample),
    }
    if compare:
        out["compare"] = _compare_part(sessions, turns, latency, repeat)
    if with_session:
        n = session_sessions or sessions
        out["session_sessions"] = n
        try:
            out["session"] = _session_part(n, turns, latency, repeat)
        except ImportError as exc:  # memory/ not importable: say so instead of failing
            out["session"] = {"error": f"memory.Session unavailable: {exc}"}
    return out


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run_concurrency(repeat=1), indent=1))
