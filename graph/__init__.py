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

# name -> module that defines it. Names load on first use: ``from swarmgraph import Agent,
# Swarm`` must not pay for the OneToOne pattern, the scripted model or the client adapter.
_EXPORTS: dict[str, str] = {
    "PendingApproval": ".approvals",
    "needs_approval": ".approvals",
    "Budget": ".budget",
    "BudgetExceeded": ".errors",
    "Route": ".routes",
    "CALLER": ".types",
    "build_swarm_graph": ".builder",
    "OpenAIClientChatModel": ".chat_models.openai_client",
    "ScriptedChatModel": ".chat_models.scripted",
    "scripted_tool_call": ".chat_models.scripted",
    "scripted_tool_calls": ".chat_models.scripted",
    "reachable_agents": ".discovery",
    "HandoffLoopError": ".errors",
    "MissingModelError": ".errors",
    "ScriptExhaustedError": ".errors",
    "StepLimitError": ".errors",
    "SwarmError": ".errors",
    "ToolArgumentError": ".errors",
    "ToolSchemaError": ".errors",
    "message_to_openai": ".messages",
    "to_langchain": ".messages",
    "to_openai": ".messages",
    "ModelResolver": ".models",
    "resolve_chat_model": ".models",
    "OUTPUT_TYPES": ".onetoone.formats",
    "format_history": ".onetoone.formats",
    "OneToOne": ".onetoone.pattern",
    "build_one_to_one_graph": ".onetoone.pattern",
    "one_to_one": ".onetoone.pattern",
    "agent_answer": ".onetoone.views",
    "messages_for": ".onetoone.views",
    "split_last_turn": ".onetoone.views",
    "ToolSpec": ".schema",
    "function_to_json": ".schema",
    "tool_spec": ".schema",
    "SwarmState": ".state",
    "Swarm": ".swarm",
    "Agent": ".types",
    "Response": ".types",
    "Result": ".types",
}

__all__ = [
    "CALLER",
    "OUTPUT_TYPES",
    "Agent",
    "Budget",
    "BudgetExceeded",
    "HandoffLoopError",
    "MissingModelError",
    "ModelResolver",
    "OneToOne",
    "OpenAIClientChatModel",
    "PendingApproval",
    "Response",
    "Result",
    "Route",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "StepLimitError",
    "Swarm",
    "SwarmError",
    "SwarmState",
    "ToolArgumentError",
    "ToolSchemaError",
    "ToolSpec",
    "agent_answer",
    "build_one_to_one_graph",
    "build_swarm_graph",
    "format_history",
    "function_to_json",
    "message_to_openai",
    "messages_for",
    "needs_approval",
    "one_to_one",
    "reachable_agents",
    "resolve_chat_model",
    "scripted_tool_call",
    "scripted_tool_calls",
    "split_last_turn",
    "to_langchain",
    "to_openai",
    "tool_spec",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from .approvals import PendingApproval, needs_approval
    from .budget import Budget
    from .builder import build_swarm_graph
    from .chat_models.openai_client import OpenAIClientChatModel
    from .chat_models.scripted import (
        ScriptedChatModel,
        scripted_tool_call,
        scripted_tool_calls,
    )
    from .discovery import reachable_agents
    from .errors import (
        BudgetExceeded,
        HandoffLoopError,
        MissingModelError,
        ScriptExhaustedError,
        StepLimitError,
        SwarmError,
        ToolArgumentError,
        ToolSchemaError,
    )
    from .messages import message_to_openai, to_langchain, to_openai
    from .models import ModelResolver, resolve_chat_model
    from .onetoone.formats import OUTPUT_TYPES, format_history
    from .onetoone.pattern import OneToOne, build_one_to_one_graph, one_to_one
    from .onetoone.views import agent_answer, messages_for, split_last_turn
    from .routes import Route
    from .schema import ToolSpec, function_to_json, tool_spec
    from .state import SwarmState
    from .swarm import Swarm
    from .types import CALLER, Agent, Response, Result
