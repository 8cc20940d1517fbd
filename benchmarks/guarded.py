"""What contracts cost: a handoff with a typed context and two guardrails vs the same handoff
without (issue 21's target: <= 1.1x).

Every contender runs the same ``Swarm.run``: A's model asks for ``transfer_to_b``, the tool
runs, the conversation switches to B, B's model answers; zero-latency scripted model, the same
four-key context passed in. They differ only by what the contracts add:

- ``plain``: no schema, no guardrails (Swarm's plain dict);
- ``typed context``: ``Swarm(context_schema=Desk)`` (validated on entry and on every node step);
- ``two guardrails``: B has an input guardrail (checked on the handoff) and an output guardrail
  (checked on its answer), both plain functions over the conversation;
- ``typed + two guardrails``: both, and ``requires=["order_id"]`` on B (checked on the handoff).

The batches are interleaved round-robin in one process (benchmarks/timing.py), so the ratios
compare figures from one run.

Run: ``.venv/bin/python -m benchmarks --only guarded`` (or ``python -m benchmarks.guarded``).

Example:
    >>> result = run_guarded(number=2, repeat=2)
    >>> sorted(result["ratios"]) == sorted(RATIOS)
    True
    >>> result["contenders"]["typed + two guardrails"]["median"] > 0
    True
"""

from __future__ import annotations

import json
import operator
import re
import time
from collections.abc import Callable
from typing import Annotated, Any

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel
from swarmgraph.graph import Agent, Swarm

from benchmarks.handoff import PING, PONG, make_model
from benchmarks.timing import interleaved

#: name -> (numerator, denominator)
RATIOS = {
    "typed + two guardrails / plain": ("typed + two guardrails", "plain"),
    "typed context / plain": ("typed context", "plain"),
    "two guardrails / plain": ("two guardrails", "plain"),
}
#: The target the report states.
TARGET = 1.1


class Desk(BaseModel):
    """The context every contender carries (typed only where the contender says so)."""

    order_id: int | None = None
    customer: str = ""
    visits: Annotated[int, operator.add] = 0
    tags: Annotated[list[str], operator.add] = []


CONTEXT = {"order_id": 7, "customer": "Ming", "visits": 1, "tags": ["vip"]}
_ATTACK = re.compile(r"ignore (all|previous) instructions|system prompt", re.IGNORECASE)
_LEAK = re.compile(r"\b\d{4} ?\d{4} ?\d{4} ?\d{4}\b|password", re.IGNORECASE)


def no_injection(context_variables: dict, messages: list[BaseMessage]) -> str | None:
    """An input guardrail: the latest user message is no injection attempt."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return "injection" if _ATTACK.search(str(message.content)) else None
    return None


def no_leak(context_variables: dict, messages: list[BaseMessage]) -> str | None:
    """An output guardrail: the answer leaks no card number or password."""
    return "leak" if _LEAK.search(str(messages[-1].content)) else None


def contender(*, typed: bool, guarded: bool) -> Callable[[], Any]:
    model = make_model()
    b = Agent(name="B", instructions="You are B.")
    if guarded:
        b.input_guardrails = [no_injection]
        b.output_guardrails = [no_leak]
    if typed and guarded:
        b.requires = ["order_id"]
    a = Agent(name="A", instructions="You are A.", handoffs=[b])
    b.handoffs = [a]
    swarm = Swarm(chat_model=model, context_schema=Desk if typed else None)
    messages = [{"role": "user", "content": PING}]

    def run() -> Any:
        response = swarm.run(a, messages, context_variables=CONTEXT)
        assert response.agent is b and response.messages[-1]["content"] == PONG
        if guarded:  # the checks ran (and passed): two guardrails, plus the precondition
            kinds = [s["kind"] for s in response.trajectory]
            assert kinds.count("guardrail") == 2, kinds
        if len(model.calls) > 1000:  # the scripted model records every call
            model.reset()
        return response

    return run


CONTENDERS: dict[str, Callable[[], Callable[[], Any]]] = {
    "plain": lambda: contender(typed=False, guarded=False),
    "typed context": lambda: contender(typed=True, guarded=False),
    "two guardrails": lambda: contender(typed=False, guarded=True),
    "typed + two guardrails": lambda: contender(typed=True, guarded=True),
}


def run_guarded(number: int = 100, repeat: int = 7) -> dict[str, Any]:
    """CPU seconds per handoff for each contender (median of ``repeat`` interleaved batches of
    ``number`` runs; this process's CPU time, as the model never waits and the machine may be
    shared) and the ratios to ``plain``."""
    contenders = {name: make() for name, make in CONTENDERS.items()}
    stats = interleaved(contenders, number=number, repeat=repeat, clock=time.process_time)
    medians = {name: s.median for name, s in stats.items()}
    return {
        "number": number,
        "repeat": repeat,
        "contenders": {name: s.as_dict() for name, s in stats.items()},
        "ratios": {k: medians[a] / medians[b] for k, (a, b) in RATIOS.items()},
        "target": TARGET,
    }


if __name__ == "__main__":
    print(json.dumps(run_guarded(), indent=1))
