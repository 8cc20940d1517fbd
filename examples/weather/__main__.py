"""``python -m examples.weather [--offline] [--model NAME] [--chat]``"""

import sys

from .._support import run_main
from .agents import weather_agent
from .offline import rules

SCRIPT = (
    "Do I need an umbrella today? I'm in Chicago.",
    "What's the weather in Lisbon tomorrow? Email it to ana@example.com",
)

if __name__ == "__main__":
    sys.exit(run_main("Weather agent", rules, weather_agent, SCRIPT))
