"""The personal shopper's offline model: rules that play Triage, Sales and Refunds.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from examples.personal_shopper.agents import sales
    >>> reply = rules([SystemMessage(sales.instructions), HumanMessage("I need a rain jacket")])
    >>> reply.tool_calls[0]["name"], reply.tool_calls[0]["args"]
    ('look_up_item', {'search_query': 'rain jacket'})
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from swarmgraph import scripted_tool_call

from .._support import read_turn
from .database import PRODUCTS

_REFUND = ("refund", "money back", "return")
_BUY = ("buy", "order", "need a", "want a", "looking for", "get me")
_ROW = re.compile(r"(product|purchase) (\d+): ([^,;]+)")


def _wanted(text: str) -> str | None:
    """The product words in the request ("rain jacket"), from the shop's catalogue."""
    low = text.lower()
    for _, name, _ in PRODUCTS:
        words = [w for w in name.lower().split() if w in low]
        if words:
            return " ".join(words)
    return None


def _pick(listing: str, wanted: str | None) -> int | None:
    rows = _ROW.findall(listing)
    if wanted:
        rows = [r for r in rows if any(w in r[2].lower() for w in wanted.split())]
    return int(rows[0][1]) if len(rows) == 1 else None


def _method(turn: Any) -> str:
    return "phone" if turn.says("phone", "text me", "sms") else "email"


def rules(messages: list[BaseMessage]) -> Any:
    """One reply for the messages the model was sent."""
    turn = read_turn(messages)
    done = turn.done

    def call(name: str, args: dict | None = None) -> Any:
        return scripted_tool_call(name, args, id=f"{name}_{turn.n}")

    wanted = _wanted(turn.text)
    if turn.plays("Triage"):
        if turn.says(*_REFUND) and "transfer_to_refunds" not in done:
            return call("transfer_to_refunds")
        if (turn.says(*_BUY) or wanted) and "transfer_to_sales" not in done:
            return call("transfer_to_sales")
        return "Hello! Are you shopping today, or returning something?"

    if turn.plays("Sales"):
        if "notify_customer" in done:
            return f"{done['order_item']} {done['notify_customer']}"
        if "order_item" in done:
            if done["order_item"].startswith("Error"):
                return done["order_item"]
            return call("notify_customer", {"method": _method(turn)})
        if "look_up_item" in done:
            product = _pick(done["look_up_item"], wanted)
            if product is not None and turn.says(*_BUY):
                return call("order_item", {"product_id": product})
            return f"Here is what we have: {done['look_up_item']}"
        if wanted:
            return call("look_up_item", {"search_query": wanted})
        if turn.says(*_REFUND) and "transfer_to_triage" not in done:
            return call("transfer_to_triage")
        return "What are you looking for?"

    if turn.plays("Refunds"):
        if "notify_customer" in done:
            return f"{done['refund_item']} {done['notify_customer']}"
        if "refund_item" in done:
            if not done["refund_item"].startswith("Refunded"):
                return done["refund_item"]
            return call("notify_customer", {"method": _method(turn)})
        if "list_purchases" in done:
            purchase = _pick(done["list_purchases"], wanted)
            if purchase is None:
                return f"Which one should I refund? {done['list_purchases']}"
            return call("refund_item", {"purchase_id": purchase})
        buying = turn.says(*_BUY) and not turn.says(*_REFUND)
        if buying and "transfer_to_triage" not in done:
            return call("transfer_to_triage")
        if turn.says(*_REFUND) or wanted:
            return call("list_purchases")
        return "Which purchase would you like to return?"

    return "How can I help?"
