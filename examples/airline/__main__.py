"""``python -m examples.airline [--offline] [--model NAME] [--chat]``"""

import sys

from .._support import run_main
from .agents import EXAMPLE_CONTEXT, triage
from .offline import rules

SCRIPT = (
    "Hi, I can't make my flight on the 18th, I need to cancel it.",
    "I'd like my money back, please.",
    "Also, my red suitcase from last week's trip never showed up.",
)

if __name__ == "__main__":
    sys.exit(run_main("SwarmAir customer service", rules, triage, SCRIPT, EXAMPLE_CONTEXT))
