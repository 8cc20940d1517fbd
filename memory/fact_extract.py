"""Facts from what the user said, for long-term memory: ``Session(..., extract=...)``.

After each turn a Session with long-term memory hands every new user message to its
extractor, which returns :data:`FactChange` s: :class:`Remember` a key's value, or
:class:`Forget` a key. :class:`FactExtractor` builds one on
:func:`~swarmgraph.memory.extract.extract_context`, so the same two sources that fill
``context_variables`` fill long-term memory too:

* ``rules``: a regex or a function per field of a pydantic schema (no model call);
* ``model``: one structured-output call (``model.with_structured_output(schema)``) for the
  fields the rules did not find.

A schema field named ``forget`` (a list of field names) asks to forget those keys. Any other
callable works as an extractor too: ``text -> FactChange list`` or ``text -> {key: value}``.

Example:
    >>> from pydantic import BaseModel
    >>> class UserFacts(BaseModel):
    ...     home_city: str | None = None
    ...     forget: list[str] | None = None
    >>> extract = FactExtractor(UserFacts, rules={
    ...     "home_city": r"(?:live in|moved to) (?P<value>[A-Z]\\w+)",
    ...     "forget": lambda text: ["home_city"] if "forget my city" in text else None})
    >>> extract("I moved to Porto last spring.")
    [Remember(key='home_city', value='Porto', text='I moved to Porto last spring.')]
    >>> extract("Please forget my city.")
    [Forget(key='home_city', text='Please forget my city.')]
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from .extract import Rule, Structured, extract_context
from .fact import MAX_NAME_BYTES, MAX_TEXT_BYTES, check_name, check_text

#: The scopes an extractor or a memory tool may write (``"shared"`` is for trusted code).
WritableScope = Literal["user", "agent"]
FORGET_FIELD = "forget"


@dataclass(frozen=True)
class Remember:
    """Store ``key = value`` (taken from ``text``) in ``scope``; ``agent``: whose note, for
    ``scope="agent"`` (``None``: the agent the change is made for)."""

    key: str
    value: str
    text: str | None = None
    scope: WritableScope = field(default="user", repr=False)
    agent: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Forget:
    """Forget ``key`` in ``scope``, as ``text`` asked."""

    key: str
    text: str | None = None
    scope: WritableScope = field(default="user", repr=False)
    agent: str | None = field(default=None, repr=False)


FactChange: TypeAlias = "Remember | Forget"
#: What ``Session(extract=...)`` takes: text -> changes (or a ``{key: value}`` dict).
Extractor: TypeAlias = "Callable[[str], Iterable[Remember | Forget] | Mapping[str, Any]]"


def changes_from(found: Mapping[str, Any], text: str | None = None) -> list[FactChange]:
    """``{key: value}`` as changes: forgets first (a ``forget`` entry lists keys), then a
    :class:`Remember` per key with a value (``None`` and ``""`` are no value), in order.

    Example:
        >>> changes_from({"forget": ["car"], "city": "Lyon", "dog": None}, "...")
        [Forget(key='car', text='...'), Remember(key='city', value='Lyon', text='...')]
    """
    forgets = found.get(FORGET_FIELD) or []
    if isinstance(forgets, str):
        forgets = [forgets]
    changes: list[FactChange] = [Forget(str(key), text) for key in forgets if key]
    for key, value in found.items():
        if key != FORGET_FIELD and value is not None and str(value).strip():
            changes.append(Remember(str(key), str(value), text))
    return changes


class FactExtractor:
    """Facts of ``schema`` in one user message, by ``rules`` and/or a structured ``model``
    call (see the module docstring): callable as ``extractor(text) -> [FactChange, ...]``.

    Values are the schema's fields by name; a ``forget`` field lists the keys to forget.
    ``model`` is called once per message, only when some field is still missing after the
    rules (:func:`~swarmgraph.memory.extract.extract_context`'s rule).
    """

    def __init__(
        self,
        schema: type[BaseModel],
        *,
        rules: Mapping[str, Rule] | None = None,
        model: Any = None,
    ) -> None:
        if rules is None and model is None:
            raise ValueError("FactExtractor needs rules=..., model=..., or both")
        self.schema, self.rules, self.model = schema, dict(rules or {}), model
        self._asks: Structured | None = None  # the model's structured call, made once

    def _structured(self) -> Structured | None:
        asks = self._asks
        if self.model is not None and (asks is None or asks.model is not self.model):
            self._asks = Structured(self.model, self.schema)
        return self._asks

    def __repr__(self) -> str:
        kinds = [k for k, v in (("rules", self.rules), ("model", self.model)) if v]
        return f"FactExtractor({self.schema.__name__}, {' + '.join(kinds)})"

    def __call__(self, text: str) -> list[FactChange]:
        found = extract_context(text, self.schema, model=self._structured(), rules=self.rules)
        return changes_from(found, text)


def extracted(
    extract: Extractor, text: str, known_keys: Callable[[], Sequence[str]] | None = None
) -> list[FactChange]:
    """What ``extract`` finds in ``text``, as changes (a dict result converted).
    ``known_keys``: the user's current keys, read (only) for an extractor that says it uses
    them (``reads_known_keys = True``, as :class:`~.open_extract.OpenFactExtractor` does).

    Example:
        >>> extracted(lambda text: {"mood": "happy"} if "happy" in text else {}, "I'm happy")
        [Remember(key='mood', value='happy', text="I'm happy")]
    """
    if known_keys is not None and getattr(extract, "reads_known_keys", False):
        found = extract(text, known_keys=known_keys())  # type: ignore[call-arg]
    else:
        found = extract(text)
    if isinstance(found, Mapping):
        return changes_from(found, text)
    changes = list(found)
    for change in changes:
        if not isinstance(change, (Remember, Forget)):
            raise TypeError(
                f"an extractor returns Remember/Forget changes or a dict, got {change!r}"
            )
    return changes


def refusal(change: FactChange) -> str | None:
    """Why long-term memory could not store ``change`` (``None``: it can): a key empty, over
    :data:`~.fact.MAX_NAME_BYTES` bytes, or with a NUL or an unpaired surrogate; a value
    empty, over :data:`~.fact.MAX_TEXT_BYTES` bytes, or with a NUL or a surrogate.

    Example:
        >>> refusal(Remember("dog_name", "Rex")) is None
        True
        >>> refusal(Remember("note", "a\\x00b"))
        "fact 'note' refused: fact value must not contain NUL ('\\\\x00')"
        >>> refusal(Forget(""))
        "fact '' refused: fact key must be a non-empty string, got ''"
    """
    try:
        check_name(change.key, "fact key")
        if isinstance(change, Remember):
            if not isinstance(change.value, str) or not change.value.strip():
                raise ValueError("fact value must be a non-empty string")
            check_text(change.value, "fact value", MAX_TEXT_BYTES)
    except ValueError as error:
        return f"fact {_shown(change.key)} refused: {error}"
    return None


def storable(change: FactChange) -> FactChange:
    """``change`` with a source text long-term memory can store: NUL and unpaired surrogates
    replaced by U+FFFD, cut to a quarter of :data:`~.fact.MAX_TEXT_BYTES` characters (a
    70 KiB message that stated a fact keeps its fact, and where it came from, in part).

    Example:
        >>> storable(Remember("dog_name", "Rex", "My dog\\x00 is Rex")).text
        'My dog\ufffd is Rex'
    """
    text = change.text
    if text is None:
        return change
    cleaned = text.replace("\x00", "\ufffd")
    cleaned = cleaned.encode("utf-8", "replace").decode("utf-8")  # lone surrogates: "?"
    cleaned = cleaned[: MAX_TEXT_BYTES // 4]
    return change if cleaned == text else dataclasses.replace(change, text=cleaned)


def storable_changes(changes: Iterable[FactChange]) -> list[FactChange]:
    """``changes`` long-term memory can store (their source text made storable); each one
    refused is named in an :class:`~.errors.UnstorableFactWarning` and left out, so it is
    never queued for the turn's outbox, where it would fail every later turn.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     kept = storable_changes([Remember("", "v"), Remember("dog_name", "Rex")])
        >>> kept
        [Remember(key='dog_name', value='Rex', text=None)]
        >>> str(caught[0].message)
        "fact '' refused: fact key must be a non-empty string, got ''"
    """
    from .errors import UnstorableFactWarning

    kept = []
    for change in changes:
        reason = refusal(change)
        if reason is None:
            kept.append(storable(change))
        else:
            warnings.warn(reason, UnstorableFactWarning, stacklevel=3)
    return kept


def _shown(key: object) -> str:
    """``key`` as a warning names it: its repr, a long one cut (a 300-byte key stays readable)."""
    shown = repr(key)
    cut = MAX_NAME_BYTES // 4
    return shown if len(shown) <= cut else f"{shown[:cut]}... ({len(str(key))} characters)"
