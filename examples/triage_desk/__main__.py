"""``python -m examples.triage_desk [--offline] [--model NAME] [--chat]``"""

import sys

from .._support import run_main
from .agents import triage
from .offline import rules

SCRIPT = (
    "Hi! Are you open on Sundays?",
    "I'd like to buy a cargo bike.",
    "Actually, my last bike arrived broken. I want my money back.",
    "It's bike_12.",
)

if __name__ == "__main__":
    sys.exit(run_main("Spoke & Chain triage desk", rules, triage, SCRIPT))
