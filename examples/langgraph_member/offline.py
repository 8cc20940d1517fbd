"""Offline rules for both members: our Triage and the create_agent catalogue graph.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> reply = rules([SystemMessage("You are Triage ..."), HumanMessage("books on bees?")])
    >>> reply.tool_calls[0]["name"]
    'transfer_to_catalogue'
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from swarmgraph import scripted_tool_call

from .._support import read_turn
from .agents import BOOKS


def rules(messages: list[BaseMessage]) -> Any:
    """One reply for the messages the model was sent."""
    turn = read_turn(messages)

    def call(name: str, args: dict | None = None) -> Any:
        return scripted_tool_call(name, args, id=f"{name}_{turn.n}")

    topic = next((t for t in BOOKS if t.rstrip("s") in turn.text.lower()), None)
    if turn.plays("Triage"):
        if turn.says("book", "read") and "transfer_to_catalogue" not in turn.done:
            return call("transfer_to_catalogue")
        if turn.says("open", "hours"):
            return "We are open 10-20 every day."
        return "Welcome to the library! Looking for a book?"
    if turn.plays("the catalogue agent"):
        if "search_catalogue" in turn.done:
            return f"We have: {turn.done['search_catalogue']}."
        if topic:
            return call("search_catalogue", {"topic": topic})
        return call("transfer_to_triage")
    return "How can I help?"
