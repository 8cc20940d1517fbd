"""What ``Session`` does with long-term memory, beside its load / run / save: open the user's
memory, hand each turn's hooks to the run, and apply each turn's outbox after its save (or,
after a crash, at the next turn). The turn itself is :mod:`.long_term_turn`.

A Session holds a :class:`LongTermSide` only when long-term memory is on; without one, a turn
enters nothing here.

Example:
    >>> persist, memory = open_long_term(("messages",), False, "memory://doc-lts", "ming", True)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: long_term=... keeps the user's long-term memory, but persist=('messages',) ...
    >>> persist, memory = open_long_term(("messages", "context"), True, "memory://doc-lts",
    ...                                  "ming", True)
    >>> persist, memory
    (('messages', 'context', 'long_term'), LongTermMemory('memory://doc-lts', user_id='ming'))
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from .extract import user_texts
from .long_term import LongTermMemory
from .long_term_turn import OUTBOX, PENDING, LongTermTurn, apply_outbox
from .store import Record

if TYPE_CHECKING:
    from ..graph.core.types import Agent
    from .fact_extract import Extractor
    from .store import ConversationStore

#: The meta key naming the user whose memory a conversation's turns wrote (``history`` shows
#: that user's facts).
USER_KEY = "user_id"


@dataclass
class LongTermSide:
    """What a Session's turns need of its long-term memory: the memory, the conversation and
    its store, the facts recalled per prompt, and the outboxes this Session applied."""

    memory: LongTermMemory
    conversation_id: str
    store: ConversationStore
    recall: int
    delivered: set[str] = field(default_factory=set)


def open_long_term(
    persist: tuple[str, ...],
    default_persist: bool,
    url: str,
    user_id: str | None,
    long_term: bool | LongTermMemory | None,
) -> tuple[tuple[str, ...], LongTermMemory | None]:
    """``(persist, memory)`` for a Session's arguments (see ``Session``'s ``long_term``)."""
    if long_term is False:
        if "long_term" in persist:
            raise ValueError("persist names 'long_term', but long_term=False turns it off")
        return persist, None
    wanted = long_term is not None or "long_term" in persist
    if not wanted:
        if user_id is not None:  # LangGraph's way too: a user id alone turns no memory on
            warnings.warn(
                f"Session(user_id={user_id!r}) keeps no long-term memory without "
                "long_term=True (or a LongTermMemory); pass it to recall this user's facts "
                "in later conversations, or long_term=False to say you mean none",
                UserWarning,
                stacklevel=4,  # the caller's Session(...) line (via long_term_options)
            )
        return persist, None
    if "long_term" not in persist:
        if not default_persist:
            raise ValueError(
                f"long_term=... keeps the user's long-term memory, but persist={persist!r} "
                "leaves out 'long_term': add it, or leave persist at its default"
            )
        persist = (*persist, "long_term")
    if isinstance(long_term, LongTermMemory):
        memory = long_term if user_id in (None, long_term.user_id) else long_term.for_user(user_id)
        return persist, memory
    if long_term not in (None, True):
        raise TypeError(
            f"long_term must be True, False, None or a LongTermMemory, got {long_term!r}"
        )
    if user_id is None:
        raise ValueError(
            "long-term memory belongs to a user: pass Session(..., user_id='...') "
            "(or long_term=LongTermMemory(url, user_id=...))"
        )
    try:
        return persist, LongTermMemory(url, user_id=user_id)
    except ValueError as error:
        if "long-term memory needs" not in str(error):
            raise
        raise ValueError(
            f"{error}. Keep this conversation where it is and pass "
            "long_term=LongTermMemory('sqlite:///...' or 'postgresql://...', user_id=...)"
        ) from None


def check_long_term_options(
    memory: LongTermMemory | None, recall: int, extract: Extractor | None
) -> tuple[int, Extractor | None]:
    """``(recall, extract)`` checked: a count of facts, and a callable (both need memory on
    for extract)."""
    if isinstance(recall, bool) or not isinstance(recall, int) or recall < 0:
        raise ValueError(f"recall must be an int >= 0 (facts per prompt), got {recall!r}")
    if extract is not None:
        if not callable(extract):
            raise TypeError(f"extract must be callable (text -> facts), got {extract!r}")
        if memory is None:
            raise ValueError("extract=... writes long-term memory: pass long_term=True too")
    return recall, extract


def long_term_options(
    persist: tuple[str, ...],
    default_persist: bool,
    url: str,
    user_id: str | None,
    long_term: bool | LongTermMemory | None,
    recall: int,
    extract: Extractor | None,
) -> tuple[tuple[str, ...], LongTermMemory | None, int, Extractor | None]:
    """A Session's long-term arguments checked: ``(persist, memory, recall, extract)``."""
    persist, memory = open_long_term(persist, default_persist, url, user_id, long_term)
    return (persist, memory, *check_long_term_options(memory, recall, extract))


def start_long_term_turn(
    side: LongTermSide, turn_id: str, new: Sequence[BaseMessage], run_kwargs: dict[str, Any]
) -> LongTermTurn:
    """The turn's :class:`LongTermTurn`, its hooks put in ``run_kwargs`` beside any the
    caller passed (the caller's text comes first; a tool input the caller gives wins)."""
    turn = LongTermTurn(
        side.memory,
        side.conversation_id,
        turn_id,
        k=side.recall,
        said=" ".join(user_texts(list(new))) or None,
    )
    theirs_prompt = run_kwargs.get("prompt_context")
    theirs_inputs = run_kwargs.get("tool_inputs")

    def prompt_context(agent: Agent, messages: Sequence[BaseMessage]) -> str | None:
        parts = [theirs_prompt(agent, messages) if theirs_prompt else None]
        parts.append(turn.prompt_context(agent, messages))
        return "\n\n".join(p for p in parts if p) or None

    def tool_inputs(agent: Agent) -> Mapping[str, Any]:
        return {**turn.tool_inputs(agent), **(theirs_inputs(agent) if theirs_inputs else {})}

    run_kwargs["prompt_context"] = prompt_context
    run_kwargs["tool_inputs"] = tool_inputs
    return turn


def pending_meta(meta: dict, side: LongTermSide | None, outbox: Record | None) -> dict:
    """``meta`` with the list of turns whose outbox may wait: the stored list minus those this
    Session applied, plus this turn's; and the user whose memory the turns write."""
    delivered = side.delivered if side is not None else set()
    pending = [t for t in meta.get(PENDING, []) if t not in delivered]
    if outbox is not None and outbox.key not in pending:
        pending.append(outbox.key)
    kept = {k: v for k, v in meta.items() if k != PENDING}
    if pending:
        kept[PENDING] = pending
    if side is not None:
        kept[USER_KEY] = side.memory.user_id
    return kept


def drain_outboxes(side: LongTermSide, meta: Mapping[str, Any]) -> None:
    """Apply the stored outboxes ``meta`` lists that this Session has not applied:
    idempotent, so an outbox another process applied already writes nothing."""
    pending = [t for t in meta.get(PENDING, []) if t not in side.delivered]
    if not pending:
        return
    outboxes = side.store.records(side.conversation_id, OUTBOX, keys=pending)
    for turn_id in pending:
        value = outboxes.get(turn_id)
        if value is not None:
            apply_outbox(side.memory, side.conversation_id, turn_id, value)
        side.delivered.add(turn_id)


def deliver_outbox(side: LongTermSide, turn: LongTermTurn) -> None:
    """Apply ``turn``'s outbox (saved with the turn) to the long-term store. A store that
    fails now leaves it stored: the next turn applies it (a warning says so)."""
    outbox = turn.outbox()
    if outbox is None:
        return
    try:
        apply_outbox(side.memory, side.conversation_id, outbox.key, outbox.value)
    except Exception as error:  # the turn is saved with its outbox: nothing is lost
        warnings.warn(
            f"long-term memory of turn {outbox.key!r} is saved with the turn but not applied "
            f"yet ({type(error).__name__}: {error}); the next turn of "
            f"{side.conversation_id!r} applies it",
            RuntimeWarning,
            stacklevel=4,
        )
        return
    side.delivered.add(outbox.key)
