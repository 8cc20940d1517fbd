"""Long-term memory in the demo: what the **offline demo model** (a rule-based stand-in, not a
model) remembers, recalls and forgets when ``swarmgraph chat --user ID`` gives the demo agents
the memory tools (``Agent(memory_tools=True)``).

The rules are deliberately few and read only the latest user message, so what is stored is
predictable: "I'm Ming" remembers ``name``; "my favourite honey is heather" remembers
``favourite_honey`` (any "my <one to three words> is <value>"); "forget my favourite honey"
forgets it; "what is my favourite honey?" answers from the recalled facts, and "what do you
remember about me?" lists them. A real model decides
for itself; these rules only make the memory visible without an API key. What the model is
told it remembers comes from the recall block of its system prompt
(:mod:`swarmgraph.memory.recall_block`), which it reads back here as data: each value a JSON
string, never an instruction.

Example:
    >>> system = "You are Triage. " + MEMORY_NOTE
    >>> [(c["name"], c["args"]) for c in memory_reply(system, "I'm Ming. My pet is a bee.",
    ...                                              {}, 1).tool_calls]
    [('remember', {'key': 'name', 'value': 'Ming'}), ('remember', {'key': 'pet', 'value': 'a bee'})]
    >>> recalled('You are Triage.\\n\\n<memory>\\n...\\n- name: "Ming"\\n</memory>')
    {'name': 'Ming'}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from langchain_core.messages import AIMessage

from ..graph.chat_models.scripted import scripted_tool_calls

#: Added to a demo agent's instructions when it has the memory tools: how the model (and the
#: rule-based stand-in) knows it may call them.
MEMORY_NOTE = (
    "Save lasting facts about the customer with remember, and drop them with forget when asked."
)

_NAME = re.compile(r"\b(?i:I'm|I am|my name is|call me)\s+([A-Z][\w-]*)")
_FACT = re.compile(
    r"\bmy ((?:[a-z]+ ){0,2}[a-z]+) is (?:called |named )?([^.,;!?]+)", re.IGNORECASE
)
_FORGET = re.compile(r"\bforget (?:my |about my )?((?:[a-z]+ ){0,2}[a-z]+)", re.IGNORECASE)
_ASKS = re.compile(r"\bwhat do you (?:remember|know) about me\b", re.IGNORECASE)
_ASK_FACT = re.compile(r"\bwhat(?:'s| is) my ((?:[a-z]+ ){0,2}[a-z]+)", re.IGNORECASE)
_LINE = re.compile(r'^- ([A-Za-z0-9_.-]+): (".*")')


def _key(words: str) -> str:
    return "_".join(words.lower().split())


def said_facts(text: str) -> dict[str, str]:
    """What the rules remember from ``text``: ``{key: value}`` in the order said.

    Example:
        >>> said_facts("Hi, I'm Ming. My favourite honey is heather!")
        {'name': 'Ming', 'favourite_honey': 'heather'}
        >>> said_facts("my name is Ana")  # a name is said once, as name
        {'name': 'Ana'}
    """
    found: dict[str, str] = {}
    name = _NAME.search(text)
    if name:
        found["name"] = name[1]
    for match in _FACT.finditer(text):
        key = _key(match[1])
        if key != "name" and key not in found:
            found[key] = match[2].strip()
    return found


def recalled(system: str) -> dict[str, str]:
    """The facts of the recall block in ``system`` (``{}``: none), values read as JSON."""
    if "<memory>" not in system:
        return {}
    block = system[system.index("<memory>") : system.find("</memory>")]
    found: dict[str, str] = {}
    for line in block.splitlines():
        match = _LINE.match(line)
        if match:
            found[match[1]] = str(json.loads(match[2]))
    return found


def memory_reply(
    system: str, text: str, done: Mapping[str | None, str], n: int
) -> AIMessage | str | None:
    """The stand-in's memory move for the latest user ``text`` (``None``: none, go on with the
    agent's own rules): forget what the user asks to forget, remember what they said that is
    not remembered with that value yet, or answer "what do you remember about me?"."""
    if MEMORY_NOTE not in system or "remember" in done or "forget" in done:
        return None
    known = recalled(system)
    gone = _FORGET.search(text)
    if gone:
        key = _key(gone[1])
        return scripted_tool_calls([("forget", {"key": key}, f"call_forget_{n}")])
    new = {k: v for k, v in said_facts(text).items() if known.get(k) != v}
    if new:
        calls = [
            ("remember", {"key": k, "value": v}, f"call_remember_{n}_{i}")
            for i, (k, v) in enumerate(new.items())
        ]
        return scripted_tool_calls(calls)
    asked = [_key(m[1]) for m in _ASK_FACT.finditer(text)]
    if asked:
        return " ".join(
            f"Your {k.replace('_', ' ')} is {known[k]}."
            if k in known
            else f"I don't remember your {k.replace('_', ' ')}."
            for k in asked
        )
    if _ASKS.search(text):
        if not known:  # recall is lexical: only facts sharing a word with the message come
            return "Nothing I remember matches what you said; ask me about it by name."
        return "I remember: " + "; ".join(f"{k}: {v}" for k, v in known.items()) + "."
    return None


def with_memory_note(instructions: str | Callable[..., str]) -> str | Callable[..., str]:
    """``instructions`` followed by :data:`MEMORY_NOTE` (a function keeps its name)."""
    if isinstance(instructions, str):
        return f"{instructions} {MEMORY_NOTE}"

    def noted(context_variables: dict) -> str:
        return f"{instructions(context_variables)} {MEMORY_NOTE}"

    noted.__name__ = getattr(instructions, "__name__", "instructions")
    noted.__doc__ = instructions.__doc__
    return noted
