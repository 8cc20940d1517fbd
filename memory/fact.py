"""A :class:`Fact` (one remembered thing about a user, and where it came from) and the checks
on the names and text a fact holds: what :mod:`.long_term` stores, and what its callers
(:mod:`.long_term_turn`, the memory tools) check before they write.

Example:
    >>> fact = Fact("city", "Lyon", "user", user_id="ming")
    >>> fact.line(), check_name(fact.key, "fact key"), namespace_label("ming.li")
    ('city: Lyon', 'city', 'ming~2eli')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast, get_args

Scope = Literal["user", "agent", "shared"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
#: The longest user id, agent name or fact key, in UTF-8 bytes (namespace labels and keys
#: sit in the store's primary-key index, whose entries Postgres caps near 2.7 kB).
MAX_NAME_BYTES = 256
#: The longest value or source text, in UTF-8 bytes: a fact is a short statement.
MAX_TEXT_BYTES = 64 * 1024
_LABEL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


@dataclass(frozen=True)
class Fact:
    """One remembered fact and where it came from.

    ``user_id`` is the user the fact belongs to (``None`` for shared facts); ``agent`` the
    agent whose note it is (``"agent"`` scope only); ``source_agent`` the agent (or code)
    that wrote it; ``text`` what it was taken from. ``version`` counts the writes of this key
    (1 for the first); ``forgotten`` marks the tombstone :meth:`LongTermMemory.forget`
    leaves in history; ``superseded_at`` (history only) when a later value replaced it.

    Example:
        >>> fact = Fact("city", "Lyon", "user", user_id="ming")
        >>> fact.line()
        'city: Lyon'
    """

    key: str
    value: str
    scope: Scope
    agent: str | None = None
    user_id: str | None = None
    conversation_id: str | None = None
    turn_id: str | None = None
    source_agent: str | None = None
    created_at: datetime | None = None
    text: str | None = None
    version: int = 1
    forgotten: bool = False
    #: For a superseded value (from ``history``): when the next value replaced it. Not
    #: stored: history works it out from the entry after.
    superseded_at: datetime | None = field(default=None, compare=False, repr=False)

    def line(self) -> str:
        """The fact as one prompt line: ``key: value``."""
        return f"{self.key}: {self.value}"

    def to_record(self) -> dict[str, Any]:
        """The JSON document stored for this fact."""
        return {
            "key": self.key,
            "value": self.value,
            "scope": self.scope,
            "agent": self.agent,
            "user_id": self.user_id,
            "conversation_id": self.conversation_id,
            "turn_id": self.turn_id,
            "source_agent": self.source_agent,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "text": self.text,
            "version": self.version,
            "forgotten": self.forgotten,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Fact:
        """The fact a stored document holds."""
        created = record.get("created_at")
        scope = record.get("scope")
        return cls(
            key=str(record["key"]),
            value=str(record.get("value") or ""),
            scope=cast(Scope, scope if scope in SCOPES else "user"),
            agent=record.get("agent"),
            user_id=record.get("user_id"),
            conversation_id=record.get("conversation_id"),
            turn_id=record.get("turn_id"),
            source_agent=record.get("source_agent"),
            created_at=datetime.fromisoformat(created) if isinstance(created, str) else None,
            text=record.get("text"),
            version=int(record.get("version") or 1),
            forgotten=bool(record.get("forgotten", False)),
        )


def format_facts(facts: Iterable[Fact]) -> str:
    """Facts as prompt lines, one ``- key: value`` per fact ('' for none).

    Example:
        >>> print(format_facts([Fact("dog_name", "Rex", "user"), Fact("city", "Lyon", "user")]))
        - dog_name: Rex
        - city: Lyon
    """
    return "\n".join(f"- {fact.line()}" for fact in facts)


def check_name(value: object, what: str) -> str:
    """``value`` if it can name a user, agent or key: a non-empty ``str`` of valid Unicode
    without NUL, at most :data:`MAX_NAME_BYTES` bytes of UTF-8; else ``ValueError``.

    Example:
        >>> check_name("alice.smith@example.org", "user id")
        'alice.smith@example.org'
        >>> check_name("", "user id")
        Traceback (most recent call last):
        ...
        ValueError: user id must be a non-empty string, got ''
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    check_text(value, what, MAX_NAME_BYTES)
    return value


def check_text(value: str, what: str, limit: int) -> None:
    if "\x00" in value:
        raise ValueError(f"{what} must not contain NUL ('\\x00')")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} must be valid Unicode text: it has an unpaired surrogate at index "
            f"{error.start}"
        ) from None
    if size > limit:
        raise ValueError(f"{what} is {size} bytes of UTF-8; at most {limit} are allowed")


def optional_text(value: object, what: str, limit: int = MAX_TEXT_BYTES) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string or None, got {type(value).__name__}")
    check_text(value, what, limit)
    return value


def namespace_label(name: str) -> str:
    """``name`` as one namespace label: letters, digits and ``-`` kept, every other
    character as ``~`` and its UTF-8 bytes in hex. Injective, and never a ``.`` (the
    stores' separator) or a ``*``, ``?``, ``%`` or ``_`` (their wildcards).

    Example:
        >>> namespace_label("bob"), namespace_label("bob.evil"), namespace_label("ü_1")
        ('bob', 'bob~2eevil', '~c3~bc~5f1')
    """
    return "".join(
        c if c in _LABEL_SAFE else "".join(f"~{b:02x}" for b in c.encode()) for c in name
    )
