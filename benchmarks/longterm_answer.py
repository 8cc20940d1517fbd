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

The dev split's other questions (:data:`benchmarks.longterm_data.BEFORE`,
:data:`~benchmarks.longterm_data.HOW_MANY`) are read the same way, keeping each kind of
fact's values in the order they were said (a memory's earlier values, marked so, come before
its current one): "before V" answers the value said before V, "how many" counts the values.

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
    >>> said = [HumanMessage("I live in Lyon."), HumanMessage("Actually, I moved to Porto.")]
    >>> answer([*said, HumanMessage("Which city did I live in before Porto?")])
    'Lyon'
    >>> answer([*said, HumanMessage("How many cities have I lived in?")])
    '2'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage

from benchmarks.longterm_data import BEFORE, HOW_MANY, SLOTS
from benchmarks.longterm_extract import CUES, FACT_KEYS, parse_facts

#: Question text -> the kind of fact it asks for (the wording of each question, not its answer).
QUESTIONS = {slot.question: slot.key for slot in SLOTS}
UNKNOWN = "I don't know."
_MEMORY_LINE = re.compile(
    r"^[-*] (?P<key>\w+): (?P<value>\"(?:[^\"\\\\]|\\\\.)*\"|.+?)(?P<marks>(?: \(.*\))?)$"
)
#: The dev split's "before V" questions, per kind of fact (V: the value named).
_BEFORE = {
    key: re.compile("^" + re.escape(text).replace(re.escape("{v}"), "(?P<v>.+)") + "$")
    for key, text in BEFORE.items()
}
_HOW_MANY = {text: key for key, text in HOW_MANY.items()}


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
    if text in _HOW_MANY:
        return _HOW_MANY[text]
    for key, pattern in _BEFORE.items():
        if pattern.match(text):
            return key
    return next((key for key in FACT_KEYS if CUES[key].search(text)), None)


def _read(text: str, belief: dict[str, str], said: dict[str, list[str]]) -> None:
    """Update ``belief`` with what ``text`` states (sentence by sentence, in order), and
    ``said`` with each value in the order it was said."""
    found = parse_facts(text)
    for key in found.get("forget", []):
        belief.pop(key, None)
    for key in FACT_KEYS:
        if found.get(key):
            belief[key] = found[key]
            _said(said, key, found[key])


def _said(said: dict[str, list[str]], key: str, value: str) -> None:
    values = said.setdefault(key, [])
    if not values or values[-1].casefold() != value.casefold():
        values.append(value)


def _about_the_past(question: str, key: str, values: list[str]) -> str:
    """A "before V" or "how many" question, from ``values`` (oldest first)."""
    if question in _HOW_MANY:
        distinct = {v.casefold() for v in values}
        return str(len(distinct)) if distinct else UNKNOWN
    match = _BEFORE[key].match(question)
    assert match is not None
    named = [v.casefold() for v in values]
    if match["v"].casefold() in named:
        at = named.index(match["v"].casefold())
        return values[at - 1] if at > 0 else UNKNOWN
    return UNKNOWN


def answer(messages: Sequence[BaseMessage]) -> str:
    """The stand-in's answer to the last message (the question), from the messages before it
    (see the module docstring): the value it believes current, or ``"I don't know."``."""
    *shown, question = messages
    asked = str(question.content).strip()
    key = question_key(asked)
    if key is None:
        return UNKNOWN
    belief: dict[str, str] = {}
    remembered: dict[str, str] = {}
    said: dict[str, list[str]] = {}  # each kind's values in the order the messages said them
    earlier: dict[str, list[str]] = {}  # a memory's earlier values, newest first
    for message in shown:
        text = str(message.content)
        for line in text.splitlines():
            match = _MEMORY_LINE.match(line.strip()) if isinstance(message, SystemMessage) else None
            if match and match["key"] in FACT_KEYS:
                if "earlier value" in match["marks"]:
                    earlier.setdefault(match["key"], []).append(_value(match["value"]))
                else:
                    remembered[match["key"]] = _value(match["value"])
            else:
                _read(line.removeprefix("User: ").removeprefix("- "), belief, said)
    belief.update(remembered)
    if asked in _HOW_MANY or (key in _BEFORE and _BEFORE[key].match(asked)):
        values = list(said.get(key, []))
        if key in remembered:  # a memory's timeline, where it has one, wins
            values = [*reversed(earlier.get(key, [])), remembered[key]]
        return _about_the_past(asked, key, values)
    return belief.get(key, UNKNOWN)
