"""Evals for the triage desk, in the style of Swarm's: for a request, the right tool is called
(``execute_tools=False``: nothing runs) and the whole run ends at the right agent.

    pytest examples/triage_desk/evals.py                           # offline rules
    SWARMGRAPH_EVALS=real pytest examples/triage_desk/evals.py     # a real model
"""

import pytest

from .._support import eval_swarm, tool_calls_for
from .agents import refunds, sales, triage
from .offline import rules

swarm = eval_swarm(rules)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("I want a refund, the bike is broken!", ["transfer_to_refunds"]),
        ("I'd like to buy a gravel bike.", ["transfer_to_sales"]),
        ("Are you open on Sundays?", []),
    ],
)
def test_triage_routes_the_request(query, expected):
    assert tool_calls_for(swarm, triage, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Please refund bike_12, it is broken.", ["process_refund"]),
        ("Honestly it was just too expensive.", ["offer_discount"]),
    ],
)
def test_refunds_picks_the_right_tool(query, expected):
    assert tool_calls_for(swarm, refunds, query) == expected


def test_sales_checks_stock_before_promising():
    assert tool_calls_for(swarm, sales, "Do you have a kids bike?") == ["check_stock"]


@pytest.mark.parametrize(
    ("query", "final_agent"),
    [("Money back for bike_7 please, it's broken", "Refunds"), ("I want a city bike", "Sales")],
)
def test_a_whole_run_ends_with_the_right_agent(query, final_agent):
    response = swarm.run(agent=triage, messages=[{"role": "user", "content": query}])
    assert response.agent.name == final_agent
    assert response.messages[-1]["role"] == "assistant" and response.messages[-1]["content"]
