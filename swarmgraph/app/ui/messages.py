"""Stored LangChain messages as AG-UI messages, each marked with what the memory model did.

A message's ``metadata["swarmgraph"]`` says whether it is ``stored`` (in the Session's store)
and whether it went ``in_prompt`` (into the history the memory model handed the last run:
a window, a token trim, a summary or a retrieval shows here what it dropped, and a summary
it added shows as a message that is in the prompt but not stored).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> shown = agui_messages([HumanMessage("hi", id="m1"), AIMessage("yo", id="m2", name="Doc")],
    ...                       in_prompt={"m2"})
    >>> [(m.role, m.metadata["swarmgraph"]["in_prompt"]) for m in shown]
    [('user', False), ('assistant', True)]
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from ag_ui.core import Message
from langchain_core.messages import BaseMessage

__all__ = ["agui_message_dicts", "agui_messages", "arguments_json", "message_text"]

#: ``json.dumps(value, ensure_ascii=False)``, its encoder made once (``json.dumps`` with an
#: option makes one per call, which costs more than encoding a call's small arguments).
arguments_json = json.JSONEncoder(ensure_ascii=False).encode


def message_text(content: Any) -> str:
    """A message's content as one text (a list of parts: their text joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, (str, dict))
        )
    return "" if content is None else str(content)


def agui_messages(
    messages: Sequence[BaseMessage],
    *,
    in_prompt: Collection[str] = (),
    stored: bool = True,
    this_turn: Collection[str] = (),
) -> list[Message]:
    """``messages`` as AG-UI messages (ids kept), marked ``stored`` and ``in_prompt``."""
    from pydantic import TypeAdapter

    shown = agui_message_dicts(messages, in_prompt=in_prompt, stored=stored, this_turn=this_turn)
    return TypeAdapter(list[Message]).validate_python(shown)


def agui_message_dicts(
    messages: Sequence[BaseMessage],
    *,
    in_prompt: Collection[str] = (),
    stored: bool = True,
    this_turn: Collection[str] = (),
) -> list[dict[str, Any]]:
    """:func:`agui_messages` as the JSON the wire carries (what a run's log keeps: no model
    is built until a client reads it).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> agui_message_dicts([HumanMessage("hi", id="m1")])  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'user', 'id': 'm1', 'content': 'hi',
          'metadata': {'swarmgraph': {'stored': True, 'in_prompt': False, 'this_turn': False}}}]
    """
    shown: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        mid = message.id or f"unstored-{number}"
        marks: dict[str, bool | str] = {
            "stored": stored,
            "in_prompt": mid in in_prompt,
            "this_turn": mid in this_turn,
        }
        meta = {"swarmgraph": marks}
        text = message_text(message.content)
        kind = message.type
        if kind == "human":
            shown.append({"role": "user", "id": mid, "content": text, "metadata": meta})
        elif kind == "ai":
            calls = [
                {
                    "id": str(call.get("id") or f"{mid}-{index}"),
                    "type": "function",
                    "function": {
                        "name": str(call.get("name", "")),
                        "arguments": arguments_json(call.get("args", {})),
                    },
                }
                for index, call in enumerate(getattr(message, "tool_calls", None) or [])
            ]
            said: dict[str, Any] = {"role": "assistant", "id": mid}
            if message.name is not None:
                said["name"] = message.name
            if text:
                said["content"] = text
            if calls:
                said["toolCalls"] = calls
            said["metadata"] = meta
            shown.append(said)
        elif kind == "tool":
            call_id = str(getattr(message, "tool_call_id", "") or "")
            marks["tool"] = message.name or ""
            shown.append(
                {"role": "tool", "id": mid, "toolCallId": call_id, "content": text,
                 "metadata": meta}
            )  # fmt: skip
        else:  # system (a summary the memory model wrote), or anything else, as system text
            shown.append({"role": "system", "id": mid, "content": text, "metadata": meta})
    return shown
