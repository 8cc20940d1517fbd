"""The airline's offline model: rules that play each agent from its system prompt.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from examples.airline.agents import EXAMPLE_CONTEXT, triage_instructions
    >>> prompt = SystemMessage(triage_instructions(EXAMPLE_CONTEXT))
    >>> rules([prompt, HumanMessage("My suitcase never arrived")]).tool_calls[0]["name"]
    'transfer_to_lost_baggage'
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from swarmgraph import scripted_tool_call

from .._support import read_turn

_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_BAG = ("bag", "suitcase", "luggage")
_CANCEL = ("cancel", "can't make it", "cannot make it")
_CHANGE = ("change", "move", "reschedule", "different date", "later flight")
_MONEY = ("money back", "refund", "reimburse")
_CREDIT = ("credit", "voucher")
_HUMAN = ("a person", "human", "supervisor", "manager")


def rules(messages: list[BaseMessage]) -> Any:
    """One reply for the messages the model was sent."""
    turn = read_turn(messages)
    done = turn.done

    def call(name: str, args: dict | None = None) -> Any:
        return scripted_tool_call(name, args, id=f"{name}_{turn.n}")

    cancel, change, bag = turn.says(*_CANCEL), turn.says(*_CHANGE), turn.says(*_BAG)
    worked = [answer for name, answer in done.items() if not name.startswith("transfer_to_")]
    last_result = worked[-1] if worked else None

    if turn.plays("Triage"):
        if bag and "transfer_to_lost_baggage" not in done:
            return call("transfer_to_lost_baggage")
        if (cancel or change) and "transfer_to_flight_modification" not in done:
            return call("transfer_to_flight_modification")
        return "I'm sorry to hear that. Is this about a booking, or about your baggage?"

    if turn.plays("Flight Modification"):
        if cancel:
            return call("transfer_to_flight_cancel")
        if change:
            return call("transfer_to_flight_change")
        return "Would you like to cancel the flight, or move it to another date?"

    if turn.plays("Flight Cancel"):
        if last_result is not None:
            return f"{last_result} Is there anything else?"
        if turn.says(*_HUMAN):
            return call("escalate_to_agent", {"reason": "customer asked for a person"})
        if turn.says(*_MONEY):
            return call("initiate_refund")
        if turn.says(*_CREDIT):
            return call("initiate_flight_credits")
        if bag and "transfer_to_triage" not in done:
            return call("transfer_to_triage")
        return "I can cancel SG 117. Would you like your money back, or flight credits?"

    if turn.plays("Flight Change"):
        date = _DATE.search(turn.text)
        if "change_flight" in done:
            return f"{done['change_flight']} Anything else?"
        if "valid_to_change_flight" in done:
            verdict = done["valid_to_change_flight"]
            if verdict.startswith("Allowed") and date:
                return call("change_flight", {"new_date": date[1]})
            return f"{verdict} Would you like to cancel instead?"
        if date:
            return call("valid_to_change_flight", {"new_date": date[1]})
        if bag and "transfer_to_triage" not in done:
            return call("transfer_to_triage")
        return "Which date would you like to fly instead (YYYY-MM-DD)?"

    if turn.plays("Lost Baggage"):
        if last_result is not None:
            return f"{last_result} Shall I send it to your address?"
        if turn.says(*_HUMAN):
            return call("escalate_to_agent", {"reason": "customer asked for a person"})
        if bag:
            colour = re.search(r"\b(red|blue|black|green|grey|yellow)\b", turn.text.lower())
            description = f"{colour[1]} suitcase" if colour else "suitcase"
            return call("initiate_baggage_search", {"description": description})
        if (cancel or change) and "transfer_to_triage" not in done:
            return call("transfer_to_triage")
        return "What does your bag look like?"

    return "How can I help?"
