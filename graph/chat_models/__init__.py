"""Chat models the engine can be driven by, besides any LangChain chat model.

- :class:`ScriptedChatModel`: offline and deterministic, with tool calls, for tests,
  notebooks and demos.
- :class:`OpenAIClientChatModel`: wraps any OpenAI-compatible client object, called exactly
  as OpenAI Swarm calls it (``Swarm(client=...)``).
"""

from .openai_client import OpenAIClientChatModel
from .scripted import ScriptedChatModel, scripted_tool_call, scripted_tool_calls

__all__ = [
    "OpenAIClientChatModel",
    "ScriptedChatModel",
    "scripted_tool_call",
    "scripted_tool_calls",
]
