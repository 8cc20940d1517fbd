"""Run ONE turn of a Ping/Pong relay on a shared conversation, then exit:
``relay_worker.py URL CONVERSATION``.

The stored context's ``turn`` says which turn this is; the active agent advances it through
its tool and hands the conversation to the other agent. Prints one JSON line: the agent that
ran, the agent that holds the conversation now, the turn number, and whether the model was
shown the previous turn's reply (so the test can check order, agent and context survive
processes).
"""

from __future__ import annotations

import json
import os
import sys

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session

shown: dict = {}


def advance(context_variables: dict) -> Result:
    """Advance the relay by one turn."""
    turn = context_variables.get("turn", 0) + 1
    pids = [*context_variables.get("pids", []), os.getpid()]
    return Result(value=f"turn {turn} done", context_variables={"turn": turn, "pids": pids})


def to_pong() -> Agent:
    """Hand the relay to Pong."""
    return pong


def to_ping() -> Agent:
    """Hand the relay to Ping."""
    return ping


ping = Agent(name="Ping", instructions="You are Ping.", functions=[advance, to_pong])
pong = Agent(name="Pong", instructions="You are Pong.", functions=[advance, to_ping])


def rules(messages):
    me = "Ping" if "Ping" in messages[0].content else "Pong"
    last = messages[-1]
    if isinstance(last, HumanMessage):
        replies = [m.content for m in messages if isinstance(m, AIMessage) and m.content]
        shown["previous_reply"] = replies[-1] if replies else None
        shown["system"] = isinstance(messages[0], SystemMessage)
        return scripted_tool_call("advance", {}, id=f"adv-{os.getpid()}")
    if isinstance(last, ToolMessage) and last.name == "advance":
        handoff = "to_pong" if me == "Ping" else "to_ping"
        return scripted_tool_call(handoff, {}, id=f"h-{os.getpid()}")
    return f"{me} handed over after {last.content}"


if __name__ == "__main__":
    url, cid = sys.argv[1], sys.argv[2]
    session = Session(cid, url=url, window=12, agents=[ping, pong])
    before = session.active_agent_name or "Ping"
    turn = session.context_variables.get("turn", 0)
    response = session.run(Swarm(chat_model=ScriptedChatModel(respond=rules)), ping, f"go {turn}")
    print(
        json.dumps(
            {
                "ran": before,
                "holder": response.agent.name,
                "turn": response.context_variables["turn"],
                "previous_reply": shown.get("previous_reply"),
            }
        )
    )
