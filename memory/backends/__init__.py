"""Storage backends, chosen by the URL's scheme through one small registry.

Each backend (a module or package here) offers ``open_store(url, *, size_limit)``, its
:class:`~swarmgraph.memory.store.ConversationStore`. This module imports a backend only when a
URL names it (through :func:`swarmgraph.graph.lazy.import_paused`, at call time), so
SQLAlchemy, psycopg and redis load only for the stores a program uses. The LangChain history
and the context store are views of that one store.

Example:
    >>> open_store("memory://doctest-registry").count("conv-1")
    0
    >>> open_store("ftp://example/db")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no storage backend for 'ftp://example/db'; supported: sqlite://, memory://, ...
"""

from __future__ import annotations

import os
from types import ModuleType

from ..chat_history import StoredChatHistory
from ..context_json import DEFAULT_SIZE_LIMIT
from ..context_store import ContextStore
from ..ids import check_conversation_id
from ..per_process import also_forget
from ..store import ConversationStore
from ..urls import redact_url, url_scheme

#: URL scheme -> backend module, relative to this package.
BACKENDS: dict[str, str] = {
    "sqlite": ".sqlite",
    "memory": ".inprocess",
    "postgresql": ".postgres",
    "redis": ".redis",
    "rediss": ".redis",
}

#: URL scheme -> the optional extra (pyproject.toml) that brings its driver, and what it brings.
EXTRAS: dict[str, str] = {"postgresql": "postgres", "redis": "redis", "rediss": "redis"}
NEEDS: dict[str, tuple[str, ...]] = {
    "postgres": ("psycopg", "psycopg_pool", "langchain_postgres"),
    "redis": ("redis",),
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
    from ...graph.lazy import import_paused

    try:
        return import_paused(name, __name__)  # SQLAlchemy, psycopg, redis: long-lived objects
    except ModuleNotFoundError as error:
        extra = EXTRAS.get(scheme)
        if extra is None or error.name is None or error.name.split(".")[0] not in NEEDS[extra]:
            raise
        raise ModuleNotFoundError(
            f"{scheme}:// storage needs the {extra} extra (No module named {error.name!r}): "
            f"pip install 'swarmgraph[{extra}]'",
            name=error.name,
        ) from error


def open_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> ConversationStore:
    """Open the conversations ``url`` names: ``sqlite:///path``, ``memory://[name]``
    (in-process), ``postgresql://...`` (pooled) or ``redis://host:port/db[?ttl=seconds]``.

    ``size_limit``: bytes of context JSON above which a save warns (``None``: never).

    Example:
        >>> import os, tempfile
        >>> from swarmgraph.memory.store import TurnWrite
        >>> store = open_store("sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db"))
        >>> store.save("conv-42", TurnWrite(context={"order_id": 7}), expected_version=0)
        1
        >>> isinstance(store, ConversationStore), store.load("conv-42").context
        (True, {'order_id': 7})
    """
    # A store is a handle (a URL, a size limit, the process's engine or pool for it), so a
    # service that opens a Session per request opens each store once per process. Keyed by the
    # process (a forked child opens its own) and the working directory (a relative SQLite
    # path names another file after a chdir).
    if not isinstance(url, str):  # backend_for says what is wrong with it
        return backend_for(url).open_store(url, size_limit=size_limit)
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed: only an absolute path can open
        cwd = ""
    key = (os.getpid(), url, size_limit, cwd)
    store = _stores.get(key)
    if store is None:
        store = _stores[key] = backend_for(url).open_store(url, size_limit=size_limit)
    return store


#: The stores this process opened, by (process id, URL, size limit, working directory).
_stores: dict[tuple[int, str, int | None, str], ConversationStore] = {}


def forget_stores() -> None:
    """Forget every store :func:`open_store` opened (the next open makes a new one): what
    closing an engine or dropping a pool does too (:func:`~swarmgraph.memory.per_process.
    also_forget`), so no store outlives the connection it was opened on.

    Example:
        >>> first = open_store("memory://doctest-forget")
        >>> first is open_store("memory://doctest-forget")
        True
        >>> forget_stores(); first is open_store("memory://doctest-forget")
        False
    """
    _stores.clear()


def open_history(url: str, session_id: str) -> StoredChatHistory:
    """The chat history of ``session_id`` in the store ``url`` names: a LangChain
    ``BaseChatMessageHistory`` with windowed reads (see
    :class:`~swarmgraph.memory.chat_history.StoredChatHistory`).

    Example:
        >>> import os, tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> history = open_history(url, "conv-42")
        >>> history.add_messages([HumanMessage("refund order 7")])
        >>> [m.content for m in open_history(url, "conv-42").messages]
        ['refund order 7']
    """
    check_conversation_id(session_id)
    return StoredChatHistory(open_store(url), session_id)


def open_context_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> ContextStore:
    """The context records of the store ``url`` names (see
    :class:`~swarmgraph.memory.context_store.ContextStore`).

    ``size_limit``: bytes of JSON above which saving warns (``None``: never).

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
        >>> store = open_context_store(url)
        >>> store.save("conv-42", {"order_id": 7}), store.load("conv-42").context
        (1, {'order_id': 7})
    """
    return ContextStore(open_store(url, size_limit=size_limit))


also_forget(forget_stores)
