"""The ids storage keys by: conversation ids, turn ids, and the kind and key of a record.

Every rule is checked before anything runs (no model call, no round trip), and is the same on
every backend. Ids are only ever bound as query parameters, so quotes or SQL text are harmless.

Example:
    >>> check_conversation_id("conv-42"), check_record_key("turn", "t-1")
    ('conv-42', ('turn', 't-1'))
"""

from __future__ import annotations

import re
import uuid

#: The longest conversation id, in UTF-8 bytes, on every backend (Postgres keys rows by a
#: fixed-size hash of the id, so the limit is ours, not an index's).
MAX_ID_BYTES = 64 * 1024


def check_conversation_id(conversation_id: str) -> str:
    """Return ``conversation_id`` unchanged if every backend can store it, else raise ValueError.

    One rule for every backend, checked before anything runs: a non-empty ``str`` of valid
    Unicode (no NUL, no unpaired surrogate, which UTF-8 cannot encode) of at most
    :data:`MAX_ID_BYTES` bytes in UTF-8. Ids are only ever bound as query parameters, so
    quotes or SQL text are harmless.

    Example:
        >>> check_conversation_id("conv-42'; DROP TABLE message_store; --")
        "conv-42'; DROP TABLE message_store; --"
        >>> check_conversation_id("")
        Traceback (most recent call last):
        ...
        ValueError: conversation id must be a non-empty string, got ''
        >>> check_conversation_id("conv-\\ud800")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: conversation id must be valid Unicode text: 'conv-\\ud800' has an unpaired ...
    """
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ValueError(f"conversation id must be a non-empty string, got {conversation_id!r}")
    if "\x00" in conversation_id:
        raise ValueError("conversation id must not contain NUL ('\\x00')")
    try:
        size = len(conversation_id.encode("utf-8"))
    except UnicodeEncodeError as error:
        shown = conversation_id if len(conversation_id) <= 40 else conversation_id[:40] + "..."
        raise ValueError(
            f"conversation id must be valid Unicode text: {shown!r} has an unpaired surrogate "
            f"({conversation_id[error.start]!r} at index {error.start}); allowed is any "
            "non-empty text without NUL or lone surrogates"
        ) from None
    if size > MAX_ID_BYTES:
        raise ValueError(
            f"conversation id is {size} bytes of UTF-8; at most {MAX_ID_BYTES} are allowed"
        )
    return conversation_id


#: The longest turn id a caller may give (generated ones are 32 hex digits).
MAX_TURN_ID = 200


def check_turn_id(turn_id: str | None) -> str:
    """``turn_id`` if it is a usable turn id, a fresh one for ``None``, else ValueError.

    Example:
        >>> check_turn_id("t-1"), len(check_turn_id(None))
        ('t-1', 32)
    """
    if turn_id is None:
        return uuid.uuid4().hex
    if not isinstance(turn_id, str) or not turn_id or len(turn_id) > MAX_TURN_ID:
        raise ValueError(
            f"turn_id must be a non-empty string of at most {MAX_TURN_ID} chars: {turn_id!r}"
        )
    return turn_id


#: A record kind: a short lowercase name (``turn``, ``effect``, ``approval``...). No ``:``, so
#: ``kind:key`` names one record unambiguously (the Redis hash field).
KIND = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
#: The longest record key, in UTF-8 bytes: a tool call id, a turn id, a fact's hash. Keys are
#: part of a btree key on Postgres (at most ~2.7 kB with the conversation's 32-byte hash).
MAX_KEY_BYTES = 1024


def check_record_kind(kind: str) -> str:
    """``kind`` if it names a kind of record, else ValueError.

    Example:
        >>> check_record_kind("effect")
        'effect'
        >>> check_record_kind("Effect:x")
        Traceback (most recent call last):
        ...
        ValueError: record kind must match [a-z][a-z0-9_.-]{0,63}, got 'Effect:x'
    """
    if not isinstance(kind, str) or not KIND.fullmatch(kind):
        raise ValueError(f"record kind must match {KIND.pattern}, got {kind!r}")
    return kind


def check_record_key(kind: str, key: str) -> tuple[str, str]:
    """``(kind, key)`` if every backend can store a record under them, else ValueError.

    Example:
        >>> check_record_key("effect", "call_1 'quoted'")
        ('effect', "call_1 'quoted'")
    """
    if not isinstance(kind, str) or not KIND.fullmatch(kind):
        check_record_kind(kind)  # raises, in the one wording of a bad kind
    if not isinstance(key, str) or not key or "\x00" in key:
        raise ValueError(f"record key must be a non-empty string without NUL, got {key!r}")
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"record key must be valid Unicode text: {key[:40]!r}") from None
    if size > MAX_KEY_BYTES:
        raise ValueError(
            f"record key is {size} bytes of UTF-8; at most {MAX_KEY_BYTES} are allowed"
        )
    return kind, key
