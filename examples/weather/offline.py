"""The weather agent's offline model.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from examples.weather.agents import weather_agent
    >>> reply = rules([SystemMessage(weather_agent.instructions), HumanMessage("Rain in Oslo?")])
    >>> reply.tool_calls[0]["args"]
    {'location': 'Oslo'}
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import BaseMessage

from swarmgraph import scripted_tool_call

from .._support import read_turn
from .agents import FORECAST

_WEATHER = ("weather", "temperature", "rain", "umbrella", "snow", "cold", "warm", "wear")
_EMAIL = re.compile(r"\b([\w.+-]+@[\w-]+\.[\w.]+)\b")


def _city(text: str) -> str | None:
    low = text.lower()
    if "nyc" in low:
        return "NYC"
    return next((city.title() for city in FORECAST if city in low), None)


def rules(messages: list[BaseMessage]) -> Any:
    """One reply for the messages the model was sent."""
    turn = read_turn(messages)
    n = turn.n
    if "send_email" in turn.done:
        return f"Done: {turn.done['send_email']}"
    if "get_weather" in turn.done:
        report = json.loads(turn.done["get_weather"])
        if "error" in report:
            return f"Sorry, I have no forecast for {report['location']}."
        text = f"{report['location']}: {report['temperature_c']}°C and {report['sky']}."
        address = _EMAIL.search(turn.text)
        if address:
            return scripted_tool_call(
                "send_email",
                {"recipient": address[1], "subject": "Weather", "body": text},
                id=f"send_email_{n}",
            )
        return text
    if turn.says(*_WEATHER):
        city = _city(turn.text)
        if city is None:
            return "Which city are you in?"
        time = "tomorrow" if turn.says("tomorrow") else "now"
        args = {"location": city} if time == "now" else {"location": city, "time": time}
        return scripted_tool_call("get_weather", args, id=f"get_weather_{n}")
    address = _EMAIL.search(turn.text)
    if address and turn.says("email", "send"):
        return scripted_tool_call(
            "send_email",
            {"recipient": address[1], "subject": "Hello", "body": "Hello from Weather!"},
            id=f"send_email_{n}",
        )
    return "I can tell you the weather in a city, and email it to someone."
