"""Evals for the personal shopper, in the style of Swarm's: the right tool for a request, the
right handoff, and what a whole run leaves in the SQLite database.

    pytest examples/personal_shopper/evals.py                          # offline rules
    SWARMGRAPH_EVALS=real pytest examples/personal_shopper/evals.py    # a real model
"""

import pytest

from .._support import eval_swarm, tool_calls_for
from .agents import refunds, sales, triage
from .database import create_database, query
from .offline import rules

swarm = eval_swarm(rules)


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.db"
    create_database(path)
    return {"customer_id": 1, "db_path": str(path)}


@pytest.mark.parametrize(
    ("agent", "query", "expected"),
    [
        (triage, "I want to return my rain jacket", ["transfer_to_refunds"]),
        (triage, "I'm looking for a head torch", ["transfer_to_sales"]),
        (triage, "Good morning!", []),
        (sales, "Do you have trail running shoes?", ["look_up_item"]),
        (refunds, "Refund my water bottle please", ["list_purchases"]),
    ],
)
def test_the_right_tool_for_the_request(shop, agent, query, expected):
    assert tool_calls_for(swarm, agent, query, shop) == expected


def run(shop, text):
    return swarm.run(
        agent=triage, messages=[{"role": "user", "content": text}], context_variables=shop
    )


def test_a_refund_hands_off_refunds_the_right_purchase_and_notifies(shop):
    response = run(shop, "Please refund the water bottle, and email me.")
    assert response.agent is refunds
    db = shop["db_path"]
    assert query(db, "SELECT purchase_id FROM purchases WHERE refunded = 1") == [(2,)]
    assert query(db, "SELECT method, address FROM notifications") == [("email", "ana@example.com")]


def test_an_order_hands_off_to_sales_and_adds_a_purchase_for_this_customer(shop):
    response = run(shop, "I want to buy a head torch.")
    assert response.agent is sales
    rows = query(shop["db_path"], "SELECT customer_id, product_id, amount FROM purchases "
                                  "WHERE purchase_id > 3")  # fmt: skip
    assert rows == [(1, 104, 35.0)]


def test_a_customer_cannot_refund_someone_elses_purchase(shop):
    from .agents import refund_item

    assert refund_item(3, shop).startswith("Error")  # purchase 3 is customer 2's
    assert query(shop["db_path"], "SELECT COUNT(*) FROM purchases WHERE refunded = 1") == [(0,)]
