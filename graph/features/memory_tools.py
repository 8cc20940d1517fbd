"""The long-term memory tools an ``Agent(memory_tools=True)`` offers its model: ``remember``,
``recall``, ``forget`` and ``history`` (every value a fact has had, with when it held).

They attach as middleware: ``memory_tools=True`` is sugar that installs
:class:`MemoryToolsMiddleware` (graph/options.py's ``middleware_of``), whose ``tools`` the step
binds beside the agent's own (``AgentMiddleware.tools``, graph/core/middleware_tools.py); the
core never names them.

They are thin on purpose: each one's signature and docstring are what the model is told, and
the work is done by the ``long_term`` object the run injects (:data:`LONG_TERM_PARAM`, an
injected parameter this module registers with graph/core/injected.py, so it is hidden from
the schema and a value the model sends for it is dropped). A ``Session`` with long-term
memory builds that object for the agent whose calls run: it holds the user (no tool takes a
user id, so a model cannot read or write another user's memory by naming one), the agent
(whose notes ``scope="agent"`` means) and the turn (the provenance of a write, which commits
with the turn). Only
``"user"`` and ``"agent"`` scopes are offered: ``"shared"`` facts are written by trusted
application code, never by a model. The engine never imports ``memory/``: ``long_term`` is
anything with the four methods of :class:`LongTermTools`.

Example:
    >>> from swarmgraph.graph.core.schema import tool_spec
    >>> [tool_spec(f).name for f in MEMORY_TOOLS]
    ['remember', 'recall', 'forget', 'history']
    >>> params = tool_spec(remember).schema["function"]["parameters"]
    >>> sorted(params["properties"]), params["properties"]["scope"]["enum"]
    (['key', 'scope', 'value'], ['user', 'agent'])
    >>> tool_spec(remember).injected
    ('long_term',)
    >>> [f.__name__ for f in MemoryToolsMiddleware().tools]
    ['remember', 'recall', 'forget', 'history']
"""

from __future__ import annotations

from typing import Literal, Protocol

from langchain.agents.middleware import AgentMiddleware

from ..core.injected import InjectedParam, register_injected

__all__ = [
    "MEMORY_TOOLS",
    "LongTermTools",
    "MemoryToolsMiddleware",
    "forget",
    "history",
    "recall",
    "remember",
]

#: The parameter the memory tools take the user's memory in: filled by the run (a Session's
#: ``tool_inputs``), never by the model (graph/core/injected.py; graph/__init__.py names this
#: module for it, so a tool of the user's own that takes it loads this module).
LONG_TERM_PARAM = InjectedParam(
    "long_term",
    "the user's long-term memory as the active agent sees it "
    "(a Session with long_term=... gives it)",
)
register_injected(LONG_TERM_PARAM)

#: The scopes a model may write: its user's facts, or its own notes about that user.
ToolScope = Literal["user", "agent"]


class LongTermTools(Protocol):
    """What the memory tools call: one user's memory, as one agent sees it, in one turn.
    Each method returns the text the model reads (``"Error: ..."`` for what it cannot do)."""

    def remember(self, key: str, value: str, scope: str) -> str: ...

    def recall(self, query: str) -> str: ...

    def forget(self, key: str, scope: str) -> str: ...

    def history(self, key: str, scope: str) -> str: ...


def remember(key: str, value: str, scope: ToolScope = "user", *, long_term: LongTermTools) -> str:
    """Remember a fact about the user for later conversations. Saying a key again replaces
    its value.

    Args:
        key: a short name for the fact, such as dog_name or home_city.
        value: the fact itself, such as Rex.
        scope: user (any agent may read it) or agent (a note only you will see).
    """
    # Tools get the JSON the model sent (graph/core/schema.py): 42 passes as a str value, and the
    # fact is stored as the text it stands for.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    return long_term.remember(key, value, scope)


def recall(query: str, *, long_term: LongTermTools) -> str:
    """Look up what you remember about the user.

    Args:
        query: what you want to know, in a few words.
    """
    return long_term.recall(query)


def forget(key: str, scope: ToolScope = "user", *, long_term: LongTermTools) -> str:
    """Forget a fact about the user (when they ask you to, or it is no longer true).

    Args:
        key: the fact's name, as remember was given it.
        scope: user or agent, as it was remembered.
    """
    return long_term.forget(key, scope)


def history(key: str, scope: ToolScope = "user", *, long_term: LongTermTools) -> str:
    """Every value a fact about the user has had, oldest first, with when each earlier one
    held: for questions about the past ("where did I live before?").

    Args:
        key: the fact's name, such as home_city.
        scope: user or agent, as it was remembered.
    """
    return long_term.history(key, scope)


#: The tools in the order an agent offers them.
MEMORY_TOOLS = (remember, recall, forget, history)


class MemoryToolsMiddleware(AgentMiddleware):
    """``Agent(memory_tools=True)`` as the middleware it installs: no hooks, only ``tools``
    (:data:`MEMORY_TOOLS`), which the step binds after the agent's own. The ``long_term``
    object they call is the run's (a ``Session`` with long-term memory supplies it through
    the run's ``tool_inputs``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tools = list(MEMORY_TOOLS)  # type: ignore[arg-type]
