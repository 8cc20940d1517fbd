"""A turn's messages as ``Session`` stores them: the caller's input as LangChain messages, the
messages a run added (the engine's own objects, no dict round trip), and a stopped run's
messages with every tool call answered.

Example:
    >>> [m.type for m in as_messages("hi")]
    ['human']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

if TYPE_CHECKING:
    from ..graph.types import Response

#: What ``Session.run`` takes as the caller's new input.
MessageInput: TypeAlias = (
    "str | Mapping[str, Any] | BaseMessage | Sequence[Mapping[str, Any] | BaseMessage]"
)


def as_messages(message: MessageInput) -> list[BaseMessage]:
    """The caller's new input as LangChain messages: a str is one user message; dicts
    (Swarm/OpenAI shape) and LangChain messages pass through
    ``swarmgraph.graph.messages.to_langchain``.

    Example:
        >>> [m.type for m in as_messages("hi")], [m.type for m in as_messages([
        ...     {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])]
        (['human'], ['system', 'human'])
    """
    from ..graph.messages import to_langchain

    if isinstance(message, str):
        return [HumanMessage(message)]
    given: Sequence[Mapping[str, Any] | BaseMessage]
    if isinstance(message, (dict, BaseMessage)):
        given = [message]
    elif isinstance(message, (list, tuple)):
        given = message
    else:
        raise TypeError(
            "message must be a str, a message dict, a LangChain message or a list of them, "
            f"got {type(message).__name__}"
        )
    # Dicts come back as new objects; only the caller's own LangChain messages need a copy.
    converted = to_langchain(given)
    pairs = zip(converted, given, strict=True)
    return [m.model_copy(deep=True) if m is src else m for m, src in pairs]


def run_messages(response: Response) -> list[BaseMessage]:
    """The messages a run added, as LangChain messages: the engine's own objects when
    ``Swarm`` made the response (no dict round trip), else converted from ``response.messages``.

    Example:
        >>> from swarmgraph.graph import Response
        >>> [m.type for m in run_messages(Response(messages=[{"role": "user", "content": "hi"}]))]
        ['human']
    """
    from ..graph.messages import to_langchain

    native = response.langchain_messages
    if native is not None and len(native) == len(response.messages):
        return list(native)
    return to_langchain(response.messages)


def answered(messages: list[BaseMessage], error: BaseException) -> list[BaseMessage]:
    """``messages`` with every tool call answered: a call the stop left unanswered gets an
    ``Error:`` saying why, so the stored conversation never ends on a call nobody answers.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> ask = AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "c1"}])
        >>> [m.content for m in answered([ask], RuntimeError("budget"))][1:]
        ['Error: the run stopped before this call ran (RuntimeError: budget)']
    """
    from ..graph.approvals import open_calls

    found = open_calls(messages)
    if found is None:
        return messages
    why = f"Error: the run stopped before this call ran ({type(error).__name__}: {error})"
    extra = [ToolMessage(why, tool_call_id=c.get("id") or "", name=c["name"]) for c in found[1]]
    return [*messages, *extra]
