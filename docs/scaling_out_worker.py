"""A chat worker: one turn per call; any process may take the next turn of a conversation.

    .venv/bin/python docs/scaling_out_worker.py postgresql://app:pw@127.0.0.1/chat "refund 7"

Run several at once against one Postgres (or Redis) URL: each turn is saved whole, turns
queue instead of interleaving, and the next process continues with the stored agent and
context. docs/scaling_out.md walks through it; tests/test_scaling_example.py runs it against
the throwaway Postgres that ``make test`` starts.
"""

import sys

from langchain_core.messages import ToolMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session


def remember(order_id: int):
    """Remember the order the user talks about."""
    return Result(value="noted", context_variables={"order_id": order_id})


def to_refunds():
    """Hand the conversation to Refunds."""
    return refunds


refunds = Agent(name="Refunds", instructions="You are Refunds.", functions=[remember])
triage = Agent(name="Triage", instructions="You are Triage.", functions=[to_refunds])


def offline_model(messages):  # stands in for an LLM so the example runs anywhere
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.name == "remember":
        return "Noted."
    if "Triage" in messages[0].content:
        return scripted_tool_call("to_refunds", {})
    return scripted_tool_call("remember", {"order_id": 7})


session = Session("conv-42", url=sys.argv[1], window=20, agents=[triage, refunds])
swarm = Swarm(chat_model=ScriptedChatModel(respond=offline_model))  # or Swarm() with an API key
response = session.run(swarm, triage, sys.argv[2])
print(response.agent.name, session.context_variables, len(session.messages))
