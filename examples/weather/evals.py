"""Evals for the weather agent, in the style of Swarm's: weather questions call get_weather
(once), other questions call nothing, and an email request sends exactly one email.

    pytest examples/weather/evals.py                          # offline rules
    SWARMGRAPH_EVALS=real pytest examples/weather/evals.py    # a real model
"""

import pytest

from .._support import eval_swarm, tool_calls_for
from .agents import OUTBOX, weather_agent
from .offline import rules

swarm = eval_swarm(rules)


@pytest.mark.parametrize(
    "query",
    [
        "What's the weather in NYC?",
        "Tell me the weather in London.",
        "Do I need an umbrella today? I'm in Chicago.",
    ],
)
def test_calls_weather_when_asked(query):
    assert tool_calls_for(swarm, weather_agent, query) == ["get_weather"]


@pytest.mark.parametrize("query", ["Who wrote Don Quixote?", "What is the time right now?", "Hi!"])
def test_does_not_call_weather_when_not_asked(query):
    assert tool_calls_for(swarm, weather_agent, query) == []


def test_weather_then_email_sends_one_email_with_the_forecast():
    OUTBOX.clear()
    response = swarm.run(
        agent=weather_agent,
        messages=[{"role": "user", "content": "Weather in Oslo? Email it to bo@example.com"}],
    )
    names = [c["function"]["name"] for m in response.messages for c in m.get("tool_calls") or []]
    assert names == ["get_weather", "send_email"]
    assert len(OUTBOX) == 1 and OUTBOX[0]["recipient"] == "bo@example.com"
    assert "-3" in OUTBOX[0]["body"]
