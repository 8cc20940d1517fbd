"""How a step chains its middleware's ``wrap_model_call`` and ``wrap_tool_call`` hooks, as
``create_agent`` chains them: the first outermost, each calling the next through its handler,
the innermost handler the step's own model or tool call (graph/core/hooked_step.py asks the
model through them, graph/core/tool_wrapping.py runs each tool call through them).

A model call's chain is composed as LangChain composes it: each hook's handler gives it a
``ModelResponse`` (never what the hook inside returned as it is: an ``ExtendedModelResponse``
or a bare ``AIMessage``), and the ``Command`` s the hooks return with the reply are gathered,
inner first, a retried try's dropped (:class:`Composed`), for the step to apply after the reply.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> async def ask(request):
    ...     return model_response(AIMessage(f"answer to {request}"))
    >>> def loud(request, handler):
    ...     response = handler(request)
    ...     return AIMessage(response.result[0].content.upper())
    >>> composed = through([loud], "q", ask, model_layer)
    >>> reply_of(composed.response).content, composed.commands
    ('ANSWER TO Q', [])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage

from .drivers import drive

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware, ModelResponse

__all__ = [
    "Composed",
    "Layer",
    "Wraps",
    "amodel_layer",
    "athrough",
    "bound",
    "langchain_class",
    "model_layer",
    "model_response",
    "reply_of",
    "through",
]

#: LangChain's request and response classes, imported on first use (a run without middleware
#: never loads them) and kept: an import in the function costs each call.
_CLASSES: dict[str, Any] = {}


def langchain_class(name: str) -> Any:
    """LangChain's ``ModelRequest``/``ModelResponse`` or LangGraph's ``ToolCallRequest``."""
    found = _CLASSES.get(name)
    if found is None:
        from langchain.agents import middleware
        from langgraph.prebuilt import tool_node

        found = _CLASSES[name] = getattr(middleware, name, None) or getattr(tool_node, name)
    return found


def model_response(reply: AIMessage) -> ModelResponse:
    """LangChain's ``ModelResponse`` holding ``reply``: what the innermost handler of a
    ``wrap_model_call`` returns.

    Example:
        >>> model_response(AIMessage("hi")).result[0].content
        'hi'
    """
    response: ModelResponse = (_CLASSES.get("ModelResponse") or langchain_class("ModelResponse"))(
        result=[reply]
    )
    return response


#: The wrapping hook of each wrapper, bound: ``(the sync ones, the async ones)``.
Wraps = tuple[list[Callable[[Any, Any], Any]], list[Callable[[Any, Any], Any]]]


def bound(wrappers: Sequence[AgentMiddleware], hook: str) -> Wraps:
    """``hook`` (``wrap_model_call``/``wrap_tool_call``) of each of ``wrappers``, bound, and
    its async twin (``a{hook}``)."""
    return [getattr(m, hook) for m in wrappers], [getattr(m, f"a{hook}") for m in wrappers]


Layer = Callable[[Callable[[Any, Any], Any], Callable[[Any], Any]], Callable[[Any], Any]]


def through(
    hooks: list[Callable[[Any, Any], Any]],
    request: Any,
    inner: Callable[[Any], Awaitable[Any]],
    layer: Layer | None = None,
) -> Any:
    """``request`` through the sync wrapping hooks ``hooks`` (:func:`bound`; the first
    outermost) down to ``inner``, with a handler that drives ``inner`` in place (the sync
    driver never suspends). Each hook is called through a ``layer`` that hands it its handler
    (:func:`model_layer` for a model call; a plain one for a tool call)."""

    def sync_handler(req: Any) -> Any:
        body: Coroutine[Any, Any, Any] = inner(req)  # type: ignore[assignment]
        return drive(body)

    handle: Callable[[Any], Any] = sync_handler
    for wrap in reversed(hooks):
        handle = (layer or _layer)(wrap, handle)
    return handle(request)


async def athrough(
    hooks: list[Callable[[Any, Any], Any]],
    request: Any,
    inner: Callable[[Any], Awaitable[Any]],
    layer: Layer | None = None,
) -> Any:
    """``request`` through the async wrapping hooks ``hooks`` (the first outermost) down to
    ``inner``, each awaited (the async driver); ``layer`` as :func:`through` takes it."""
    handler: Callable[[Any], Awaitable[Any]] = inner
    for wrap in reversed(hooks):
        handler = (layer or _layer)(wrap, handler)
    return await handler(request)


def _layer(wrap: Callable[[Any, Any], Any], inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The handler an outer wrapping hook calls: ``wrap`` (a bound ``wrap_*_call``) around
    ``inner``."""
    return lambda request: wrap(request, inner)


@dataclass
class Composed:
    """What a ``wrap_model_call`` hook and those inside it came to, as ``create_agent``
    composes them: the ``ModelResponse``, and every ``Command`` the hooks returned with it
    (``ExtendedModelResponse``), inner first."""

    response: Any
    commands: list[Any]


def _unwrapped(result: Any, commands: list[Any]) -> Any:
    """``result`` as LangChain hands it to the hook around (a ``ModelResponse``: never an
    ``ExtendedModelResponse`` or a bare ``AIMessage``), its commands added to ``commands``."""
    if isinstance(result, Composed):
        commands.extend(result.commands)
        return result.response
    command = getattr(result, "command", None)
    response = getattr(result, "model_response", None)
    if response is not None:  # an ExtendedModelResponse
        if command is not None:
            commands.append(command)
        return response
    if isinstance(result, AIMessage):
        return model_response(result)
    return result


def model_layer(
    wrap: Callable[[Any, Any], Any], inner: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """``wrap`` around ``inner`` for a model call (sync): its handler gives it a
    ``ModelResponse``, and what it returns comes out :class:`Composed`."""

    def layer(request: Any) -> Composed:
        taken: list[Any] = []  # the inner hooks' commands, of the last try only

        def handler(req: Any) -> Any:
            taken.clear()  # a retry's commands replace the failed try's
            return _unwrapped(inner(req), taken)

        result = wrap(request, handler)
        commands = list(taken)
        return Composed(_unwrapped(result, commands), commands)

    return layer


def amodel_layer(
    wrap: Callable[[Any, Any], Any], inner: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """:func:`model_layer` for the async driver."""

    async def layer(request: Any) -> Composed:
        taken: list[Any] = []

        async def handler(req: Any) -> Any:
            taken.clear()
            return _unwrapped(await inner(req), taken)

        result = await wrap(request, handler)
        commands = list(taken)
        return Composed(_unwrapped(result, commands), commands)

    return layer


def reply_of(response: Any) -> AIMessage:
    """The AIMessage of the ``ModelResponse`` a ``wrap_model_call`` chain came to (its last;
    :class:`Composed` has unwrapped what the hooks returned)."""
    for message in reversed(getattr(response, "result", ())):
        if isinstance(message, AIMessage):
            return message
    raise TypeError(f"wrap_model_call returned no AIMessage: {response!r}")
