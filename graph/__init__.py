"""swarmgraph's engine: OpenAI Swarm's agents, tools, handoffs and context_variables
as a LangGraph state machine (agents are nodes, handoffs are conditional edges).

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    >>> response = swarm.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"]
    'Hello!'
"""

from .builder import build_swarm_graph
from .chat_models.openai_client import OpenAIClientChatModel
from .chat_models.scripted import (
    ScriptedChatModel,
    scripted_tool_call,
    scripted_tool_calls,
)
from .discovery import reachable_agents
from .errors import (
    AgentNameConflictError,
    HandoffLoopError,
    MissingModelError,
    ScriptExhaustedError,
    SwarmError,
    ToolArgumentError,
    ToolSchemaError,
)
from .messages import message_to_openai, to_langchain, to_openai
from .models import ModelResolver, resolve_chat_model
from .onetoone.formats import OUTPUT_TYPES, format_history
from .onetoone.pattern import OneToOne, build_one_to_one_graph, one_to_one
from .onetoone.views import agent_answer, messages_for, split_last_turn
from .schema import ToolSpec, function_to_json, tool_spec
from .state import SwarmState
from .swarm import Swarm
from .types import Agent, Response, Result

__all__ = [
    "OUTPUT_TYPES",
    "Agent",
    "AgentNameConflictError",
    "HandoffLoopError",
    "MissingModelError",
    "ModelResolver",
    "OneToOne",
    "OpenAIClientChatModel",
    "Response",
    "Result",
    "ScriptExhaustedError",
    "ScriptedChatModel",
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
