"""The triage desk's offline model: rules that play Triage, Sales and Refunds.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from examples.triage_desk.agents import triage
    >>> reply = rules([SystemMessage(triage.instructions), HumanMessage("I want my money back")])
    >>> reply.tool_calls[0]["name"]
    'transfer_to_refunds'
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from swarmgraph import scripted_tool_call

from .._support import read_turn
from .agents import STOCK

_ITEM = re.compile(r"\b(bike_\d+)\b")
_REFUND = ("refund", "money back", "return", "broken", "too expensive", "pricey")
_BUY = ("buy", "purchase", "in stock", "looking for", "need a", "want a")


def rules(messages: list[BaseMessage]) -> Any:
    """One reply for the messages the model was sent."""
    turn = read_turn(messages)
    call = lambda name, args=None: scripted_tool_call(name, args, id=f"{name}_{turn.n}")  # noqa: E731
    wants_refund, wants_bike = turn.says(*_REFUND), turn.says(*_BUY)

    if turn.plays("Triage"):
        if wants_refund and "transfer_to_refunds" not in turn.done:
            return call("transfer_to_refunds")
        if wants_bike and "transfer_to_sales" not in turn.done:
            return call("transfer_to_sales")
        if turn.says("open", "hours", "sunday"):
            return "We are open 9-18, Monday to Saturday."
        return "Welcome to Spoke & Chain! Are you buying a bike or returning one?"

    if turn.plays("Sales"):
        if "check_stock" in turn.done:
            return f"{turn.done['check_stock']} Shall I put one aside?"
        kind = next((k for k in STOCK if k in turn.text.lower()), None)
        if wants_refund and "transfer_to_triage" not in turn.done:
            return call("transfer_to_triage")
        if kind:
            return call("check_stock", {"bike": kind})
        return f"Which kind of bike? We sell {', '.join(STOCK)} bikes."

    if turn.plays("Refunds"):
        for tool in ("process_refund", "offer_discount"):
            if tool in turn.done:
                return turn.done[tool]
        if turn.says("too expensive", "pricey"):
            return call("offer_discount")
        item = _ITEM.search(turn.text)
        if item:
            reason = "broken" if turn.says("broken") else "not given"
            return call("process_refund", {"item_id": item[1], "reason": reason})
        if wants_bike and "transfer_to_triage" not in turn.done:
            return call("transfer_to_triage")
        return "I can help with that. What is the item id (like bike_12)?"

    return "How can I help?"
