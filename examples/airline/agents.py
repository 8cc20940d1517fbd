"""The airline's agents. Triage reads the customer and flight from ``context_variables``;
Flight Modification only decides between cancelling and changing; each leaf agent follows
one written procedure from :mod:`.policies`.

Example:
    >>> [t.__name__ for t in triage.tools]
    ['transfer_to_flight_modification', 'transfer_to_lost_baggage']
    >>> [t.__name__ for t in flight_modification.tools]
    ['transfer_to_flight_cancel', 'transfer_to_flight_change']
"""

from __future__ import annotations

from swarmgraph import Agent

from . import policies
from .tools import (
    case_resolved,
    change_flight,
    escalate_to_agent,
    initiate_baggage_search,
    initiate_flight_credits,
    initiate_refund,
    valid_to_change_flight,
)

MODEL = "gpt-4o-mini"

#: What a run starts with: who is calling and which booking they hold.
EXAMPLE_CONTEXT = {
    "customer_context": "Customer Ada Byron, frequent flyer, phone +44 20 7946 0000.",
    "flight_context": "Booking XK4-22: flight SG 117 London -> Lisbon, 2026-12-18 09:40.",
}


def triage_instructions(context_variables: dict) -> str:
    """Triage's prompt: route, do not solve; it sees the customer and flight."""
    return (
        "You are Triage for SwarmAir. Find out what the customer needs and transfer them: "
        "cancelling or changing a flight goes to Flight Modification, a missing or damaged "
        "bag goes to Lost Baggage. Ask one short question when the topic is unclear; "
        "answer small talk yourself.\n"
        f"Customer: {context_variables['customer_context']}\n"
        f"Flight: {context_variables['flight_context']}"
    )


def _procedure(name: str, procedure: str):
    def instructions(context_variables: dict) -> str:
        return (
            f"You are {name} for SwarmAir. {policies.COMMON}\n{procedure}\n"
            f"Customer: {context_variables['customer_context']}\n"
            f"Flight: {context_variables['flight_context']}"
        )

    instructions.__name__ = f"{name.lower().replace(' ', '_')}_instructions"
    return instructions


triage = Agent(name="Triage", model=MODEL, instructions=triage_instructions)
flight_modification = Agent(
    name="Flight Modification",
    model=MODEL,
    instructions=(
        "You are Flight Modification for SwarmAir. Decide only whether the customer wants to "
        "cancel or to change their flight, asking if it is not clear, then transfer."
    ),
    parallel_tool_calls=False,
)
flight_cancel = Agent(
    name="Flight Cancel",
    model=MODEL,
    instructions=_procedure("Flight Cancel", policies.CANCEL),
    functions=[initiate_refund, initiate_flight_credits, escalate_to_agent, case_resolved],
)
flight_change = Agent(
    name="Flight Change",
    model=MODEL,
    instructions=_procedure("Flight Change", policies.CHANGE),
    functions=[valid_to_change_flight, change_flight, escalate_to_agent, case_resolved],
)
lost_baggage = Agent(
    name="Lost Baggage",
    model=MODEL,
    instructions=_procedure("Lost Baggage", policies.BAGGAGE),
    functions=[initiate_baggage_search, escalate_to_agent, case_resolved],
)

triage.handoffs = [flight_modification, lost_baggage]
flight_modification.handoffs = [flight_cancel, flight_change]
for _leaf in (flight_cancel, flight_change, lost_baggage):
    _leaf.handoffs = [triage]
