"""Conversions between Swarm's OpenAI-style message dicts and LangChain messages.

The engine keeps LangChain messages in its state; users (and ``Response.messages``) speak
Swarm's dicts. Both directions run on every model call, so they are plain loops that build
messages directly instead of going through generic parsers.

Conventions (shared with the rest of the project):

- user ``{"role": "user", "content"}`` <-> ``HumanMessage``
- system / developer ``{"role": "system", "content"}`` <-> ``SystemMessage``
- assistant ``{"content", "refusal", "role", "audio", "function_call", "tool_calls", "sender"}``
  <-> ``AIMessage(name=sender)``; ``tool_calls[].function.arguments`` (a JSON string) becomes
  ``AIMessage.tool_calls[].args`` (a dict). Arguments that are not a JSON object stay in
  ``AIMessage.invalid_tool_calls`` with the raw string, so the engine can answer them with an
  error and they still round-trip.
- tool ``{"role": "tool", "tool_call_id", "tool_name", "content"}`` <-> ``ToolMessage(name=...)``
- an SDK message object in the input (``completion.choices[0].message``, any object with
  ``model_dump()``) is read as the dict the openai client would send for it

>>> msgs = to_langchain([{"role": "user", "content": "hi"},
...                      {"role": "assistant", "content": None, "sender": "Triage",
...                       "tool_calls": [{"id": "c1", "type": "function",
...                                       "function": {"name": "transfer_to_sales",
...                                                    "arguments": "{}"}}]}])
>>> [type(m).__name__ for m in msgs]
['HumanMessage', 'AIMessage']
>>> msgs[1].name, msgs[1].tool_calls[0]["name"], msgs[1].tool_calls[0]["args"]
('Triage', 'transfer_to_sales', {})
>>> to_openai(msgs)[1]["tool_calls"][0]["function"]["arguments"]
'{}'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from pydantic import BaseModel as PydanticBaseModel
from pydantic import ValidationError

__all__ = [
    "EXTRA_KEYS",
    "ai_message_from_openai",
    "message_to_langchain",
    "message_to_openai",
    "open_calls",
    "parse_tool_calls",
    "reanswer",
    "to_langchain",
    "to_openai",
]

_loads = json.loads
_dumps = json.dumps


def _get(obj: Any, key: str) -> Any:
    # Accepts plain dicts and SDK objects (openai's pydantic models) alike.
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def parse_tool_calls(raw_calls: Iterable[Any] | None) -> tuple[list, list, list]:
    """Split OpenAI tool calls into LangChain ``tool_calls``, ``invalid_tool_calls`` and raw.

    ``raw`` is the normalised OpenAI list (``id``, ``type``, ``function.name``,
    ``function.arguments``), kept so the exact argument strings survive a round trip.
    Empty arguments (``""``, sent by some servers for argument-less functions) read as ``{}``.

    >>> ok, bad, raw = parse_tool_calls([
    ...     {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
    ...     {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{oops"}}])
    >>> ok
    [{'name': 'f', 'args': {'x': 1}, 'id': 'a', 'type': 'tool_call'}]
    >>> bad[0]["args"], bad[0]["error"].startswith("Invalid JSON")
    ('{oops', True)
    """
    ok: list = []
    bad: list = []
    raw: list = []
    if not raw_calls:
        return ok, bad, raw
    for tc in raw_calls:
        fn = _get(tc, "function")
        name = _get(fn, "name") if fn is not None else None
        arguments = _get(fn, "arguments") if fn is not None else None
        tc_id = _get(tc, "id")
        raw.append(
            {
                "id": tc_id,
                "type": _get(tc, "type") or "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
        error = None
        if arguments is None or arguments == "":
            args: Any = {}
        elif isinstance(arguments, str):
            try:
                args = _loads(arguments)
            except ValueError as exc:
                error = f"Invalid JSON in arguments: {exc}"
            else:
                if not isinstance(args, dict):
                    error = f"Arguments must be a JSON object, got {type(args).__name__}"
        elif isinstance(arguments, dict):
            # Some clients hand back already-decoded arguments; keep them usable.
            args = arguments
            raw[-1]["function"]["arguments"] = _dumps(arguments)
        else:
            error = f"Arguments must be a JSON string, got {type(arguments).__name__}"
            arguments = repr(arguments)
            raw[-1]["function"]["arguments"] = arguments
        if error is None and isinstance(name, str) and name:
            ok.append({"name": name, "args": args, "id": tc_id, "type": "tool_call"})
        else:
            if error is None:
                error = "Tool call has no function name"
            bad.append(
                {
                    "name": name,
                    "args": arguments,
                    "id": tc_id,
                    "error": error,
                    "type": "invalid_tool_call",
                }
            )
    return ok, bad, raw


#: Marks an assistant message whose provider sent ``content: ""`` (not null) beside tool
#: calls, so it goes back as ``""``; ChatOpenAI ignores the key, as it does ``__openai_role__``.
KEEP_EMPTY_CONTENT = "__openai_empty_content__"


#: Marks a streamed chunk whose delta opened the reply with ``content: null`` and no tool
#: call yet (a provider that sends the role alone first): Swarm yields that null as it is.
OPENED_WITH_NULL = "__openai_opened_with_null__"


#: Keys of an input message beyond the ones its LangChain message holds (``timestamp``,
#: ``id``, an assistant's or a tool message's ``name``): kept here so the message is sent
#: with them, as Swarm sends the dict it was given (``Swarm(client=...)``); LangChain's
#: converters ignore the key.
EXTRA_KEYS = "__swarm_extra_keys__"

#: The keys each role's message is rebuilt from; any other key is an extra (EXTRA_KEYS).
_OWN_KEYS: dict[str, frozenset[str]] = {
    "user": frozenset(("role", "content", "name")),
    "system": frozenset(("role", "content", "name")),
    "developer": frozenset(("role", "content", "name")),
    "assistant": frozenset(
        ("role", "content", "refusal", "audio", "function_call", "tool_calls", "sender")
    ),
    "tool": frozenset(("role", "tool_call_id", "tool_name", "content")),
}


def ai_message_from_openai(msg: Any, name: str | None = None) -> AIMessage:
    """Build an ``AIMessage`` from an OpenAI assistant message (dict or SDK object).

    >>> m = ai_message_from_openai({"role": "assistant", "content": "hello"}, name="Bot")
    >>> m.content, m.name, m.tool_calls
    ('hello', 'Bot', [])
    """
    ok, bad, raw = parse_tool_calls(_get(msg, "tool_calls"))
    extra: dict[str, Any] = {}
    if raw:
        extra["tool_calls"] = raw
    for key in ("refusal", "audio", "function_call"):
        value = _get(msg, key)
        if value is not None:
            extra[key] = value if isinstance(value, (str, dict)) else _as_dict(value)
    content = _get(msg, "content")
    if content == "" and raw:
        # A provider's "" beside tool calls (vLLM, Ollama, Swarm's own test mock) is sent
        # back as "", as Swarm does; OpenAI's null stays null (message_to_openai).
        extra[KEEP_EMPTY_CONTENT] = True
    return AIMessage(
        content="" if content is None else content,
        name=name,
        tool_calls=ok,
        invalid_tool_calls=bad,
        additional_kwargs=extra,
    )


def _as_dict(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def _sdk_message_as_dict(m: Any, index: int) -> Mapping[str, Any]:
    """An SDK message object (openai's ``ChatCompletionMessage``, as Swarm programs append
    ``completion.choices[0].message``) as the dict the openai client would send for it."""
    dump = getattr(m, "model_dump", None)
    if not callable(dump):
        raise TypeError(
            f"message {index}: expected a dict, a LangChain message or an OpenAI message "
            f"object (with model_dump()), got {type(m).__name__}"
        )
    # What openai's client sends for a pydantic model: the fields it was given, as JSON.
    data = dump(exclude_unset=True, mode="json") if isinstance(m, PydanticBaseModel) else dump()
    if not isinstance(data, Mapping):
        raise TypeError(
            f"message {index}: {type(m).__name__}.model_dump() returned "
            f"{type(data).__name__}, not a dict"
        )
    return data


def message_to_langchain(m: Mapping[str, Any] | BaseMessage, index: int = 0) -> BaseMessage:
    """Convert one message; ``index`` only labels errors.

    >>> message_to_langchain({"role": "tool", "tool_call_id": "c1", "tool_name": "f",
    ...                       "content": "ok"}).name
    'f'
    >>> message_to_langchain({"role": "robot", "content": "x"}, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: message 3: unknown role 'robot' (expected user, assistant, ...)
    >>> message_to_langchain({"role": "user", "content": 5}, 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: message 1 (user): content: Input should be a valid string or ...
    """
    if isinstance(m, BaseMessage):
        return m
    if not isinstance(m, Mapping):
        m = _sdk_message_as_dict(m, index)
    role = m.get("role")
    try:
        message = _message_for_role(m, role, index)
    except ValidationError as err:  # a field LangChain's message refuses: say which message
        field = err.errors()[0]["loc"][:1]
        said = dict.fromkeys(e["msg"] for e in err.errors() if e["loc"][:1] == field)
        where = "".join(str(part) for part in field)
        raise ValueError(f"message {index} ({role}): {where}: {' or '.join(said)}") from None
    # a known role here: _message_for_role refused any other
    own = _OWN_KEYS[role]  # type: ignore[index]
    extras = {key: value for key, value in m.items() if key not in own}
    if extras:
        kept = {key: value for key, value in extras.items() if _json_holds(value)}
        if kept:  # a value JSON cannot hold could be neither sent nor stored: it stays out
            message.additional_kwargs[EXTRA_KEYS] = kept
    return message


def _json_holds(value: Any) -> bool:
    try:
        _dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _message_for_role(m: Mapping[str, Any], role: Any, index: int) -> BaseMessage:
    content = m.get("content")
    if content is None:
        content = ""
    if role == "user":
        return HumanMessage(content=content, name=m.get("name"))
    if role == "assistant":
        return ai_message_from_openai(m, name=m.get("sender") or m.get("name"))
    if role == "tool":
        tool_call_id = m.get("tool_call_id")
        if tool_call_id is None:
            raise ValueError(f"message {index}: tool message has no 'tool_call_id'")
        return ToolMessage(
            content=content,
            tool_call_id=tool_call_id,
            name=m.get("tool_name") or m.get("name"),
        )
    if role == "system":
        return SystemMessage(content=content, name=m.get("name"))
    if role == "developer":
        # Same marker langchain-openai uses, so ChatOpenAI sends it back as "developer".
        return SystemMessage(
            content=content,
            name=m.get("name"),
            additional_kwargs={"__openai_role__": "developer"},
        )
    raise ValueError(
        f"message {index}: unknown role {role!r} "
        "(expected user, assistant, tool, system or developer)"
    )


def to_langchain(messages: Iterable[Mapping[str, Any] | BaseMessage]) -> list[BaseMessage]:
    """Convert Swarm/OpenAI dicts to LangChain messages; LangChain messages pass through.

    >>> to_langchain([{"role": "developer", "content": "Be brief."}])[0].type
    'system'
    >>> to_langchain([{"role": "user", "content": None}])[0].content
    ''
    """
    return [message_to_langchain(m, i) for i, m in enumerate(messages)]


def _same_args(raw_arguments: Any, args: dict) -> bool:
    if raw_arguments == "" or raw_arguments is None:
        return args == {}
    try:
        return _loads(raw_arguments) == args
    except (TypeError, ValueError):
        return False


def _openai_tool_call(tc_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    # Key order as Swarm's dicts have it (the openai SDK's field order), so printed
    # messages (debug=True) read exactly as Swarm prints them.
    return {"id": tc_id, "function": {"arguments": arguments, "name": name}, "type": "function"}


def _openai_tool_calls(m: AIMessage) -> list[dict[str, Any]] | None:
    calls = m.tool_calls
    bad = m.invalid_tool_calls
    if not calls and not bad:
        return None
    raw = m.additional_kwargs.get("tool_calls")
    if raw and len(raw) == len(calls) + len(bad):
        # Reuse the original argument strings (and order) when they still describe the same
        # calls, so dict -> LangChain -> dict is the identity even for compact JSON.
        good_by_id = {tc["id"]: tc for tc in calls}
        bad_by_id = {tc["id"]: tc for tc in bad}
        out: list[dict[str, Any]] = []
        for r in raw:
            fn = _get(r, "function") or {}
            r_id = _get(r, "id")
            r_name = _get(fn, "name")
            r_args = _get(fn, "arguments")
            tc = good_by_id.pop(r_id, None)
            if tc is not None and tc["name"] == r_name:
                args = r_args if _same_args(r_args, tc["args"]) else _dumps(tc["args"])
                out.append(_openai_tool_call(r_id, r_name, args))
                continue
            itc = bad_by_id.pop(r_id, None)
            if itc is not None and itc.get("name") == r_name:
                out.append(_openai_tool_call(r_id, r_name, itc.get("args")))
                continue
            break
        else:
            return out
    out = [_openai_tool_call(tc["id"], tc["name"], _dumps(tc["args"])) for tc in calls]
    if bad:
        out.extend(_openai_tool_call(tc["id"], tc["name"], tc["args"]) for tc in bad)
    return out


def message_to_openai(m: BaseMessage | Mapping[str, Any]) -> dict[str, Any]:
    """Convert one LangChain message to Swarm's dict shape (dicts are returned as a copy).

    >>> message_to_openai(AIMessage(content="hi", name="Sales"))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'content': 'hi', 'refusal': None, 'role': 'assistant', 'audio': None,
     'function_call': None, 'tool_calls': None, 'sender': 'Sales'}
    >>> message_to_openai(ToolMessage(content="42", tool_call_id="c1", name="add"))
    {'role': 'tool', 'tool_call_id': 'c1', 'tool_name': 'add', 'content': '42'}
    """
    if isinstance(m, Mapping):
        return dict(m)
    out = _openai_dict(m)
    extras = m.additional_kwargs.get(EXTRA_KEYS)
    if extras:  # an input message's own keys, sent back as Swarm sends its dicts
        out.update(extras)
    return out


def _openai_dict(m: BaseMessage) -> dict[str, Any]:
    kind = m.type
    if kind == "ai":
        extra = m.additional_kwargs
        tool_calls = _openai_tool_calls(m)  # type: ignore[arg-type]
        refusal = extra.get("refusal")
        audio = extra.get("audio")
        function_call = extra.get("function_call")
        content: str | list[str | dict[Any, Any]] | None = m.content
        if (
            not content
            and not extra.get(KEEP_EMPTY_CONTENT)
            and (tool_calls or refusal or function_call or audio)
        ):
            # OpenAI returns content None alongside tool calls; Swarm's dicts keep that.
            content = None
        return {
            "content": content,
            "refusal": refusal,
            "role": "assistant",
            "audio": audio,
            "function_call": function_call,
            "tool_calls": tool_calls,
            "sender": m.name,
        }
    if kind == "human":
        out = {"role": "user", "content": m.content}
        if m.name is not None:
            out["name"] = m.name
        return out
    if kind == "tool":
        return {
            "role": "tool",
            "tool_call_id": m.tool_call_id,  # type: ignore[attr-defined]
            "tool_name": m.name,
            "content": m.content,
        }
    if kind == "system":
        role = m.additional_kwargs.get("__openai_role__") or "system"
        out = {"role": role, "content": m.content}
        if m.name is not None:
            out["name"] = m.name
        return out
    if isinstance(m, ChatMessage):
        return {"role": m.role, "content": m.content}
    if isinstance(m, FunctionMessage):
        return {"role": "function", "name": m.name, "content": m.content}
    raise ValueError(f"cannot convert a {type(m).__name__} (type {kind!r}) to an OpenAI message")


def to_openai(messages: Iterable[BaseMessage | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert LangChain messages to Swarm's OpenAI-style dicts.

    >>> to_openai([HumanMessage("hi"), SystemMessage("Be brief.")])
    [{'role': 'user', 'content': 'hi'}, {'role': 'system', 'content': 'Be brief.'}]
    """
    return [message_to_openai(m) for m in messages]


def open_calls(messages: Sequence[BaseMessage]) -> tuple[AIMessage, list[ToolCall]] | None:
    """The conversation's last assistant message and its calls that have no answer yet, if
    any (a step paused, or calls were held, before they ran). Only the tail is read: that
    message and the tool answers after it.

    Example:
        >>> reply = AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "1"},
        ...                                   {"name": "b", "args": {}, "id": "2"}])
        >>> found = open_calls([reply, ToolMessage("ok", tool_call_id="1")])
        >>> [c["id"] for c in found[1]], open_calls([reply, HumanMessage("hi")])
        (['2'], None)
    """
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        if not isinstance(message, AIMessage) or not message.tool_calls:
            return None
        calls = [c for c in message.tool_calls if c.get("id") not in answered]
        return (message, calls) if calls else None
    return None


def reanswer(
    messages: list[BaseMessage], call_id: str | None, content: str, only_if: str | None = None
) -> None:
    """Replace the answer to tool call ``call_id`` (a handoff that turned out otherwise)."""
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            if only_if is None or message.content == only_if:
                messages[index] = message.model_copy(update={"content": content})
            return
