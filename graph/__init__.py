"""swarmgraph's engine: OpenAI Swarm's agents, tools, handoffs and context_variables
as a LangGraph state machine (agents are nodes, handoffs are conditional edges).

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    >>> response = swarm.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"]
    'Hello!'
"""

from .lazy import lazy_exports
from .process_exit import register as _register_quick_exit

_register_quick_exit()  # see process_exit: ~0.3 s less at interpreter exit

TYPE_CHECKING = False  # not from typing: the facade's cheap start-up imports this package

# name -> module that defines it: the one list of this package's public names (``__all__`` is
# derived from it; tests/test_layout.py checks the TYPE_CHECKING block below against it). Names
# load on first use: ``from swarmgraph import Agent, Swarm`` must not pay for the OneToOne
# pattern, the scripted model or the client adapter. Everything else stays importable from its
# own module (``swarmgraph.graph.messages.to_openai``, ``swarmgraph.graph.schema.tool_spec``...).
_EXPORTS: dict[str, str] = {
    # Swarm's objects, the run, the graph
    "Agent": ".types",
    "Result": ".types",
    "Response": ".types",
    "Swarm": ".swarm",
    "SwarmState": ".state",
    "build_swarm_graph": ".builder",
    "handoff_tool": ".member_handoff",
    "function_to_json": ".schema",
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
    "needs_approval": ".approvals",
    "PendingApproval": ".approvals",
    "Budget": ".budget",
    "BudgetExceeded": ".errors",
    "CALLER": ".types",
    "Route": ".routes",
    "Parallel": ".parallel",
    # errors a caller catches
    "SwarmError": ".errors",
    "HandoffLoopError": ".errors",
    "StepLimitError": ".errors",
    "ToolSchemaError": ".errors",
    "MissingModelError": ".errors",
    "GuardrailTripped": ".errors",
    "ContextValidationError": ".errors",
    "ContextConflict": ".errors",
    "BranchFailed": ".errors",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from .approvals import PendingApproval, needs_approval
    from .budget import Budget
    from .builder import build_swarm_graph
    from .chat_models.openai_client import OpenAIClientChatModel
    from .chat_models.scripted import ScriptedChatModel, scripted_tool_call, scripted_tool_calls
    from .errors import (
        BranchFailed,
        BudgetExceeded,
        ContextConflict,
        ContextValidationError,
        GuardrailTripped,
        HandoffLoopError,
        MissingModelError,
        StepLimitError,
        SwarmError,
        ToolSchemaError,
    )
    from .member_handoff import handoff_tool
    from .onetoone.formats import format_history
    from .onetoone.pattern import OneToOne, one_to_one
    from .onetoone.views import agent_answer, messages_for, split_last_turn
    from .parallel import Parallel
    from .routes import Route
    from .schema import function_to_json
    from .state import SwarmState
    from .swarm import Swarm
    from .types import CALLER, Agent, Response, Result
