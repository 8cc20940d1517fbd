"""The bicycle shop's three agents and their tools.

Triage only routes. Sales checks stock. Refunds can offer a discount code first and file a
refund when the customer insists; both hand anything else back to Triage.

Example:
    >>> [t.__name__ for t in triage.tools]
    ['transfer_to_sales', 'transfer_to_refunds']
    >>> process_refund("bike_12", "wobbly wheel")
    'Refund filed for bike_12 (wobbly wheel).'
"""

from __future__ import annotations

from swarmgraph import Agent

MODEL = "gpt-4o-mini"
STOCK = {"city": 4, "gravel": 0, "cargo": 2, "kids": 7}


def check_stock(bike: str) -> str:
    """How many bikes of a kind are in the shop.

    Args:
        bike: the kind of bike: city, gravel, cargo or kids.
    """
    kind = bike.lower().removesuffix(" bike")
    if kind not in STOCK:
        return f"We don't sell {bike!r} bikes; we have {', '.join(STOCK)}."
    count = STOCK[kind]
    return f"{count} {kind} bikes in stock." if count else f"No {kind} bikes until next week."


def process_refund(item_id: str, reason: str = "not given") -> str:
    """File a refund. Ask the customer to confirm first.

    Args:
        item_id: the item's id, like bike_12.
        reason: why the customer wants the money back.
    """
    return f"Refund filed for {item_id} ({reason})."


def offer_discount() -> str:
    """Give the customer a discount code instead of a refund."""
    return "Discount code SPOKES15: 15% off the next purchase."


triage = Agent(
    name="Triage",
    model=MODEL,
    instructions=(
        "You are Triage at the Spoke & Chain bicycle shop. Work out what the customer needs "
        "and transfer them: buying a bike goes to Sales, money back goes to Refunds. "
        "Answer greetings and opening hours (9-18, closed Sundays) yourself."
    ),
)
sales = Agent(
    name="Sales",
    model=MODEL,
    instructions=(
        "You are Sales at the Spoke & Chain bicycle shop. Check stock with check_stock before "
        "promising a bike. Anything that is not about buying goes back to Triage."
    ),
    functions=[check_stock],
)
refunds = Agent(
    name="Refunds",
    model=MODEL,
    instructions=(
        "You are Refunds at the Spoke & Chain bicycle shop. If the customer finds the bike too "
        "expensive, offer a discount with offer_discount. If they want their money back and "
        "give the item id, file it with process_refund. Anything else goes back to Triage."
    ),
    functions=[process_refund, offer_discount],
)
triage.handoffs = [sales, refunds]
sales.handoffs = [triage]
refunds.handoffs = [triage]
