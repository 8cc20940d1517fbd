"""Swarm members that are not our ``Agent``: the one interface another kind of member attaches by.

The core runs :class:`~swarmgraph.graph.core.types.Agent` s. A feature that lets something else
stand wherever the swarm takes an agent (in ``build_swarm_graph([...])``, in
``Agent(handoffs=[...])``, returned by a transfer function) registers a :class:`MemberKind`
(:func:`register_member_kind`): it turns such a value into the ``Agent`` the swarm routes by
(one per value, so it is one node however often it is named) and gives the node that runs
that agent's turn. The core asks the registered kinds only for a value that is not an
``Agent``, and for the node of an agent, so a program that never uses another kind pays one
empty-list check per graph built and per dynamic step.

The API layer makes a kind available without loading it (:func:`load_kind_on`): the kind's
module is imported, and so registers itself, the first time a value passes the API's test.
A named compiled LangGraph graph is such a member (graph/options.py names its module).

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> class Named:  # a kind whose values are strings starting with "@"
    ...     def as_member(self, value):
    ...         return Agent(name=value[1:]) if str(value).startswith("@") else None
    ...     def members_in(self, value):
    ...         found = self.as_member(value)
    ...         return [] if found is None else [found]
    ...     def owns(self, agent):
    ...         return False  # its agents run as ours
    ...     def node(self, runtime, agent, name):
    ...         raise AssertionError("never asked: it owns no agent")
    >>> unregister = register_member_kind(Named())
    >>> as_member("@Sales").name, members_in(42)
    ('Sales', [])
    >>> unregister(); members_in("@Sales")
    []
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .types import Agent

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from .runtime import GraphRuntime
    from .state import StateUpdate, SwarmState

__all__ = [
    "MemberKind",
    "MemberNode",
    "as_member",
    "load_kind_on",
    "member_kinds",
    "members_in",
    "node_of",
    "register_member_kind",
]


class MemberNode(Protocol):
    """The node that runs a member's turn: it returns a plain update, and the builder routes
    after it as after any agent (``GraphRuntime.next_node``). ``traced``: LangGraph traces the
    node (its messages then reach ``stream_mode="messages"`` whole)."""

    traced: bool

    @property
    def runtime(self) -> GraphRuntime: ...

    @property
    def agent(self) -> Agent | None: ...

    def step(self, state: SwarmState, config: RunnableConfig) -> StateUpdate: ...

    async def astep(self, state: SwarmState, config: RunnableConfig) -> StateUpdate: ...


class MemberKind(Protocol):
    """A kind of swarm member that is not our ``Agent`` (a feature registers one)."""

    def as_member(self, value: Any) -> Agent | None:
        """The ``Agent`` that ``value`` stands for (the same one every time), ``None`` when
        ``value`` is not of this kind; raises ``ValueError`` when it is but cannot join (a
        LangGraph graph without a name)."""
        ...

    def members_in(self, value: Any) -> list[Agent]:
        """The members ``value`` holds, found by discovery in a tool's code or a handoff
        list: like :meth:`as_member`, but ``[]`` where that would raise."""
        ...

    def owns(self, agent: Agent) -> bool:
        """Whether ``agent`` is this kind's member (its turn runs in this kind's node)."""
        ...

    def node(self, runtime: GraphRuntime, agent: Agent | None, name: str) -> MemberNode:
        """The node that runs ``agent`` as node ``name``; ``agent=None``: the dynamic node's,
        which runs whichever member of this kind is active."""
        ...


_kinds: list[MemberKind] = []
_loaders: list[tuple[Callable[[Any], bool], str]] = []
_lock = threading.Lock()


def register_member_kind(kind: MemberKind) -> Callable[[], None]:
    """Add ``kind`` to the member kinds the core asks; returns a function that removes it."""
    with _lock:
        _kinds.append(kind)

    def unregister() -> None:
        with _lock:
            if kind in _kinds:
                _kinds.remove(kind)

    return unregister


def load_kind_on(test: Callable[[Any], bool], module: str) -> None:
    """Import ``module`` (which registers its :class:`MemberKind`) the first time a value that
    is not an ``Agent`` passes ``test``: the API layer's way to offer a kind that a program
    which never uses it does not load."""
    with _lock:
        if (test, module) not in _loaders:
            _loaders.append((test, module))


def member_kinds() -> tuple[MemberKind, ...]:
    """The registered kinds (empty: every member is an ``Agent``)."""
    return tuple(_kinds)


def _loaded_for(value: Any) -> bool:
    """Load the kinds whose test ``value`` passes; whether any was loaded."""
    due = [entry for entry in _loaders if entry[0](value)]
    for entry in due:
        importlib.import_module(entry[1])  # which registers its kind
        with _lock:
            if entry in _loaders:
                _loaders.remove(entry)
    return bool(due)


def as_member(value: Any) -> Agent:
    """``value`` as a swarm member: an ``Agent`` as it is, else the member a registered kind
    says it stands for.

    Example:
        >>> as_member(Agent(name="Sales")).name
        'Sales'
        >>> as_member(42)
        Traceback (most recent call last):
        ...
        TypeError: not an Agent or a compiled LangGraph graph: 42
    """
    if isinstance(value, Agent):
        return value
    for kind in _kinds:
        found = kind.as_member(value)
        if found is not None:
            return found
    if _loaders and _loaded_for(value):  # its kind is loaded now: ask again
        return as_member(value)
    raise TypeError(f"not an Agent or a compiled LangGraph graph: {value!r}")


def members_in(value: Any) -> list[Agent]:
    """The members a value that is not an ``Agent`` holds (``[]``: none), as the registered
    kinds find them. Asked of every value a tool returns or a tool's code names, so it does
    no more than ask each kind (and each kind not loaded yet, its test)."""
    for kind in _kinds:
        found = kind.members_in(value)
        if found:
            return found
    if _loaders and _loaded_for(value):
        return members_in(value)
    return []


def node_of(runtime: GraphRuntime, agent: Agent, name: str) -> MemberNode | None:
    """The node a registered kind runs ``agent`` in, ``None`` for one of ours."""
    for kind in _kinds:
        if kind.owns(agent):
            return kind.node(runtime, agent, name)
    return None
