"""What every example shares: picking its model, reading a turn for the offline rules, evals.

Each example runs on a real model when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set (unless
``--offline``), and otherwise on its own rule-based offline model: a ``ScriptedChatModel`` whose
``respond=`` function plays the agents from the system prompt and the latest user message.
Evals run offline unless ``SWARMGRAPH_EVALS=real`` (then they ask the real model, as Swarm's do).

Example:
    >>> from swarmgraph import Agent
    >>> swarm, label = choose_swarm(lambda messages: "hi", offline=True)
    >>> label
    'offline rules (no API key needed)'
    >>> tool_calls_for(swarm, Agent(), "hello")
    []
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from swarmgraph import Agent, ScriptedChatModel, Swarm

Rules = Callable[[list[BaseMessage]], Any]

OFFLINE_LABEL = "offline rules (no API key needed)"


def real_model_configured() -> bool:
    """True when ``Swarm()`` can reach a real model (OpenAI, or an OpenAI-compatible server)."""
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def choose_swarm(rules: Rules, *, offline: bool = False) -> tuple[Swarm, str]:
    """``(swarm, label)``: a real model when one is configured (and not ``offline``), else
    the offline ``rules``."""
    if not offline and real_model_configured():
        where = os.environ.get("OPENAI_BASE_URL") or "OpenAI"
        return Swarm(), f"real model at {where}"
    return Swarm(chat_model=ScriptedChatModel([], respond=rules)), OFFLINE_LABEL


def eval_swarm(rules: Rules) -> Swarm:
    """The swarm evals run on: offline rules, or the real model with ``SWARMGRAPH_EVALS=real``."""
    return choose_swarm(rules, offline=os.environ.get("SWARMGRAPH_EVALS") != "real")[0]


def tool_calls_for(
    swarm: Swarm, agent: Agent, query: str, context_variables: dict | None = None
) -> list[str]:
    """The tools ``agent`` calls first for ``query`` (nothing runs: ``execute_tools=False``),
    the check Swarm's evals make."""
    response = swarm.run(
        agent=agent,
        messages=[{"role": "user", "content": query}],
        context_variables=context_variables or {},
        execute_tools=False,
    )
    calls = response.messages[-1].get("tool_calls") or []
    return [call["function"]["name"] for call in calls]


@dataclass
class Turn:
    """What the offline rules look at: who plays, what the user said, what tools answered since."""

    system: str
    text: str
    done: dict[str, str]  # tool name -> its answer, since the latest user message
    n: int  # a number that differs per model call (tool call ids)

    def plays(self, name: str) -> bool:
        return self.system.startswith(f"You are {name}")

    def says(self, *words: str) -> bool:
        low = self.text.lower()
        return any(word in low for word in words)


def read_turn(messages: Sequence[BaseMessage]) -> Turn:
    """The offline rules' view of the messages a model call was sent."""
    system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
    last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    text = str(messages[last].content) if last >= 0 else ""
    done = {str(m.name): str(m.content) for m in messages[last + 1 :] if isinstance(m, ToolMessage)}
    return Turn(system, text, done, len(messages))


def play(
    swarm: Swarm,
    agent: Agent,
    lines: Sequence[str],
    context_variables: dict | None = None,
    *,
    model_override: str | None = None,
    out: Callable[[str], None] = print,
) -> Any:
    """Play a short conversation and print every turn, tool call and handoff; returns the
    last ``Response``."""
    messages: list[dict] = []
    context = dict(context_variables or {})
    response = None
    for line in lines:
        out(f"you › {line}")
        messages.append({"role": "user", "content": line})
        response = swarm.run(
            agent=agent, messages=messages, context_variables=context,
            model_override=model_override,
        )  # fmt: skip
        for message in response.messages:
            sender = message.get("sender")
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                out(f"  {sender} ⚙ {fn['name']}({fn['arguments']})")
            if message["role"] == "assistant" and message.get("content"):
                out(f"{sender} › {message['content']}")
        messages.extend(response.messages)
        agent, context = response.agent, response.context_variables
    return response


def main_parser(description: str) -> argparse.ArgumentParser:
    """The arguments every example takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--offline", action="store_true", help="use the offline rules")
    parser.add_argument("--model", help="model name for a real model (default: the agents')")
    parser.add_argument(
        "--chat", action="store_true", help="talk to the agents yourself (run_demo_loop)"
    )
    return parser


def run_main(
    description: str,
    rules: Rules,
    agent: Agent,
    script: Sequence[str],
    context_variables: dict | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    """An example's ``__main__``: play its script (or ``--chat``) on the chosen model."""
    args = main_parser(description).parse_args(argv)
    swarm, label = choose_swarm(rules, offline=args.offline)
    print(f"{description}\nmodel: {args.model or label}\n")
    if args.chat:
        from swarmgraph import run_demo_loop
        from swarmgraph.app.demo_loop import LoopSwarm

        if args.model:  # every turn of the chat on the chosen model, as the script below
            swarm = LoopSwarm(swarm, model_override=args.model)
        run_demo_loop(agent, context_variables=context_variables, stream=True, swarm=swarm)
        return 0
    play(swarm, agent, script, context_variables, model_override=args.model)
    return 0
