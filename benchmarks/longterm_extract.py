"""Fact extractors for the long-term memory benchmark: rules, and a scripted model stand-in.

Both turn one user message into :data:`Operation` s (:class:`Remember` a key's value, or
:class:`Forget` a key) that :func:`apply_operations` writes to a
:class:`~swarmgraph.memory.LongTermMemory` with provenance. Both go through
:func:`swarmgraph.memory.extract.extract_context` with one schema, :class:`BenchFacts`
(a field per kind of fact, plus ``forget``), so a real model slots in where the stand-in is:
``extract_context(text, BenchFacts, model=ChatOpenAI(...))``. ``--model`` does not: a real
model extracts openly there (:class:`~swarmgraph.memory.OpenFactExtractor`, keys of its own
choosing), so it can store a kind of fact :class:`BenchFacts` has no field for.

* :func:`rule_extract`: ``extract_context(text, BenchFacts, rules=RULES)``. One naive
  regex per fact, written for the canonical phrasing ("My dog is called Rex"); it misses
  paraphrases and casual typing, and it takes facts about other people ("My sister's dog is
  called Bruno") for the user's own.
* :func:`model_extract`: **an offline stand-in for a model's structured extraction**, not a
  model: :func:`scripted_extraction_model` is a ``ScriptedChatModel`` whose reply is
  computed by :func:`parse_facts`, a deterministic parser. Per sentence it looks for a cue
  word of a kind of fact (``dog``/``puppy``, ``live``/``moved``/``based``/``home``, ...)
  and takes the nearest value of the right shape (a capitalised name, ``Dr Name``, a
  ``555-0142`` number, a ``3 March`` date); it skips sentences about someone else (``my
  sister's``, ``my friend``) and reads "forget/delete/erase/remove" + a cue as a forget.

  Honestly: its cue words, its list of words that are not names and its someone-else
  relations were written knowing the **dev** split's phrasing families
  (:mod:`benchmarks.longterm_data`'s templates), so its dev score is what a pattern parser
  gets on text it was written for, not an estimate of an LLM's. **Both extractors may be
  improved against the dev split only**: never against the test split
  (:mod:`benchmarks.longterm_phrasing_test`) or its results, which measure how far they
  generalise. It never sees values, gold answers or questions. It misses every casual
  phrasing (a lower-case value, or the value in another sentence than its cue), a value of
  an unexpected shape, and two facts of one kind in one sentence; it can take a
  capitalised word near a cue for a value. A real model may do better or worse on each.

Example:
    >>> rule_extract("My dog is called Rex.")
    [Remember(key='dog_name', value='Rex', text='My dog is called Rex.')]
    >>> rule_extract("We named our puppy Rex.")   # a paraphrase: the rule misses it
    []
    >>> model_extract("We named our puppy Rex.")
    [Remember(key='dog_name', value='Rex', text='We named our puppy Rex.')]
    >>> model_extract("My sister's dog is called Bruno."), rule_extract("Please forget my car.")
    ([], [Forget(key='car_model', text='Please forget my car.')])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel, Field, create_model
from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.extract import Structured, extract_context
from swarmgraph.memory.fact_extract import Forget, Remember
from swarmgraph.memory.fact_search import STOP_WORDS

from benchmarks.longterm_data import SLOTS

#: What one user message says about the user: a value per kind of fact (described by the
#: question that asks for it, so a real model knows what each field means), and the kinds
#: of fact the user asked to forget.
BenchFacts: type[BaseModel] = create_model(
    "BenchFacts",
    __doc__="What one user message says about the user themself (not about other people).",
    **{
        slot.key: (str | None, Field(default=None, description=f"Answers: {slot.question}"))
        for slot in SLOTS
    },
    forget=(
        list[str] | None,
        Field(default=None, description="Field names of facts the user asked to forget"),
    ),
)  # type: ignore[call-overload]


FACT_KEYS: tuple[str, ...] = tuple(name for name in BenchFacts.model_fields if name != "forget")
assert set(FACT_KEYS) == {slot.key for slot in SLOTS}, "BenchFacts must have a field per slot"


#: The changes a Session's extractor returns (``swarmgraph.memory.fact_extract``): the same
#: classes, so ``Session(..., extract=rule_extract)`` runs these extractors in a real turn.
Operation = Remember | Forget
Extractor = Callable[[str], list[Operation]]

# -- rules ------------------------------------------------------------------------------

#: "forget my <topic>" -> key, for the one forget phrasing the rules know.
FORGET_TOPICS = {slot.topic: slot.key for slot in SLOTS}
_FORGET_RULE = re.compile(r"forget my ([\w' ]+?)[.!?]", re.IGNORECASE)


def _forget_rule(text: str) -> list[str] | None:
    match = _FORGET_RULE.search(text)
    key = FORGET_TOPICS.get(match.group(1).lower()) if match else None
    return [key] if key else None


#: One naive rule per field, written for the canonical phrasing (see the module docstring).
RULES: dict[str, Any] = {
    "dog_name": r"dog(?:'s name is| is called) (?P<value>[A-Z]\w+)",
    "dog_vet": r"vet is (?P<value>Dr [A-Z]\w+)",
    "home_city": r"(?:live in|moved to) (?P<value>[A-Z]\w+)",
    "work_company": r"works? at (?P<value>[A-Z]\w+)",
    "phone_number": r"phone number is (?P<value>\d{3}-\d{4})",
    "birthday": r"birthday is (?P<value>\d{1,2} [A-Z][a-z]+)",
    "partner_name": r"partner is called (?P<value>[A-Z]\w+)",
    "car_model": r"drives? an? (?P<value>[A-Z]\w+)",
    "cat_name": r"cat(?:'s name is| is called) (?P<value>[A-Z]\w+)",
    "hometown": r"(?:grew up in|hometown is) (?P<value>[A-Z]\w+)",
    "university": r"university (?:at|was) (?P<value>[A-Z]\w+)",
    "job_title": r"job title is (?P<value>[A-Z]\w+)",
    "child_name": r"daughter(?:'s name is| is called) (?P<value>[A-Z]\w+)",
    "allergy": r"(?:allergic to|allergy is) (?P<value>[A-Z]\w+)",
    "language": r"(?:(?:am|is) learning|learning is) (?P<value>[A-Z]\w+)",
    "doctor_name": r"doctor is (?P<value>Dr [A-Z]\w+)",
    "sport": r"sport (?:I play )?is (?P<value>[A-Z]\w+)",
    "instrument": r"instrument (?:I play )?is the (?P<value>[A-Z]\w+)",
    "favourite_food": r"favourite food is (?P<value>[A-Z]\w+)",
    "bank": r"bank (?:account is with|is) (?P<value>[A-Z]\w+)",
    "forget": _forget_rule,
}


def operations(found: dict[str, Any], text: str) -> list[Operation]:
    """``extract_context``'s dict as operations: forgets first, then values, in field order.

    Example:
        >>> operations({"forget": ["car_model"], "home_city": "Lyon"}, "...")
        [Forget(key='car_model', text='...'), Remember(key='home_city', value='Lyon', text='...')]
    """
    ops: list[Operation] = [
        Forget(key, text) for key in found.get("forget") or [] if key in FACT_KEYS
    ]
    ops += [Remember(key, str(found[key]), text) for key in FACT_KEYS if found.get(key)]
    return ops


def rule_extract(text: str) -> list[Operation]:
    """What the rules find in one user message (``extract_context(..., rules=RULES)``)."""
    return operations(extract_context(text, BenchFacts, rules=RULES), text)


# -- the scripted model stand-in --------------------------------------------------------

CUES: dict[str, re.Pattern[str]] = {
    key: re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE)
    for key, words in {
        "dog_name": r"dog|puppy|pup",
        "dog_vet": r"vet|veterinarian|check-ups?",
        "home_city": r"live|living|moved|based|relocated|home|city",
        "work_company": r"work|employer|hired",
        "phone_number": r"phone|reach|text|call",
        "birthday": r"birthday|born|older",
        "partner_name": r"partner|married|together|wife|husband",
        "car_model": r"car|drive|drives",
        "cat_name": r"cat|kitten",
        "hometown": r"grew|raised|hometown",
        "university": r"university|graduated|degree",
        "job_title": r"title|employed",
        "child_name": r"daughter",
        "allergy": r"allergic|allergy",
        "language": r"language|learning|study",
        "doctor_name": r"doctor",
        "sport": r"sport",
        "instrument": r"instrument",
        "favourite_food": r"food|favourite",
        "bank": r"bank|account",
    }.items()
}
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_SHAPES: dict[str, re.Pattern[str]] = {
    "dog_vet": re.compile(r"\bDr\.? [A-Z][a-z]+\b"),
    "doctor_name": re.compile(r"\bDr\.? [A-Z][a-z]+\b"),
    "phone_number": re.compile(r"\b\d{3}-\d{4}\b"),
    "birthday": re.compile(
        r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|October"
        r"|November|December)\b"
    ),
}
#: Sentences about someone else: their facts are not the user's.
_SOMEONE_ELSE = re.compile(
    r"\b(?:sister|brother|friend|cousin|neighbour|neighbor|colleague|mother|father|boss)"
    r"(?:'s)?\b",
    re.IGNORECASE,
)
_FORGET = re.compile(r"\b(?:forget|delete|erase|remove)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
#: Capitalised words that start sentences, not names.
_NOT_NAMES = STOP_WORDS | {
    "actually", "quick", "small", "please", "every", "these", "dr", "dogs", "thanks", "yes",
    "also", "delete", "remove", "erase", "forget", "okay", "sure", "hi", "hello",
}  # fmt: skip


def _candidates(key: str, sentence: str) -> list[tuple[int, str]]:
    """``(position, value)`` of every value of ``key``'s shape in ``sentence``."""
    shape = _SHAPES.get(key)
    if shape is not None:
        return [(m.start(), m.group(0)) for m in shape.finditer(sentence)]
    found = []
    for m in _NAME.finditer(sentence):
        word = m.group(0)
        after_title = sentence[: m.start()].rstrip().endswith(("Dr", "Dr."))
        if word.lower() in _NOT_NAMES or after_title or CUES[key].fullmatch(word):
            continue
        found.append((m.start(), word))
    return found


def parse_facts(text: str) -> dict[str, Any]:
    """The stand-in's reading of one message, as :class:`BenchFacts` fields.

    Example:
        >>> parse_facts("Quick update: these days I'm based in Porto. Text me at 555-0199.")
        {'home_city': 'Porto', 'phone_number': '555-0199'}
        >>> parse_facts("Erase the city I live in from your notes.")
        {'forget': ['home_city']}
    """
    found: dict[str, Any] = {}
    forget: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        cued = [key for key in FACT_KEYS if CUES[key].search(sentence)]
        if _FORGET.search(sentence):
            forget += [key for key in cued if key not in forget]
            continue
        if _SOMEONE_ELSE.search(sentence):
            continue
        for key in cued:
            cue = CUES[key].search(sentence)
            candidates = _candidates(key, sentence)
            if cue is not None and candidates:
                position = cue.start()
                found[key] = min(candidates, key=lambda c: (abs(c[0] - position), c[0]))[1]
    if forget:
        found["forget"] = forget
    return found


def _said(messages: Sequence[BaseMessage]) -> str:
    human = [m for m in messages if isinstance(m, HumanMessage)]
    text = human[-1].content if human else ""
    lines = str(text).splitlines()
    # extract_context sends "User: <text>" lines; the stand-in reads what the user said.
    return " ".join(line.removeprefix("User: ") for line in lines)


def scripted_extraction_model() -> ScriptedChatModel:
    """The offline stand-in as a chat model: its structured reply is :func:`parse_facts` of
    what it was sent (labelled ``scripted`` like every ScriptedChatModel reply).

    Example:
        >>> extract_context("I'm married to Hugo.", BenchFacts, model=scripted_extraction_model())
        {'partner_name': 'Hugo'}
    """
    return ScriptedChatModel(
        respond=lambda messages: scripted_tool_call("BenchFacts", parse_facts(_said(messages)))
    )


_MODEL = scripted_extraction_model()
_ASKS = Structured(_MODEL, BenchFacts)  # the structured call made once, as FactExtractor does


def model_extract(text: str) -> list[Operation]:
    """What the scripted model stand-in finds in one user message (through
    ``extract_context(..., model=scripted_extraction_model())``)."""
    found = extract_context(text, BenchFacts, model=_ASKS)
    if len(_MODEL.calls) > 100:
        _MODEL.reset()  # the stand-in records its calls; a long benchmark needs none of them
    return operations(found, text)


def apply_operations(
    memory: LongTermMemory,
    ops: Sequence[Operation],
    *,
    conversation_id: str,
    turn_id: str,
    source_agent: str = "extractor",
) -> None:
    """Write ``ops`` to ``memory`` (user scope) with their provenance; idempotent per turn.

    Example:
        >>> memory = LongTermMemory("memory://doctest-bench-apply", user_id="u0")
        >>> apply_operations(memory, rule_extract("I live in Lyon."), conversation_id="u0-s0",
        ...                  turn_id="0")
        >>> [(f.key, f.value, f.turn_id) for f in memory.facts()]
        [('home_city', 'Lyon', '0')]
    """
    for op in ops:
        if isinstance(op, Forget):
            memory.forget(
                op.key, conversation_id=conversation_id, turn_id=turn_id, source_agent=source_agent
            )
        else:
            memory.remember(
                op.key,
                op.value,
                conversation_id=conversation_id,
                turn_id=turn_id,
                source_agent=source_agent,
                text=op.text,
            )
