"""The weather agent. ``send_email`` only records what it would send, in ``OUTBOX``.

Example:
    >>> import json
    >>> json.loads(get_weather("Oslo"))["temperature_c"]
    -3
"""

from __future__ import annotations

import json

from swarmgraph import Agent

MODEL = "gpt-4o-mini"

#: A tiny made-up forecast (a real app would call a weather API here).
FORECAST = {
    "oslo": (-3, "snow"),
    "lisbon": (16, "sun"),
    "new york": (4, "rain"),
    "chicago": (1, "rain"),
    "london": (8, "drizzle"),
}
OUTBOX: list[dict[str, str]] = []


def get_weather(location: str, time: str = "now") -> str:
    """Get the weather in a city. The location MUST be a city.

    Args:
        location: a city, e.g. "Lisbon".
        time: "now", or a day like "tomorrow".
    """
    key = location.lower().removesuffix(" city").strip()
    if key in ("nyc", "new york"):
        key = "new york"
    if key not in FORECAST:
        return json.dumps({"location": location, "error": "no forecast for this city"})
    temperature, sky = FORECAST[key]
    return json.dumps({"location": location, "time": time, "temperature_c": temperature,
                       "sky": sky})  # fmt: skip


def send_email(recipient: str, subject: str, body: str) -> str:
    """Send an email.

    Args:
        recipient: the email address.
        subject: the subject line.
        body: the text of the email.
    """
    OUTBOX.append({"recipient": recipient, "subject": subject, "body": body})
    return f"Sent to {recipient}."


weather_agent = Agent(
    name="Weather",
    model=MODEL,
    instructions=(
        "You are Weather, a helpful assistant. Use get_weather for any question about "
        "weather, temperature, rain or what to wear outside, and send_email only when asked "
        "to send something. Answer other questions directly."
    ),
    functions=[get_weather, send_email],
)
