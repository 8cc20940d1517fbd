"""``Session``: the seed's three steps (load, run, save) for one conversation, as one object.

Messages ("what was said"), context ("the key fields") and the name of the agent holding the
conversation go to one :class:`~swarmgraph.memory.store.ConversationStore`, loaded in one read
and saved in one write a turn. ``persist`` says which halves outlive the run, so the
difference is something you can run and measure:

=========================  ======================================================================
``persist``                what a new Session (a "refresh", a new process) brings back
=========================  ======================================================================
``("messages","context")`` the earlier text (the model can read it), the context fields (tools and
                           instructions get them) and the active agent
``("messages",)``          the text only: the model can *read* "order 7", but
                           ``context_variables`` starts empty and the given agent starts
``("context",)``           the fields and the active agent, but the model sees no earlier text
``()``                     nothing: every run starts fresh, as plain Swarm does
``+ "long_term"``          also the *user's* facts (``user_id=``, ``long_term=True``), across every
                           conversation of that user: recalled into each prompt, written by the
                           memory tools and the extractor, committed with the turn
                           (:mod:`~swarmgraph.memory.long_term_turn`)
=========================  ======================================================================

A turn is saved in one atomic write (a process killed mid-turn leaves the whole turn or none
of it). If the returned context cannot be stored as
JSON, the turn's messages are still saved, the stored context stays as it was, and
:class:`ContextSerializationError` is raised afterwards with the run's ``.response`` attached.
Concurrent turns on one conversation never interleave messages; their context changes are
merged key by key (each run's changes applied over the latest stored version; a key both
changed is reported, or combined by a ``merge=`` rule: :mod:`~swarmgraph.memory.context_merge`).
A run that raises stores nothing: the turn did not happen, and the exception reaches the
caller; except a run a :class:`~swarmgraph.graph.errors.SwarmError` stopped after it did
something (a budget, the step limit), which is saved as far as it got before the error is
raised. A run's messages are stored as the engine made them (message ids, the model's usage
and response metadata included), not rebuilt from ``Response.messages``' Swarm-style dicts.

Every turn id is kept (:mod:`~swarmgraph.memory.turn_index`), and every ``@effect`` or
``@needs_approval`` tool runs through the turn's effect ledger
(:mod:`~swarmgraph.memory.effect_ledger`): never twice for one call, across crashes, retries
and two people answering one approval (docs/storage.md, "Durability").

A typed context (``Swarm(context_schema=Model)``) is stored as JSON-ready values (a date as
ISO text, a nested model as a dict) and restored validated. When the schema changed since it was
stored, a key it no longer has is dropped and a value that no longer fits is reset to its
default (a ``ContextSchemaWarning`` names both); a required key the store cannot fill is a
``ContextValidationError`` before any model call, unless this turn's ``context_variables``
gives it.

Example:
    >>> import os, tempfile
    >>> from swarmgraph.graph import Agent, Result, Swarm, ScriptedChatModel, scripted_tool_call
    >>> def remember_order(order_id: int):
    ...     '''Remember the order the user talks about.'''
    ...     return Result(value="noted", context_variables={"order_id": order_id})
    >>> triage = Agent(name="Triage", functions=[remember_order])
    >>> model = ScriptedChatModel([scripted_tool_call("remember_order", {"order_id": 7}), "OK."])
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "memory.db")
    >>> _ = Session("conv-42", url=url).run(Swarm(chat_model=model), triage, "refund order 7")
    >>> later = Session("conv-42", url=url)           # a refresh: a new object, same database
    >>> later.context_variables, [m.type for m in later.messages]
    ({'order_id': 7}, ['human', 'ai', 'tool', 'ai'])
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from ..graph.errors import SwarmError
from .approvals import already_decided, check_turn, pending_in, replayed_decisions, tail_outcomes
from .backends import open_store
from .chat_history import StoredChatHistory
from .context_json import DEFAULT_SIZE_LIMIT, encode_context
from .context_merge import MergeRule, check_rules, rebase
from .effect_ledger import TurnLedger, TurnState
from .errors import (
    ContextConflictWarning,
    ContextSerializationError,
    ContextVersionConflict,
    RecordExists,
    TurnInProgress,
    TurnOutcomeUnknown,
    UnknownAgentWarning,
)
from .ids import check_conversation_id, check_turn_id
from .long_term_session import (
    check_long_term_options,
    deliver_outbox,
    drain_outboxes,
    open_long_term,
    pending_meta,
    start_long_term_turn,
)
from .long_term_turn import LongTermTurn
from .policies import BufferMemory, Folded, MemoryPolicy, WindowMemory
from .store import NO_MESSAGES, Record, Snapshot, TurnWrite, Window
from .turn_index import (
    TURN,
    done_entry,
    find_turn,
    legacy_records,
    ranked,
    turn_record,
    with_open,
    without_legacy_log,
)
from .urls import default_url

if TYPE_CHECKING:
    from ..graph.approvals import PendingApproval
    from ..graph.swarm import Swarm
    from ..graph.types import Agent, Response
    from .fact_extract import Extractor
    from .long_term import LongTermMemory

HALVES = ("messages", "context")
#: What ``persist`` may name: the two halves of a conversation, and the user's long-term memory.
KINDS = (*HALVES, "long_term")
#: What ``Session.run`` takes as the caller's new input.
MessageInput: TypeAlias = (
    "str | Mapping[str, Any] | BaseMessage | Sequence[Mapping[str, Any] | BaseMessage]"
)


def rebase_context(latest: dict, base: dict, new: dict) -> dict:
    """Replay one run's changes (``base`` -> ``new``) on top of ``latest`` (someone else's
    save that came in between).

    Keys the run added or changed take the run's value, keys it deleted are deleted, and
    everything else keeps the latest stored value, so two concurrent runs lose neither's
    writes unless both wrote the same key (then the later save wins, and ``Session`` reports
    it; merge rules combine them: :mod:`swarmgraph.memory.context_merge`). (The engine's
    ``graph.state.merge_context`` is another thing: the reducer of one run's updates.)

    Example:
        >>> rebase_context({"a": 1, "b": 9}, base={"a": 1, "b": 2}, new={"a": 5, "b": 2})
        {'a': 5, 'b': 9}
    """
    return rebase(latest, base=base, new=new)


def _stored_form(swarm: Swarm) -> Any:
    """How a turn's context is stored: a typed context's ``dump`` (JSON-ready values), or
    ``None`` (Swarm's plain dict, stored as it is)."""
    schema = getattr(swarm, "context_schema", None)
    return None if schema is None else schema.dump


def as_messages(message: MessageInput) -> list[BaseMessage]:
    """The caller's new input as LangChain messages: a str is one user message; dicts
    (Swarm/OpenAI shape) and LangChain messages pass through
    ``swarmgraph.graph.messages.to_langchain``.

    Example:
        >>> [m.type for m in as_messages("hi")], [m.type for m in as_messages([
        ...     {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])]
        (['human'], ['system', 'human'])
    """
    from ..graph.messages import to_langchain

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
    from ..graph.messages import to_langchain

    native = response.langchain_messages
    if native is not None and len(native) == len(response.messages):
        return list(native)
    return to_langchain(response.messages)


def _persist_tuple(persist: str | Iterable[str]) -> tuple[str, ...]:
    chosen = (persist,) if isinstance(persist, str) else tuple(persist)
    unknown = [p for p in chosen if p not in KINDS]
    if unknown:
        raise ValueError(
            f"persist may only name 'messages', 'context' and 'long_term', got {unknown!r} "
            "(e.g. ('messages', 'context'), ('messages',), ('context',), ('long_term',) or ())"
        )
    return tuple(h for h in KINDS if h in chosen)


@dataclass
class _Turn(TurnState):
    """One turn in flight: what it loaded, what it sends, what its saves know."""

    snapshot: Snapshot = field(default_factory=Snapshot)
    folded: Folded = field(default_factory=lambda: Folded([]))
    given: dict | None = field(default_factory=dict)  # the context the run is given
    agent: str | None = None  # the agent an open entry resumes with (None: the stored one)
    rank: int = 0
    memory: LongTermTurn | None = None  # its long-term recall, tools and staged writes
    resumes_fan_out: bool = False  # it picks up a fan-out that paused inside a branch


class Session:
    """One conversation that outlives a run; see the module docstring for ``persist``.

    Args:
        conversation_id: any non-empty string without NUL (always a bound parameter).
        url: where the conversation lives: ``sqlite:///file.db``, ``memory://``,
            ``postgresql://``, ``redis://``. Default (``None``): ``$SWARMGRAPH_DB``, else
            ``.swarmgraph/swarmgraph.db`` under the working directory, the same store the
            ``swarmgraph`` CLI uses (:func:`swarmgraph.memory.urls.default_url`).
        persist: which halves outlive a run.
        window: load only the last ``window`` messages (shorthand for ``WindowMemory``).
        memory: a policy (:mod:`swarmgraph.memory.policies`) or a spec string like
            ``"tokens:2000"``.
        agents: agents a stored active-agent name may resolve to, besides every agent
            reachable by handoff from the agent passed to :meth:`run`.
        context_size_limit: bytes of context JSON above which saving warns.
        merge: per context key, how to combine this turn's change with another turn's that
            saved while it ran (``{"visits": operator.add}``: counters stay exact); keys
            without a rule keep this turn's value and are reported
            (``response.context_conflicts``, :class:`ContextConflictWarning`). See
            :mod:`swarmgraph.memory.context_merge`.
        user_id: whose conversation this is (the owner of its long-term memory).
        long_term: the user's long-term memory: ``True`` (a
            :class:`~swarmgraph.memory.LongTermMemory` on ``url``) or a ``LongTermMemory``
            (another store; its ``user_id`` unless ``user_id=`` is given). Adds
            ``"long_term"`` to the default ``persist``; ``"long_term"`` in ``persist`` alone
            means ``long_term=True``. See :mod:`swarmgraph.memory.long_term_turn`.
        recall: facts recalled into each system prompt (``0``: none; the tools still work).
        extract: after each turn, an extractor for the user's new messages
            (:class:`~swarmgraph.memory.fact_extract.FactExtractor`, or any
            ``text -> changes | {key: value}``); its facts commit with the turn.
    """

    def __init__(
        self,
        conversation_id: str,
        url: str | None = None,
        *,
        persist: str | Iterable[str] = HALVES,
        window: int | None = None,
        memory: MemoryPolicy | str | None = None,
        agents: Sequence[Agent] | None = None,
        context_size_limit: int | None = DEFAULT_SIZE_LIMIT,
        merge: Mapping[str, MergeRule] | None = None,
        user_id: str | None = None,
        long_term: bool | LongTermMemory | None = None,
        recall: int = 3,
        extract: Extractor | None = None,
    ) -> None:
        self.conversation_id = check_conversation_id(conversation_id)
        self.merge = check_rules(merge)
        self.url = url = default_url() if url is None else url
        #: The user's long-term memory (``None``: off); see ``long_term=``.
        self.long_term: LongTermMemory | None
        self.persist, self.long_term = open_long_term(
            _persist_tuple(persist), persist is HALVES, url, user_id, long_term
        )
        self.user_id = self.long_term.user_id if self.long_term is not None else user_id
        self.recall, self.extract = check_long_term_options(self.long_term, recall, extract)
        self._delivered: set[str] = set()  # outboxes this object applied (see long_term_turn)
        if window is not None and memory is not None:
            raise ValueError("give window=k or memory=..., not both (window=k is WindowMemory(k))")
        if isinstance(memory, str):
            from .policies import parse_memory

            memory = parse_memory(memory)
        self.memory: MemoryPolicy = (
            WindowMemory(window) if window is not None else memory or BufferMemory()
        )
        self.store = open_store(url, size_limit=context_size_limit)
        self._agents: dict[str, Agent] = {}
        for agent in agents or ():
            known = self._agents.setdefault(agent.name, agent)
            if known is not agent:
                raise ValueError(f"two different agents are named {agent.name!r} in agents=")
        #: What the last run sent as history + new input (before the agent's instructions).
        self.last_sent: list[BaseMessage] = []
        #: Tokens of the last run: the engine's ``response.usage`` (``source="engine"``) or an
        #: estimate over what was sent (``source="estimate"``); plus the summariser's input.
        self.last_usage: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (
            f"Session({self.conversation_id!r}, persist={self.persist!r}, memory={self.memory!r})"
        )

    # -- what is stored --------------------------------------------------------------------
    @cached_property
    def history(self) -> StoredChatHistory:
        """This conversation's messages as a LangChain chat history (the same store)."""
        return StoredChatHistory(self.store, self.conversation_id)

    @property
    def messages(self) -> list[BaseMessage]:
        """Every stored message of this conversation (LangChain messages)."""
        return self.store.messages(self.conversation_id)

    @property
    def context_variables(self) -> dict:
        """The stored context (a fresh copy; ``{}`` if none)."""
        return self.store.load(self.conversation_id, window=NO_MESSAGES).context

    @property
    def active_agent_name(self) -> str | None:
        """The name of the agent that held the conversation after the last saved run."""
        return self.store.load(self.conversation_id, window=NO_MESSAGES).active_agent

    @property
    def pending(self) -> list[PendingApproval]:
        """Tool calls of the last stored turn that wait for a decision (``PendingApproval``
        s): approval-marked calls, and effect calls in doubt (``in_doubt=True``: started, never
        finished). Read from the stored conversation, so another process sees them too (inside
        the branches of a fan-out: from the paused fan-out stored with the turn)."""
        if "messages" not in self.persist:
            return []
        tail = self.store.messages(self.conversation_id, _PENDING_TAIL)
        pending = pending_in(tail, tail_outcomes(self.store, self.conversation_id, tail))
        paused = self._paused_fan_out(tail) if pending else None
        return paused_pending(paused) if paused is not None else pending

    @property
    def unfinished(self) -> list[str]:
        """Turn ids that ran an effect tool and never finished (their process died, or runs
        now): retry each with ``run(swarm, agent, turn_id=...)`` (no message needed), which
        completes it or returns the calls left in doubt in ``response.pending``."""
        meta = self.store.load(self.conversation_id, window=NO_MESSAGES).meta
        return list(meta.get("open_turns", []))

    def clear(self) -> None:
        """Forget this conversation: messages, context, agent, turn log, in one write."""
        self.store.clear(self.conversation_id)

    def switch_agent(self, agent: Agent) -> None:
        """Hand the conversation to ``agent``: the next run starts with it, as if a handoff
        had left it there. One conditional write of the active agent (messages and context
        stay); a run that saved meanwhile is read again first, never overwritten.

        Example:
            >>> from swarmgraph.graph import Agent
            >>> session = Session("doc-switch", url="memory://doc-switch")
            >>> session.switch_agent(Agent(name="Sales"))
            >>> session.active_agent_name
            'Sales'
        """
        if "context" not in self.persist:
            raise ValueError(
                f"session {self.conversation_id!r} keeps no active agent: persist="
                f"{self.persist!r} leaves out 'context', which holds it"
            )
        while True:
            latest = self.store.load(self.conversation_id, window=NO_MESSAGES)
            # A name alone resumes the first of its namesakes (rank 0), as after a handoff.
            write = TurnWrite(active_agent=agent.name, meta=ranked(latest.meta, 0))
            try:
                self.store.save(self.conversation_id, write, expected_version=latest.version)
                return
            except ContextVersionConflict:  # a turn saved since the load: read it again
                continue

    async def aclear(self) -> None:
        """:meth:`clear` from async code (one thread hop; the backends are sync, pooled)."""
        await asyncio.to_thread(self.clear)

    # -- one turn: load, run, save -----------------------------------------------------------
    # The conversation is read once (the record and the policy's window of messages in one
    # load), merged once (the caller's values over the stored context) and written once (the
    # store's save: a conditional write on the version loaded of the messages, the context and
    # the meta with this turn's id in its log). Only when another writer saved in between does
    # the save read the record again, rebase the run's changes on it and write again.
    # Nothing here deep-copies the context: Swarm.run deep-copies its input, as Swarm does.
    def run(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> Response:
        """Load what ``persist`` names, run ``swarm``, save the new messages and context.

        ``message``: a str (one user message), a message dict, a LangChain message or a list.
        ``context_variables`` is merged over the stored context (never mutated).
        ``turn_id`` names this turn (a new one is generated when not given) and is saved with
        it: a turn id already stored is never run twice (the stored turn comes back as the
        ``Response``, the model is not called), so after :class:`TurnOutcomeUnknown` the
        caller retries with ``turn_id=error.turn_id`` safely.

        A turn that stops for approval is saved as it stands and :attr:`pending` lists what
        waits (in any process); ``run(swarm, agent, approvals={id: True | False | "reason"})``
        with no message resumes it. A new message while calls wait is an error.
        """
        turn = self._open(message, turn_id, run_kwargs, context_variables)
        turn.snapshot = self._load(turn.turn_id)
        self._drain(turn.snapshot)  # long-term writes of an earlier turn that wait
        stored = self._start(turn, approvals, run_kwargs)
        if stored is not None:
            return self._replay(stored, turn, agent, swarm)
        if "messages" in self.persist:
            turn.folded = self.memory.fold(turn.snapshot)
        resumed = self._prepare(agent, turn, context_variables, swarm)
        self.last_sent = [*self.memory.arrange(turn.folded.shown, turn.new), *turn.carried]
        ledger = self._ledger(turn, agent, swarm, run_kwargs)
        turn.memory = start_long_term_turn(self, turn.turn_id, turn.new, run_kwargs)
        from ..graph.errors import SwarmError  # the engine loads on first use (cheap imports)

        try:
            ran = swarm.run(
                agent=resumed,
                messages=list(self.last_sent),
                context_variables=turn.given,
                **run_kwargs,
            )
        except SwarmError as error:  # what ran is kept (a budget stop after tools ran)
            self._keep(turn, error, agent, swarm, ledger)
            raise
        response = self._whole(turn, cast("Response", ran))  # not a stream: _open refused it
        if turn.memory is not None and self.extract is not None:
            turn.memory.extract(self.extract, turn.new, resumed.name)
        self._save(turn, response, agent, swarm)
        self._deliver(turn)
        self._record_usage(response)
        return response

    async def arun(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> Response:
        """:meth:`run` for async code: ``swarm.arun``, and one thread hop each for the load
        and the save (the backends are sync with bounded pools, so 1,000 concurrent sessions
        never open more connections than the pool allows)."""
        turn = self._open(message, turn_id, run_kwargs, context_variables)
        turn.snapshot = await asyncio.to_thread(self._load, turn.turn_id)
        if self.long_term is not None:
            await asyncio.to_thread(self._drain, turn.snapshot)
        stored = await asyncio.to_thread(self._start, turn, approvals, run_kwargs)
        if stored is not None:
            return await asyncio.to_thread(self._replay, stored, turn, agent, swarm)
        if "messages" in self.persist:
            turn.folded = await self.memory.afold(turn.snapshot)
        resumed = self._prepare(agent, turn, context_variables, swarm)
        self.last_sent = [*self.memory.arrange(turn.folded.shown, turn.new), *turn.carried]
        ledger = self._ledger(turn, agent, swarm, run_kwargs)
        # Recall runs in the graph's nodes: a sync store read per model call (cached per agent
        # and query within the turn).
        turn.memory = start_long_term_turn(self, turn.turn_id, turn.new, run_kwargs)
        from ..graph.errors import SwarmError

        try:
            ran = await swarm.arun(
                agent=resumed,
                messages=list(self.last_sent),
                context_variables=turn.given,
                **run_kwargs,
            )
        except SwarmError as error:
            await asyncio.to_thread(self._keep, turn, error, agent, swarm, ledger)
            raise
        response = self._whole(turn, cast("Response", ran))  # not a stream: _open refused it
        if turn.memory is not None and self.extract is not None:
            await asyncio.to_thread(turn.memory.extract, self.extract, turn.new, resumed.name)
        await asyncio.to_thread(self._save, turn, response, agent, swarm)
        if turn.memory is not None:
            await asyncio.to_thread(self._deliver, turn)
        self._record_usage(response)
        return response

    def _open(
        self,
        message: MessageInput | None,
        turn_id: str | None,
        run_kwargs: dict,
        context_variables: dict | None,
    ) -> _Turn:
        """The checks a turn makes before any I/O (and so before any model call)."""
        if run_kwargs.get("stream"):
            raise ValueError(
                "Session.run does not stream: it must see the whole response to save it"
            )
        for name in ("messages", "context_variables", "agent", "effects"):
            if name in run_kwargs:
                raise TypeError(f"Session.run builds {name!r} itself; pass it positionally")
        if context_variables is not None and not isinstance(context_variables, dict):
            kind = type(context_variables).__name__
            raise TypeError(f"context_variables must be a dict, got {kind}")
        new = as_messages(message) if message is not None else []
        for item in new:  # a replay finds the turn's messages by the first one's id
            if not item.id:
                item.id = f"msg-{uuid.uuid4().hex}"
        return _Turn(check_turn_id(turn_id), new)

    def _load(self, turn_id: str) -> Snapshot:
        """Everything a turn reads from storage: one read (two for a policy whose window
        depends on its stored state), with the turn id's own entry in the turn index. No model
        call: the policy's fold runs after it."""
        cid = self.conversation_id
        if not self.persist:
            return Snapshot()
        wanted = [(TURN, turn_id)]
        if "messages" not in self.persist:  # the record still holds the turn index
            return self._counted(self.store.load(cid, window=NO_MESSAGES, records=wanted))
        meta = self.store.load(cid, window=NO_MESSAGES).meta if self.memory.stateful else {}
        snapshot = self.store.load(cid, window=self.memory.window(meta), records=wanted)
        return self._counted(snapshot)

    def _counted(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with its message count, counted once for a conversation an earlier
        version stored a turn log for (its turns' places are counted from the end)."""
        if snapshot.count is None and "turns" in snapshot.meta:
            snapshot.count = self.store.count(self.conversation_id)
        return snapshot

    def _start(self, turn: _Turn, approvals: dict | None, run_kwargs: dict) -> dict | None:
        """The stored entry of a turn that is done (replay it), else ``None``: a turn found
        open (an earlier attempt ran an effect and never finished) is resumed from its entry;
        a new turn checks its approvals."""
        turn.latest, turn.version = turn.snapshot, turn.snapshot.version
        if not self.persist:
            return None
        stored = find_turn(turn.snapshot, turn.turn_id)
        if stored is not None and stored.get("status", "done") == "done":
            if approvals:  # a replay must bring the decisions that turn applied
                replayed_decisions(
                    self.store, self.conversation_id, turn.snapshot.messages, approvals
                )
            return stored
        if stored is not None:  # open: resume it (a retry takes the turn over)
            from langchain_core.messages import messages_from_dict

            kept = messages_from_dict(stored.get("messages", []))
            size = int(stored.get("new", 0))
            turn.new, turn.carried = kept[:size], kept[size:]
            turn.base = stored.get("base") or {}
            turn.given = stored.get("context")
            turn.agent, turn.rank = stored.get("agent"), int(stored.get("rank", 0))
            turn.resumed, turn.taken_from = True, stored
            run_kwargs.pop("approvals", None)  # decisions made then are recorded: used as made
            return None
        self._check_approvals(turn, approvals, run_kwargs)
        return None

    def _ledger(
        self, turn: _Turn, agent: Agent, swarm: Swarm, run_kwargs: dict
    ) -> TurnLedger | None:
        """The run's effect ledger (``Swarm.run(effects=)``): none when nothing is stored."""
        if not self.persist or not _takes_effects(swarm):
            return None
        ledger = TurnLedger(
            self.store,
            self.conversation_id,
            turn,
            sent=len(self.last_sent) - len(turn.carried),
            rank=lambda known: self._rank(agent, known, swarm),
        )
        run_kwargs["effects"] = ledger
        return ledger

    def _keep(
        self, turn: _Turn, error: SwarmError, given: Agent, swarm: Swarm, ledger: TurnLedger | None
    ) -> None:
        """A run that stopped with a :class:`SwarmError` (a budget, the step limit, a handoff
        loop) after doing something is saved as far as it got, every tool call answered, so
        nothing that ran is forgotten (the error is raised after). A decision that came second
        (``ApprovalAlreadyDecided``) stores nothing."""
        from ..graph.errors import ApprovalAlreadyDecided

        if isinstance(error, ApprovalAlreadyDecided) or error.response is None or not self.persist:
            return
        response = error.response = self._whole(turn, error.response)
        run = run_messages(response)
        if not run and not turn.opened:
            return  # nothing happened
        self._save(turn, response, given, swarm, run=answered(run, error))

    def _save(
        self,
        turn: _Turn,
        response: Response,
        given: Agent,
        swarm: Swarm,
        run: list[BaseMessage] | None = None,
    ) -> None:
        """One conditional write of the turn on the version this turn knows (its load, or its
        own saves around effect calls); on a conflict, read the record again, replay the run's
        context changes on it (merge rules, conflicts reported) and write again.

        A turn id found stored on a conflict means an earlier attempt of this turn saved it:
        nothing is written. A context JSON cannot hold is left out (the stored context stays),
        the rest written, and the error raised afterwards with the response attached.
        """
        if not self.persist:
            return
        keeps = "context" in self.persist
        ran = run_messages(response) if run is None else run
        messages = [*turn.new, *ran] if "messages" in self.persist else []
        context = response.context_variables if keeps else None
        stored_form = _stored_form(swarm)  # a typed context is stored as JSON-ready values
        if context is not None and stored_form is not None:
            context = stored_form(context)
        agent = getattr(response.agent, "name", None) if keeps else None
        # Two agents may share a name: the rank says which of them (see _namesakes).
        rank = self._rank(given, response.agent, swarm)
        outbox = turn.memory.outbox() if turn.memory is not None else None
        error: ContextSerializationError | None = None
        conflicts: list[dict[str, Any]] = []
        while True:
            latest = turn.latest
            entry = done_entry(
                position=latest.count,
                new=len(turn.new) if messages else 0,
                run=len(messages) - len(turn.new) if messages else 0,
                first=messages[0].id if messages else None,
                agent=getattr(response.agent, "name", None),
                rank=rank,
            )
            meta = self.memory.stored_meta(latest.meta, turn.folded.state)
            meta = with_open(without_legacy_log(meta), turn.turn_id, still=False)
            records = [r for r in legacy_records(latest) if r.key != turn.turn_id]
            claim = not turn.opened and not turn.resumed
            records.append(turn_record(turn.turn_id, entry, first=claim))
            records.extend(fan_out_records(response, turn.resumes_fan_out))
            if outbox is not None:  # the turn's long-term writes commit with it
                records.append(outbox)
            if self.long_term is not None or outbox is not None:
                meta = pending_meta(meta, self, outbox)
            write = TurnWrite(messages, context, agent, meta, records)
            if context is not None:
                write.meta = ranked(meta, rank if agent is not None else 0)
                if latest is not turn.snapshot:
                    conflicts = []
                    base = turn.base if stored_form is None else stored_form(turn.base)
                    write.context = rebase(
                        latest.context, base=base, new=context, merge=self._rules(swarm),
                        conflicts=conflicts,
                    )  # fmt: skip
            try:
                self.store.save(self.conversation_id, write, expected_version=turn.version)
                break
            except ContextSerializationError as caught:  # raised before anything was written
                error, context, agent = caught, None, None
            except (ContextVersionConflict, RecordExists):  # someone saved since our read
                if self._saved_elsewhere(turn):
                    return
            except TurnOutcomeUnknown as unknown:
                raise TurnOutcomeUnknown(self.url, unknown.reason, turn_id=turn.turn_id) from None
        if conflicts:
            response.context_conflicts = conflicts
            keys = ", ".join(repr(c["key"]) for c in conflicts)
            warnings.warn(
                f"conversation {self.conversation_id!r}: another turn changed {keys} while "
                "this one ran; this turn's value was stored over it (Session(merge={key: "
                "rule}) combines them; see response.context_conflicts)",
                ContextConflictWarning,
                stacklevel=4,
            )
        if error is not None:
            error.response = response
            raise error

    @staticmethod
    def _whole(turn: _Turn, response: Response) -> Response:
        """A resumed turn's Response holds the whole turn's messages: those an earlier attempt
        kept (up to the effect call it was running) before this run's own."""
        if not turn.carried:
            return response
        from ..graph.messages import to_openai

        run = run_messages(response)
        response.messages = [*to_openai(turn.carried), *response.messages]
        response._langchain_messages = [*turn.carried, *run]
        return response

    def _saved_elsewhere(self, turn: _Turn) -> bool:
        """Read the record again after a conflict: True when an earlier attempt of this turn
        saved it already; :class:`TurnInProgress` when another run holds it now."""
        latest = self.store.load(
            self.conversation_id, window=NO_MESSAGES, records=[(TURN, turn.turn_id)]
        )
        turn.latest, turn.version = self._counted(latest), latest.version
        entry = find_turn(latest, turn.turn_id)
        if entry is None:
            return False
        if entry.get("status", "done") == "done":
            return True
        mine = entry.get("owner") == turn.owner or (
            turn.resumed and not turn.opened and entry == turn.taken_from
        )
        if not mine:
            raise TurnInProgress(self.conversation_id, turn.turn_id)
        return False

    def _replay(self, stored: dict, turn: _Turn, agent: Agent, swarm: Swarm) -> Response:
        """The stored turn as a ``Response``: its messages from the store, the agent that
        held the conversation after it, the stored context. No model call."""
        from ..graph.messages import to_openai
        from ..graph.types import Response

        size = stored["new"] + stored["run"]
        kept = self._stored_messages(stored, size) if size else []
        response = Response(
            messages=to_openai(kept[stored["new"] :]),
            agent=self._resolve_agent(agent, stored.get("agent"), stored.get("rank", 0), swarm),
            context_variables=self._restored(turn.snapshot.context, swarm)
            if "context" in self.persist
            else {},
        )
        self.last_sent = []
        self._record_usage(response)
        return response

    def _stored_messages(self, stored: dict, size: int) -> list[BaseMessage]:
        """A stored turn's ``size`` messages, from its position on: checked by the first
        one's id (messages a chat history appended meanwhile may sit before them); empty if
        they were cleared since (the turn still never runs twice)."""
        window = Window(start=int(stored.get("position") or 0))
        found = self.store.load(self.conversation_id, window=window).messages
        first = stored.get("first")
        if first is None:  # a turn an earlier version logged: position and counts only
            return found[:size]
        at = next((i for i, m in enumerate(found) if m.id == first), None)
        return [] if at is None else found[at : at + size]

    # -- long-term memory: the outbox of a turn's writes (see long_term_turn) -------------
    def _drain(self, snapshot: Snapshot) -> None:
        """Apply the outboxes of earlier turns that may not have been applied (a process
        killed between a turn's save and its memory writes)."""
        if self.long_term is not None:
            drain_outboxes(self, snapshot.meta)

    def _deliver(self, turn: _Turn) -> None:
        """Apply this turn's outbox, saved with the turn, to the long-term store."""
        if turn.memory is not None:
            deliver_outbox(self, turn.memory)

    # -- shared pieces -------------------------------------------------------------------
    def _check_approvals(self, turn: _Turn, approvals: dict | None, run_kwargs: dict) -> None:
        messages = turn.snapshot.messages
        outcomes = tail_outcomes(self.store, self.conversation_id, messages)
        pending = pending_in(messages, outcomes)
        # A fan-out that paused inside a branch ends the conversation on its open call; what
        # waits, and the branches to resume, are in the turn's record (read only then).
        paused = self._paused_fan_out(messages) if pending else None
        if paused is not None:
            pending = paused_pending(paused)
        if approvals:
            already_decided(self.store, self.conversation_id, messages, pending, approvals)
        check_turn(self.conversation_id, pending, turn.new, approvals)
        if approvals is not None:
            run_kwargs["approvals"] = approvals
            if paused is not None:
                run_kwargs["branches"] = paused["branches"]
                turn.resumes_fan_out = True

    def _paused_fan_out(self, messages: Sequence[BaseMessage]) -> dict | None:
        """The paused fan-out stored with the last turn, if the conversation still ends on
        its open call (``None``: none, or it was answered since)."""
        paused = self.store.records(self.conversation_id, PAUSED[0], [PAUSED[1]]).get(PAUSED[1])
        if not paused:
            return None
        return paused if paused.get("call") in open_call_ids(messages) else None

    def _namesakes(self, given: Agent, name: str, swarm: Swarm) -> list[Agent]:
        """The agents called ``name`` a conversation may resume with, in one fixed order:
        the agent passed to :meth:`run`, then ``agents=``, then every agent reachable from
        the given one (discovery's order: ``Swarm.reachable_agents``, cached per start agent,
        so a steady-state turn discovers nothing). Two distinct agents may share a name, so a
        turn stores its active agent's place in this list (its rank) beside the name."""
        reachable = getattr(swarm, "reachable_agents", None)
        if reachable is None:  # a Swarm-like object of the caller's own
            from ..graph.discovery import reachable_agents

            found_all = reachable_agents([given])
        else:
            found_all = reachable(given)
        found: list[Agent] = []
        for candidate in (given, *self._agents.values(), *found_all):
            if getattr(candidate, "name", None) == name and all(c is not candidate for c in found):
                found.append(candidate)
        return found

    def _rank(self, given: Agent, agent: Agent | None, swarm: Swarm) -> int:
        if agent is None or agent is given:
            return 0
        if self._agents.get(agent.name) is agent and getattr(given, "name", None) != agent.name:
            return 0  # first of its name in _namesakes' order, no discovery needed
        namesakes = self._namesakes(given, agent.name, swarm)
        return next((i for i, known in enumerate(namesakes) if known is agent), 0)

    def _resolve_agent(
        self, given: Agent, stored_name: str | None, rank: int, swarm: Swarm
    ) -> Agent:
        if not stored_name:
            return given
        if rank == 0:  # the usual case, no discovery: the given agent or agents=
            if getattr(given, "name", None) == stored_name:
                return given
            if stored_name in self._agents:
                return self._agents[stored_name]
        namesakes = self._namesakes(given, stored_name, swarm)
        if namesakes:
            return namesakes[min(rank, len(namesakes) - 1)]
        warnings.warn(
            f"conversation {self.conversation_id!r} was last held by agent {stored_name!r}, "
            f"which is neither agents= nor reachable from {given.name!r}; continuing with "
            f"{given.name!r}",
            UnknownAgentWarning,
            stacklevel=4,
        )
        return given

    def _prepare(self, agent: Agent, turn: _Turn, caller: dict | None, swarm: Swarm) -> Agent:
        """The agent the run starts with; ``turn.given`` and ``turn.base`` (the context the
        run is given, and the one its changes are measured from)."""
        snapshot = turn.snapshot
        if turn.resumed:  # an open turn goes on from where its entry left it
            context = turn.given if turn.given is not None else dict(turn.base)
            turn.given = context
            if "context" not in self.persist:
                return agent
            return self._resolve_agent(agent, turn.agent, turn.rank, swarm)
        # The record is loaded for the turn index too; only a Session that keeps the context
        # resumes its fields and its agent (persist=("messages",) starts fresh, as documented).
        if "context" not in self.persist:
            turn.given = turn.base = dict(caller or {})
            return agent
        # A new dict, no deep copy: the loaded one was just decoded (ours alone), and
        # Swarm.run deep-copies what it is given before any tool can touch it.
        stored = snapshot.context
        schema = getattr(swarm, "context_schema", None)
        if schema is not None:  # stored under an older schema: dropped / reset keys warn
            stored = schema.restore(stored)
        elif caller:  # a value the save would refuse fails now, not after the model ran
            encode_context(caller, size_limit=None)
        context = {**stored, **caller} if caller else dict(stored)
        if schema is not None:  # a clear error before any model call; the base to rebase on
            context = schema.validate(context)
        turn.given = turn.base = context
        rank = snapshot.meta.get("agent_rank", 0)
        return self._resolve_agent(agent, snapshot.active_agent, rank, swarm)

    def _rules(self, swarm: Swarm) -> dict[str, MergeRule]:
        """The merge rules of this Session's saves: ``merge=``, over a typed context's
        additive reducers (``Annotated[int, operator.add]``: for them this turn's change is
        the sum of its own updates, so the rule is exact; other reducers are not replayed
        this way, so such a key is reported, never merged wrongly)."""
        schema = getattr(swarm, "context_schema", None)
        if schema is None:
            return self.merge
        from ..graph.context_changes import ADDITIVE
        from ..graph.context_schema import context_reducers

        additive = {k: r for k, r in context_reducers(schema).items() if r in ADDITIVE}
        return {**additive, **self.merge}

    @staticmethod
    def _restored(stored: dict, swarm: Swarm) -> dict:
        """The stored context as the run would have it: validated when the Swarm types it."""
        schema = getattr(swarm, "context_schema", None)
        if schema is None:
            return dict(stored)
        try:
            return schema.validate(schema.restore(stored))
        except ValueError:  # it no longer fits: the stored turn is returned as it was stored
            return dict(stored)

    def _record_usage(self, response: Response) -> None:
        usage = dict(getattr(response, "usage", None) or {})
        if usage.get("model_calls"):
            usage["source"] = "engine"
        else:
            usage = {
                "model_calls": None,
                "input_tokens": count_tokens_approximately(self.last_sent),
                "output_tokens": None,
                "source": "estimate",
            }
        usage["summary_input_tokens"] = self.memory.last_input_tokens
        self.last_usage = usage


def _takes_effects(swarm: Any) -> bool:
    """Whether ``swarm.run`` takes an effect ledger (``Swarm`` does; a Swarm-like object of
    the caller's own may not: its effect tools then run as any tool)."""
    kind = type(swarm)
    known = _TAKES_EFFECTS.get(kind)
    if known is None:
        try:
            parameters = list(inspect.signature(swarm.run).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        known = any(p.name == "effects" or p.kind is p.VAR_KEYWORD for p in parameters)
        _TAKES_EFFECTS[kind] = known
    return known


_TAKES_EFFECTS: dict[type, bool] = {}


#: Reducers whose "change" (new - base, or what was appended) is what the run added.
def answered(messages: list[BaseMessage], error: BaseException) -> list[BaseMessage]:
    """``messages`` with every tool call answered: a call the stop left unanswered gets an
    ``Error:`` saying why, so the stored conversation never ends on a call nobody answers.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> ask = AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "c1"}])
        >>> [m.content for m in answered([ask], RuntimeError("budget"))][1:]
        ['Error: the run stopped before this call ran (RuntimeError: budget)']
    """
    from ..graph.approvals import open_calls

    found = open_calls(messages)
    if found is None:
        return messages
    why = f"Error: the run stopped before this call ran ({type(error).__name__}: {error})"
    extra = [ToolMessage(why, tool_call_id=c.get("id") or "", name=c["name"]) for c in found[1]]
    return [*messages, *extra]


#: How many stored messages ``Session.pending`` reads: enough for one reply's tool answers.
_PENDING_TAIL = 64

#: The record a turn that paused inside a parallel branch is kept in (kind, key): the branches
#: to resume (``Response.branches``), what waits, and the fan-out call they answer.
PAUSED = ("parallel", "paused")


def fan_out_records(response: Response, resumed: bool) -> list[Record]:
    """The records a turn writes for parallel branches: the paused fan-out when a branch waits
    for approval; ``None`` in its place once a resumed fan-out went on. (The branches of a
    joined fan-out need none: the joined answer carries them, see ``graph.branches``.)

    Example:
        >>> from swarmgraph.graph import Response
        >>> fan_out_records(Response(), resumed=True)
        [Record(kind='parallel', key='paused', value=None, if_absent=False)]
        >>> fan_out_records(Response(), resumed=False)
        []
    """
    waiting = [b for b in response.branches if b["status"] == "waiting" and "/" not in b["branch"]]
    if waiting:
        call = waiting[0]["plan"]["calls"][0][0]
        value = {
            "call": call,
            "branches": response.branches,
            "pending": [p.model_dump() for p in response.pending],
        }
        return [Record(*PAUSED, value)]
    return [Record(*PAUSED, None)] if resumed else []


def paused_pending(paused: dict) -> list[PendingApproval]:
    """What a stored paused fan-out waits on, as ``PendingApproval`` s."""
    from ..graph.approvals import PendingApproval

    return [PendingApproval(**p) for p in paused.get("pending", [])]


def open_call_ids(messages: Sequence[BaseMessage]) -> set[str]:
    """The ids of the tool calls the conversation ends on without an answer."""
    from ..graph.approvals import open_calls

    found = open_calls(messages)
    return {c.get("id") or "" for c in found[1]} if found else set()
