"""swarmgraph's engine: OpenAI Swarm's agents, tools, handoffs and context_variables
as a LangGraph state machine (agents are nodes, handoffs are conditional edges).

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    >>> response = swarm.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"]
    'Hello!'
"""

from .core.injected import injected_by as _injected_by
from .lazy import lazy_exports
from .process_exit import register as _register_quick_exit

_register_quick_exit()  # see process_exit: ~0.3 s less at interpreter exit

# Tool parameters a feature fills, named before any tool's schema is read (every module of the
# engine imports this package first): a tool that takes one never shows it to the model, and
# the feature's module, which registers what the parameter gets, loads when a tool takes it
# (graph/core/injected.py).
_injected_by("idempotency_key", f"{__name__}.features.decisions")
_injected_by("long_term", f"{__name__}.features.memory_tools")

TYPE_CHECKING = False  # not from typing: the facade's cheap start-up imports this package

# name -> module that defines it: the one list of this package's public names (``__all__`` is
# derived from it; tests/test_layout.py checks the TYPE_CHECKING block below against it). Names
# load on first use: ``from swarmgraph import Agent, Swarm`` must not pay for the OneToOne
# pattern, the scripted model or the client adapter. Everything else stays importable from its
# own module (``swarmgraph.graph.core.messages.to_openai``,
# ``swarmgraph.graph.core.schema.tool_spec``...).
_EXPORTS: dict[str, str] = {
    # Swarm's objects, the run, the graph
    "Agent": ".core.types",
    "Result": ".core.types",
    "Response": ".core.types",
    "Swarm": ".swarm",
    "SwarmState": ".core.state",
    "build_swarm_graph": ".swarm_graph",
    "handoff_tool": ".features.member_handoff",
    "function_to_json": ".core.schema",
    # chat models
    "ScriptedChatModel": ".chat_models.scripted",
    "scripted_tool_call": ".chat_models.scripted",
    "scripted_tool_calls": ".chat_models.scripted",
    "OpenAIClientChatModel": ".chat_models.openai_client",
    # the OneToOne pattern
    "OneToOne": ".onetoone.pattern",
    "one_to_one": ".onetoone.pattern",
    "messages_for": ".onetoone.views",
    "split_last_turn": ".onetoone.views",
    "agent_answer": ".onetoone.views",
    "format_history": ".onetoone.formats",
    # control of a running swarm
    "needs_approval": ".features.decisions",
    "effect": ".features.decisions",
    "PendingApproval": ".features.approvals",
    "Budget": ".features.budget",
    "BudgetExceeded": ".features.errors",
    "ApprovalAlreadyDecided": ".features.errors",
    "CALLER": ".core.types",
    "Route": ".features.routes",
    "Parallel": ".features.parallel",
    # errors a caller catches
    "SwarmError": ".core.errors",
    "HandoffLoopError": ".core.errors",
    "StepLimitError": ".core.errors",
    "ToolSchemaError": ".core.errors",
    "MissingModelError": ".core.errors",
    "GuardrailTripped": ".features.errors",
    "ContextValidationError": ".core.errors",
    "ContextConflict": ".features.errors",
    "BranchFailed": ".features.errors",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from .chat_models.openai_client import OpenAIClientChatModel
    from .chat_models.scripted import ScriptedChatModel, scripted_tool_call, scripted_tool_calls
    from .core.errors import (
        ContextValidationError,
        HandoffLoopError,
        MissingModelError,
        StepLimitError,
        SwarmError,
        ToolSchemaError,
    )
    from .core.schema import function_to_json
    from .core.state import SwarmState
    from .core.types import CALLER, Agent, Response, Result
    from .features.approvals import PendingApproval
    from .features.budget import Budget
    from .features.decisions import effect, needs_approval
    from .features.errors import (
        ApprovalAlreadyDecided,
        BranchFailed,
        BudgetExceeded,
        ContextConflict,
        GuardrailTripped,
    )
    from .features.member_handoff import handoff_tool
    from .features.parallel import Parallel
    from .features.routes import Route
    from .onetoone.formats import format_history
    from .onetoone.pattern import OneToOne, one_to_one
    from .onetoone.views import agent_answer, messages_for, split_last_turn
    from .swarm import Swarm
    from .swarm_graph import build_swarm_graph
