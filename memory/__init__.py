"""What outlives a run: chat histories (messages), context stores (key fields), ``Session``.

Example:
    >>> from memory import Session, open_context_store, open_history, parse_memory
    >>> parse_memory("window:20")
    WindowMemory(20)
"""

from memory.context_json import (
    DEFAULT_SIZE_LIMIT,
    ContextSerializationError,
    ContextSizeWarning,
    decode_context,
    encode_context,
)
from memory.context_store import (
    ContextRecord,
    ContextStore,
    ContextVersionConflict,
    open_context_store,
)
from memory.history import ChatHistory, drop_orphan_tool_messages, open_history
from memory.policies import (
    BufferMemory,
    MemoryPolicy,
    SummaryMemory,
    TokenTrimMemory,
    WindowMemory,
    parse_memory,
)
from memory.session import Session, UnknownAgentWarning, as_messages, merge_context
from memory.storage_errors import StorageUnavailable

__all__ = [
    "DEFAULT_SIZE_LIMIT",
    "BufferMemory",
    "ChatHistory",
    "ContextRecord",
    "ContextSerializationError",
    "ContextSizeWarning",
    "ContextStore",
    "ContextVersionConflict",
    "MemoryPolicy",
    "Session",
    "StorageUnavailable",
    "SummaryMemory",
    "TokenTrimMemory",
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
