"""What the AG-UI event stream of ``swarmgraph ui`` costs a turn with a handoff, no client
attached, and how fast its page renders a long conversation (``make bench``'s ``ui`` section).

Side by side, interleaved, on ``memory://``, as CPU time of the process (its threads
included: a run of the page is driven by a thread of its own, and its events are written by
the flusher thread), medians of ``turns``:

* ``Session.run``: the turn alone;
* the floor, the least the page's guarantees need, with no event made or kept:
  ``Session.run`` with a middleware that has the three hooks the page watches a turn nobody
  streams by (``before_step``, ``hold_calls``, ``wrap_tool_call``), each doing nothing but
  call on (the page must see each step start with its state, each reply before its tools
  run, and each tool's ``Result``); and the same run handed to one of the page's kept worker
  threads
  (a turn must not run in the thread of the client that asked for it, or a client that goes
  away would stop it);
* ``UiService.start`` (nobody reading): the page's middleware, every AG-UI event kept in the
  store's log (memory/turn_events.py), each reply told whole;
* the same with ``tokens=True`` (what a run a client posted does: the model streams);
* ``Session.stream`` of the same turn, for comparison.

    .venv/bin/python -m benchmarks.ui_stream [--turns 200]

The render figure is :mod:`benchmarks.ui_render`'s (headless Chromium).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from swarmgraph.graph.core.run_control import RunHooks
from swarmgraph.memory import Session

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.app.ui.runs import Latch
from swarmgraph.app.ui.service import UiService
from swarmgraph.app.ui.turn import _workers

#: The target: a handoff with the event stream attached, no client, against one without.
TARGET = 1.05
FLOOR = "floor: the page's hooks, no-op"
FLOOR_THREAD = "floor, in a worker thread"
CONTENDERS = (
    "Session.run",
    FLOOR,
    FLOOR_THREAD,
    "page, no client",
    "page, no client, tokens",
    "Session.stream",
)
#: The stores the contenders write to (``memory://``, this process's).
URLS = (
    "memory://bench-ui-run",
    "memory://bench-ui-floor",
    "memory://bench-ui-stream",
    "memory://bench-ui-stream-s",
)


class NoopHooks(AgentMiddleware):
    """The three hooks the page watches a turn nobody streams by (swarmgraph/app/ui/steps.py
    ``UiQuietMiddleware``), doing nothing.

    Example:
        >>> swarm, triage = _swarm()
        >>> from swarmgraph.graph.core.run_control import RunHooks
        >>> swarm.run(triage, [{"role": "user", "content": "hi"}],
        ...           hooks=RunHooks(middleware=(NoopHooks(),))).agent.name
        'Sales'
    """

    async def before_step(self, start: Any) -> bool:
        return False

    def hold_calls(self, turn: Any, reply: Any, tools: Any) -> tuple[Any, list[Any]]:
        return reply, []

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


def _swarm() -> tuple[Swarm, Agent]:
    sales = Agent(name="Sales")

    def transfer_to_sales() -> Agent:
        """Hand off to sales."""
        return sales

    triage = Agent(name="Triage", functions=[transfer_to_sales])
    script = [scripted_tool_call("transfer_to_sales"), "Sales here."] * 100_000
    return Swarm(chat_model=ScriptedChatModel(script)), triage


def contenders() -> dict[str, Callable[[], None]]:
    """Each contender as a function that runs one handoff turn, each call on a conversation
    of its own that no other call (of any contender) has used: every turn is the first of
    its conversation, so every contender loads an empty history and saves one turn (two
    contenders sharing ids would run the second turn of the same conversation, a longer
    history to load and save)."""
    swarm, triage = _swarm()
    service = UiService(swarm, triage, url=URLS[2], persist=("messages",))
    hooks = RunHooks(middleware=(NoopHooks(),))
    used: set[str] = set()
    count = itertools.count()

    def fresh(tag: str) -> str:
        """A conversation id never used before, for one turn of ``tag``."""
        cid = f"{tag}-{next(count)}"
        assert cid not in used, cid
        used.add(cid)
        return cid

    def run() -> None:
        Session(fresh("run"), url=URLS[0], persist=("messages",)).run(swarm, triage, "hi")

    def floor_in(cid: str, done: Latch | None = None) -> None:
        session = Session(cid, url=URLS[1], persist=("messages",))
        session.run(swarm, triage, "hi", hooks=hooks)
        if done is not None:
            done.set()

    def floor() -> None:
        floor_in(fresh("floor"))

    def floor_thread() -> None:
        done = Latch()  # what the page's run signals its end with (a threading.Event's
        _workers.run(floor_in, fresh("floor-thread"), done)  # Condition costs more)
        assert done.wait(60)

    def stream() -> None:
        session = Session(fresh("stream"), url=URLS[3], persist=("messages",))
        for _ in session.stream(swarm, triage, "hi", tool_results=True):
            pass

    def page(tokens: bool) -> Callable[[], None]:
        tag = "t" if tokens else "p"

        def one() -> None:
            cid = fresh(tag)
            body = {
                "threadId": cid,
                "runId": f"{cid}-run",
                "messages": [{"id": f"{cid}-u", "role": "user", "content": "hi"}],
            }
            log = service.start(body, tokens=tokens)
            assert log.wait(60)

        return one

    return {
        "Session.run": run,
        FLOOR: floor,
        FLOOR_THREAD: floor_thread,
        "page, no client": page(False),
        "page, no client, tokens": page(True),
        "Session.stream": stream,
    }


def check_one_turn_each() -> int:
    """Check that every conversation the contenders used holds one turn (the user's message,
    the handoff's call and its answer, the reply): no contender ran a second turn of a
    conversation. Returns how many were checked."""
    from swarmgraph.memory import open_store

    rows = [row for url in URLS for row in open_store(url).conversations()]
    wrong = [(row.conversation_id, row.messages) for row in rows if row.messages != 4]
    if wrong:
        raise AssertionError(f"conversations with more or less than one turn: {wrong[:5]}")
    return len(rows)


def run_ui_stream(turns: int = 200, warmup: int = 20) -> dict[str, Any]:
    """Each contender's median CPU ms a turn, and the ratios to ``Session.run``."""
    runs = contenders()
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for number in range(turns + warmup):
        for name in CONTENDERS:
            start = time.process_time()
            runs[name]()
            if number >= warmup:  # imports, the compiled graph, the first sessions
                times[name].append(time.process_time() - start)
    assert check_one_turn_each() == (turns + warmup) * len(CONTENDERS)
    medians = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    base = medians["Session.run"]
    return {
        "turns": turns,
        "ms": medians,
        "ratios": {name: medians[name] / base for name in CONTENDERS},
        "target": TARGET,
    }


def ui_section(results: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    """RESULTS.md's section for the ``ui`` benchmarks (benchmarks/report.py calls it)."""
    from benchmarks.report import _table, verdict

    stream, render = results.get("stream"), results.get("render")
    lines = ["## 1d. The page's event stream and render (`swarmgraph ui`)", ""]
    if stream is not None:
        rows = [  # (a results.json from before the floor row has no floor)
            [name, f"{stream['ms'][name]:.2f}", f"{stream['ratios'][name]:.2f}"]
            for name in CONTENDERS
            if name in stream["ms"]
        ]
        lines += [
            "The handoff turn through a `Session` on `memory://`, interleaved, CPU ms of the "
            f"process a turn (median of {stream['turns']}): `Session.run`; the floor (the "
            "page's three middleware hooks doing nothing, then that run handed to one of the "
            "page's worker threads: the least its guarantees need); the page's run with nobody "
            "reading (`UiService.start`: every AG-UI event kept in the "
            "store's log, replies whole); the same with token streaming; `Session.stream` "
            "(`benchmarks/ui_stream.py`).",
            "",
            *_table(["contender", "median CPU ms", "x Session.run"], rows),
            "",
        ]
        ratio = stream["ratios"]["page, no client"]
        floor = stream["ratios"].get(FLOOR_THREAD)
        targets.append(
            {
                "target": f"a handoff with the event stream attached (no client) <= "
                f"{stream['target']}x one without",
                "verdict": verdict(ratio, stream["target"]),
                "why": f"{ratio:.2f}x"
                + ("" if floor is None else f" (the floor its guarantees need: {floor:.2f}x)"),
            }
        )
    if render is not None:
        lines += [
            f"The page renders a {render['messages']:,}-message conversation in "
            f"{render['median_ms']:.0f} ms (median of {render['loads']} loads, headless "
            "Chromium, `benchmarks/ui_render.py`).",
            "",
        ]
        targets.append(
            {
                "target": f"the page renders {render['messages']:,} messages in <= 1 s",
                "verdict": verdict(render["median_ms"] / 1000, 1.0),
                "why": f"{render['median_ms']:.0f} ms",
            }
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    result = run_ui_stream(parser.parse_args().turns)
    for name in CONTENDERS:
        print(f"{name:32s} {result['ms'][name]:7.2f} CPU ms  {result['ratios'][name]:.2f}x")


if __name__ == "__main__":
    main()
