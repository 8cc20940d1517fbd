"""The long-term benchmark's answering stand-in: **an offline stand-in for a model that answers
from its prompt**, not a model.

A policy is scored on what it *shows* (is the current value in the prompt at all?) and on what
an answer built from that prompt *says* (does it give the current value, or a superseded
one?). Offline, :func:`answer` plays the model. It sees only what a model would: the messages
the policy sent, ending with the question. It never sees the dataset, the gold answers or
which policy it serves. It reads the prompt oldest first with the extraction stand-in's
parser (:func:`benchmarks.longterm_extract.parse_facts`: cue words and value shapes, "forget"
requests), so a later statement replaces an earlier one, and then reads the lines a memory
gives (``- key: value`` in the system prompt), which win: a memory says what is current.

It maps the question to a kind of fact by the question's wording: the dev split's question
text (:data:`QUESTIONS`), else the first kind of fact whose extraction cue word the question
holds. Like the extractors it **may be improved against the dev split only**, never against
the test split's reworded questions or results: on those it shows how far a reader written
for one wording carries (a question it cannot map is answered "I don't know"). Its limits
are the parser's: it cannot read casual typing ("walked the dog.
rex rolled in the mud"), so a policy that shows such a message gets no credit for it here,
although a real model might read it. With ``OPENAI_API_KEY`` the benchmark lets a real model
answer instead (``run_longterm(answer_model=...)``).

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> answer([HumanMessage("I live in Lyon."), HumanMessage("Actually, I moved to Porto."),
    ...         HumanMessage("Which city do I live in?")])
    'Porto'
    >>> answer([SystemMessage('Be kind.\\n\\n<memory>\\n...\\n- home_city: "Ghent"\\n</memory>'),
    ...         HumanMessage("I live in Lyon."), HumanMessage("Which city do I live in?")])
    'Ghent'
    >>> answer([HumanMessage("Please forget my city."), HumanMessage("Which city do I live in?")])
    "I don't know."
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage

from benchmarks.longterm_data import SLOTS
from benchmarks.longterm_extract import CUES, FACT_KEYS, parse_facts

#: Question text -> the kind of fact it asks for (the wording of each question, not its answer).
QUESTIONS = {slot.question: slot.key for slot in SLOTS}
UNKNOWN = "I don't know."
_MEMORY_LINE = re.compile(
    r"^[-*] (?P<key>\w+): (?P<value>.+?)(?: \((?:your own note|shared).*\))?$"
)


def _value(shown: str) -> str:
    """A memory line's value: recall shows each as a JSON string (memory/recall_block.py)."""
    if shown.startswith('"'):
        try:
            return str(json.loads(shown))
        except ValueError:
            return shown
    return shown


def question_key(question: str) -> str | None:
    """The kind of fact ``question`` asks for (``None``: the stand-in cannot tell).

    Example:
        >>> question_key("Which city do I live in?"), question_key("Who's my dog's doctor?")
        ('home_city', 'dog_name')
    """
    text = question.strip()
    if text in QUESTIONS:
        return QUESTIONS[text]
    return next((key for key in FACT_KEYS if CUES[key].search(text)), None)


def _read(text: str, belief: dict[str, str]) -> None:
    """Update ``belief`` with what ``text`` states (sentence by sentence, in order)."""
    found = parse_facts(text)
    for key in found.get("forget", []):
        belief.pop(key, None)
    for key in FACT_KEYS:
        if found.get(key):
            belief[key] = found[key]


def answer(messages: Sequence[BaseMessage]) -> str:
    """The stand-in's answer to the last message (the question), from the messages before it
    (see the module docstring): the value it believes current, or ``"I don't know."``."""
    *shown, question = messages
    key = question_key(str(question.content))
    if key is None:
        return UNKNOWN
    belief: dict[str, str] = {}
    remembered: dict[str, str] = {}
    for message in shown:
        text = str(message.content)
        for line in text.splitlines():
            match = _MEMORY_LINE.match(line.strip()) if isinstance(message, SystemMessage) else None
            if match and match["key"] in FACT_KEYS:
                remembered[match["key"]] = _value(match["value"])
            else:
                _read(line.removeprefix("User: ").removeprefix("- "), belief)
    belief.update(remembered)
    return belief.get(key, UNKNOWN)
