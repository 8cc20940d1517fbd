"""An offline, deterministic, tool-calling LangChain chat model for tests, demos and notebooks.

``ScriptedChatModel`` returns the replies it was given, in order, whichever agent calls it.
Every call is recorded (``.calls``), so a test can check what each agent actually saw.

>>> from langchain_core.messages import HumanMessage
>>> model = ScriptedChatModel(["Hello!", scripted_tool_call("transfer_to_sales")])
>>> model.invoke([HumanMessage("hi")]).content
'Hello!'
>>> model.invoke([HumanMessage("bees?")]).tool_calls[0]["name"]
'transfer_to_sales'
>>> len(model.calls)
2
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from ..core.errors import SwarmgraphError
from ..core.marks import loaded

__all__ = [
    "ScriptExhaustedError",
    "ScriptSharedError",
    "ScriptedChatModel",
    "ScriptedReply",
    "scripted_tool_call",
    "scripted_tool_calls",
]


class ScriptExhaustedError(SwarmgraphError, RuntimeError):
    """The model was called more times than it had scripted replies (and has no ``respond``)."""


class ScriptSharedError(SwarmgraphError, RuntimeError):
    """One ``ScriptedChatModel``'s list of replies was asked for by two parallel branches of
    one fan-out: which branch gets which reply would depend on timing. Give each agent its own
    model, or script it with ``respond=`` (a function of the messages it is sent)."""


#: One scripted reply: a message, its text, an exception to raise (simulates an API error),
#: or a function of the messages the model was sent that returns one of those.
ScriptedReply = AIMessage | str | BaseException | Callable[[list[BaseMessage]], Any]

# Split before each word that follows whitespace: the pieces join back to the exact text.
_WORD_BOUNDARY = re.compile(r"(?<=\s)(?=\S)")


def scripted_tool_call(
    name: str, args: dict[str, Any] | None = None, *, content: str = "", id: str | None = None
) -> AIMessage:
    """A reply that calls one tool.

    >>> scripted_tool_call("add", {"a": 1}, id="c1").tool_calls
    [{'name': 'add', 'args': {'a': 1}, 'id': 'c1', 'type': 'tool_call'}]
    """
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": dict(args or {}), "id": id, "type": "tool_call"}],
    )


def scripted_tool_calls(
    calls: Sequence[tuple[str, dict[str, Any] | None] | tuple[str, dict[str, Any] | None, str]],
    content: str = "",
) -> AIMessage:
    """A reply that calls several tools at once; items are ``(name, args)`` or ``(name, args, id)``.

    >>> [c["name"] for c in scripted_tool_calls([("a", {}), ("b", {"x": 1})]).tool_calls]
    ['a', 'b']
    """
    tool_calls = []
    for item in calls:
        name, args = item[0], item[1]
        tc_id = item[2] if len(item) > 2 else None
        tool_calls.append(
            {"name": name, "args": dict(args or {}), "id": tc_id, "type": "tool_call"}
        )
    return AIMessage(content=content, tool_calls=tool_calls)


class _Shown(str):
    """Text a repr shows as is (no quotes)."""

    def __repr__(self) -> str:
        return str(self)


def _describe(message: BaseMessage | None) -> str:
    if message is None:
        return "(no messages)"
    text = message.content if isinstance(message.content, str) else str(message.content)
    if len(text) > 200:
        text = text[:200] + "..."
    label = message.type + (f" {message.name!r}" if message.name else "")
    return f"[{label}] {text!r}"


class ScriptedChatModel(BaseChatModel):
    """Replies with the scripted messages in order; records every call.

    Args:
        responses: ``AIMessage``, ``str``, an exception instance (raised when reached) or a
            callable ``(messages) -> AIMessage | str``.
        respond: used for every call after the script runs out (endless rule-based mode);
            without it an exhausted script raises ``ScriptExhaustedError``.
        latency: seconds each call waits (``asyncio.sleep`` on the async path, so concurrent
            async calls overlap).
        model_name: the name tracing reports (``ls_model_name``), default ``"scripted"``.

    >>> from langchain_core.messages import HumanMessage
    >>> echo = ScriptedChatModel([], respond=lambda msgs: "you said " + msgs[-1].content)
    >>> echo.invoke([HumanMessage("ping")]).content
    'you said ping'
    >>> once = ScriptedChatModel(["only one"])
    >>> once.invoke("a").content
    'only one'
    >>> try:
    ...     once.invoke([HumanMessage("b")])
    ... except ScriptExhaustedError as exc:
    ...     print(exc)
    ScriptedChatModel ran out of replies: 1 scripted, this is call 2. Last message sent: [human] 'b'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: list[Any] = Field(default_factory=list)
    respond: Callable[[list[BaseMessage]], Any] | None = None
    latency: float = 0.0
    #: The model name tracing reports (LangSmith's ``ls_model_name``); the replies are the
    #: script's whatever ``agent.model`` asks for.
    model_name: str = "scripted"

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _next: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _bound_tools: list[list[dict[str, Any]] | None] = PrivateAttr(default_factory=list)
    #: Fan-out id -> the branch that took this model's scripted replies there (see ``_take``).
    _branch_of: dict[str, str] = PrivateAttr(default_factory=dict)

    def __init__(self, responses: Sequence[Any] = (), /, **kwargs: Any) -> None:
        kwargs["responses"] = list(responses)  # positional, as the scripted replies read best
        super().__init__(**kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"scripted_replies": len(self.responses), "latency": self.latency}

    def __repr_args__(self) -> Any:
        """The script as its length past a few replies.

        LangChain reprs a model it cannot serialize the first time a callback sees a call
        (``BaseChatModel._serialized``): a benchmark's script of 100,000 replies took 40 s
        of one run there.

        >>> ScriptedChatModel(["ok"] * 1000)
        ScriptedChatModel(...responses=<1000 scripted replies>)
        >>> ScriptedChatModel(["ok"])
        ScriptedChatModel(...responses=['ok'])
        """
        for name, value in super().__repr_args__():
            if name == "responses" and len(value) > 8:
                value = _Shown(f"<{len(value)} scripted replies>")
            yield name, value

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The messages of every call so far, in call order."""
        return self._calls

    @property
    def bound_tools(self) -> list[list[dict[str, Any]] | None]:
        """The OpenAI-format tools bound at each call (``None`` where none were bound)."""
        return self._bound_tools

    def reset(self) -> None:
        """Forget recorded calls and start the script from the top."""
        with self._lock:
            self._next = 0
            self._branch_of.clear()
            self._calls.clear()
            self._bound_tools.clear()

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (functions, pydantic models, LangChain tools or OpenAI dicts).

        >>> m = ScriptedChatModel(["ok"])
        >>> _ = m.bind_tools([{"type": "function", "function": {"name": "f"}}]).invoke("hi")
        >>> m.bound_tools[0][0]["function"]["name"]
        'f'
        """
        bind_kwargs: dict[str, Any] = {"tools": [convert_to_openai_tool(t) for t in tools]}
        if tool_choice is not None:
            bind_kwargs["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            bind_kwargs["parallel_tool_calls"] = parallel_tool_calls
        return self.bind(**bind_kwargs, **kwargs)

    # -- the script ---------------------------------------------------------------------

    def _take(self, messages: list[BaseMessage], tools: Any) -> tuple[Any, int]:
        with self._lock:
            n = self._next
            if n < len(self.responses):
                self._check_not_shared()
            self._next += 1
            self._calls.append(list(messages))
            self._bound_tools.append(tools)
        if n < len(self.responses):
            return self.responses[n], n
        if self.respond is not None:
            return self.respond, n
        raise ScriptExhaustedError(
            f"ScriptedChatModel ran out of replies: {len(self.responses)} scripted, "
            f"this is call {n + 1}. Last message sent: "
            f"{_describe(messages[-1] if messages else None)}"
        )

    def _check_not_shared(self) -> None:
        """Refuse a scripted reply to a second branch of one fan-out: two concurrent branches
        would take the replies in whichever order they ask, so a branch would get another's
        reply, differently from one run to the next. A nested branch may follow its parent
        (the parent waits for it); branches of fan-outs that ran one after the other may
        share the model."""
        scope = loaded("fan_out_scope")  # not imported: no fan-out ever ran here
        where = scope.current_fan_out() if scope is not None else None
        if where is None:
            return
        fan_out, path = where
        first = self._branch_of.setdefault(fan_out, path)
        if first == path or path.startswith(f"{first}/") or first.startswith(f"{path}/"):
            return
        one, other = sorted((first, path))
        raise ScriptSharedError(
            f"one ScriptedChatModel's scripted replies were asked for by parallel branches "
            f"{one!r} and {other!r} of one fan-out: which branch gets which reply would depend "
            "on timing. Give one model per agent (Swarm(chat_model={...}.__getitem__) keyed by "
            "Agent(model=...)), or script a shared model with respond= (a function of the "
            "messages each branch sends)"
        )

    def _reply(self, messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        tools = kwargs.get("tools")
        item, n = self._take(messages, tools)
        if callable(item) and not isinstance(item, (AIMessage, BaseException)):
            item = item(list(messages))
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            message = AIMessage(content=item)
        elif isinstance(item, AIMessage):
            # A fresh copy each call: the engine may keep it, and ids must not leak between calls.
            message = AIMessage(
                content=item.content,
                name=item.name,
                id=item.id,
                tool_calls=[dict(tc) for tc in item.tool_calls],
                invalid_tool_calls=[dict(tc) for tc in item.invalid_tool_calls],
                additional_kwargs=dict(item.additional_kwargs),
                response_metadata=dict(item.response_metadata),
                usage_metadata=item.usage_metadata,
            )
        else:
            raise TypeError(
                f"ScriptedChatModel reply {n + 1} must be an AIMessage or str, "
                f"got {type(item).__name__}"
            )
        for i, tc in enumerate(message.tool_calls):
            if not tc.get("id"):
                tc["id"] = f"call_{n}_{i}"
        offset = len(message.tool_calls)
        for i, bad in enumerate(message.invalid_tool_calls):
            if not bad.get("id"):
                bad["id"] = f"call_{n}_{offset + i}"
        if message.usage_metadata is None:
            input_tokens = count_tokens_approximately(messages, tools=tools)
            output_tokens = count_tokens_approximately([message])
            message.usage_metadata = {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            }
        message.response_metadata.setdefault("model_name", "scripted")
        return message

    # -- LangChain hooks ----------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, **kwargs))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, **kwargs))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.latency:
            time.sleep(self.latency)
        yield from _chunks(self._reply(messages, **kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.latency:
            await asyncio.sleep(self.latency)
        for chunk in _chunks(self._reply(messages, **kwargs)):
            yield chunk


def _chunks(message: AIMessage) -> list[ChatGenerationChunk]:
    """Cut a reply into chunks whose sum is the reply (content, then one chunk per tool call)."""
    out: list[AIMessageChunk] = []
    content = message.content
    if isinstance(content, str):
        out.extend(
            AIMessageChunk(content=piece) for piece in _WORD_BOUNDARY.split(content) if piece
        )
    else:
        out.append(AIMessageChunk(content=content))
    index = 0
    for tc in message.tool_calls:
        out.append(
            AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {
                        "name": tc["name"],
                        "args": json.dumps(tc["args"]),
                        "id": tc["id"],
                        "index": index,
                        "type": "tool_call_chunk",
                    }
                ],
            )
        )
        index += 1
    for bad in message.invalid_tool_calls:
        out.append(
            AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {
                        "name": bad.get("name"),
                        "args": bad.get("args"),
                        "id": bad.get("id"),
                        "index": index,
                        "type": "tool_call_chunk",
                    }
                ],
            )
        )
        index += 1
    if not out:
        out.append(AIMessageChunk(content=""))
    last = out[-1]
    last.usage_metadata = message.usage_metadata
    last.response_metadata = dict(message.response_metadata)
    if message.name is not None:
        out[0].name = message.name
    if message.additional_kwargs:
        out[0].additional_kwargs = dict(message.additional_kwargs)
    return [ChatGenerationChunk(message=c) for c in out]
