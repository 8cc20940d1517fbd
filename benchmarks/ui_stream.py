"""What the AG-UI event stream of ``swarmgraph ui`` costs a turn with a handoff, no client
attached: ``UiService.start`` (``Session.stream``, the step watcher, every event encoded into
the run log) against ``Session.run`` of the same turn, both on ``memory://``, interleaved.

    .venv/bin/python -m benchmarks.ui_stream [--turns 200]

Also ``Session.stream`` of the same turn alone, to tell the engine's streaming cost from the
page's. Not part of ``make bench`` yet and not a timed test: it prints the medians' ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

from swarmgraph.memory import Session

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.app.ui.service import UiService


def _swarm() -> tuple[Swarm, Agent]:
    sales = Agent(name="Sales")

    def transfer_to_sales() -> Agent:
        """Hand off to sales."""
        return sales

    triage = Agent(name="Triage", functions=[transfer_to_sales])
    script = [scripted_tool_call("transfer_to_sales"), "Sales here."] * 100_000
    return Swarm(chat_model=ScriptedChatModel(script)), triage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    turns = parser.parse_args().turns
    swarm, triage = _swarm()
    service = UiService(swarm, triage, url="memory://ui-stream", persist=("messages",))
    plain, relayed, streamed = [], [], []
    for number in range(turns + 20):
        start = time.perf_counter()
        Session(f"plain-{number}", url="memory://ui-plain", persist=("messages",)).run(
            swarm, triage, "hi"
        )
        after_run = time.perf_counter()
        session = Session(f"relay-{number}", url="memory://ui-relay", persist=("messages",))
        for _ in session.stream(swarm, triage, "hi", tool_results=True):
            pass
        middle = time.perf_counter()
        body = {
            "threadId": f"ui-{number}",
            "runId": f"run-{number}",
            "messages": [{"id": f"u{number}", "role": "user", "content": "hi"}],
        }
        assert service.start(body).wait(60)
        end = time.perf_counter()
        if number >= 20:  # warm-up: imports, the compiled graph, the first sessions
            plain.append(after_run - start)
            relayed.append(middle - after_run)
            streamed.append(end - middle)
    a, r, b = (statistics.median(x) for x in (plain, relayed, streamed))
    print(
        f"handoff turn (medians of {turns}): Session.run {a * 1e3:.2f} ms; Session.stream "
        f"{r * 1e3:.2f} ms ({r / a:.2f}x); with the AG-UI stream, no client, "
        f"{b * 1e3:.2f} ms ({b / a:.2f}x of run, {b / r:.2f}x of stream)"
    )


if __name__ == "__main__":
    main()
