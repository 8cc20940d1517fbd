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
from operator import itemgetter
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ToolCallChunk,
    is_data_content_block,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.block_translators.openai import convert_to_openai_data_block
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field

from ..core.messages import OPENED_WITH_NULL, _get, ai_message_from_openai, to_openai

__all__ = ["OpenAIClientChatModel", "openai_tool_choice", "wire_messages"]

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


#: Tool choices OpenAI accepts as strings; other strings are a tool's name (ChatOpenAI's rule).
_OPENAI_TOOL_CHOICES = ("none", "auto", "required")


def openai_tool_choice(tool_choice: Any, tool_names: Sequence[str]) -> Any:
    """LangChain's ``tool_choice`` as OpenAI accepts it, mapped as ``ChatOpenAI`` maps it.

    ``"any"`` (what ``with_structured_output`` and ``create_agent`` send) and ``True`` become
    ``"required"``; a bound tool's bare name becomes ``{"type": "function", ...}``; OpenAI's
    own values and dicts go out as they are.

    >>> openai_tool_choice("any", ["add"])
    'required'
    >>> openai_tool_choice("add", ["add"])
    {'type': 'function', 'function': {'name': 'add'}}
    >>> openai_tool_choice("auto", ["add"]), openai_tool_choice(None, ["add"])
    ('auto', None)
    >>> openai_tool_choice("mul", ["add"])
    Traceback (most recent call last):
    ...
    ValueError: tool_choice 'mul' names no bound tool (tools: add); use one of them, or ...
    """
    if tool_choice is None or isinstance(tool_choice, dict):
        return tool_choice
    if isinstance(tool_choice, bool):
        return "required" if tool_choice else None
    if tool_choice == "any":
        return "required"
    if tool_choice in _OPENAI_TOOL_CHOICES:
        return tool_choice
    if isinstance(tool_choice, str) and tool_choice in tool_names:
        return {"type": "function", "function": {"name": tool_choice}}
    # ChatOpenAI sends an unknown string as is and the provider answers 400; saying so
    # here names the tools that could be meant.
    raise ValueError(
        f"tool_choice {tool_choice!r} names no bound tool (tools: {', '.join(tool_names)}); "
        f"use one of them, or {', '.join(_OPENAI_TOOL_CHOICES)}"
    )


def wire_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Swarm's message dicts for ``messages``, with LangChain's standard content blocks
    (``image``, ``audio``, ``file`` with ``base64``, ``url`` or ``file_id``) in OpenAI's
    chat-completions shape, converted by LangChain's own converter as ``ChatOpenAI`` does.
    Other blocks (``text``, OpenAI's own ``image_url``) go as given, as Swarm sends them.

    >>> from langchain_core.messages import HumanMessage
    >>> block = {"type": "image", "base64": "iVBO", "mime_type": "image/png"}
    >>> wire_messages([HumanMessage([{"type": "text", "text": "what is it?"}, block])])
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'what is it?'},
      {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBO'}}]}]
    """
    out = to_openai(messages)
    for message in out:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, dict) and is_data_content_block(block) for block in content
        ):
            message["content"] = [
                convert_to_openai_data_block(block)
                if isinstance(block, dict) and is_data_content_block(block)
                else block
                for block in content
            ]
    return out


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
        """Bind tools; they are sent as ``tools=[...]`` with Swarm's other arguments.

        ``tool_choice`` is mapped to what OpenAI accepts (:func:`openai_tool_choice`).
        """
        formatted = [convert_to_openai_tool(t) for t in tools]
        names = [t["function"]["name"] for t in formatted if "function" in t]
        return self.bind(
            tools=formatted,
            tool_choice=openai_tool_choice(tool_choice, names),
            parallel_tool_calls=parallel_tool_calls,
            **kwargs,
        )

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """Structured output by ``method``: ``"function_calling"`` (the default: one forced
        tool call), ``"json_mode"`` (``response_format={"type": "json_object"}``; the prompt
        must ask for JSON) or ``"json_schema"`` (OpenAI's structured outputs).

        >>> class Joke(BaseModel):
        ...     setup: str
        >>> class JsonClient:
        ...     def __init__(self):
        ...         self.chat = self.completions = self
        ...     def create(self, **kwargs):
        ...         self.sent = kwargs["response_format"]
        ...         return {"choices": [{"message": {"content": '{"setup": "Why?"}'}}]}
        >>> client = JsonClient()
        >>> model = OpenAIClientChatModel(client, "gpt-4o")
        >>> model.with_structured_output(Joke, method="json_mode").invoke("A joke as JSON")
        Joke(setup='Why?')
        >>> client.sent
        {'type': 'json_object'}
        """
        method = kwargs.pop("method", None) or "function_calling"
        strict = kwargs.pop("strict", None)
        if method == "function_calling":
            return super().with_structured_output(
                schema, include_raw=include_raw, strict=strict, **kwargs
            )
        if method not in ("json_mode", "json_schema"):
            raise ValueError(
                f"method {method!r} is not one of function_calling, json_mode, json_schema"
            )
        if kwargs:
            raise ValueError(f"Received unsupported arguments {kwargs}")
        pydantic = isinstance(schema, type) and issubclass(schema, BaseModel)
        if method == "json_mode":
            response_format: dict[str, Any] = {"type": "json_object"}
        else:
            spec = (
                schema.model_json_schema()  # type: ignore[union-attr]
                if pydantic
                else dict(schema)  # type: ignore[arg-type]
            )
            json_schema: dict[str, Any] = {
                "name": spec.get("title") or "output",
                "schema": spec,
            }
            if strict is not None:
                json_schema["strict"] = strict
            response_format = {"type": "json_schema", "json_schema": json_schema}
        llm = self.bind(
            response_format=response_format,
            ls_structured_output_format={"kwargs": {"method": method}, "schema": schema},
        )
        parser: Runnable[Any, Any] = (
            PydanticOutputParser(pydantic_object=schema) if pydantic else JsonOutputParser()  # type: ignore[arg-type]
        )
        if not include_raw:
            return llm | parser
        parsed = RunnablePassthrough.assign(
            parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
        )
        fallback = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=llm) | parsed.with_fallbacks(
            [fallback], exception_key="parsing_error"
        )

    # -- request ------------------------------------------------------------------------

    def _create_kwargs(
        self, messages: list[BaseMessage], stop: list[str] | None, stream: bool, kwargs: dict
    ) -> dict[str, Any]:
        tools = kwargs.get("tools") or None
        params: dict[str, Any] = {
            "model": self.model_name,
            "messages": wire_messages(messages),
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
        if kwargs.get("response_format") is not None:  # with_structured_output's JSON modes
            params["response_format"] = kwargs["response_format"]
        if stream and self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        return params

    def _create(self) -> Any:
        return self.client.chat.completions.create

    def _call(self, params: dict[str, Any]) -> Any:
        """``create(**params)`` on the sync path: an async client is a clear error."""
        create = self._create()
        if _is_async_callable(create):
            raise TypeError(_ASYNC_ONLY)
        answer = create(**params)
        if inspect.isawaitable(answer):
            _discard(answer)
            raise TypeError(_ASYNC_ONLY)
        return answer

    async def _acall(self, params: dict[str, Any]) -> Any:
        """``create(**params)`` on the async path: awaited, or a sync client's call in a
        worker thread (so the event loop is never blocked)."""
        create = self._create()
        if _is_async_callable(create):
            return await create(**params)
        answer = await asyncio.to_thread(create, **params)
        return await answer if inspect.isawaitable(answer) else answer

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
        # LangChain's content is a str; say where the provider opened with the role and null
        # (before any tool call), so the stream yields that null as Swarm does.
        opened_null = content is None and not tool_call_chunks and _get(delta, "role") is not None
        return ChatGenerationChunk(
            message=AIMessageChunk(
                content=content or "",
                tool_call_chunks=tool_call_chunks,
                usage_metadata=usage,
                response_metadata=meta,
                additional_kwargs={OPENED_WITH_NULL: True} if opened_null else {},
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
        return self._to_result(self._call(self._create_kwargs(messages, stop, False, kwargs)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response = await self._acall(self._create_kwargs(messages, stop, False, kwargs))
        return self._to_result(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for raw in self._call(self._create_kwargs(messages, stop, True, kwargs)):
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
        stream = await self._acall(self._create_kwargs(messages, stop, True, kwargs))
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
