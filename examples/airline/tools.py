"""The airline's tools. They act on the booking named in ``context_variables`` (injected by
the framework, never chosen by the model) and record what they did there.

Example:
    >>> initiate_refund({"flight_context": "Booking XK4-22: ..."}).value
    'Refund of booking XK4-22 started: the money is back in 5-7 days.'
"""

from __future__ import annotations

import datetime
import re

from swarmgraph import Result


def _booking(context_variables: dict) -> str:
    match = re.search(r"Booking (\S+):", context_variables.get("flight_context", ""))
    return match[1] if match else "unknown"


def initiate_refund(context_variables: dict) -> Result:
    """Start the refund of the customer's cancelled booking."""
    booking = _booking(context_variables)
    return Result(
        value=f"Refund of booking {booking} started: the money is back in 5-7 days.",
        context_variables={"resolution": "refund"},
    )


def initiate_flight_credits(context_variables: dict) -> Result:
    """Turn the customer's cancelled booking into flight credits."""
    booking = _booking(context_variables)
    return Result(
        value=f"Booking {booking} is now 180 EUR of flight credits, valid for a year.",
        context_variables={"resolution": "credits"},
    )


def valid_to_change_flight(new_date: str) -> str:
    """Check whether the booking may move to a new date.

    Args:
        new_date: the date the customer wants, as YYYY-MM-DD.
    """
    try:
        day = datetime.date.fromisoformat(new_date)
    except ValueError:
        return f"'{new_date}' is not a date like 2026-12-24."
    if day.month == 12 and 20 <= day.day <= 26:
        return "Not allowed: no changes into the holiday week (Dec 20-26)."
    return "Allowed: the fare permits a change without a fee."


def change_flight(new_date: str, context_variables: dict) -> Result:
    """Move the booking to a new date (only after valid_to_change_flight allowed it).

    Args:
        new_date: the new date, as YYYY-MM-DD.
    """
    booking = _booking(context_variables)
    return Result(
        value=f"Booking {booking} moved to {new_date}; a new boarding pass is on its way.",
        context_variables={"resolution": f"moved to {new_date}"},
    )


def initiate_baggage_search(description: str) -> str:
    """Search the baggage system for a bag.

    Args:
        description: what the bag looks like.
    """
    return f"Found a bag matching '{description}' in Lisbon; it can be delivered tomorrow."


def escalate_to_agent(reason: str = "not given") -> str:
    """Hand the case to a human colleague.

    Args:
        reason: why a human should take over.
    """
    return f"A colleague will call the customer back today ({reason})."


def case_resolved() -> str:
    """Close the case once the customer is satisfied."""
    return "Case closed."
