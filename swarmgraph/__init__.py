"""swarmgraph: OpenAI Swarm's agents, handoffs and ``context_variables`` as a LangGraph state
machine, with LangChain chat-history memory beside them.

The everyday names live here; everything else stays in its subpackage:

- :mod:`swarmgraph.graph`: the engine (agents, tools, handoffs, ``Swarm.run``), the chat-model
  adapters (:mod:`swarmgraph.graph.chat_models`) and the OneToOne pattern
  (:mod:`swarmgraph.graph.onetoone`).
- :mod:`swarmgraph.memory`: ``Session``, memory policies, chat histories and context stores.
- :mod:`swarmgraph.app`: the ``swarmgraph`` command line, the demo swarm, drawing.

Names load on first use, so ``import swarmgraph`` (and ``swarmgraph --help``) stays cheap.

Example:
    >>> from swarmgraph import Agent, Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    >>> response = swarm.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"]
    'Hello!'
"""

from __future__ import annotations

from .graph.lazy import lazy_exports

TYPE_CHECKING = False  # not from typing: importing typing costs every `swarmgraph --help`

__version__ = "0.2.0"

# name -> module that defines it (relative to this package): the one list of the facade's
# names, the public contract (``__all__`` is derived from it; tests/test_layout.py checks the
# TYPE_CHECKING block below against it).
_EXPORTS: dict[str, str] = {
    # the engine
    "Agent": ".graph.core.types",
    "Result": ".graph.core.types",
    "Response": ".graph.core.types",
    "Swarm": ".graph.swarm",
    "SwarmState": ".graph.core.state",
    "build_swarm_graph": ".graph.swarm_graph",
    "handoff_tool": ".graph.features.member_handoff",
    "function_to_json": ".graph.core.schema",
    # offline models
    "ScriptedChatModel": ".graph.chat_models.scripted",
    "scripted_tool_call": ".graph.chat_models.scripted",
    # the OneToOne pattern
    "OneToOne": ".graph.onetoone.pattern",
    "one_to_one": ".graph.onetoone.pattern",
    # memory
    "Session": ".memory.session",
    "open_history": ".memory.backends",
    "open_context_store": ".memory.backends",
    # Swarm's REPL helper, for any agent
    "run_demo_loop": ".app.demo_loop",
    # control of a running swarm (swarmgraph.history holds the views for Agent(history=...))
    "needs_approval": ".graph.features.decisions",
    "effect": ".graph.features.decisions",
    "PendingApproval": ".graph.features.approvals",
    "Budget": ".graph.features.budget",
    "BudgetExceeded": ".graph.features.errors",
    "ApprovalAlreadyDecided": ".graph.features.errors",
    "CALLER": ".graph.core.types",
    "Route": ".graph.features.routes",
    "Parallel": ".graph.features.parallel",
    # errors a caller catches (every one of ours derives from SwarmgraphError)
    "SwarmgraphError": ".graph.core.errors",
    "SwarmError": ".graph.core.errors",
    "HandoffLoopError": ".graph.core.errors",
    "ToolSchemaError": ".graph.core.errors",
    "MissingModelError": ".graph.core.errors",
    "GuardrailTripped": ".graph.features.errors",
    "ContextConflict": ".graph.features.errors",
    "StorageUnavailable": ".memory.errors",
    "TurnOutcomeUnknown": ".memory.errors",
    "ContextSerializationError": ".memory.errors",
    "ContextVersionConflict": ".memory.errors",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from .app.demo_loop import run_demo_loop
    from .graph.chat_models.scripted import ScriptedChatModel, scripted_tool_call
    from .graph.core.errors import (
        HandoffLoopError,
        MissingModelError,
        SwarmError,
        SwarmgraphError,
        ToolSchemaError,
    )
    from .graph.core.schema import function_to_json
    from .graph.core.state import SwarmState
    from .graph.core.types import CALLER, Agent, Response, Result
    from .graph.features.approvals import PendingApproval
    from .graph.features.budget import Budget
    from .graph.features.decisions import effect, needs_approval
    from .graph.features.errors import (
        ApprovalAlreadyDecided,
        BudgetExceeded,
        ContextConflict,
        GuardrailTripped,
    )
    from .graph.features.member_handoff import handoff_tool
    from .graph.features.parallel import Parallel
    from .graph.features.routes import Route
    from .graph.onetoone.pattern import OneToOne, one_to_one
    from .graph.swarm import Swarm
    from .graph.swarm_graph import build_swarm_graph
    from .memory.backends import open_context_store, open_history
    from .memory.errors import (
        ContextSerializationError,
        ContextVersionConflict,
        StorageUnavailable,
        TurnOutcomeUnknown,
    )
    from .memory.session import Session
