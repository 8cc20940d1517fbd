"""swarmgraph's engine: OpenAI Swarm's agents, tools, handoffs and context_variables
as a LangGraph state machine (agents are nodes, handoffs are conditional edges).

Example:
    >>> from graph import Agent, Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    >>> response = swarm.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"]
    'Hello!'
"""

from graph.builder import build_swarm_graph
from graph.client_model import OpenAIClientChatModel
from graph.discovery import reachable_agents
from graph.errors import AgentNameConflictError, HandoffLoopError, SwarmError
from graph.formats import OUTPUT_TYPES, format_history
from graph.messages import message_to_openai, to_langchain, to_openai
from graph.models import MissingModelError, ModelResolver, resolve_chat_model
from graph.one_to_one import OneToOne, build_one_to_one_graph, one_to_one
from graph.schema import ToolArgumentError, ToolSchemaError, ToolSpec, function_to_json, tool_spec
from graph.scripted import (
    ScriptedChatModel,
    ScriptExhaustedError,
    scripted_tool_call,
    scripted_tool_calls,
)
from graph.state import SwarmState
from graph.swarm import Swarm
from graph.types import Agent, Response, Result
from graph.views import agent_answer, messages_for, split_last_turn

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
