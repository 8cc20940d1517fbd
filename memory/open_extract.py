"""Open extraction: the model chooses the keys, normalised so two wordings of one kind meet.

:class:`~.fact_extract.FactExtractor` stores only the fields of a pydantic schema you wrote:
a fact of any other kind is lost. :class:`OpenFactExtractor` asks the model (one
structured-output call per message, ``with_structured_output(OpenFacts)`` made once) for a
list of facts ``{key, value, op}`` with keys *it* chooses, and passes every key through
:func:`normalise_key`, so "Home City", "home cities" and "city of residence" all land on
``home_city`` and a later wording supersedes the earlier value (its history keeps the old
one). The keys already in the user's memory are offered in the prompt, so the model reuses
them; a key that normalises to a stored key's normal form is stored under the stored key.

Use a schema (``FactExtractor``) when you know the kinds of fact your application needs and
want fixed names for them; use open extraction when users may say anything worth keeping.

A fact memory could not store (a key or value with a NUL, a key over 256 bytes, a value over
64 KiB or empty) is refused here with an :class:`~.errors.UnstorableFactWarning` naming it,
the same checks :func:`~.fact_extract.storable_changes` applies to every extractor; the
message's other facts are kept.

Example:
    >>> from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
    >>> llm = ScriptedChatModel([scripted_tool_call("OpenFacts", {"facts": [
    ...     {"key": "City of residence", "value": "Porto"},
    ...     {"key": "favorite teas", "value": "sencha"}]})])
    >>> extract = OpenFactExtractor(llm)
    >>> extract("I live in Porto now and I love sencha.")  # doctest: +NORMALIZE_WHITESPACE
    [Remember(key='home_city', value='Porto', text='I live in Porto now and I love sencha.'),
     Remember(key='favourite_tea', value='sencha', text='I live in Porto now and I love sencha.')]
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from .extract import Structured
from .fact import check_name
from .fact_extract import FactChange, Forget, Remember, _shown, storable_changes

__all__ = [
    "KEY_SYNONYMS",
    "OPEN_EXTRACT_PROMPT",
    "WORD_SPELLINGS",
    "OpenFact",
    "OpenFactExtractor",
    "OpenFacts",
    "normalise_key",
]


class OpenFact(BaseModel):
    """One fact the user stated about themself."""

    key: str = Field(
        description="A short snake_case name for the kind of fact (e.g. home_city, dog_name); "
        "reuse a key already in the user's memory when the fact is of that kind."
    )
    value: str | None = Field(
        default=None, description="The fact's value as the user gave it; empty for forget."
    )
    op: Literal["set", "forget"] = Field(
        default="set", description="set: remember the value; forget: the user asked to forget it."
    )


class OpenFacts(BaseModel):
    """The facts one user message states about the user themself (not about other people)."""

    facts: list[OpenFact] = Field(default_factory=list)


OPEN_EXTRACT_PROMPT = (
    "List the facts about the user themself that the user stated in this message and that "
    "are worth remembering in later conversations (not facts about other people, not "
    "questions). Give each a short snake_case key naming its kind and the value as stated; "
    "a correction or update uses the same key as the old value. If the user asks to forget "
    "something, return its key with op 'forget'. Return no facts when there are none."
)

#: Words dropped from a key: articles and possessives say nothing about the kind of fact.
DROPPED_WORDS = frozenset({"a", "an", "the", "my", "your", "his", "her", "their", "our"})

#: One spelling per word (applied after singular forms).
WORD_SPELLINGS: dict[str, str] = {
    "favorite": "favourite",
    "color": "colour",
    "telephone": "phone",
    "mobile": "phone",
    "cell": "phone",
}

#: Whole keys (after the word rules) that name one kind of fact another way.
KEY_SYNONYMS: dict[str, str] = {
    "residence_city": "home_city",
    "current_city": "home_city",
    "residence_place": "home_city",
    "residence": "home_city",
    "birth_date": "birthday",
    "birthdate": "birthday",
    "phone": "phone_number",
    "email": "email_address",
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def _singular(word: str) -> str:
    """A plural English noun's singular, by suffix only (short words and -ss/-us/-is kept)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def normalise_key(
    key: str,
    synonyms: Mapping[str, str] | None = None,
) -> str:
    """``key`` in its normal form, so two wordings of one kind of fact meet: camelCase split,
    Unicode NFKC and lower case, apostrophes removed ("dog's" -> "dogs"), every other
    non-letter-or-digit a separator; articles and possessives (:data:`DROPPED_WORDS`)
    dropped; each word singular (by suffix: "cities" -> "city", "glasses" -> "glass") and
    spelled one way (:data:`WORD_SPELLINGS`); a word repeated next to itself once; "X of Y"
    read as "Y X" ("name of dog" -> "dog_name"); then the whole key through ``synonyms``
    (default :data:`KEY_SYNONYMS`: "city of residence" -> "home_city"); words joined by
    ``_``. ``""``: no word left.

    Example:
        >>> [normalise_key(k) for k in ("Home City", "home_cities", "homeCity",
        ...                             "city of residence", "the user's home city")]
        ['home_city', 'home_city', 'home_city', 'home_city', 'user_home_city']
        >>> normalise_key("Name of my dog"), normalise_key("dog's name"), normalise_key("Dog-Names")
        ('dog_name', 'dog_name', 'dog_name')
        >>> normalise_key("Favorite colors"), normalise_key("date of birth")
        ('favourite_colour', 'birthday')
        >>> normalise_key("cell phone number"), normalise_key("allergies"), normalise_key("?!")
        ('phone_number', 'allergy', '')
        >>> normalise_key("pet", synonyms={"pet": "animal"})
        'animal'
    """
    text = unicodedata.normalize("NFKC", _CAMEL.sub("_", key)).casefold()
    text = text.replace("'", "").replace("\u2019", "")
    words = [w for w in _NOT_WORD.split(text) if w and w not in DROPPED_WORDS]
    words = [WORD_SPELLINGS.get(w, w) for w in (_singular(w) for w in words)]
    words = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
    if "of" in words[1:-1]:  # "date of birth" -> "birth date"; the last "of" splits
        cut = len(words) - 1 - words[::-1].index("of")
        words = words[cut + 1 :] + words[:cut]
    joined = "_".join(words)
    table = KEY_SYNONYMS if synonyms is None else synonyms
    return table.get(joined, joined)


class OpenFactExtractor:
    """Facts of any kind in one user message, with keys the model chooses (see the module
    docstring): callable as ``extractor(text, known_keys=[...]) -> [FactChange, ...]``.

    ``model``: a chat model with ``with_structured_output`` (called once per message).
    ``synonyms``: whole-key synonyms for :func:`normalise_key` (default
    :data:`KEY_SYNONYMS`). ``max_known_keys``: at most this many of the user's keys are
    offered in the prompt, the first in the order given (a Session gives the user's keys,
    sorted, while there are at most ``max_known_keys``, else the keys of the facts recall
    finds for the message: memory/offered_keys.py; then this turn's staged ones).
    ``prompt``: the system prompt.

    In a ``Session(long_term=..., extract=OpenFactExtractor(model))`` the user's current
    keys (and this turn's staged ones) are passed as ``known_keys``; called directly, pass
    them yourself.

    Example:
        >>> from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
        >>> llm = ScriptedChatModel([scripted_tool_call("OpenFacts", {"facts": [
        ...     {"key": "Home-City", "value": "Lyon"}, {"key": "car", "op": "forget"}]})])
        >>> extract = OpenFactExtractor(llm)
        >>> extract("Forget my car; I live in Lyon.", known_keys=["homeCity", "car"])
        ... # doctest: +NORMALIZE_WHITESPACE
        [Remember(key='homeCity', value='Lyon', text='Forget my car; I live in Lyon.'),
         Forget(key='car', text='Forget my car; I live in Lyon.')]
        >>> "homeCity, car" in extract.request("...", ["homeCity", "car"])[0].content
        True
    """

    #: ``Session`` passes the user's current keys as ``known_keys=`` to an extractor that
    #: says it reads them (:func:`~.fact_extract.extracted`).
    reads_known_keys = True

    def __init__(
        self,
        model: Any,
        *,
        synonyms: Mapping[str, str] | None = None,
        max_known_keys: int = 100,
        prompt: str = OPEN_EXTRACT_PROMPT,
    ) -> None:
        if model is None:
            raise ValueError("OpenFactExtractor needs a chat model")
        if isinstance(max_known_keys, bool) or not isinstance(max_known_keys, int):
            raise ValueError(f"max_known_keys must be an int >= 0, got {max_known_keys!r}")
        if max_known_keys < 0:
            raise ValueError(f"max_known_keys must be an int >= 0, got {max_known_keys!r}")
        self.model, self.prompt, self.max_known_keys = model, prompt, max_known_keys
        self.synonyms = dict(KEY_SYNONYMS if synonyms is None else synonyms)
        self._asks: Structured | None = None  # the model's structured call, made once

    def __repr__(self) -> str:
        return f"OpenFactExtractor({self.model!r})"

    def _structured(self) -> Structured:
        asks = self._asks
        if asks is None or asks.model is not self.model:
            asks = self._asks = Structured(self.model, OpenFacts)
        return asks

    def offered(self, known_keys: Iterable[str] | None) -> list[str]:
        """The keys the prompt offers: ``known_keys`` without repeats, the first
        ``max_known_keys`` of them.

        Example:
            >>> from swarmgraph.graph import ScriptedChatModel
            >>> OpenFactExtractor(ScriptedChatModel([]), max_known_keys=2).offered("abac")
            ['a', 'b']
        """
        return list(dict.fromkeys(known_keys or ()))[: self.max_known_keys]

    def request(self, text: str, known_keys: Iterable[str] | None = None) -> list[BaseMessage]:
        """The messages sent to the model for ``text``: the prompt with the keys offered,
        then what the user said.

        Example:
            >>> from swarmgraph.graph import ScriptedChatModel
            >>> system, said = OpenFactExtractor(ScriptedChatModel([])).request("hi", ["city"])
            >>> system.content.endswith("city"), said.content
            (True, 'User: hi')
        """
        offered = self.offered(known_keys)
        system = self.prompt
        if offered:
            system += (
                "\nKeys already in this user's memory (reuse one when a fact is of that "
                "kind): " + ", ".join(offered)
            )
        return [SystemMessage(system), HumanMessage(f"User: {text}")]

    def __call__(self, text: str, known_keys: Sequence[str] | None = None) -> list[FactChange]:
        result = self._structured().invoke(self.request(text, known_keys))
        if isinstance(result, BaseModel):
            result = result.model_dump()
        facts = (result or {}).get("facts") or []
        # A key that normalises to a stored key's normal form is stored under the stored key.
        existing = {normalise_key(k, self.synonyms): k for k in known_keys or ()}
        changes: list[FactChange] = []
        for fact in facts:
            if isinstance(fact, BaseModel):
                fact = fact.model_dump()
            key = self._key(fact.get("key"), existing)
            if key is None:
                continue
            if fact.get("op") == "forget":
                changes.append(Forget(key, text))
            else:
                value = fact.get("value")
                changes.append(Remember(key, value if isinstance(value, str) else "", text))
        # The same checks every extractor's facts pass in a Session (a refused one warned).
        return storable_changes(changes)

    def _key(self, raw: object, existing: Mapping[str, str]) -> str | None:
        """``raw``'s normal key (a stored key it meets preferred); ``None``, with an
        :class:`~.errors.UnstorableFactWarning`, when it is no storable key."""
        from .errors import UnstorableFactWarning

        try:  # the store's own rule first: a NUL or a surrogate is refused, not cleaned away
            check_name(raw, "fact key")
        except ValueError as error:
            warnings.warn(f"fact {_shown(raw)} refused: {error}", UnstorableFactWarning, 3)
            return None
        key = normalise_key(str(raw), self.synonyms)
        if not key:
            warnings.warn(
                f"fact {_shown(raw)} refused: the key has no letter or digit",
                UnstorableFactWarning,
                3,
            )
            return None
        return existing.get(key, key)
