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
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

from ..graph.errors import SwarmError
from .agent_resolution import KnownAgents
from .backends import open_store
from .chat_history import StoredChatHistory
from .context_json import DEFAULT_SIZE_LIMIT
from .context_merge import MergeRule, check_rules, rebase
from .effect_ledger import TurnLedger, TurnState, takes_effects
from .errors import (
    ContextSerializationError,
    ContextVersionConflict,
    RecordExists,
    TurnInProgress,
    TurnOutcomeUnknown,
)
from .ids import check_conversation_id, check_turn_id
from .long_term_session import (
    LongTermSide,
    deliver_outbox,
    drain_outboxes,
    pending_meta,
    start_long_term_turn,
)
from .long_term_turn import LongTermTurn
from .policies import BufferMemory, Folded, MemoryPolicy, WindowMemory
from .store import NO_MESSAGES, Record, Snapshot, TurnWrite
from .turn_context import (
    merge_rules,
    rebase_context,
    report_conflicts,
    restored,
    start_context,
    stored_form,
)
from .turn_index import (
    TURN,
    done_entry,
    find_turn,
    legacy_records,
    ranked,
    stored_turn_messages,
    turn_record,
    with_open,
    without_legacy_log,
)
from .turn_messages import MessageInput, answered, as_messages, run_messages
from .urls import default_url

if TYPE_CHECKING:
    from ..graph.approvals import PendingApproval
    from ..graph.swarm import Swarm
    from ..graph.types import Agent, Response
    from .fact_extract import Extractor
    from .long_term import LongTermMemory

# What moved to modules of their own stays importable from here.
__all__ = ["HALVES", "KINDS", "MessageInput", "Session", "as_messages", "rebase_context"]

HALVES = ("messages", "context")
#: What ``persist`` may name: the two halves of a conversation, and the user's long-term memory.
KINDS = (*HALVES, "long_term")


def _persist_tuple(persist: str | Iterable[str]) -> tuple[str, ...]:
    if persist is HALVES:  # the default, as it is
        return HALVES
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
        self.merge = check_rules(merge) if merge is not None else {}
        self.url = url = default_url() if url is None else url
        self.persist = _persist_tuple(persist)
        #: The user's long-term memory (``None``: off); see ``long_term=``.
        self.long_term: LongTermMemory | None = None
        self.user_id, self.recall, self.extract = user_id, recall, extract
        if (
            long_term is not None
            or extract is not None
            or recall != 3
            or "long_term" in self.persist
        ):
            self._open_long_term(persist is HALVES, long_term)
        if window is not None and memory is not None:
            raise ValueError("give window=k or memory=..., not both (window=k is WindowMemory(k))")
        if isinstance(memory, str):
            from .policies import parse_memory

            memory = parse_memory(memory)
        self.memory: MemoryPolicy = (
            WindowMemory(window) if window is not None else memory or BufferMemory()
        )
        self.store = open_store(url, size_limit=context_size_limit)
        self._agents = KnownAgents(agents, self.conversation_id)
        #: What its turns need of the long-term memory (``None``: off, and they enter none of it).
        self._long_term = (
            None
            if self.long_term is None
            else LongTermSide(self.long_term, self.conversation_id, self.store, self.recall)
        )
        #: What the last run sent as history + new input (before the agent's instructions).
        self.last_sent: list[BaseMessage] = []
        #: Tokens of the last run: the engine's ``response.usage`` (``source="engine"``) or an
        #: estimate over what was sent (``source="estimate"``); plus the summariser's input.
        self.last_usage: dict[str, Any] = {}

    def _open_long_term(
        self, default_persist: bool, long_term: bool | LongTermMemory | None
    ) -> None:
        """The long-term options checked, the user's memory opened (see ``long_term=``)."""
        from .long_term_session import check_long_term_options, open_long_term

        self.persist, self.long_term = open_long_term(
            self.persist, default_persist, self.url, self.user_id, long_term
        )
        if self.long_term is not None:
            self.user_id = self.long_term.user_id
        self.recall, self.extract = check_long_term_options(
            self.long_term, self.recall, self.extract
        )

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
        from .approval_resume import PENDING_TAIL, stored_pending

        tail = self.store.messages(self.conversation_id, PENDING_TAIL)
        return stored_pending(self.store, self.conversation_id, tail)

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
    # Features attach only when used: long-term memory (.long_term_session), approvals
    # (.approval_resume), fan-out (.fan_out_resume), effects (.effect_ledger).
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
        if self._long_term is not None:  # long-term writes of an earlier turn that wait
            drain_outboxes(self._long_term, turn.snapshot.meta)
        stored = self._start(turn, approvals, run_kwargs)
        if stored is not None:
            return self._replay(stored, turn, agent, swarm)
        if "messages" in self.persist:
            turn.folded = self.memory.fold(turn.snapshot)
        resumed, ledger = self._ready(agent, turn, context_variables, swarm, run_kwargs)
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
        if self._long_term is not None and turn.memory is not None:
            deliver_outbox(self._long_term, turn.memory)
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
        if self._long_term is not None:
            await asyncio.to_thread(drain_outboxes, self._long_term, turn.snapshot.meta)
        stored = await asyncio.to_thread(self._start, turn, approvals, run_kwargs)
        if stored is not None:
            return await asyncio.to_thread(self._replay, stored, turn, agent, swarm)
        if "messages" in self.persist:
            turn.folded = await self.memory.afold(turn.snapshot)
        # Recall runs in the graph's nodes: a sync store read per model call (cached per agent
        # and query within the turn).
        resumed, ledger = self._ready(agent, turn, context_variables, swarm, run_kwargs)
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
        if self._long_term is not None and turn.memory is not None:
            await asyncio.to_thread(deliver_outbox, self._long_term, turn.memory)
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
        messages = turn.snapshot.messages
        if approvals is not None or not turn.new or _may_wait(messages):
            from .approval_resume import check_approvals

            turn.resumes_fan_out = check_approvals(
                self.store, self.conversation_id, messages, turn.new, approvals, run_kwargs
            )
        return None

    def _ready(
        self, agent: Agent, turn: _Turn, caller: dict | None, swarm: Swarm, run_kwargs: dict
    ) -> tuple[Agent, TurnLedger | None]:
        """What a loaded turn runs with: its agent and context (:meth:`_prepare`), what it
        sends, its effect ledger and its long-term hooks (put in ``run_kwargs``)."""
        resumed = self._prepare(agent, turn, caller, swarm)
        self.last_sent = [*turn.folded.shown, *turn.new, *turn.carried]
        ledger = self._ledger(turn, agent, swarm, run_kwargs)
        if self._long_term is not None:
            turn.memory = start_long_term_turn(self._long_term, turn.turn_id, turn.new, run_kwargs)
        return resumed, ledger

    def _ledger(
        self, turn: _Turn, agent: Agent, swarm: Swarm, run_kwargs: dict
    ) -> TurnLedger | None:
        """The run's effect ledger (``Swarm.run(effects=)``): none when nothing is stored."""
        if not self.persist or not takes_effects(swarm):
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
        saved = _Saved.of(self, turn, response, given, swarm, run)
        error: ContextSerializationError | None = None
        conflicts: list[dict[str, Any]] = []
        while True:
            write = self._write(turn, saved, response, swarm, conflicts)
            try:
                self.store.save(self.conversation_id, write, expected_version=turn.version)
                break
            except ContextSerializationError as caught:  # raised before anything was written
                error, saved.context, saved.agent = caught, None, None
            except (ContextVersionConflict, RecordExists):  # someone saved since our read
                if self._saved_elsewhere(turn):
                    return
            except TurnOutcomeUnknown as unknown:
                raise TurnOutcomeUnknown(self.url, unknown.reason, turn_id=turn.turn_id) from None
        if conflicts:
            report_conflicts(response, conflicts, self.conversation_id)
        if error is not None:
            error.response = response
            raise error

    def _write(
        self,
        turn: _Turn,
        saved: _Saved,
        response: Response,
        swarm: Swarm,
        conflicts: list[dict[str, Any]],
    ) -> TurnWrite:
        """The write of ``saved`` on the latest record this turn read: its messages, context
        (rebased on another turn's save that came in between), agent, meta and records."""
        latest, messages = turn.latest, saved.messages
        entry = done_entry(
            position=latest.count,
            new=len(turn.new) if messages else 0,
            run=len(messages) - len(turn.new) if messages else 0,
            first=messages[0].id if messages else None,
            agent=getattr(response.agent, "name", None),
            rank=saved.rank,
        )
        meta = self.memory.stored_meta(latest.meta, turn.folded.state)
        meta = with_open(without_legacy_log(meta), turn.turn_id, still=False)
        records = [r for r in legacy_records(latest) if r.key != turn.turn_id]
        claim = not turn.opened and not turn.resumed
        records.append(turn_record(turn.turn_id, entry, first=claim))
        if response.branches or turn.resumes_fan_out:
            from .fan_out_resume import fan_out_records

            records.extend(fan_out_records(response, turn.resumes_fan_out))
        if saved.outbox is not None:  # the turn's long-term writes commit with it
            records.append(saved.outbox)
        if self._long_term is not None or saved.outbox is not None:
            meta = pending_meta(meta, self._long_term, saved.outbox)
        context = saved.context
        write = TurnWrite(messages, context, saved.agent, meta, records)
        if context is None:
            return write
        write.meta = ranked(meta, saved.rank if saved.agent is not None else 0)
        if latest is not turn.snapshot:
            conflicts.clear()
            form = stored_form(swarm)
            base = turn.base if form is None else form(turn.base)
            write.context = rebase(
                latest.context, base=base, new=context, merge=merge_rules(swarm, self.merge),
                conflicts=conflicts,
            )  # fmt: skip
        return write

    @staticmethod
    def _whole(turn: _Turn, response: Response) -> Response:
        """A resumed turn's Response holds the whole turn's messages: those an earlier attempt
        kept (up to the effect call it was running) before this run's own."""
        if not turn.carried:
            return response
        from ..graph.messages import to_openai

        run = run_messages(response)
        response.messages = [*to_openai(turn.carried), *response.messages]
        response.langchain_messages = [*turn.carried, *run]
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
        kept = stored_turn_messages(self.store, self.conversation_id, stored, size) if size else []
        response = Response(
            messages=to_openai(kept[stored["new"] :]),
            agent=self._agent_for(agent, stored.get("agent"), stored.get("rank", 0), swarm),
            context_variables=restored(turn.snapshot.context, swarm)
            if "context" in self.persist
            else {},
        )
        self.last_sent = []
        self._record_usage(response)
        return response

    # -- which agent: the usual cases here, discovery in .agent_resolution ---------------
    def _agent_for(self, given: Agent, stored_name: str | None, rank: int, swarm: Swarm) -> Agent:
        if not stored_name or (rank == 0 and getattr(given, "name", None) == stored_name):
            return given
        return self._agents.resolve(given, stored_name, rank, swarm)

    def _rank(self, given: Agent, agent: Agent | None, swarm: Swarm) -> int:
        if agent is None or agent is given:
            return 0
        return self._agents.rank(given, agent, swarm)

    def _prepare(self, agent: Agent, turn: _Turn, caller: dict | None, swarm: Swarm) -> Agent:
        """The agent the run starts with; ``turn.given`` and ``turn.base`` (the context the
        run is given, and the one its changes are measured from)."""
        snapshot = turn.snapshot
        if turn.resumed:  # an open turn goes on from where its entry left it
            context = turn.given if turn.given is not None else dict(turn.base)
            turn.given = context
            if "context" not in self.persist:
                return agent
            return self._agent_for(agent, turn.agent, turn.rank, swarm)
        # The record is loaded for the turn index too; only a Session that keeps the context
        # resumes its fields and its agent (persist=("messages",) starts fresh, as documented).
        if "context" not in self.persist:
            turn.given = turn.base = dict(caller or {})
            return agent
        turn.given = turn.base = start_context(snapshot.context, caller, swarm)
        rank = snapshot.meta.get("agent_rank", 0)
        return self._agent_for(agent, snapshot.active_agent, rank, swarm)

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


@dataclass
class _Saved:
    """What a turn's save writes, worked out once before its first try: the messages, the
    context in its stored form, the active agent and its rank, the long-term outbox."""

    messages: list[BaseMessage]
    context: dict | None
    agent: str | None
    rank: int
    outbox: Record | None

    @classmethod
    def of(
        cls,
        session: Session,
        turn: _Turn,
        response: Response,
        given: Agent,
        swarm: Swarm,
        run: list[BaseMessage] | None,
    ) -> _Saved:
        keeps = "context" in session.persist
        ran = run_messages(response) if run is None else run
        messages = [*turn.new, *ran] if "messages" in session.persist else []
        context = response.context_variables if keeps else None
        form = stored_form(swarm)  # a typed context is stored as JSON-ready values
        if context is not None and form is not None:
            context = form(context)
        agent = getattr(response.agent, "name", None) if keeps else None
        # Two agents may share a name: the rank says which of them (see agent_resolution).
        rank = session._rank(given, response.agent, swarm)
        outbox = turn.memory.outbox() if turn.memory is not None else None
        return cls(messages, context, agent, rank, outbox)


def _may_wait(messages: Sequence[BaseMessage]) -> bool:
    """Whether the stored conversation may end on a call that waits (its last message asks
    for tools, or answers some): only then does a new turn read what waits."""
    if not messages:
        return False
    last = messages[-1]
    return last.type == "tool" or bool(getattr(last, "tool_calls", None))
