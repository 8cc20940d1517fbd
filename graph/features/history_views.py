"""What the receiving agent sees: views of the conversation for ``Agent(history=...)``.

A view is a function ``list[BaseMessage] -> list[BaseMessage]`` applied to the conversation just
before this agent's model call; the stored conversation and the graph's state stay whole. The
result is always a valid chat: a tool answer never appears without the assistant message that
asked for it.

``since_handoff`` and ``without_tool_calls`` need to know which agent is looking; inside a run
they are told (the node sets it), called by hand they take ``agent=`` or assume the sender of
the last assistant message.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> chat = [HumanMessage("refund order 7"),
    ...         AIMessage("", name="Triage", tool_calls=[
    ...             {"name": "transfer_to_refunds", "args": {}, "id": "t1"}]),
    ...         ToolMessage('{"assistant": "Refunds"}', tool_call_id="t1"),
    ...         AIMessage("Which order?", name="Refunds"), HumanMessage("7")]
    >>> [m.content for m in since_handoff(chat, agent="Refunds")]
    ['refund order 7', 'Which order?', '7']
    >>> [type(m).__name__ for m in without_tool_calls(chat, agent="Refunds")]
    ['HumanMessage', 'AIMessage', 'HumanMessage']
    >>> [m.content for m in last(2)(chat)]
    ['Which order?', '7']
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = [
    "HistoryView",
    "HistoryViewMiddleware",
    "last",
    "since_handoff",
    "view_for",
    "without_tool_calls",
]

HistoryView = Callable[[list[BaseMessage]], list[BaseMessage]]

# The agent whose model call a view is preparing (set by the node around the call).
_viewer: ContextVar[str | None] = ContextVar("swarmgraph_history_viewer", default=None)


def view_for(agent: object, messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """``agent.history(messages)``, told which agent looks, or ``messages`` with no view."""
    view = getattr(agent, "history", None)
    if view is None:
        return messages
    with _viewing(getattr(agent, "name", None)):
        seen = view(list(messages))
    if not isinstance(seen, list) or not all(isinstance(m, BaseMessage) for m in seen):
        raise TypeError(
            f"agent {getattr(agent, 'name', '?')!r}: history= must return a list of LangChain "
            f"messages, got {type(seen).__name__}"
        )
    return seen


class HistoryViewMiddleware(AgentMiddleware):
    """``Agent(history=view)`` as the middleware it installs: the agent's model request reads
    ``view(messages)``; the state keeps the whole conversation. LangChain's built-ins edit the
    state (``SummarizationMiddleware``) or the request by fixed rules (``ContextEditingMiddleware``
    clears old tool results); a view is any function of the conversation, told which agent
    looks (``since_handoff``), so it stays ours.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langchain.agents.middleware import ModelRequest
        >>> view = HistoryViewMiddleware(last(1), "Refunds")
        >>> request = ModelRequest(model=None, messages=[HumanMessage("a"), HumanMessage("b")])
        >>> view.wrap_model_call(request, lambda r: [m.content for m in r.messages])
        ['b']
    """

    def __init__(self, view: HistoryView, agent: str) -> None:
        super().__init__()
        self._viewer = SimpleNamespace(history=view, name=agent)

    def _seen(self, request: ModelRequest) -> ModelRequest:
        seen = view_for(self._viewer, request.messages)
        return request.override(messages=cast("list[AnyMessage]", list(seen)))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[..., Any]) -> Any:
        return handler(self._seen(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        return await handler(self._seen(request))


@contextmanager
def _viewing(name: str | None) -> Iterator[None]:
    token = _viewer.set(name)
    try:
        yield
    finally:
        _viewer.reset(token)


def _who(messages: Sequence[BaseMessage], agent: str | None) -> str | None:
    if agent is not None:
        return agent
    viewer = _viewer.get()
    if viewer is not None:
        return viewer
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.name:
            return message.name
    return None


def since_handoff(messages: list[BaseMessage], agent: str | None = None) -> list[BaseMessage]:
    """Only what happened since the conversation came to ``agent``, plus the last user message
    before that (so the agent knows what was asked). The handoff itself (the other agent's
    transfer call and its answer) is left out.
    """
    me = _who(messages, agent)
    start = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage) and message.name and message.name != me:
            start = index + 1
            while start < len(messages) and isinstance(messages[start], ToolMessage):
                start += 1  # the other agent's tool answers (the handoff) go with it
            break
    tail = messages[start:]
    if start:  # the request that was handed over, so the agent knows what was asked
        for message in reversed(messages[:start]):
            if isinstance(message, HumanMessage):
                return [message, *tail]
    return list(tail)


def without_tool_calls(messages: list[BaseMessage], agent: str | None = None) -> list[BaseMessage]:
    """The conversation without other agents' tool calls and their answers (their text stays;
    an assistant message that was only tool calls goes)."""
    me = _who(messages, agent)
    dropped: set[str] = set()
    kept: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.name != me and message.tool_calls:
            dropped.update(c.get("id") or "" for c in message.tool_calls)
            if message.content:
                kept.append(message.model_copy(update={"tool_calls": [], "invalid_tool_calls": []}))
            continue
        if isinstance(message, ToolMessage) and message.tool_call_id in dropped:
            continue
        kept.append(message)
    return kept


def last(n: int) -> HistoryView:
    """A view keeping the last ``n`` messages (fewer when the cut would orphan tool answers).

    Example:
        >>> last(0)([])
        []
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"last(n): n must be a non-negative int, got {n!r}")

    def view(messages: list[BaseMessage]) -> list[BaseMessage]:
        tail = messages[len(messages) - n :] if n else []
        while tail and isinstance(tail[0], ToolMessage):
            tail = tail[1:]  # its assistant message was cut off
        return tail

    view.__name__ = f"last_{n}"
    return view
