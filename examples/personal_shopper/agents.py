"""The personal shopper's agents and tools. The customer and the database come from
``context_variables`` (``customer_id``, ``db_path``), so the model can never act for another
customer: it only ever names products and purchases.

Example:
    >>> [t.__name__ for t in triage.tools]
    ['transfer_to_sales', 'transfer_to_refunds']
"""

from __future__ import annotations

from swarmgraph import Agent

from .database import execute, query

MODEL = "gpt-4o-mini"


def look_up_item(search_query: str, context_variables: dict) -> str:
    """Find products by name; returns their ids and prices.

    Args:
        search_query: words from the product name, e.g. "jacket".
    """
    words = [w for w in search_query.lower().split() if len(w) > 2] or [search_query.lower()]
    rows = query(context_variables["db_path"], "SELECT product_id, name, price FROM products")
    hits = [r for r in rows if any(w in r[1].lower() for w in words)]
    if not hits:
        return f"No product matches {search_query!r}."
    return "; ".join(f"product {pid}: {name}, {price:.2f} EUR" for pid, name, price in hits)


def order_item(product_id: int, context_variables: dict) -> str:
    """Order a product for the customer.

    Args:
        product_id: the product's id, from look_up_item.
    """
    db, customer = context_variables["db_path"], context_variables["customer_id"]
    rows = query(db, "SELECT name, price FROM products WHERE product_id = ?", (product_id,))
    if not rows:
        return f"Error: there is no product {product_id}."
    name, price = rows[0]
    purchase = execute(
        db,
        "INSERT INTO purchases (customer_id, product_id, amount) VALUES (?, ?, ?)",
        (customer, product_id, price),
    )
    return f"Ordered {name} for {price:.2f} EUR (purchase {purchase})."


def list_purchases(context_variables: dict) -> str:
    """The customer's purchases, with ids for refunds."""
    rows = query(
        context_variables["db_path"],
        "SELECT p.purchase_id, pr.name, p.amount, p.refunded FROM purchases p "
        "JOIN products pr USING (product_id) WHERE p.customer_id = ? ORDER BY p.purchase_id",
        (context_variables["customer_id"],),
    )
    if not rows:
        return "No purchases."
    return "; ".join(
        f"purchase {pid}: {name}, {amount:.2f} EUR{' (refunded)' if refunded else ''}"
        for pid, name, amount, refunded in rows
    )


def refund_item(purchase_id: int, context_variables: dict) -> str:
    """Refund one of the customer's purchases.

    Args:
        purchase_id: the purchase's id, from list_purchases.
    """
    db, customer = context_variables["db_path"], context_variables["customer_id"]
    rows = query(
        db,
        "SELECT amount, refunded FROM purchases WHERE purchase_id = ? AND customer_id = ?",
        (purchase_id, customer),
    )
    if not rows:
        return f"Error: purchase {purchase_id} is not one of this customer's."
    amount, refunded = rows[0]
    if refunded:
        return f"Purchase {purchase_id} was already refunded."
    execute(db, "UPDATE purchases SET refunded = 1 WHERE purchase_id = ?", (purchase_id,))
    return f"Refunded {amount:.2f} EUR for purchase {purchase_id}."


def notify_customer(method: str, context_variables: dict) -> str:
    """Tell the customer what was done, by email or phone.

    Args:
        method: "email" or "phone".
    """
    db, customer = context_variables["db_path"], context_variables["customer_id"]
    (email, phone), *_ = query(
        db, "SELECT email, phone FROM customers WHERE customer_id = ?", (customer,)
    )
    address = email if method == "email" else phone
    if not address:
        return f"Error: no {method} on file; try {'phone' if method == 'email' else 'email'}."
    execute(db, "INSERT INTO notifications VALUES (?, ?, ?)", (customer, method, address))
    return f"Notified by {method} at {address}."


triage = Agent(
    name="Triage",
    model=MODEL,
    instructions=(
        "You are Triage for an outdoor shop's personal shopper service. Send customers who "
        "want to buy something to Sales and those who want money back to Refunds."
    ),
)
sales = Agent(
    name="Sales",
    model=MODEL,
    instructions=(
        "You are Sales. Find products with look_up_item, order with order_item once the "
        "customer picked one, then offer to notify them with notify_customer."
    ),
    functions=[look_up_item, order_item, notify_customer],
)
refunds = Agent(
    name="Refunds",
    model=MODEL,
    instructions=(
        "You are Refunds. Look the purchase up with list_purchases, refund it with "
        "refund_item, then notify the customer with notify_customer."
    ),
    functions=[list_purchases, refund_item, notify_customer],
)
triage.handoffs = [sales, refunds]
sales.handoffs = [triage]
refunds.handoffs = [triage]
