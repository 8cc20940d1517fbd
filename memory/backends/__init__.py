"""Storage backends, chosen by the URL's scheme through one small registry.

Each backend (a module or package here) offers ``open_history(url, session_id)`` and
``open_context_store(url, *, size_limit)``; this module imports a backend only when a URL
names it, so SQLAlchemy, psycopg and redis load only for the stores a program uses.

Example:
    >>> open_history("memory://doctest-registry", "conv-1").count()
    0
    >>> open_history("ftp://example/db", "c")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no storage backend for 'ftp://example/db'; supported: sqlite://, memory://, ...
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..context_json import DEFAULT_SIZE_LIMIT
from ..urls import check_conversation_id, redact_url, url_scheme

if TYPE_CHECKING:
    from ..context_store import ContextStore
    from ..history import ChatHistory

#: URL scheme -> backend module, relative to this package.
BACKENDS: dict[str, str] = {
    "sqlite": ".sqlite",
    "memory": ".inprocess",
    "postgresql": ".postgres",
    "redis": ".redis",
    "rediss": ".redis",
}


def backend_for(url: str) -> ModuleType:
    """The backend module that serves ``url`` (imported on first use)."""
    scheme = url_scheme(url)
    name = BACKENDS.get(scheme)
    if name is None:
        raise ValueError(
            f"no storage backend for {redact_url(url)!r}; supported: "
            + ", ".join(f"{s}://" for s in BACKENDS)
        )
    from ...graph.lazy import import_paused  # at call time: memory/ imports no engine code

    return import_paused(name, __name__)  # SQLAlchemy, psycopg, redis: long-lived objects


def open_history(url: str, session_id: str) -> ChatHistory:
    """Open the chat history of ``session_id`` in the store ``url`` names.

    ``sqlite:///path`` (LangChain's ``SQLChatMessageHistory`` with an index and windowed
    reads), ``memory://[name]`` (in-process), ``postgresql://...`` (langchain-postgres'
    ``PostgresChatMessageHistory``, pooled) and ``redis://host:port/db[?ttl=seconds]``
    (langchain-community's ``RedisChatMessageHistory``). The object is a LangChain
    ``BaseChatMessageHistory`` that also satisfies our :class:`~swarmgraph.memory.ChatHistory`.

    Example:
        >>> import os, tempfile
        >>> from swarmgraph.memory import ChatHistory
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> history = open_history(url, "conv-42")
        >>> type(history).__name__, isinstance(history, ChatHistory)
        ('SQLiteChatHistory', True)
    """
    check_conversation_id(session_id)
    return backend_for(url).open_history(url, session_id)


def open_context_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> ContextStore:
    """Open the context store ``url`` names (``sqlite:///path``, ``memory://[name]``,
    ``postgresql://...``, ``redis://...``).

    ``size_limit``: bytes of JSON above which saving warns (``None``: never).

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> store = open_context_store(url)
        >>> store.save("conv-42", {"order_id": 7}), store.load("conv-42").context
        (1, {'order_id': 7})
    """
    return backend_for(url).open_context_store(url, size_limit=size_limit)
