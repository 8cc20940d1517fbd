"""What outlives a run: ``Session`` (one conversation: messages, context, the active agent),
memory policies (what the model is shown of it), the stores underneath, and long-term memory
(facts about a user that outlive conversations).

Example:
    >>> from swarmgraph.memory import Session, open_context_store, open_history, parse_memory
    >>> parse_memory("window:20")
    WindowMemory(20)
"""

TYPE_CHECKING = False  # not from typing: the names below load on first use

# name -> module that defines it (relative to this package); ``__all__`` is its keys. Names
# load on first use, so ``import swarmgraph.memory`` costs nothing until one is taken.
_EXPORTS: dict[str, str] = {
    # one conversation, load / run / save
    "Session": ".session",
    # what the model is shown of it
    "MemoryPolicy": ".policies",
    "BufferMemory": ".policies",
    "WindowMemory": ".policies",
    "TokenTrimMemory": ".policies",
    "SummaryMemory": ".policies",
    "parse_memory": ".policies",
    "RetrievalMemory": ".retrieval_memory",
    "HybridMemory": ".retrieval_memory",
    # the store underneath, and its LangChain and context-only views
    "ConversationStore": ".store",
    "open_store": ".backends",
    "open_history": ".backends",
    "open_context_store": ".backends",
    "close_stores": ".store_closing",
    # the third kind: facts about a user, across conversations
    "LongTermMemory": ".long_term",
    "Fact": ".long_term",
    "FactExtractor": ".fact_extract",
    "OpenFactExtractor": ".open_extract",
    "long_term_hooks": ".long_term_hooks",
    # errors a caller catches
    "StorageUnavailable": ".errors",
    "StorageConfigurationError": ".errors",
    "TurnOutcomeUnknown": ".errors",
    "ContextSerializationError": ".errors",
    "ContextVersionConflict": ".errors",
    "UnknownAgentError": ".errors",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> object:
    """An exported name, imported on first use (then kept here)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # At call time: the engine's loader pauses the garbage collector while LangChain loads.
    from ..graph.lazy import import_paused

    value = getattr(import_paused(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # for type checkers and IDEs (tests/test_memory_names.py keeps it in step)
    from .backends import open_context_store as open_context_store
    from .backends import open_history as open_history
    from .backends import open_store as open_store
    from .errors import ContextSerializationError as ContextSerializationError
    from .errors import ContextVersionConflict as ContextVersionConflict
    from .errors import StorageConfigurationError as StorageConfigurationError
    from .errors import StorageUnavailable as StorageUnavailable
    from .errors import TurnOutcomeUnknown as TurnOutcomeUnknown
    from .errors import UnknownAgentError as UnknownAgentError
    from .fact_extract import FactExtractor as FactExtractor
    from .long_term import Fact as Fact
    from .long_term import LongTermMemory as LongTermMemory
    from .long_term_hooks import long_term_hooks as long_term_hooks
    from .open_extract import OpenFactExtractor as OpenFactExtractor
    from .policies import BufferMemory as BufferMemory
    from .policies import MemoryPolicy as MemoryPolicy
    from .policies import SummaryMemory as SummaryMemory
    from .policies import TokenTrimMemory as TokenTrimMemory
    from .policies import WindowMemory as WindowMemory
    from .policies import parse_memory as parse_memory
    from .retrieval_memory import HybridMemory as HybridMemory
    from .retrieval_memory import RetrievalMemory as RetrievalMemory
    from .session import Session as Session
    from .store import ConversationStore as ConversationStore
    from .store_closing import close_stores as close_stores
