"""A LangChain chat model over any OpenAI-compatible client object, called exactly as Swarm does.

Only ``client.chat.completions.create(...)`` is needed. It may return openai SDK objects or
plain dicts, or an awaitable of them (``AsyncOpenAI``-style clients). The keyword arguments are
Swarm's: ``model, messages, tools (or None), tool_choice, stream`` and ``parallel_tool_calls``
only when there are tools.

>>> class EchoCompletions:
...     def create(self, **kwargs):
...         text = kwargs["messages"][-1]["content"]
...         return {"choices": [{"message": {"role": "assistant", "content": text.upper()}}]}
>>> class EchoClient:
...     class chat:
...         completions = EchoCompletions()
>>> OpenAIClientChatModel(EchoClient(), "gpt-4o").invoke("hello").content
'HELLO'
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from ..messages import _get, ai_message_from_openai, to_openai

__all__ = ["OpenAIClientChatModel"]

_DONE = object()
_ASYNC_ONLY = (
    "this client's chat.completions.create is async (e.g. AsyncOpenAI); use the async API "
    "(ainvoke/astream, Swarm.arun) or pass a synchronous client such as openai.OpenAI"
)


def _discard(awaitable: Any) -> None:
    # Close an un-awaited coroutine so Python does not warn about it later.
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _usage(usage: Any) -> UsageMetadata | None:
    if usage is None:
        return None
    prompt = _get(usage, "prompt_tokens") or 0
    completion = _get(usage, "completion_tokens") or 0
    total = _get(usage, "total_tokens") or prompt + completion
    return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": total}


def _first_choice(response: Any) -> Any:
    choices = _get(response, "choices")
    if not choices:
        raise ValueError(f"OpenAI-compatible client returned no choices: {str(response)[:300]}")
    return choices[0]


def _is_async_callable(fn: Any) -> bool:
    # AsyncOpenAI wraps its async create() in a sync decorator; unwrap to see the coroutine.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(inspect.unwrap(fn))


class OpenAIClientChatModel(BaseChatModel):
    """Wrap ``client.chat.completions.create`` as a LangChain chat model.

    Args:
        client: any object with ``chat.completions.create(**kwargs)`` (``openai.OpenAI``,
            ``openai.AsyncOpenAI``, Azure clients, or a hand-written fake).
        model_name: sent as ``model=``.
        stream_usage: ask a streamed reply for its token usage (default True).

    With a sync client, the async methods run ``create`` (and each step of a stream) in a
    worker thread via ``asyncio.to_thread`` so the event loop is never blocked.

    >>> class Fake:
    ...     def __init__(self):
    ...         self.chat = self
    ...         self.completions = self
    ...         self.kwargs = None
    ...     def create(self, **kwargs):
    ...         self.kwargs = kwargs
    ...         return {"choices": [{"message": {"content": "ok"}}]}
    >>> fake = Fake()
    >>> _ = OpenAIClientChatModel(fake, "gpt-4o").invoke("hi")
    >>> sorted(fake.kwargs)
    ['messages', 'model', 'stream', 'tool_choice', 'tools']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    client: Any = Field(default=None, exclude=True)
    model_name: str = Field(default="gpt-4o", alias="model")
    #: A streamed request asks for the usage chunk (``stream_options={"include_usage":
    #: True}``), so a streamed reply reports its tokens as a non-streamed one does.
    #: ``Swarm(client=...)`` turns it off: there the client is called exactly as Swarm calls it.
    stream_usage: bool = True

    def __init__(self, client: Any = None, model_name: str | None = None, /, **kwargs: Any):
        if client is not None:
            kwargs["client"] = client
        if model_name is not None:
            kwargs["model_name"] = model_name
        super().__init__(**kwargs)
        if self.client is None:
            raise ValueError("OpenAIClientChatModel needs a client with chat.completions.create")

    @property
    def _llm_type(self) -> str:
        return "openai-client"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "client": type(self.client).__name__}

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; they are sent as ``tools=[...]`` with Swarm's other arguments."""
        return self.bind(
            tools=[convert_to_openai_tool(t) for t in tools],
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            **kwargs,
        )

    # -- request ------------------------------------------------------------------------

    def _create_kwargs(
        self, messages: list[BaseMessage], stop: list[str] | None, stream: bool, kwargs: dict
    ) -> dict[str, Any]:
        tools = kwargs.get("tools") or None
        params: dict[str, Any] = {
            "model": self.model_name,
            "messages": to_openai(messages),
            "tools": tools,
            "tool_choice": kwargs.get("tool_choice"),
            "stream": stream,
        }
        if tools:
            parallel = kwargs.get("parallel_tool_calls")
            # Swarm's Agent default; an explicit None would be sent as null and rejected.
            params["parallel_tool_calls"] = True if parallel is None else parallel
        if stop:
            params["stop"] = stop
        if stream and self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        return params

    def _create(self) -> Any:
        return self.client.chat.completions.create

    def _sync_create(self) -> Any:
        create = self._create()
        if _is_async_callable(create):
            raise TypeError(_ASYNC_ONLY)
        return create

    # -- response -----------------------------------------------------------------------

    def _to_result(self, response: Any) -> ChatResult:
        choice = _first_choice(response)
        message = ai_message_from_openai(_get(choice, "message") or {})
        message.usage_metadata = _usage(_get(response, "usage"))
        meta: dict[str, Any] = {"model_name": _get(response, "model") or self.model_name}
        finish = _get(choice, "finish_reason")
        if finish is not None:
            meta["finish_reason"] = finish
        message.response_metadata = meta
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _to_chunk(self, chunk: Any) -> ChatGenerationChunk | None:
        usage = _usage(_get(chunk, "usage"))
        choices = _get(chunk, "choices")
        if not choices:
            if usage is None:
                return None
            return ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))
        choice = choices[0]
        delta = _get(choice, "delta") or {}
        content = _get(delta, "content")
        tool_call_chunks: list[ToolCallChunk] = []
        for tc in _get(delta, "tool_calls") or ():
            fn = _get(tc, "function")
            tool_call_chunks.append(
                {
                    "index": _get(tc, "index"),
                    "id": _get(tc, "id"),
                    "name": _get(fn, "name") if fn is not None else None,
                    "args": _get(fn, "arguments") if fn is not None else None,
                    "type": "tool_call_chunk",
                }
            )
        meta: dict[str, Any] = {}
        finish = _get(choice, "finish_reason")
        if finish is not None:
            meta["finish_reason"] = finish
            meta["model_name"] = _get(chunk, "model") or self.model_name
        return ChatGenerationChunk(
            message=AIMessageChunk(
                content=content or "",
                tool_call_chunks=tool_call_chunks,
                usage_metadata=usage,
                response_metadata=meta,
            )
        )

    # -- LangChain hooks ----------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        create = self._sync_create()
        response = create(**self._create_kwargs(messages, stop, False, kwargs))
        if inspect.isawaitable(response):
            _discard(response)
            raise TypeError(_ASYNC_ONLY)
        return self._to_result(response)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        create = self._create()
        params = self._create_kwargs(messages, stop, False, kwargs)
        if _is_async_callable(create):
            response = await create(**params)
        else:
            response = await asyncio.to_thread(create, **params)
            if inspect.isawaitable(response):
                response = await response
        return self._to_result(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        create = self._sync_create()
        stream = create(**self._create_kwargs(messages, stop, True, kwargs))
        if inspect.isawaitable(stream):
            _discard(stream)
            raise TypeError(_ASYNC_ONLY)
        for raw in stream:
            chunk = self._to_chunk(raw)
            if chunk is not None:
                yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        create = self._create()
        params = self._create_kwargs(messages, stop, True, kwargs)
        if _is_async_callable(create):
            stream = await create(**params)
        else:
            stream = await asyncio.to_thread(create, **params)
            if inspect.isawaitable(stream):
                stream = await stream
        if hasattr(stream, "__aiter__"):
            async for raw in stream:
                chunk = self._to_chunk(raw)
                if chunk is not None:
                    yield chunk
            return
        # A sync stream: pull each chunk in a worker thread so the loop stays free.
        iterator = iter(stream)
        while True:
            raw = await asyncio.to_thread(next, iterator, _DONE)
            if raw is _DONE:
                break
            chunk = self._to_chunk(raw)
            if chunk is not None:
                yield chunk
