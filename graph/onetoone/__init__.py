"""The OneToOne pattern (from the swarms framework): two agents alternate on one conversation.

- :mod:`.pattern`: :class:`OneToOne`, :func:`one_to_one` and the two-node LangGraph loop.
- :mod:`.views`: how each agent reads the shared conversation (role-aware).
- :mod:`.formats`: swarms' output formats of the finished conversation.
"""

from .formats import OUTPUT_TYPES, format_history
from .pattern import OneToOne, build_one_to_one_graph, one_to_one
from .views import agent_answer, messages_for, split_last_turn

__all__ = [
    "OUTPUT_TYPES",
    "OneToOne",
    "agent_answer",
    "build_one_to_one_graph",
    "format_history",
    "messages_for",
    "one_to_one",
    "split_last_turn",
]
