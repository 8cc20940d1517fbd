"""``Swarm()``'s default model: ``ChatOpenAI`` that keeps the two nulls Swarm keeps.

LangChain's messages hold text, so ``ChatOpenAI`` reads a provider's ``content: null`` and
``content: ""`` alike as ``""``. Swarm passes on what the provider sent, and two of those
differences are visible to a Swarm program:

- a streamed reply that opens with the role and ``content: null`` before its first tool call
  (as some OpenAI-compatible servers do): Swarm yields that opening delta with ``None``, and
  its REPL prints ``S: : tool()`` for ``""``;
- ``content: ""`` beside tool calls (vLLM, Ollama): Swarm keeps ``""`` in the message and
  sends it back as ``""``, where ``ChatOpenAI`` would send ``null``.

Each is marked on the message with the adapter's own markers (graph/core/messages.py), which
``ChatOpenAI`` itself ignores, as ``OpenAIClientChatModel`` marks them on ``Swarm(client=)``.
Imported only when the default model is made (langchain_openai is heavy).

Example:
    >>> model = SwarmChatOpenAI(model="gpt-4o", api_key="offline")
    >>> model.model_name, isinstance(model, ChatOpenAI)
    ('gpt-4o', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

from ..core.messages import KEEP_EMPTY_CONTENT, OPENED_WITH_NULL

__all__ = ["SwarmChatOpenAI"]


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


class SwarmChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` whose replies say where the provider sent ``null`` or ``""`` as Swarm
    would pass them on (see the module's docstring); everything else is ``ChatOpenAI``'s."""

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict,
        default_chunk_class: type,
        base_generation_info: dict | None,
    ) -> ChatGenerationChunk | None:
        out = super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )
        choices = chunk.get("choices") or ()
        delta = _field(choices[0], "delta") if choices else None
        if (
            out is not None
            and delta is not None
            and _field(delta, "role") is not None
            and _field(delta, "content") is None
            and not _field(delta, "tool_calls")
        ):
            out.message.additional_kwargs[OPENED_WITH_NULL] = True
        return out

    def _create_chat_result(
        self, response: dict | Any, generation_info: dict | None = None
    ) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        choices = _field(response, "choices") or ()
        for choice, generation in zip(choices, result.generations, strict=False):
            message = _field(choice, "message")
            if (
                isinstance(generation.message, AIMessage)
                and _field(message, "content") == ""
                and _field(message, "tool_calls")
            ):
                generation.message.additional_kwargs[KEEP_EMPTY_CONTENT] = True
        return result

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        sent = payload.get("messages")
        if not isinstance(sent, list):  # the Responses API: not Swarm's wire
            return payload
        messages = self._convert_input(input_).to_messages()
        if len(messages) != len(sent):
            return payload
        for message, wire in zip(messages, sent, strict=True):
            if (
                isinstance(message, AIMessage)
                and message.additional_kwargs.get(KEEP_EMPTY_CONTENT)
                and wire.get("content") is None
            ):
                wire["content"] = ""  # ChatOpenAI sends null beside tool calls; Swarm, ""
        return payload
