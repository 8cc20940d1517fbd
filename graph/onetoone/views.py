"""Role-aware views of a shared conversation, and the answer a turn contributes to it.

Two agents that share one conversation must each read it as a chat in which *they*
are the assistant: their own earlier turns come back as ``assistant`` turns and the
peer's turns arrive as ``user`` turns labelled with the peer's name. Without that,
a model cannot tell its own words from the other agent's.

The view is a pure function of the shared history, and the history only ever grows,
so an agent's request in loop *n + 1* starts with exactly the messages of its request
in loop *n*: a stable prefix that provider prompt caches can reuse.

Example:
    >>> history = [
    ...     {"role": "User", "content": "Write a tagline."},
    ...     {"role": "Writer", "content": "Passwords, handled."},
    ...     {"role": "Editor", "content": "Shorter."},
    ... ]
    >>> prior, task = split_last_turn(messages_for("Writer", history))
    >>> for turn in prior:
    ...     print(turn)
    {'role': 'user', 'content': 'Write a tagline.'}
    {'role': 'assistant', 'content': 'Passwords, handled.'}
    >>> task
    'Editor: Shorter.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The task an agent gets when nothing new arrived since its own last turn.
NO_NEW_MESSAGES = "No new messages since your last turn. Continue from your own previous response."

# Bookkeeping rows (team rosters, instructions) belong in a system prompt, not the chat body.
_DROPPED_ROLES = frozenset({"system"})
_USER_ROLES = frozenset({"user", "human"})


def _history_of(conversation: Any) -> list:
    """The list of entries in ``conversation``: a list itself, or its ``.conversation_history``."""
    if conversation is None:
        return []
    if hasattr(conversation, "conversation_history"):
        return list(conversation.conversation_history or [])
    return list(conversation)


def messages_for(agent_name: str, conversation: Any) -> list[dict[str, str]]:
    """A shared conversation as chat turns, from ``agent_name``'s point of view.

    ``conversation`` is a list of ``{"role", "content"}`` dicts, or any object with a
    ``conversation_history`` list of them (a swarms ``Conversation``). Rules, in order:

    - entries that are not dicts, or whose content is missing or blank, are dropped;
    - the agent's own entries (``role == agent_name``, exact match) become ``assistant``;
    - ``system`` entries are dropped (any case);
    - ``user`` / ``human`` entries (any case) become plain ``user`` turns;
    - any other speaker becomes a ``user`` turn ``"Name: content"``.

    Non-string content is rendered with ``str()``. The result is a new list of new dicts.

    Example:
        >>> history = [
        ...     {"role": "system", "content": "Team: Writer, Editor"},
        ...     {"role": "User", "content": "draft it"},
        ...     {"role": "Writer", "content": "here is a draft"},
        ...     {"role": "Editor", "content": ""},
        ...     {"role": "Editor", "content": "needs a stronger opening"},
        ... ]
        >>> for m in messages_for("Writer", history):
        ...     print(m)
        {'role': 'user', 'content': 'draft it'}
        {'role': 'assistant', 'content': 'here is a draft'}
        {'role': 'user', 'content': 'Editor: needs a stronger opening'}
        >>> messages_for("Editor", history)[1]
        {'role': 'user', 'content': 'Writer: here is a draft'}
    """
    turns: list[dict[str, str]] = []
    for entry in _history_of(conversation):
        if not isinstance(entry, Mapping):
            continue
        content = entry.get("content")
        if content is None:
            continue
        content = content if isinstance(content, str) else str(content)
        if not content.strip():
            continue
        role = entry.get("role")
        if role == agent_name:
            turns.append({"role": "assistant", "content": content})
            continue
        role_key = str(role).lower()
        if role_key in _DROPPED_ROLES:
            continue
        if role_key in _USER_ROLES:
            turns.append({"role": "user", "content": content})
        else:
            turns.append({"role": "user", "content": f"{role}: {content}"})
    return turns


def split_last_turn(
    messages: Sequence[Mapping[str, Any]], fallback: str = NO_NEW_MESSAGES
) -> tuple[list[dict[str, Any]], str]:
    """Split chat turns into ``(prior, task)``: the history, and this run's instruction.

    Agents take the newest turn as a separate ``task``, so it is not repeated at the end
    of ``prior``; ``prior + [{"role": "user", "content": task}]`` is the whole request.

    - empty list -> ``([], fallback)``;
    - newest turn's content blank -> ``(all but the newest, fallback)``;
    - newest turn is an ``assistant`` turn (the agent spoke last; the peer said nothing
      new) -> ``(all turns, fallback)``, so the agent's own words are never sent back to
      it as if a user had said them (swarms would hand them over as the task);
    - otherwise ``(all but the newest, newest content)``.

    Example:
        >>> split_last_turn([{"role": "user", "content": "hi"}])
        ([], 'hi')
        >>> split_last_turn([])[1] == NO_NEW_MESSAGES
        True
        >>> prior, task = split_last_turn(
        ...     [{"role": "user", "content": "hi"}, {"role": "user", "content": "  "}], "go on"
        ... )
        >>> prior, task
        ([{'role': 'user', 'content': 'hi'}], 'go on')
        >>> spoke_last = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
        >>> prior, task = split_last_turn(spoke_last, "go on")
        >>> len(prior), task
        (2, 'go on')
    """
    turns = [dict(m) for m in messages]
    if not turns:
        return [], fallback
    last = turns[-1]
    content = last.get("content")
    if content is None or not str(content).strip():
        return turns[:-1], fallback
    if last.get("role") == "assistant":
        return turns, fallback
    return turns[:-1], content if isinstance(content, str) else str(content)


def _text_of(content: Any) -> str | None:
    """Text of a message content: a string, or the text parts of a content-block list."""
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        text = "".join(parts)
        return text if text.strip() else None
    return None


def _role_of(message: Any) -> str | None:
    """OpenAI role of a dict or a LangChain message (``"ai"`` counts as ``"assistant"``)."""
    if isinstance(message, Mapping):
        role = message.get("role")
    else:
        role = getattr(message, "role", None) or getattr(message, "type", None)
    return "assistant" if role == "ai" else role


def _content_of(message: Any) -> Any:
    if isinstance(message, Mapping):
        return message.get("content")
    return getattr(message, "content", message if isinstance(message, str) else None)


def _answer_from_messages(messages: Sequence[Any], own_roles: set[str]) -> str | None:
    """Last non-blank text from one of ``own_roles``; failing that, from anyone."""
    for wanted_own in (True, False):
        for message in reversed(messages):
            if wanted_own and _role_of(message) not in own_roles:
                continue
            text = _text_of(_content_of(message))
            if text is not None:
                return text
    return None


def agent_answer(agent_or_output: Any, fallback: Any = None, *, name: str | None = None) -> Any:
    """The text one turn contributes to a shared conversation, or ``fallback``.

    A side's ``run`` may return a whole transcript rather than its answer; recording
    that would re-inject everything the agent was given. What is accepted, checked in
    this order ("blank" means empty or whitespace-only and counts as nothing usable):

    - ``None`` -> ``fallback``;
    - a ``str`` -> itself, unless blank;
    - a graph ``Response`` or anything with a ``messages`` list (a LangGraph state
      object) -> the last non-blank ``assistant`` content (LangChain ``ai`` messages
      count), else the last non-blank content of any message;
    - a ``list`` of message dicts, LangChain messages or strings -> the last non-blank
      content whose role is ``"assistant"`` or ``name``, else the last non-blank one;
    - a dict -> its ``"content"`` if non-blank, else its ``"messages"`` list as above;
    - an object with ``.content`` (a LangChain message) -> that text;
    - an object with ``short_memory.get_final_message_content()`` (a swarms ``Agent``)
      -> that text.

    Content given as a list of content blocks contributes its ``"text"`` blocks.
    Anything else (numbers, unknown objects) -> ``fallback``.

    Example:
        >>> from swarmgraph.graph.core.types import Response
        >>> agent_answer(Response(messages=[
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        ...     {"role": "tool", "tool_call_id": "1", "content": "42"},
        ...     {"role": "assistant", "content": "The answer is 42."},
        ... ]))
        'The answer is 42.'
        >>> agent_answer("  ", fallback="(nothing)")
        '(nothing)'
        >>> agent_answer([{"role": "User", "content": "hi"}, {"role": "Writer", "content": "draft"},
        ...               {"role": "Editor", "content": "ok"}], name="Writer")
        'draft'
        >>> agent_answer({"content": "done"})
        'done'
    """
    value = agent_or_output
    own_roles = {"assistant"} if name is None else {"assistant", name}
    if value is None:
        return fallback
    if isinstance(value, str):
        return value if value.strip() else fallback
    if isinstance(value, Mapping):
        text = _text_of(value.get("content"))
        if text is None and isinstance(value.get("messages"), list):
            text = _answer_from_messages(value["messages"], own_roles)
        return fallback if text is None else text
    if isinstance(value, (list, tuple)):
        text = _answer_from_messages(value, own_roles)
        return fallback if text is None else text
    messages = getattr(value, "messages", None)
    if isinstance(messages, list):
        text = _answer_from_messages(messages, own_roles)
        return fallback if text is None else text
    if hasattr(value, "content"):
        text = _text_of(value.content)
        return fallback if text is None else text
    memory = getattr(value, "short_memory", None)
    if memory is not None and callable(getattr(memory, "get_final_message_content", None)):
        try:
            text = _text_of(memory.get_final_message_content())
        except Exception:  # a nested structure's memory may be empty; that is "no answer"
            text = None
        return fallback if text is None else text
    return fallback
