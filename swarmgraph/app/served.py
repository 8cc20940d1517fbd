"""The demo swarm's compiled graph, for LangGraph's server and Studio (``langgraph dev``).

``langgraph.json`` at the repository root points here (``graph``). The server brings its own
checkpointer and store, so the graph is compiled without one; each thread then keeps its
messages, ``context_variables`` and ``active_agent`` between runs. A client sends messages
only (``input_schema=SwarmInput``): ``context_variables`` and ``active_agent`` in its input are
dropped, so no client can set ``refund_status="approved"`` or pick the agent itself;
``make_graph(trusted_input=True)`` takes them (for an app whose callers are its own code).
The agents run on a real model when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else on
the offline demo model.

To serve your own swarm, write a module like this one that compiles your agents, and name it
in your ``langgraph.json``: ``{"graphs": {"my_swarm": "./my_app/swarm.py:graph"}}``.
``research_graph`` is the research desk of parallel handoffs (:mod:`.research_desk`): name it
``"research_desk": "swarmgraph.app.served:research_graph"`` to watch a fan-out in Studio.

Example:
    >>> out = make_graph(offline=True).invoke({"messages": [("user", "I'm Ming, refund order 7")]})
    >>> out["active_agent"], out["context_variables"]["refund_status"]
    ('Refunds', 'approved')
    >>> forged = make_graph(offline=True).invoke({"messages": [("user", "hi")],
    ...     "context_variables": {"refund_status": "approved"}, "active_agent": "Refunds"})
    >>> "refund_status" in forged.get("context_variables", {}), forged.get("active_agent")
    (False, None)
"""

from __future__ import annotations

import os

from langgraph.graph.state import CompiledStateGraph

from swarmgraph.app.demo import demo_agents, demo_model
from swarmgraph.app.research_desk import research_desk, research_model
from swarmgraph.graph import build_swarm_graph
from swarmgraph.graph.core.state import SwarmInput

__all__ = ["graph", "make_graph", "make_research_graph", "research_graph"]


def make_graph(offline: bool | None = None, *, trusted_input: bool = False) -> CompiledStateGraph:
    """The demo swarm compiled without a checkpointer (the server adds its own).

    ``offline=None`` decides from the environment, as the CLI does. ``trusted_input``: the
    input may set ``context_variables`` and ``active_agent`` too (default: messages only).
    """
    if offline is None:
        offline = not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))
    agents = demo_agents()
    chat_model = demo_model() if offline else None
    builder = build_swarm_graph(
        list(agents), chat_model=chat_model, input_schema=None if trusted_input else SwarmInput
    )
    return builder.compile(name="demo_swarm")


def make_research_graph(offline: bool | None = None) -> CompiledStateGraph:
    """The research desk (an editor fanning out to three specialists), compiled without a
    checkpointer; offline, its specialists answer in 50 ms.

    Example:
        >>> out = make_research_graph(offline=True).invoke({"messages": [("user", "Bees?")]})
        >>> out["context_variables"]["sources"][0], out["messages"][-1].name
        ('FAO honey market report', 'Editor')
    """
    if offline is None:
        offline = not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))
    editor, _ = research_desk()
    model = research_model(latency=0.05, offline=offline)
    return build_swarm_graph([editor], chat_model=model).compile(name="research_desk")


graph = make_graph()
research_graph = make_research_graph()
