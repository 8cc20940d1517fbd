"""One unit of work per backend: a conversation is loaded in one read and saved in one write.

A conversation is its messages ("what was said"), its context record (the ``context`` dict,
the ``active_agent`` name, a ``meta`` dict for derived state such as the turn log and a
summary, and a ``version``) and its **records**: JSON values under ``(kind, key)`` that must
commit together with a turn (an effect ledger, approval decisions, a turn-id index, an
outbox). :class:`ConversationStore` is what every backend offers:

* ``load(cid, window=..., records=[(kind, key), ...])`` -> :class:`Snapshot`: the record, the
  messages a memory policy needs (:class:`Window`: all, the last ``k``, or from position ``n``
  on), how many messages are stored, and the records asked for (a turn's own entry in the
  turn index), in one consistent read (one statement, transaction or ``MULTI`` where the
  backend has one). The count is kept by every save (a counter beside the version on SQL
  backends, the list's length on Redis), so it costs nothing to read (``None`` before the
  first save of a record: a load never counts).
* ``save(cid, TurnWrite(...), expected_version=v)`` -> the new version: one atomic,
  conditional write of new messages, the context (or keep it), the active agent, the meta and
  records. If version ``v`` is no longer stored it raises :class:`ContextVersionConflict`
  and writes nothing; a record written ``if_absent`` that is already stored raises
  :class:`RecordExists` (naming the key and the stored value) and writes nothing. Every save
  that writes the record, or expects a version, bumps the version, so "the version did not
  move" means "nobody saved since my load"; an append of messages alone that expects none (a
  LangChain history's ``add_messages``) leaves the record as it is.
* ``clear(cid)``, and the reads a REPL or an adapter needs: ``messages``, ``count``,
  ``records``, and ``conversations()`` (each one's id, agent, message count, last change).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.memory import open_store
    >>> store = open_store("memory://doctest-store")
    >>> store.save("c1", TurnWrite(messages=[HumanMessage("hi"), AIMessage("hello")],
    ...     context={"order_id": 7}, active_agent="Triage",
    ...     records=[Record("approval", "call_1", True, if_absent=True)]), expected_version=0)
    1
    >>> snapshot = store.load("c1", window=Window(last=1), records=[("approval", "call_1")])
    >>> snapshot.context, snapshot.version, snapshot.active_agent, snapshot.count
    ({'order_id': 7}, 1, 'Triage', 2)
    >>> snapshot.records
    {('approval', 'call_1'): True}
    >>> [m.content for m in snapshot.messages]
    ['hello']
    >>> store.save("c1", TurnWrite(records=[Record("approval", "call_1", False, if_absent=True)]),
    ...     expected_version=1)
    Traceback (most recent call last):
    ...
    swarmgraph.memory.errors.RecordExists: record approval:'call_1' of 'c1' is already stored: True
    >>> store.save("c1", TurnWrite(context={}), expected_version=0)
    Traceback (most recent call last):
    ...
    swarmgraph.memory.errors.ContextVersionConflict: context of 'c1' is at version 1, not 0
    >>> store.records("c1", "approval"), store.count("c1")
    ({'call_1': True}, 2)
    >>> store.clear("c1"); store.load("c1").version   # a tombstone: versions never go back
    2
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import starmap
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from .context_json import encode_context
from .errors import ContextVersionConflict
from .ids import check_conversation_id, check_record_key, check_record_kind

#: A JSON value as ``json`` reads it back.
JSON = Any
#: What :meth:`ConversationStore.clear` may clear alone (``None``: the whole conversation).
Half = Literal["messages", "context"]


def check_limit(limit: int | None) -> int | None:
    """Validate a window size: ``None`` (everything) or an int >= 0.

    Example:
        >>> check_limit(3), check_limit(None)
        (3, None)
    """
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be None or an int >= 0, got {limit!r}")
    return limit


@dataclass(frozen=True)
class Window:
    """Which stored messages a load returns: the last ``last`` (``None``: no limit), or every
    message from position ``start`` on (0 is the first message). One of the two, not both.

    A ``start`` past the end of a conversation whose messages were cleared since returns all
    of them, and says so in :attr:`Snapshot.start` (0).

    Example:
        >>> Window(), Window(last=20), Window(start=4)
        (Window(last=None, start=0), Window(last=20, start=0), Window(last=None, start=4))
    """

    last: int | None = None
    start: int = 0

    def __post_init__(self) -> None:
        check_limit(self.last)
        check_limit(self.start)
        if self.last is not None and self.start:
            raise ValueError("a Window takes last=k or start=n, not both")


ALL_MESSAGES = Window()
NO_MESSAGES = Window(last=0)


@dataclass
class Snapshot:
    """One consistent read of a conversation: its context record and a window of messages.

    ``start`` is the position of ``messages[0]`` in the conversation when the window tells
    it (``Window(start=n)`` and all messages), ``None`` for a last-``k`` window. ``version``
    0 means nothing was ever stored. ``count`` is how many messages the conversation holds
    (``None`` where a load cannot tell without counting: no record saved yet, or a record of
    an earlier version not saved to since; :meth:`ConversationStore.count` counts).
    ``records`` holds the records the load asked for that are stored, ``(kind, key) -> value``.
    """

    context: dict = field(default_factory=dict)
    version: int = 0
    active_agent: str | None = None
    meta: dict = field(default_factory=dict)
    messages: list[BaseMessage] = field(default_factory=list)
    start: int | None = 0
    count: int | None = None
    records: dict[tuple[str, str], JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class Record:
    """A record to write with a save: ``value`` (any JSON) under ``(kind, key)``.

    ``if_absent=True`` is a put-if-absent: the first writer wins; a later one gets
    :class:`RecordExists` (with the stored value) and its whole save is not written.
    """

    kind: str
    key: str
    value: JSON
    if_absent: bool = False


@dataclass
class TurnWrite:
    """What one :meth:`ConversationStore.save` writes, atomically. ``None`` keeps what is
    stored (the context, the active agent, the meta); messages are appended; records are
    put (or put if absent)."""

    messages: Sequence[BaseMessage] = ()
    context: dict | None = None
    active_agent: str | None = None
    meta: dict | None = None
    records: Sequence[Record] = ()


@runtime_checkable
class ConversationStore(Protocol):
    """A backend's unit of work for conversations; see the module docstring.

    Stores are sync (on bounded pools); async code hops to a thread, as
    :meth:`memory.Session.arun` does once for a turn's load and once for its save.
    """

    url: str
    size_limit: int | None

    def load(
        self,
        conversation_id: str,
        *,
        window: Window = ALL_MESSAGES,
        records: Collection[tuple[str, str]] = (),
    ) -> Snapshot: ...
    def save(
        self, conversation_id: str, write: TurnWrite, *, expected_version: int | None
    ) -> int: ...
    def clear(self, conversation_id: str, *, only: Half | None = None) -> None: ...
    def messages(self, conversation_id: str, limit: int | None = None) -> list[BaseMessage]: ...
    def count(self, conversation_id: str) -> int: ...
    def records(
        self, conversation_id: str, kind: str, keys: Collection[str] | None = None
    ) -> dict[str, JSON]: ...
    def conversations(self) -> list[ConversationSummary]: ...


@dataclass(frozen=True)
class ConversationSummary:
    """One stored conversation as a listing shows it (``swarmgraph sessions``).

    ``updated_at`` is when its context record was last written (a turn, a clear), in seconds
    since the epoch; None when only messages were ever appended to it (a LangChain history's
    ``add_messages``), which not every backend timestamps.
    """

    conversation_id: str
    active_agent: str | None
    messages: int
    updated_at: float | None


def newest_first(rows: Iterable[ConversationSummary]) -> list[ConversationSummary]:
    """``rows`` that hold something (messages, or an agent), the last changed first, then
    those without a time, by id. A cleared conversation (an empty tombstone) is left out.

    Example:
        >>> rows = [ConversationSummary("a", None, 2, None), ConversationSummary("b", "X", 0, 5.0),
        ...         ConversationSummary("gone", None, 0, 9.0)]
        >>> [row.conversation_id for row in newest_first(rows)]
        ['b', 'a']
    """
    kept = [row for row in rows if row.messages or row.active_agent]
    return sorted(
        kept,
        key=lambda row: (row.updated_at is None, -(row.updated_at or 0.0), row.conversation_id),
    )


def next_version(conversation_id: str, stored: int, expected: int | None) -> int:
    """The version a save writes: ``stored + 1``, after the optimistic check every backend
    makes (``expected`` None means "whatever is stored").

    Example:
        >>> next_version("c", 3, None), next_version("c", 3, 3)
        (4, 4)
    """
    if expected is not None and expected != stored:
        raise ContextVersionConflict(conversation_id, stored, expected)
    return stored + 1


@dataclass(frozen=True)
class EncodedRecord:
    """A :class:`Record` as a backend writes it: its value as JSON text."""

    kind: str
    key: str
    value: str
    if_absent: bool


@dataclass(frozen=True)
class EncodedWrite:
    """A :class:`TurnWrite` as a backend writes it: every value already JSON text (``None``:
    keep what is stored), checked and encoded once, the same way on every backend."""

    messages: list[str]
    context: str | None
    active_agent: str | None
    meta: str | None
    records: list[EncodedRecord]

    def appends_only(self, expected: int | None) -> bool:
        """True for an append of messages alone, expecting no version: it leaves the record
        (and its version) as it is, as a chat history's append always has."""
        kept = self.context is None and self.meta is None and self.active_agent is None
        return expected is None and kept and not self.records


def encode_messages(messages: Iterable[BaseMessage]) -> list[str]:
    """Messages as the JSON texts LangChain's own histories store (``message_to_dict``).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> [m.content for m in decode_messages(encode_messages([HumanMessage("hi")]))]
        ['hi']
    """
    # map, not a comprehension: a turn's save encodes each message through library code only
    return list(map(json.dumps, map(message_to_dict, messages)))


def decode_messages(texts: Sequence[str | bytes]) -> list[BaseMessage]:
    """Stored JSON texts back to messages, in order."""
    return messages_from_dict(list(map(json.loads, texts)))


def encode_value(value: JSON) -> str:
    """A record's value as JSON text (ASCII, so any string survives any backend).

    Example:
        >>> encode_value({"status": "done", "n": 1})
        '{"status":"done","n":1}'
    """
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"a record's value must be JSON: {error}") from None


class StoreBase:
    """What every backend shares, written once: ids and windows checked, values encoded and
    decoded, the version rule. A backend implements the ``_load``/``_save``/``_clear``/
    ``_messages``/``_count``/``_records`` primitives on already-checked, encoded values."""

    url: str
    size_limit: int | None

    def load(
        self,
        conversation_id: str,
        *,
        window: Window = ALL_MESSAGES,
        records: Collection[tuple[str, str]] = (),
    ) -> Snapshot:
        """The conversation's record, the ``window`` of its messages and the ``records`` asked
        for (those stored), read at once."""
        cid = check_conversation_id(conversation_id)
        wanted = list(starmap(check_record_key, records))
        snapshot = self._load(cid, window, wanted)
        if snapshot.records:  # the backends hand back JSON text
            snapshot.records = {pair: json.loads(text) for pair, text in snapshot.records.items()}
        return snapshot

    def save(self, conversation_id: str, write: TurnWrite, *, expected_version: int | None) -> int:
        """Write ``write`` atomically if ``expected_version`` is still stored (``None``:
        whatever is); return the new version. See the module docstring."""
        cid = check_conversation_id(conversation_id)
        return self._save(cid, self.encode(write), expected_version)

    def clear(self, conversation_id: str, *, only: Half | None = None) -> None:
        """Forget the conversation in one write: its messages, and its context record (kept
        as a tombstone at the next version, so versions never repeat) with its records.
        ``only="messages"`` or ``only="context"`` (the record and the records) clears one half."""
        if only not in (None, "messages", "context"):
            raise ValueError(f"only must be None, 'messages' or 'context', got {only!r}")
        self._clear(check_conversation_id(conversation_id), only)

    def messages(self, conversation_id: str, limit: int | None = None) -> list[BaseMessage]:
        """The conversation's messages in order; with ``limit`` only the last ``limit``."""
        cid, limit = check_conversation_id(conversation_id), check_limit(limit)
        return [] if limit == 0 else decode_messages(self._messages(cid, limit))

    def count(self, conversation_id: str) -> int:
        """How many messages the conversation holds."""
        return self._count(check_conversation_id(conversation_id))

    def records(
        self, conversation_id: str, kind: str, keys: Collection[str] | None = None
    ) -> dict[str, JSON]:
        """The conversation's records of ``kind`` (only ``keys`` if given) as ``key -> value``."""
        cid, kind = check_conversation_id(conversation_id), check_record_kind(kind)
        wanted = None if keys is None else [check_record_key(kind, key)[1] for key in keys]
        if wanted == []:
            return {}
        return {key: json.loads(text) for key, text in self._records(cid, kind, wanted).items()}

    def conversations(self) -> list[ConversationSummary]:
        """Every conversation this store holds something of: its id, the agent holding it,
        how many messages, when it last changed; the last changed first."""
        return newest_first(self._summaries())

    def encode(self, write: TurnWrite) -> EncodedWrite:
        """``write`` checked and encoded (the context with its size and depth checks):
        raises before anything is written."""
        context = None
        if write.context is not None:
            context = encode_context(write.context, size_limit=self.size_limit)
        records, seen = [], set()
        for record in write.records:
            kind, key = check_record_key(record.kind, record.key)
            if (kind, key) in seen:
                raise ValueError(f"record {kind}:{key!r} is written twice in one save")
            seen.add((kind, key))
            records.append(EncodedRecord(kind, key, encode_value(record.value), record.if_absent))
        return EncodedWrite(
            messages=encode_messages(write.messages),
            context=context,
            active_agent=write.active_agent,
            meta=None if write.meta is None else json.dumps(write.meta),
            records=records,
        )

    # -- what each backend implements ---------------------------------------------------------
    def _load(self, cid: str, window: Window, records: list[tuple[str, str]]) -> Snapshot:
        """The snapshot, its ``records`` still JSON text (only those stored)."""
        raise NotImplementedError

    def _save(self, cid: str, write: EncodedWrite, expected: int | None) -> int:
        raise NotImplementedError

    def _clear(self, cid: str, only: Half | None) -> None:
        raise NotImplementedError

    def _messages(self, cid: str, limit: int | None) -> Sequence[str | bytes]:
        raise NotImplementedError

    def _count(self, cid: str) -> int:
        raise NotImplementedError

    def _records(self, cid: str, kind: str, keys: list[str] | None) -> dict[str, str]:
        raise NotImplementedError

    def _summaries(self) -> Iterable[ConversationSummary]:
        raise NotImplementedError


def since(
    start: int,
    read_from: Callable[[int], Sequence[str | bytes]],
    count: Callable[[], int],
) -> tuple[Sequence[str | bytes], int]:
    """``messages[start:]`` and its start, or every message and 0 when fewer than ``start``
    are stored (they were cleared since the caller learnt ``start``). ``count`` runs only when
    the read came back empty, the one case where "nothing new" and "cleared" look alike.

    Example:
        >>> stored = ["a", "b"]
        >>> since(1, lambda n: stored[n:], lambda: len(stored))
        (['b'], 1)
        >>> since(5, lambda n: stored[n:], lambda: len(stored))
        (['a', 'b'], 0)
    """
    texts = read_from(start)
    if texts or not start or count() >= start:
        return texts, start
    return read_from(0), 0
