"""What the receiving agent sees: ready-made views for ``Agent(history=...)``.

The views live in the engine (:mod:`swarmgraph.graph.features.history_views`); this module is their
public home.

Example:
    >>> from swarmgraph import Agent
    >>> from swarmgraph.history import last, since_handoff
    >>> refunds = Agent(name="Refunds", history=since_handoff)
    >>> brief = Agent(name="Brief", history=last(4))
    >>> refunds.history is since_handoff, brief.history.__name__
    (True, 'last_4')
"""

from __future__ import annotations

from .graph.features.history_views import HistoryView, last, since_handoff, without_tool_calls

__all__ = ["HistoryView", "last", "since_handoff", "without_tool_calls"]
