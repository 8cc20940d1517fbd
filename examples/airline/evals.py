"""Evals for the airline, in the style of Swarm's: for a request, the right function is called
(or none), and a whole run lands at the right agent with the right outcome.

    pytest examples/airline/evals.py                          # offline rules
    SWARMGRAPH_EVALS=real pytest examples/airline/evals.py    # a real model
"""

import pytest

from .._support import eval_swarm, tool_calls_for
from .agents import EXAMPLE_CONTEXT, flight_cancel, flight_change, flight_modification, triage
from .offline import rules

swarm = eval_swarm(rules)

# (request, the function the agent should call; None: it should just answer)
TRIAGE_CASES = [
    ("My bag was not on the belt in Lisbon!", "transfer_to_lost_baggage"),
    ("I want to cancel my flight please", "transfer_to_flight_modification"),
    ("Can I move my flight to a later date?", "transfer_to_flight_modification"),
    ("There was a lot of turbulence on my flight", None),
]
MODIFICATION_CASES = [
    ("I want to cancel my flight.", "transfer_to_flight_cancel"),
    ("I'd like to change my flight to the next day.", "transfer_to_flight_change"),
    ("I need to do something about my booking.", None),
]
CANCEL_CASES = [
    ("Cancel it, I want my money back.", "initiate_refund"),
    ("Flight credits are fine for me.", "initiate_flight_credits"),
    ("I want to talk to a person.", "escalate_to_agent"),
]


def first_call(agent, query):
    calls = tool_calls_for(swarm, agent, query, EXAMPLE_CONTEXT)
    return calls[0] if calls else None


@pytest.mark.parametrize(("query", "expected"), TRIAGE_CASES)
def test_triage(query, expected):
    assert first_call(triage, query) == expected


@pytest.mark.parametrize(("query", "expected"), MODIFICATION_CASES)
def test_flight_modification(query, expected):
    assert first_call(flight_modification, query) == expected


@pytest.mark.parametrize(("query", "expected"), CANCEL_CASES)
def test_flight_cancel(query, expected):
    assert first_call(flight_cancel, query) == expected


def test_flight_change_checks_before_it_changes():
    assert first_call(flight_change, "Please move it to 2027-01-05.") == "valid_to_change_flight"


def test_cancel_with_refund_goes_triage_modification_cancel():
    response = swarm.run(
        agent=triage,
        messages=[{"role": "user", "content": "Cancel my flight, I want a refund."}],
        context_variables=EXAMPLE_CONTEXT,
    )
    names = [c["function"]["name"] for m in response.messages for c in m.get("tool_calls") or []]
    assert names == ["transfer_to_flight_modification", "transfer_to_flight_cancel",
                     "initiate_refund"]  # fmt: skip
    assert response.agent is flight_cancel
    assert response.context_variables["resolution"] == "refund"


def test_a_change_into_the_holiday_week_is_refused_and_nothing_is_moved():
    response = swarm.run(
        agent=triage,
        messages=[{"role": "user", "content": "Please change my flight to 2026-12-24."}],
        context_variables=EXAMPLE_CONTEXT,
    )
    assert response.agent is flight_change
    assert "resolution" not in response.context_variables
    assert "Not allowed" in response.messages[-1]["content"]


def test_lost_baggage_searches_for_the_bag():
    response = swarm.run(
        agent=triage,
        messages=[{"role": "user", "content": "My blue suitcase is lost."}],
        context_variables=EXAMPLE_CONTEXT,
    )
    assert response.agent.name == "Lost Baggage"
    assert "blue suitcase" in response.messages[-1]["content"]
