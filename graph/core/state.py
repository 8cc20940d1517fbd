"""The typed state every swarm graph runs over.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> merge_context({"name": "Ming"}, {"order_id": 7})
    {'name': 'Ming', 'order_id': 7}
    >>> sorted(SwarmState.__annotations__)
    ['active_agent', 'context_variables', 'handoff_trail', 'messages']
    >>> update: StateUpdate = {"handoff_trail": []}  # what a node step returns
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from typing_extensions import NotRequired, TypedDict


def merge_context(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for ``context_variables``: later writes win key by key, like ``dict.update``.

    It never mutates either side, so a checkpointed value is never changed behind
    LangGraph's back.

    Example:
        >>> merge_context({"a": 1, "b": 2}, {"b": 3})
        {'a': 1, 'b': 3}
        >>> merge_context(None, {"a": 1})
        {'a': 1}
    """
    if not right:
        return left if left is not None else {}
    if not isinstance(right, Mapping):  # a graph's input given as pairs, or a model's fields
        right = as_context(right)
    if not left:
        return dict(right)
    return {**left, **right}


def as_context(value: Any) -> dict[str, Any]:
    """``value`` as a ``context_variables`` dict: what ``dict()`` makes of it, as Swarm takes
    it (a dict, key-value pairs, a pydantic model's fields), or a clear error.

    Example:
        >>> as_context([("user", "Ming")])
        {'user': 'Ming'}
        >>> as_context(["Ming"])
        Traceback (most recent call last):
        ...
        TypeError: context_variables must be a dict (or what dict() takes), got list
    """
    try:
        return dict(value)
    except (TypeError, ValueError):
        kind = type(value).__name__
        raise TypeError(
            f"context_variables must be a dict (or what dict() takes), got {kind}"
        ) from None


class SwarmState(TypedDict):
    """What flows between agent nodes.

    - ``messages``: the conversation as LangChain messages (``add_messages`` reducer).
    - ``context_variables``: run-scoped structured state, merged key by key; it is
      injected into tools that ask for it and is never shown to the model.
    - ``active_agent``: the node name of the agent that holds the conversation (its own name
      unless LangGraph cannot take it or another agent holds it, see ``node_names``). Missing
      means "the graph's default agent". A checkpointed thread resumes with it.
    - ``handoff_trail``: bookkeeping for handoff-loop detection (agents that handed
      off in a row without a reply).
    """

    messages: Annotated[list[AnyMessage], add_messages]
    context_variables: NotRequired[Annotated[dict[str, Any], merge_context]]
    active_agent: NotRequired[str]
    handoff_trail: NotRequired[list[str]]


class SwarmInput(TypedDict):
    """What a client may send a served swarm graph: new messages only. ``context_variables``
    and ``active_agent`` are the graph's own to set (a client that could write them could
    approve its own refund); ``build_swarm_graph(..., input_schema=SwarmInput)``."""

    messages: Annotated[list[AnyMessage], add_messages]


class StateUpdate(TypedDict, total=False):
    """What one node step writes: the :class:`SwarmState` keys it changes (LangGraph applies
    each through its reducer). ``context_variables`` is an ``Overwrite`` when a tool deleted a
    key, which the key-by-key reducer could not express."""

    messages: list[BaseMessage]
    context_variables: dict[str, Any] | Overwrite
    active_agent: str
    handoff_trail: list[str]


#: The label of the parallel branch the current code runs in (``None``: the main run).
BRANCH_LABEL: ContextVar[str | None] = ContextVar("swarmgraph_branch", default=None)


def current_branch() -> str | None:
    """The label of the parallel branch running here, ``None`` outside one.

    Example:
        >>> with branch_scope("Billing"):
        ...     current_branch()
        'Billing'
        >>> current_branch() is None
        True
    """
    return BRANCH_LABEL.get()


@contextmanager
def branch_scope(label: str) -> Iterator[str]:
    """Run the block as parallel branch ``label`` (nested: ``"Outer/Inner"``)."""
    outer = BRANCH_LABEL.get()
    path = label if outer is None else f"{outer}/{label}"
    token = BRANCH_LABEL.set(path)
    try:
        yield path
    finally:
        BRANCH_LABEL.reset(token)
