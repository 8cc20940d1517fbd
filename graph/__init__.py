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
from graph.discovery import reachable_agents
from graph.errors import AgentNameConflictError, HandoffLoopError, SwarmError
from graph.messages import to_langchain, to_openai
from graph.models import MissingModelError, resolve_chat_model
from graph.schema import ToolArgumentError, ToolSchemaError, function_to_json
from graph.scripted import ScriptedChatModel, ScriptExhaustedError, scripted_tool_call
from graph.state import SwarmState
from graph.swarm import Swarm
from graph.types import Agent, Response, Result

__all__ = [
    "Agent",
    "AgentNameConflictError",
    "HandoffLoopError",
    "MissingModelError",
    "Response",
    "Result",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "Swarm",
    "SwarmError",
    "SwarmState",
    "ToolArgumentError",
    "ToolSchemaError",
    "build_swarm_graph",
    "function_to_json",
    "reachable_agents",
    "resolve_chat_model",
    "scripted_tool_call",
    "to_langchain",
    "to_openai",
]
