"""Tokens sent per turn for each memory policy over a long scripted conversation.

Each policy drives a ``memory.Session`` over SQLite for ``turns`` turns (a ~25-word question,
a ~40-word scripted answer). Tokens per turn = what the engine reports as sent to the model
(``Session.last_usage["input_tokens"]``: the scripted model counts its prompt, instructions
included) plus, for the summary policy, what was sent to the summariser that turn.

Example:
    >>> out = run_tokens(turns=3, plot_path=None)
    >>> sorted(out["policies"]) == sorted(POLICIES)
    True
    >>> len(out["policies"]["buffer"]["per_turn"])
    3
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from swarmgraph.graph import Agent, ScriptedChatModel, Swarm

QUESTION = (
    "Turn {i}: I ordered a blue kettle last week, order {order}, and the tracking page still "
    "says pending; can you check where it is and whether I can change the delivery address?"
)
ANSWER = (
    "Thanks for waiting. Order {order} left the warehouse this morning and should arrive in two "
    "days. You can still change the address from the order page until the courier scans it, "
    "and I have added a note so the driver calls you before delivery."
)
SUMMARY = "The user asked about several kettle orders; each was shipped and addresses can change."


def _answer(messages: list) -> str:
    return ANSWER.format(order=1000 + len(messages))


def _policies() -> dict[str, Callable[[], Any]]:
    from swarmgraph.memory import BufferMemory, SummaryMemory, TokenTrimMemory, WindowMemory

    return {
        "buffer": BufferMemory,
        "window:20": lambda: WindowMemory(20),
        "tokens:1000": lambda: TokenTrimMemory(1000),
        "summary:10": lambda: SummaryMemory(
            ScriptedChatModel([], respond=lambda msgs: SUMMARY), keep_last=10
        ),
    }


POLICIES = ("buffer", "window:20", "tokens:1000", "summary:10")


def run_tokens(*, turns: int = 200, plot_path: str | None = None) -> dict[str, Any]:
    """Per-turn token series per policy; the plot is written to ``plot_path`` if given."""
    from swarmgraph.memory import Session

    agent = Agent(name="Helper", instructions="You are a helpful shop assistant.")
    series: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = "sqlite:///" + os.path.join(tmp, "tokens.db")
        for name, make in _policies().items():
            swarm = Swarm(chat_model=ScriptedChatModel([], respond=_answer))
            session = Session(f"tokens-{name}", url=url, memory=make())
            sent = []
            for i in range(turns):
                session.run(swarm, agent, QUESTION.format(i=i, order=1000 + i))
                usage = session.last_usage
                sent.append(int(usage["input_tokens"]) + int(usage.get("summary_input_tokens", 0)))
            series[name] = sent
    policies = {
        name: {
            "per_turn": values,
            "total": sum(values),
            "last": values[-1],
            "max": max(values),
            "mean": sum(values) / len(values),
        }
        for name, values in series.items()
    }
    if plot_path:
        plot_tokens(series, plot_path)
    buffer_total = policies["buffer"]["total"]
    return {
        "turns": turns,
        "policies": policies,
        "ratios": {
            f"{name} total / buffer total": p["total"] / buffer_total
            for name, p in policies.items()
            if name != "buffer"
        },
        "plot": plot_path,
    }


def plot_tokens(series: dict[str, list[int]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for name, values in series.items():
        ax.plot(range(1, len(values) + 1), values, label=name, linewidth=1.5)
    ax.set_xlabel("turn")
    ax.set_ylabel("tokens sent to the model(s)")
    ax.set_title("Tokens sent per turn, by memory policy (scripted conversation)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":  # pragma: no cover
    out = run_tokens(turns=200, plot_path="benchmarks/tokens_per_turn.png")
    for name, p in out["policies"].items():
        print(name, p["total"], p["last"], p["max"])
