"""One rule for tool-call arguments, streamed or not: text that is not valid JSON is an error.

A non-streamed reply's argument strings are parsed strictly (:func:`.messages.parse_tool_calls`):
``'{"name": "Bo"'`` becomes an invalid tool call, answered ``Error: ... not valid JSON`` and
never run. A streamed reply is assembled by LangChain, which parses the concatenated argument
text with ``parse_partial_json`` and so silently *repairs* it (``{"name": "Bo"}``) and the
tool runs on arguments the model never finished. :class:`StreamedArguments` listens to the
chunks of one model call and keeps each tool call's argument text as the provider sent it;
:meth:`StreamedArguments.strict` then holds the assembled reply to the non-streamed rule.

How it attaches: the core names no listener. ``Swarm`` and ``build_swarm_graph`` hand the
builder graph/options.py's ``stream_listener`` (this module's :func:`listener_for`, imported on
the first call that may stream), which the core keeps as ``GraphRuntime.listen``; a step asks it
only for a model call that may stream (a callback handler in the config, a model that streams of
itself), puts the listener in the call's config, and hands the reply to its ``finish``
(graph/core/runtime.py's ``ModelListener``). A plain run asks nothing and loads nothing.

Example:
    >>> import uuid
    >>> from langchain_core.messages import AIMessage, AIMessageChunk
    >>> from langchain_core.outputs import ChatGenerationChunk
    >>> heard = StreamedArguments()
    >>> for args in ('{"name": ', '"Bo"'):   # the model stopped before the closing brace
    ...     chunk = AIMessageChunk(content="", tool_call_chunks=[
    ...         {"index": 0, "id": "c1" if args.startswith("{") else None,
    ...          "name": "greet" if args.startswith("{") else None, "args": args}])
    ...     piece = ChatGenerationChunk(message=chunk)
    ...     heard.on_llm_new_token("", chunk=piece, run_id=uuid.uuid4())
    >>> repaired = AIMessage(content="", tool_calls=[
    ...     {"name": "greet", "args": {"name": "Bo"}, "id": "c1", "type": "tool_call"}])
    >>> reply = heard.strict(repaired)
    >>> reply.tool_calls, reply.invalid_tool_calls[0]["args"]
    ([], '{"name": "Bo"')
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk

from ..core.messages import parse_tool_calls

_Streaming: Any
try:  # what LangChain checks to stream a call made with invoke (LangGraph's "messages" mode)
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover - a LangChain without it: listen to every call
    _Streaming = None

__all__ = ["StreamedArguments", "listener_for"]


def listener_for(model: Any, config: Any, kwargs: Any) -> StreamedArguments | None:
    """A :class:`StreamedArguments` for a model call that may stream, else ``None``.

    A call streams when LangChain's ``_should_stream`` says so: a ``stream=True`` keyword, a
    model with ``streaming=True``, or a streaming callback handler in the config (LangGraph's
    ``stream_mode="messages"``, which ``Swarm.run(stream=True)`` uses). A call that cannot
    stream is left without the listener: one callback handler more costs every model call
    the callback manager's work (about a tenth of a handoff's time).

    Example:
        >>> from swarmgraph.graph import ScriptedChatModel
        >>> listener_for(ScriptedChatModel(["hi"]), {}, {}) is None
        True
        >>> isinstance(listener_for(ScriptedChatModel(["hi"]), {}, {"stream": True}),
        ...            StreamedArguments)
        True
    """
    if _Streaming is None or (kwargs or {}).get("stream"):
        return StreamedArguments()
    callbacks = (config or {}).get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks) or []
    if any(isinstance(h, _Streaming) for h in handlers):
        return StreamedArguments()
    while model is not None:  # a bound model (bind_tools) wraps the chat model
        if getattr(model, "streaming", False) is True:
            return StreamedArguments()
        if (getattr(model, "kwargs", None) or {}).get("stream"):
            return StreamedArguments()
        model = getattr(model, "bound", None)
    return None


class StreamedArguments(BaseCallbackHandler):
    """The argument text of each tool call of one streamed model call, as it was sent."""

    #: Called in the model's own thread, in order: chunks must not be reordered.
    run_inline = True

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        message = getattr(chunk, "message", None)
        if not isinstance(message, AIMessageChunk):
            return
        for piece in message.tool_call_chunks:
            slot = self.calls.setdefault(piece.get("index") or 0, {"id": None, "args": ""})
            slot["id"] = slot["id"] or piece.get("id")
            slot["args"] += piece.get("args") or ""

    def finish(self, reply: AIMessage) -> AIMessage:
        """The reply once the call is over (the core's ``ModelListener``): :meth:`strict`."""
        return self.strict(reply) if self.calls else reply

    def strict(self, reply: AIMessage) -> AIMessage:
        """``reply`` with each tool call whose streamed argument text is not a JSON object
        moved to ``invalid_tool_calls`` (its raw text and the parse error), as a non-streamed
        reply would have it; ``reply`` itself when nothing streamed or all parse."""
        if not self.calls or not reply.tool_calls:
            return reply
        names = {call["id"]: call["name"] for call in reply.tool_calls}
        raw = [
            {"id": slot["id"], "function": {"name": names[slot["id"]], "arguments": slot["args"]}}
            for _, slot in sorted(self.calls.items())
            if slot["id"] in names
        ]
        _, bad, _ = parse_tool_calls(raw)
        if not bad:
            return reply
        wrong = {call["id"] for call in bad}
        return reply.model_copy(
            update={
                "tool_calls": [c for c in reply.tool_calls if c["id"] not in wrong],
                "invalid_tool_calls": [*reply.invalid_tool_calls, *bad],
            }
        )
