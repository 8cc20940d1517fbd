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
caller; except a run a :class:`~swarmgraph.graph.core.errors.SwarmError` stopped after it did
something (a budget, the step limit), which is saved as far as it got before the error is
raised. A run's messages are stored as the engine made them (message ids, the model's usage
and response metadata included), not rebuilt from ``Response.messages``' Swarm-style dicts.

Every turn id is kept (:mod:`~swarmgraph.memory.turn_index`), and every ``@effect`` or
``@needs_approval`` tool runs through the turn's effect ledger
(:mod:`~swarmgraph.memory.effect_ledger`): never twice for one call, across crashes, retries
and two people answering one approval (docs/storage.md, "Durability").

A typed context (``Swarm(context_schema=Model)``) is stored as JSON-ready values and
restored validated (:mod:`~swarmgraph.memory.turn_context`).

A caller that runs the model itself (a durable engine's activities) takes a turn in the two
halves ``run`` is made of: :meth:`Session.begin_turn` and :meth:`Session.finish_turn`
(:mod:`~swarmgraph.memory.turn_steps`).

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

from collections.abc import Generator, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import BaseMessage

from ..graph.core.errors import SwarmError
from ..graph.prepared_run import fold_hooks
from ..graph.swarm import Swarm
from .agent_resolution import KnownAgents
from .approvals import replayed_decisions
from .backends import open_store
from .context_json import DEFAULT_SIZE_LIMIT
from .context_merge import MergeRule, check_rules
from .conversation import HALVES, KINDS, StoredConversation, persist_kinds
from .effect_ledger import TurnLedger, takes_effects
from .errors import (
    ContextSerializationError,
    ContextVersionConflict,
    RecordExists,
    TurnOutcomeUnknown,
)
from .ids import check_conversation_id, check_turn_id
from .ledger_on_demand import LedgerOnDemand
from .long_term_session import LongTermSide, deliver_outbox, drain_outboxes, start_long_term_turn
from .policies import BufferMemory, Folded, MemoryPolicy, WindowMemory
from .session_rejoin import RejoinableTurns
from .session_stream import NOT_STREAMED, StreamedTurns
from .store import NO_MESSAGES, Snapshot
from .turn_context import rebase_context
from .turn_driver import Step, arun_steps, run_steps
from .turn_index import TURN, find_turn
from .turn_steps import TurnPlan, TurnSteps
from .turn_write import MessageInput, as_messages, new_messages, saved_turn, turn_usage
from .urls import default_url

if TYPE_CHECKING:
    from ..graph.core.types import Agent, Response
    from .fact_extract import Extractor
    from .long_term import LongTermMemory

# What moved to modules of their own stays importable from here.
__all__ = [
    "HALVES",
    "KINDS",
    "MessageInput",
    "Session",
    "TurnPlan",
    "as_messages",
    "rebase_context",
]


class Session(TurnSteps, StreamedTurns, RejoinableTurns, StoredConversation):
    """One conversation that outlives a run; see the module docstring for ``persist``.

    What is stored (``messages``, ``context_variables``, ``pending``, ``clear()``...) is read
    and changed through :class:`~swarmgraph.memory.conversation.StoredConversation`.

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
        self.persist = HALVES if persist is HALVES else persist_kinds(persist)
        #: The user's long-term memory (``None``: off); see ``long_term=``.
        self.long_term: LongTermMemory | None = None
        self.user_id, self.recall, self.extract = user_id, recall, extract
        asked = long_term is not None or extract is not None or user_id is not None
        if asked or "long_term" in self.persist or type(recall) is not int or recall != 3:
            from .long_term_session import long_term_options

            self.persist, self.long_term, self.recall, self.extract = long_term_options(
                self.persist, persist is HALVES, url, user_id, long_term, recall, extract
            )
            self.user_id = self.long_term.user_id if self.long_term is not None else user_id
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

    # -- one turn: load, run, save -----------------------------------------------------------
    # The conversation is read once (the record and the policy's window of messages in one
    # load), merged once (the caller's values over the stored context) and written once (the
    # store's save: a conditional write on the version loaded of the messages, the context and
    # the meta with this turn's id in its log). Only when another writer saved in between does
    # the save read the record again, rebase the run's changes on it and write again.
    # Nothing here deep-copies the context: Swarm.run deep-copies its input, as Swarm does.
    # A feature's module is entered only when the turn uses it: long-term memory
    # (.long_term_session), approvals (.approval_resume), fan-out (.fan_out_resume), a typed
    # context or merge rules (.turn_context), a retried or stopped turn (.turn_recovery).
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
        Swarm's stream events as they happen, the turn saved at the end: :meth:`stream`.
        """
        turn = self._turn(swarm, agent, message, context_variables, turn_id, approvals, run_kwargs)
        return run_steps(turn)

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
        turn = self._turn(swarm, agent, message, context_variables, turn_id, approvals, run_kwargs)
        return await arun_steps(turn)

    def _turn(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None,
        caller: dict | None,
        turn_id: str | None,
        approvals: dict | None,
        run_kwargs: dict[str, Any],
    ) -> Generator[Step, Any, Response]:
        """One turn, written once for :meth:`run` and :meth:`arun`: every step that waits
        (storage, the model) is yielded, and the driver performs it (in a thread, or awaited,
        for ``arun``). Its two halves are public: :meth:`begin_turn` and :meth:`finish_turn`."""
        turn = yield from self._begin(swarm, agent, message, caller, turn_id, approvals, run_kwargs)
        if turn.stored is not None:
            return turn.stored
        try:
            ran = yield Step(swarm.run, (), getattr(swarm, "arun", None), turn.run_kwargs)
        except SwarmError as error:  # what ran is kept (a budget stop after tools ran)
            kept = self._keep(turn, error)
            if kept is not None:
                yield Step(self._save, (turn, error.response, agent, swarm, kept))
            raise
        return (yield from self._finish(turn, cast("Response", ran)))  # not a stream: refused

    def _begin(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None,
        caller: dict | None,
        turn_id: str | None,
        approvals: dict | None,
        run_kwargs: dict[str, Any],
    ) -> Generator[Step, Any, TurnPlan]:
        """The turn up to its model call (:meth:`begin_turn`); its checks come before any I/O."""
        if run_kwargs.get("stream"):
            raise ValueError(NOT_STREAMED)
        for name in ("messages", "context_variables", "agent", "effects"):
            if name in run_kwargs:
                raise TypeError(f"Session.run builds {name!r} itself; pass it positionally")
        if caller is not None and not isinstance(caller, dict):
            raise TypeError(f"context_variables must be a dict, got {type(caller).__name__}")
        new = new_messages(message)  # (its own Folded: the field's factory is off this path)
        turn = TurnPlan(check_turn_id(turn_id), new, entry=agent, swarm=swarm, folded=Folded([]))
        turn.snapshot = yield Step(self._load, (turn.turn_id,))
        if self._long_term is not None:  # long-term writes of an earlier turn that wait
            yield Step(drain_outboxes, (self._long_term, turn.snapshot.meta))
        stored = yield Step(self._start, (turn, approvals, run_kwargs))
        if stored is not None:
            turn.stored = yield Step(self._replay, (stored, turn, agent, swarm))
            return turn
        if "messages" in self.persist:
            turn.folded = yield Step(self.memory.fold, (turn.snapshot,), self.memory.afold)
        turn.start = resumed = self._prepare(agent, turn, caller, swarm)
        self.last_sent = [*self.memory.arrange(turn.folded.shown, turn.new), *turn.carried]
        self._ledger(turn, agent, swarm, run_kwargs)
        if self._long_term is not None:  # recall and the memory tools ride on the run
            turn.memory = start_long_term_turn(self._long_term, turn.turn_id, turn.new, run_kwargs)
        sent = {"agent": resumed, "messages": list(self.last_sent), "context_variables": turn.given}
        # Our Swarm gets what the Session hands the run as one RunHooks; a Swarm-like object
        # of the caller's own keeps the keywords it was written for (effects=...).
        handed = fold_hooks(run_kwargs) if isinstance(swarm, Swarm) else run_kwargs
        turn.run_kwargs = {**sent, **handed}
        return turn

    def _finish(self, turn: TurnPlan, response: Response) -> Generator[Step, Any, Response]:
        """The turn after its model call (:meth:`finish_turn`): the save, and what follows."""
        if turn.carried:  # a resumed turn: the earlier attempt's messages come first
            from .turn_recovery import whole

            response = whole(turn, response)
        if turn.memory is not None and self.extract is not None and turn.start is not None:
            yield Step(turn.memory.extract, (self.extract, turn.new, turn.start.name))
        yield Step(self._save, (turn, response, turn.entry, turn.swarm))
        if self._long_term is not None and turn.memory is not None:
            yield Step(deliver_outbox, (self._long_term, turn.memory))
        self._record_usage(response)
        return response

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

    def _start(self, turn: TurnPlan, approvals: dict | None, run_kwargs: dict) -> dict | None:
        """The stored entry of a turn that is done (replay it), else ``None``: a turn found
        open (an earlier attempt ran an effect and never finished) is resumed from its entry;
        a new turn checks its approvals."""
        turn.latest, turn.version = turn.snapshot, turn.snapshot.version
        if not self.persist:
            return None
        stored = find_turn(turn.snapshot, turn.turn_id)
        if stored is not None and approvals:
            # A replay (or a retry that takes over an open turn, another caller's under this
            # turn id perhaps, answering at the same moment) must bring the decisions that
            # turn recorded: another one is refused, as when the calls came one after the other.
            replayed_decisions(self.store, self.conversation_id, turn.snapshot.messages, approvals)
        if stored is not None and stored.get("status", "done") == "done":
            return stored
        if stored is not None:  # open: resume it (a retry takes the turn over)
            from .turn_recovery import resume_open

            resume_open(turn, stored, run_kwargs)
            return None
        messages = turn.snapshot.messages
        if approvals is not None or not turn.new or _may_wait(messages):
            from .approval_resume import check_approvals

            turn.resumes_fan_out = check_approvals(
                self.store, self.conversation_id, messages, turn.new, approvals, run_kwargs
            )
        return None

    def _ledger(self, turn: TurnPlan, agent: Agent, swarm: Swarm, kwargs: dict) -> None:
        """The run's effect ledger (``effects=``), none if nothing is stored: made on its first
        use (:mod:`.ledger_on_demand`: an agent discovery never saw may bring a marked tool)."""
        ours = isinstance(swarm, Swarm)  # not a Swarm-like object of the caller's own
        if ours:
            kwargs["conversation_id"] = self.conversation_id  # a trace's gen_ai.conversation.id
        if self.persist and (ours or takes_effects(swarm)):
            sent = len(self.last_sent) - len(turn.carried)
            rank = partial(self._rank, agent, swarm=swarm)  # of an agent among namesakes
            ledger = LedgerOnDemand(
                TurnLedger, self.store, self.conversation_id, turn, sent=sent, rank=rank
            )
            kwargs["effects"] = ledger if ours else ledger.ledger()  # theirs: a TurnLedger

    def _save(
        self,
        turn: TurnPlan,
        response: Response,
        given: Agent,
        swarm: Swarm,
        run: list[BaseMessage] | None = None,
    ) -> None:
        """One conditional write of the turn on the version it knows (its load, or its own
        saves around effect calls); on a conflict, read again, replay the run's context changes
        (merge rules, conflicts reported) and write again. A turn id found stored on a conflict
        means an earlier attempt saved it: nothing is written. A context JSON cannot hold is
        left out (the stored context stays) and its error raised after the rest is written."""
        if not self.persist:
            return
        # Two agents may share a name: the rank says which of them (see agent_resolution).
        rank = self._rank(given, response.agent, swarm)
        saved = saved_turn(self.persist, turn, response, swarm, run, rank)
        error: ContextSerializationError | None = None
        conflicts: list[dict[str, Any]] = []
        while True:
            meta = self.memory.stored_meta(turn.latest.meta, turn.folded.state)
            write = saved.write(turn, response, meta, self._long_term, swarm, self.merge, conflicts)
            try:
                self.store.save(self.conversation_id, write, expected_version=turn.version)
                break
            except ContextSerializationError as caught:  # raised before anything was written
                error, saved.context, saved.agent = caught, None, None
            except (ContextVersionConflict, RecordExists):  # someone saved since our read
                from .turn_recovery import saved_elsewhere

                if saved_elsewhere(self.store, self.conversation_id, turn, self._counted):
                    return
            except TurnOutcomeUnknown as unknown:
                raise TurnOutcomeUnknown(self.url, unknown.reason, turn_id=turn.turn_id) from None
        if conflicts:
            from .turn_context import report_conflicts

            report_conflicts(response, conflicts, self.conversation_id)
        if error is not None:
            error.response = response
            raise error

    # -- which agent: the usual cases here, discovery in .agent_resolution -----------------
    def _agent_for(
        self, given: Agent, name: str | None, rank: int, swarm: Swarm, turn: TurnPlan | None = None
    ) -> Agent:  # ``turn``: the run about to go on (its open calls need their agent)
        if not name or (rank == 0 and getattr(given, "name", None) == name):
            return given
        return self._agents.resolve(given, name, rank, swarm, turn)

    def _rank(self, given: Agent, agent: Agent | None, swarm: Swarm) -> int:
        return 0 if agent is None or agent is given else self._agents.rank(given, agent, swarm)

    def _prepare(self, agent: Agent, turn: TurnPlan, caller: dict | None, swarm: Swarm) -> Agent:
        """The agent the run starts with; ``turn.given`` and ``turn.base`` (the context the
        run is given, and the one its changes are measured from)."""
        snapshot = turn.snapshot
        if turn.resumed:  # an open turn goes on from where its entry left it
            turn.given = turn.given if turn.given is not None else dict(turn.base)
            if "context" not in self.persist:
                return agent
            return self._agent_for(agent, turn.agent, turn.rank, swarm, turn)
        # The record is loaded for the turn index too; only a Session that keeps the context
        # resumes its fields and its agent (persist=("messages",) starts fresh, as documented).
        if "context" not in self.persist:
            turn.given = turn.base = dict(caller or {})
            return agent
        if caller or getattr(swarm, "context_schema", None) is not None:
            from .turn_context import start_context

            turn.given = turn.base = start_context(snapshot.context, caller, swarm)
        else:  # a new dict of the one just decoded (Swarm.run deep-copies what it is given)
            turn.given = turn.base = dict(snapshot.context)
        rank = snapshot.meta.get("agent_rank", 0)
        return self._agent_for(agent, snapshot.active_agent, rank, swarm, turn)

    def _record_usage(self, response: Response) -> None:
        self.last_usage = turn_usage(response, self.last_sent, self.memory.last_input_tokens)


def _may_wait(messages: Sequence[BaseMessage]) -> bool:
    """Whether the stored conversation may end on a call that waits (its last message asks
    for tools, or answers some): only then does a new turn read what waits."""
    if not messages:
        return False
    last = messages[-1]
    return last.type == "tool" or bool(getattr(last, "tool_calls", None))
