"""Parallel handoffs: four specialists asked at once (``Parallel``) against the same four asked
one after another, in ``Swarm.arun`` and ``Swarm.run``.

Each specialist's model waits ``latency`` seconds per call (``asyncio.sleep`` on the async
path, ``time.sleep`` on the sync one, as a network call would); the desk that fans out answers
at once, so the figures are what the branches cost. Three timings per mode, same process:

- **fan-out**: one run of the desk, whose tool returns ``Parallel(*specialists)`` (the desk's
  two model calls, the four branches, the join);
- **one after another**: the four specialists, each in its own ``run``, sequentially;
- **four separate runs at once**: the same four runs overlapped (``asyncio.gather`` / four
  threads), what the fan-out does minus the fan-out and join steps: the difference is the
  join's overhead.

Every fan-out's joined answer is checked (four answers, in the order given).

Example:
    >>> out = run_parallel(branches=2, latency=0.001, repeat=1)
    >>> sorted(out["modes"]), out["modes"]["arun"]["answers_checked"]
    (['arun', 'run'], 1)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import BaseMessage
from swarmgraph.graph import Agent, Parallel, ScriptedChatModel, Swarm, scripted_tool_call

USER = [{"role": "user", "content": "What do you each make of case 12?"}]
NAMES = ("Billing", "Tech", "Plans", "Legal", "Sales", "Travel", "Payroll", "Support")


def _desk_reply(messages: list[BaseMessage]) -> Any:
    if messages[-1].type == "tool":
        return "Summed up."
    return scripted_tool_call("ask_specialists")


def build(branches: int, latency: float) -> tuple[Agent, list[Agent], Swarm]:
    """The desk, its specialists, and a Swarm whose specialists' models wait ``latency``."""
    specialists = [Agent(name=n, model="specialist") for n in NAMES[:branches]]

    def ask_specialists() -> Parallel:
        """Ask every specialist at once."""
        return Parallel(*specialists)

    desk = Agent(name="Desk", model="desk", functions=[ask_specialists])
    models = {
        "desk": ScriptedChatModel([], respond=_desk_reply),
        "specialist": ScriptedChatModel(
            [], respond=lambda msgs: f"{msgs[0].content[:0]}case 12 is fine", latency=latency
        ),
    }
    return desk, specialists, Swarm(chat_model=models.__getitem__)


def _check(response: Any, names: list[str]) -> None:
    answer = json.loads(response.messages[1]["content"])
    assert list(answer) == names and all(a == "case 12 is fine" for a in answer.values()), answer


def _timed(call: Callable[[], Any], repeat: int) -> dict[str, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def _mode(branches: int, latency: float, repeat: int, mode: str) -> dict[str, Any]:
    desk, specialists, swarm = build(branches, latency)
    names = [a.name for a in specialists]
    checked = 0

    if mode == "arun":

        def fan_out() -> None:
            nonlocal checked
            _check(asyncio.run(swarm.arun(desk, USER)), names)
            checked += 1

        async def one_by_one() -> None:
            for agent in specialists:
                await swarm.arun(agent, USER)

        async def together() -> None:
            await asyncio.gather(*(swarm.arun(agent, USER) for agent in specialists))

        sequential: Callable[[], Any] = lambda: asyncio.run(one_by_one())  # noqa: E731
        separate: Callable[[], Any] = lambda: asyncio.run(together())  # noqa: E731
    else:

        def fan_out() -> None:
            nonlocal checked
            _check(swarm.run(desk, USER), names)
            checked += 1

        def sequential() -> None:
            for agent in specialists:
                swarm.run(agent, USER)

        pool = ThreadPoolExecutor(max_workers=branches)

        def separate() -> None:
            list(pool.map(lambda agent: swarm.run(agent, USER), specialists))

    fan_out(), sequential(), separate()  # warm: graphs compiled, models bound
    checked = 0
    out = {
        "fan_out_s": _timed(fan_out, repeat),
        "one_after_another_s": _timed(sequential, repeat),
        "separate_at_once_s": _timed(separate, repeat),
        "answers_checked": checked,
    }
    fan = out["fan_out_s"]["median"]
    out["speedup"] = out["one_after_another_s"]["median"] / fan
    out["join_overhead_ms"] = (fan - out["separate_at_once_s"]["median"]) * 1000
    return out


def run_parallel(branches: int = 4, latency: float = 0.2, repeat: int = 5) -> dict[str, Any]:
    """Fan-out vs one after another vs separate runs at once, for ``arun`` and ``run``."""
    return {
        "branches": branches,
        "latency_s": latency,
        "repeat": repeat,
        "modes": {mode: _mode(branches, latency, repeat, mode) for mode in ("arun", "run")},
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run_parallel(), indent=1))
