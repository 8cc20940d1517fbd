"""What one turn writes: the caller's input as LangChain messages, the messages the run
added (the engine's own objects, no dict round trip), the active agent and its rank, the
context in its stored form (rebased on a save another turn made meanwhile), the turn's
entry in the turn index, and the records that commit with it. ``Session._save`` writes it
in one conditional write.

Example:
    >>> [m.type for m in as_messages("hi")]
    ['human']
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from .context_json import PrunedContext
from .context_merge import MergeRule, rebase
from .store import Record, TurnWrite
from .turn_context import merge_rules, stored_form
from .turn_index import LEGACY_LOG, TURN, done_entry, done_meta, legacy_records

if TYPE_CHECKING:
    from ..graph.core.types import Response
    from ..graph.swarm import Swarm
    from .effect_ledger import TurnState
    from .long_term_session import LongTermSide

#: What ``Session.run`` takes as the caller's new input.
MessageInput: TypeAlias = (
    "str | Mapping[str, Any] | BaseMessage | Sequence[Mapping[str, Any] | BaseMessage]"
)


def as_messages(message: MessageInput) -> list[BaseMessage]:
    """The caller's new input as LangChain messages: a str is one user message; dicts
    (Swarm/OpenAI shape) and LangChain messages pass through
    ``swarmgraph.graph.core.messages.to_langchain``.

    Example:
        >>> [m.type for m in as_messages("hi")], [m.type for m in as_messages([
        ...     {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])]
        (['human'], ['system', 'human'])
    """
    from ..graph.core.messages import to_langchain

    if isinstance(message, str):
        return [HumanMessage(message)]
    given: Sequence[Mapping[str, Any] | BaseMessage]
    if isinstance(message, (dict, BaseMessage)):
        given = [message]
    elif isinstance(message, (list, tuple)):
        given = message
    else:
        raise TypeError(
            "message must be a str, a message dict, a LangChain message or a list of them, "
            f"got {type(message).__name__}"
        )
    # Dicts come back as new objects; only the caller's own LangChain messages need a copy.
    converted = to_langchain(given)
    pairs = zip(converted, given, strict=True)
    return [m.model_copy(deep=True) if m is src else m for m, src in pairs]


def run_messages(response: Response) -> list[BaseMessage]:
    """The messages a run added, as LangChain messages: the engine's own objects when
    ``Swarm`` made the response (no dict round trip), else converted from ``response.messages``.

    Example:
        >>> from swarmgraph.graph import Response
        >>> [m.type for m in run_messages(Response(messages=[{"role": "user", "content": "hi"}]))]
        ['human']
    """
    from ..graph.core.messages import to_langchain

    native = response.langchain_messages
    if native is not None and len(native) == len(response.messages):
        return list(native)
    return to_langchain(response.messages)


def new_messages(message: MessageInput | None) -> list[BaseMessage]:
    """The caller's input (:func:`as_messages`), each message with an id: a replay finds the
    turn's messages by the first one's."""
    if isinstance(message, str):  # the usual input: one user message (as as_messages makes)
        new: list[BaseMessage] = [HumanMessage(message)]
    else:
        new = as_messages(message) if message is not None else []
    for item in new:
        if not item.id:
            item.id = f"msg-{uuid.uuid4().hex}"
    return new


@dataclass
class SavedTurn:
    """What a turn's save writes, worked out once before its first try: the messages, the
    context in its stored form (``None``: keep the stored one; ``same``: the run left it as it
    was given and stored, so there is nothing to encode or rebase), the active agent and its
    rank, the long-term outbox."""

    messages: list[BaseMessage]
    context: dict | None
    agent: str | None
    rank: int
    outbox: Record | None
    same: bool = False

    def write(
        self,
        turn: Any,
        response: Response,
        meta: dict[str, Any],
        long_term: LongTermSide | None,
        swarm: Swarm,
        merge: dict[str, MergeRule],
        conflicts: list[dict[str, Any]],
    ) -> TurnWrite:
        """The write on the latest record ``turn`` read (``meta``: its meta as the memory
        policy keeps it): the turn's done entry and the records that commit with it, the
        context rebased when another turn saved in between (its conflicts in ``conflicts``)."""
        latest, messages = turn.latest, self.messages
        entry = done_entry(
            position=latest.count,
            new=len(turn.new) if messages else 0,
            run=len(messages) - len(turn.new) if messages else 0,
            first=messages[0].id if messages else None,
            agent=getattr(response.agent, "name", None),
            rank=self.rank,
        )
        kept = self.context is not None or self.same  # the context half is stored
        rank = None if not kept else self.rank if self.agent is not None else 0
        meta = done_meta(meta, turn.turn_id, rank)
        # A conversation an earlier version stored: its logged turn ids become records now.
        records = legacy_records(latest, but=turn.turn_id) if LEGACY_LOG in latest.meta else []
        # A run claiming a new turn id puts its entry only if absent (turn_index.turn_record):
        # if another run of the same id got there first, this save fails with RecordExists.
        records.append(
            Record(TURN, turn.turn_id, entry, if_absent=not turn.opened and not turn.resumed)
        )
        if response.branches or turn.resumes_fan_out:  # only a run that fanned out
            from .fan_out_resume import fan_out_records

            records.extend(fan_out_records(response, turn.resumes_fan_out))
        if self.outbox is not None:  # the turn's long-term writes commit with it
            records.append(self.outbox)
        if long_term is not None or self.outbox is not None:
            from .long_term_session import pending_meta

            meta = pending_meta(meta, long_term, self.outbox)
        write = TurnWrite(messages, self.context, self.agent, meta, records)
        if self.context is not None and latest is not turn.snapshot:
            conflicts.clear()
            form = stored_form(swarm)
            base = turn.base if form is None else form(turn.base)
            write.context = rebase(
                latest.context, base=base, new=self.context, merge=merge_rules(swarm, merge),
                conflicts=conflicts,
            )  # fmt: skip
        return write


def saved_turn(
    persist: tuple[str, ...],
    turn: TurnState,
    response: Response,
    swarm: Swarm,
    run: list[BaseMessage] | None,
    rank: int,
) -> SavedTurn:
    """What ``turn`` saves of ``response`` (``run``: its messages, when not the response's)
    under ``persist``; ``rank``: the active agent's among agents of its name."""
    keeps = "context" in persist
    ran = run_messages(response) if run is None else run
    messages = [*turn.new, *ran] if "messages" in persist else []
    context = response.context_variables if keeps else None
    schema = getattr(swarm, "context_schema", None)
    if context is not None and schema is not None:  # stored as JSON-ready values
        context = schema.dump(context)
    # A run that left the context as it was given, which is what is stored, writes none: the
    # stored one stays (also when another turn changes it meanwhile: this one changed nothing
    # a rebase would keep). Plain contexts only (a typed one is compared in its stored form).
    stored = turn.latest.context
    same = (
        schema is None
        and context is not None
        and context == turn.base == stored
        and not isinstance(stored, PrunedContext)  # a key was left out at load: save it without
    )
    agent = getattr(response.agent, "name", None) if keeps else None
    memory = getattr(turn, "memory", None)
    outbox = memory.outbox() if memory is not None else None
    return SavedTurn(messages, None if same else context, agent, rank, outbox, same)


def turn_usage(
    response: Response, sent: list[BaseMessage], summary_tokens: int | None
) -> dict[str, Any]:
    """The tokens of a turn (``Session.last_usage``): the engine's ``response.usage``
    (``source="engine"``) or an estimate over what was ``sent`` (``source="estimate"``); plus
    the summariser's input (``summary_tokens``).

    Example:
        >>> from swarmgraph.graph import Response
        >>> turn_usage(Response(), [HumanMessage("hi there")], None)["source"]
        'estimate'
    """
    usage = dict(getattr(response, "usage", None) or {})
    if usage.get("model_calls"):
        usage["source"] = "engine"
    else:
        usage = {
            "model_calls": None,
            "input_tokens": count_tokens_approximately(sent),
            "output_tokens": None,
            "source": "estimate",
        }
    usage["summary_input_tokens"] = summary_tokens
    return usage
