"""What outlives a run: chat histories (messages), context stores (key fields), long-term
memory (facts about a user, across conversations), ``Session``.

Example:
    >>> from swarmgraph.memory import Session, open_context_store, open_history, parse_memory
    >>> parse_memory("window:20")
    WindowMemory(20)
"""

from .backends import open_context_store, open_history
from .context_json import DEFAULT_SIZE_LIMIT, decode_context, encode_context
from .context_store import ContextRecord, ContextStore
from .errors import (
    ContextDepthWarning,
    ContextSerializationError,
    ContextSizeWarning,
    ContextVersionConflict,
    StorageConfigurationError,
    StorageUnavailable,
    TurnInterrupted,
    TurnOutcomeUnknown,
    UnknownAgentWarning,
)
from .extractive_summary import ExtractiveSummaryModel
from .history import ChatHistory, drop_orphan_tool_messages
from .long_term import LongTermMemory
from .policies import (
    BufferMemory,
    MemoryPolicy,
    SummaryMemory,
    TokenTrimMemory,
    WindowMemory,
    parse_memory,
)
from .session import Session, as_messages, merge_context

__all__ = [
    "DEFAULT_SIZE_LIMIT",
    "BufferMemory",
    "ChatHistory",
    "ContextDepthWarning",
    "ContextRecord",
    "ContextSerializationError",
    "ContextSizeWarning",
    "ContextStore",
    "ContextVersionConflict",
    "ExtractiveSummaryModel",
    "LongTermMemory",
    "MemoryPolicy",
    "Session",
    "StorageConfigurationError",
    "StorageUnavailable",
    "SummaryMemory",
    "TokenTrimMemory",
    "TurnInterrupted",
    "TurnOutcomeUnknown",
    "UnknownAgentWarning",
    "WindowMemory",
    "as_messages",
    "decode_context",
    "drop_orphan_tool_messages",
    "encode_context",
    "merge_context",
    "open_context_store",
    "open_history",
    "parse_memory",
]
