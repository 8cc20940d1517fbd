"""Output formats for a shared conversation, with the swarms framework's names and results.

A history is a list of ``{"role": ..., "content": ...}`` dicts (or an object with a
``conversation_history`` list of them). :func:`format_history` renders it as one of
:data:`OUTPUT_TYPES`; an unknown name is a ``ValueError`` that lists the valid ones.

Example:
    >>> history = [{"role": "User", "content": "hi"}, {"role": "Bot", "content": "hello"}]
    >>> format_history(history, "list")
    ['User: hi', 'Bot: hello']
    >>> print(format_history(history, "str"))
    User: hi
    <BLANKLINE>
    Bot: hello
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

OutputType = Literal[
    "list",
    "dict",
    "dictionary",
    "string",
    "str",
    "all",
    "final",
    "last",
    "json",
    "yaml",
    "xml",
    "dict-all-except-first",
    "str-all-except-first",
    "dict-final",
    "list-final",
    "basemodel",
]

#: Every name :func:`format_history` accepts.
OUTPUT_TYPES: tuple[str, ...] = get_args(OutputType)

# Characters XML 1.0 cannot carry at all, even escaped; a model can still emit them.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class ChatTurn(BaseModel):
    """One entry of a shared conversation: who spoke, and what they said."""

    role: str
    content: str


class ConversationHistory(BaseModel):
    """A whole shared conversation, oldest first (the ``"basemodel"`` output type)."""

    messages: list[ChatTurn] = Field(default_factory=list)


def validate_output_type(output_type: Any) -> str:
    """Return ``output_type`` if it is one of :data:`OUTPUT_TYPES`, else raise ``ValueError``.

    Example:
        >>> validate_output_type("yaml")
        'yaml'
        >>> validate_output_type("html")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Invalid type: html. Valid output types: list, dict, dictionary, ..., basemodel
    """
    if not isinstance(output_type, str) or output_type not in OUTPUT_TYPES:
        raise ValueError(
            f"Invalid type: {output_type}. Valid output types: {', '.join(OUTPUT_TYPES)}"
        )
    return output_type


def _entries(history: Any) -> list[dict[str, Any]]:
    if hasattr(history, "conversation_history"):
        history = history.conversation_history
    return [dict(message) for message in (history or [])]


def _to_xml(entries: list[dict[str, Any]]) -> str:
    # Same shape as swarms' to_xml_string(list, root_tag="conversation"); ElementTree
    # escapes &, < and > in text, so content can never close or open a tag.
    root = ET.Element("conversation")
    for entry in entries:
        item = ET.SubElement(root, "item")
        for key, value in entry.items():
            child = ET.SubElement(item, str(key))
            child.text = _XML_ILLEGAL.sub("\ufffd", str(value))
    return ET.tostring(root, encoding="unicode")


def format_history(history: Any, output_type: str = "dict") -> Any:
    """Render a conversation history as ``output_type`` (one of :data:`OUTPUT_TYPES`).

    With ``[User: "task", A: "a1", B: "b1"]`` (each ``{"role", "content"}``):

    ==========================  ==========================================================
    ``list``                    ``["User: task", "A: a1", "B: b1"]``
    ``dict`` / ``dictionary``   the list of ``{"role", "content"}`` dicts (copies)
    ``str`` / ``string`` /      ``"role: content"`` entries joined by a blank line
    ``all``
    ``final`` / ``last``        last content, ``""`` for an empty history
    ``json``                    ``json.dumps(history)`` (compact, ASCII-escaped, as swarms)
    ``yaml``                    ``yaml.safe_dump(history, sort_keys=False)``
    ``xml``                     ``<conversation><item><role>…</role><content>…</content>
                                </item>…</conversation>``, text escaped
    ``dict-all-except-first``   the dicts from the third entry on (``history[2:]``, as
                                swarms: the task and the first reply are left out)
    ``str-all-except-first``    the contents from the third entry on, joined by ``"\\n"``
    ``list-final``              ``[last content]`` (``[]`` for an empty history)
    ``dict-final``              the last entry as a ``{"role", "content"}`` dict (``{}`` if
                                empty). swarms documents this as "the final message as a
                                dictionary" but returns a tuple of its content twice; we
                                return what it documents.
    ``basemodel``               :class:`ConversationHistory` of :class:`ChatTurn`. swarms
                                lists the name without a handler; this one is ours.
    ==========================  ==========================================================

    Raises:
        ValueError: ``output_type`` is not one of :data:`OUTPUT_TYPES`.

    Example:
        >>> history = [{"role": "User", "content": "task"}, {"role": "A", "content": "a1"},
        ...            {"role": "B", "content": "b1 <ok> & done"}]
        >>> format_history(history, "final")
        'b1 <ok> & done'
        >>> format_history(history, "dict-all-except-first")
        [{'role': 'B', 'content': 'b1 <ok> & done'}]
        >>> format_history(history[:2], "xml")
        '<conversation><item><role>User</role><content>task</content></item><item><role>A</role><content>a1</content></item></conversation>'
        >>> format_history(history, "xml")[-65:]
        '<content>b1 &lt;ok&gt; &amp; done</content></item></conversation>'

        >>> format_history(history, "basemodel").messages[1]
        ChatTurn(role='A', content='a1')
    """
    kind = validate_output_type(output_type)
    entries = _entries(history)
    if kind == "list":
        return [f"{m.get('role')}: {m.get('content')}" for m in entries]
    if kind in ("dict", "dictionary"):
        return entries
    if kind in ("str", "string", "all"):
        return "\n\n".join(f"{m.get('role')}: {m.get('content')}" for m in entries)
    if kind in ("final", "last"):
        return entries[-1].get("content", "") if entries else ""
    if kind == "json":
        return json.dumps(entries)
    if kind == "yaml":
        import yaml  # ~15 ms of import that only this format needs

        return yaml.safe_dump(entries, sort_keys=False)
    if kind == "xml":
        return _to_xml(entries)
    if kind == "dict-all-except-first":
        return entries[2:]
    if kind == "str-all-except-first":
        return "\n".join(f"{m.get('content')}" for m in entries[2:])
    if kind == "list-final":
        return [entries[-1].get("content")] if entries else []
    if kind == "dict-final":
        return entries[-1] if entries else {}
    # basemodel
    return ConversationHistory(
        messages=[
            ChatTurn(role=str(m.get("role")), content=str(m.get("content", ""))) for m in entries
        ]
    )
