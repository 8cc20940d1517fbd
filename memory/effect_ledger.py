"""The effect ledger of a ``Session`` turn: effect tools recorded in the conversation's store.

Every ``Session.run`` hands the engine one :class:`TurnLedger` (the
:class:`~swarmgraph.graph.features.effects.EffectLedger` protocol), made on the run's first use of
it
(:mod:`~swarmgraph.memory.ledger_on_demand`). Records, beside the conversation's
messages and context, on the same backend and with the same atomic, conditional saves:

=======================  ============================  ===================================
record                   written                       holds
=======================  ============================  ===================================
``turn:<turn id>``       before the first effect call  the turn so far (``open``, see
                         of a turn, with it            :mod:`~swarmgraph.memory.turn_index`)
``effect:<call>``        before the call runs, with    ``started`` (put-if-absent: one run
                         the turn so far, atomically   of a call, ever); ``<call>#n`` for
                                                       attempt ``n`` a human approved again
``effect.done:<call>``   right after it ran            the answer the model read, the
                                                       context update, the handoff
``approval:<question>``  when a decision is given      ``{"decision", "turn"}``
                                                       (put-if-absent: the first wins)
=======================  ============================  ===================================

A call inside a parallel branch writes the same two records; its turn entry holds the main
conversation up to the fan-out and ``branches``, every branch's resumable record (graph/
branches.py ``progress_of``), from which a retry resumes the fan-out (``resume_branches`` in
:mod:`~swarmgraph.memory.fan_out_resume`).

``<call>`` is the tool call id at the id of the assistant message that asked for it. Every
write is conditional on the version this turn last read or wrote, so the turn's final save
still sees, and merges, what other turns saved meanwhile; a run that finds its turn taken over
by another run of the same turn id stops (:class:`~swarmgraph.memory.errors.TurnInProgress`).

A call started by a turn that is still open elsewhere is *in flight*, not in doubt: only a
retry of that turn (same turn id) declares it in doubt, and only then may a decision about it
come from any turn. So a decision meant for "may it run?" is never taken for "run it again".
A call whose result is recorded is done, not in doubt, even for a run that read it started
(another process was running it then): a decision about "attempt n" of it is refused with
the decision that let it run. Both are read in one order (:func:`call_states`: the starter's
turn, then the result; a run records the result before its turn closes), so a call that
finishes between two reads is never taken for one whose process died.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.graph.features.effects import EffectCall, EffectOutcome, TurnSoFar
    >>> from swarmgraph.graph.core.types import Agent
    >>> from swarmgraph.memory.backends import open_store
    >>> store = open_store("memory://ledger-doc")
    >>> turn = TurnState("t-1", new=[HumanMessage("pay 7", id="h1")])
    >>> ledger = TurnLedger(store, "conv-1", turn, sent=1)
    >>> reply = AIMessage("", id="r1", tool_calls=[{"name": "pay", "args": {}, "id": "c1"}])
    >>> call = EffectCall("c1@r1", "c1", "pay", {}, "Cashier")
    >>> ledger.before(call, TurnSoFar([turn.new[0], reply], {}, Agent(name="Cashier"))) is None
    True
    >>> ledger.prior([call])["c1@r1"].status   # started: a crash now leaves it in doubt
    'started'
    >>> ledger.after(call, EffectOutcome("done", value="paid"))
    >>> TurnLedger(store, "conv-1", TurnState("t-2"), sent=0).prior([call])["c1@r1"].value
    'paid'
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from secrets import token_hex
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict

from .effect_records import (
    APPROVAL,
    DONE,
    EFFECT,
    attempt_key,
    call_states,
    recorded_outcomes,
)
from .errors import ContextVersionConflict, RecordExists, TurnInProgress, TurnOutcomeUnknown
from .store import NO_MESSAGES, ConversationStore, Record, Snapshot, TurnWrite
from .turn_index import TURN, turn_record, with_open

if TYPE_CHECKING:
    from ..graph.core.types import Agent
    from ..graph.features.effects import EffectCall, EffectOutcome, TurnSoFar

__all__ = ["TurnLedger", "TurnState", "call_states", "recorded_outcomes"]


@dataclass
class TurnState:
    """One ``Session`` turn in flight, shared by the Session (its load and final save) and
    its ledger (the saves around effect calls).

    ``new``: the caller's messages; ``carried``: the run's messages an earlier attempt of this
    turn kept in its open entry; ``base``: the context the turn started from (what its
    changes are measured against); ``latest``: the conversation's record as last read;
    ``version``: what the turn's next save expects; ``owner``: this run; ``opened``: this run
    stored the turn's open entry; ``resumed``: the turn was found open (a retry), and
    ``taken_from`` is that entry.
    """

    turn_id: str
    new: list[BaseMessage] = field(default_factory=list)
    carried: list[BaseMessage] = field(default_factory=list)
    base: dict = field(default_factory=dict)
    latest: Snapshot = field(default_factory=Snapshot)
    version: int = 0
    owner: str = field(default_factory=partial(token_hex, 16))  # 32 hex digits, as a uuid4
    opened: bool = False
    resumed: bool = False
    taken_from: dict | None = None
    #: Effect calls started inside nested fan-outs (``tool``, ``call``, ``branch``), kept in
    #: the open entry: a crash there is not resumed, and its retry warns about each.
    nested: list[dict] = field(default_factory=list)


class TurnLedger:
    """The :class:`~swarmgraph.graph.features.effects.EffectLedger` of one ``Session`` turn; see the
    module docstring. ``sent``: how many messages the run was given before its own (the
    history shown and the turn's messages so far); ``rank``: the rank of an agent among
    namesakes (stored with the turn, as its final save does)."""

    def __init__(
        self,
        store: ConversationStore,
        conversation_id: str,
        turn: TurnState,
        *,
        sent: int,
        rank: Callable[[Agent], int] | None = None,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.turn = turn
        self.sent = sent
        self.rank = rank or (lambda agent: 0)
        self._lock = threading.RLock()
        self._entry: dict[str, Any] | None = None  # the open entry this run saved last

    # -- the saves ----------------------------------------------------------------------------
    def _save(self, write: Callable[[], TurnWrite], *, owned: bool = True) -> None:
        """One conditional save of ``write()`` on the version this turn knows; on a conflict,
        read the record again (this turn's own entry with it) and save again. ``owned``: the
        save is this run's to make only while it holds the turn (a result that happened is
        recorded whoever holds it)."""
        with self._lock:  # branches save from threads: one save at a time
            self._save_now(write, owned)

    def _save_now(self, write: Callable[[], TurnWrite], owned: bool) -> None:
        turn = self.turn
        while True:
            try:
                turn.version = self.store.save(
                    self.conversation_id, write(), expected_version=turn.version
                )
                return
            except ContextVersionConflict:  # another turn saved: re-read, keep going
                self._reload()
                if owned:
                    self._check_owner()
            except TurnOutcomeUnknown as unknown:
                raise TurnOutcomeUnknown(
                    self.store.url, unknown.reason, turn_id=turn.turn_id
                ) from None

    def _reload(self) -> Snapshot:
        turn = self.turn
        latest = self.store.load(
            self.conversation_id, window=NO_MESSAGES, records=[(TURN, turn.turn_id)]
        )
        turn.latest, turn.version = latest, latest.version
        return latest

    def _check_owner(self) -> None:
        """Raise :class:`TurnInProgress` if another run of this turn id holds it (or finished
        it) since this run last looked. A retry takes over the entry it resumed from, as long
        as nobody changed it since."""
        turn = self.turn
        entry = turn.latest.records.get((TURN, turn.turn_id))
        if entry is None:
            return
        if entry.get("status") == "open" and entry.get("owner") == turn.owner:
            return
        if turn.resumed and not turn.opened and entry == turn.taken_from:
            return
        raise TurnInProgress(self.conversation_id, turn.turn_id)

    # -- the protocol --------------------------------------------------------------------------
    def before(self, call: EffectCall, turn_so_far: TurnSoFar) -> EffectOutcome | None:
        fan_out = turn_so_far.fan_out
        if turn_so_far.branch is not None and fan_out is None:
            return self._branch_call(call)
        return self._started(call, turn_so_far)

    def _started(self, call: EffectCall, turn_so_far: TurnSoFar) -> EffectOutcome | None:
        """Record ``call`` started with the turn so far, in one save: the turn's open entry
        (the main conversation up to the reply that asked, or for a call in a parallel branch
        up to the fan-out, with every branch's record) and the call's ``started``."""
        from ..graph.features.effects import EffectOutcome

        turn = self.turn
        fan_out = turn_so_far.fan_out
        where = fan_out if fan_out is not None else turn_so_far
        # The run was given the turn's carried messages too: they are the run's part's head.
        run_part = where.messages[self.sent :]
        agent = where.agent
        entry: dict[str, Any] = {
            "status": "open",
            "owner": turn.owner,
            "new": len(turn.new),
            "messages": [message_to_dict(m) for m in [*turn.new, *run_part]],
            "base": turn.base,
            "context": where.context,
            "agent": agent.name,
        }
        rank = self.rank(agent)
        if rank:
            entry["rank"] = rank
        started = {**EffectOutcome("started", attempt=call.attempt).as_record()}
        started["turn"] = turn.turn_id

        def write() -> TurnWrite:
            claim = not turn.opened and not turn.resumed
            meta = with_open(turn.latest.meta, turn.turn_id)
            if fan_out is not None:  # a retry resumes each branch from its record; read
                entry["branches"] = fan_out.branches()  # in the save: the last one has all
            # Read under the save lock too: a nested fan-out's call named since this entry
            # was built must stay named (its retry warns about it), not be overwritten.
            if turn.nested:
                entry["nested"] = list(turn.nested)
            self._entry = entry
            records = [
                turn_record(turn.turn_id, entry, first=claim),
                Record(EFFECT, attempt_key(call.key, call.attempt), started, if_absent=True),
            ]
            return TurnWrite(meta=meta, records=records)

        if not _storable(entry["context"]):  # a resumed turn then starts from its base
            entry["context"] = None
        if fan_out is not None and not _storable(fan_out.branches()):
            return self._branch_call(call)  # (Session.run refuses such a context at its save)
        try:
            self._save(write)
        except RecordExists as exists:
            if exists.kind == TURN:  # another run of this turn id claimed it first
                raise TurnInProgress(self.conversation_id, turn.turn_id) from None
            return EffectOutcome.from_record(exists.stored)  # started elsewhere: not again
        turn.opened = True
        return None

    def _branch_call(self, call: EffectCall) -> EffectOutcome | None:
        """A call inside a nested fan-out (a branch's branch), which ``progress_of`` does not
        follow, or whose branch records JSON cannot hold: recorded started (never run twice
        under one name) and named in the turn's open entry (``nested``; the entry opened at
        the turn's start if it is the first effect). A crash there is not resumed: the retry
        asks the models again, and the calls they make are new effects; it warns about each
        call named (docs/parallel.md, "Effects inside branches after a crash", the limits)."""
        from ..graph.core.state import current_branch
        from ..graph.features.effects import EffectOutcome

        turn = self.turn
        started = {**EffectOutcome("started", attempt=call.attempt).as_record()}
        started["turn"] = turn.turn_id
        record = Record(EFFECT, attempt_key(call.key, call.attempt), started, if_absent=True)
        with self._lock:  # whether this call opens the turn is decided with its save
            # The first effect of the turn: open it at its start, naming the call, so a crash
            # here is not silent (``session.unfinished`` lists the turn; its retry starts
            # over from the caller's messages and warns that this call may have happened).
            # A turn this run opened already gets the call named in its entry as it stands.
            opens = not turn.opened and not turn.resumed
            named = [
                *turn.nested,
                {"tool": call.tool, "call": call.call_id, "branch": current_branch()},
            ]
            entry: dict[str, Any] | None = self._entry if turn.opened else None
            if opens:
                entry = {
                    "status": "open",
                    "owner": turn.owner,
                    "new": len(turn.new),
                    "messages": [message_to_dict(m) for m in turn.new],
                    "base": turn.base,
                    "context": None,
                    "agent": turn.latest.active_agent,
                }
                if turn.latest.meta.get("agent_rank"):
                    entry["rank"] = turn.latest.meta["agent_rank"]
            if entry is not None:
                entry = {**entry, "nested": named}

            def write() -> TurnWrite:
                if entry is None:  # a retry that took over an entry: the call's record only
                    return TurnWrite(records=[record])
                meta = with_open(turn.latest.meta, turn.turn_id)
                records = [turn_record(turn.turn_id, entry, first=opens), record]
                return TurnWrite(meta=meta, records=records)

            try:
                self._save(write, owned=entry is not None)
            except RecordExists as exists:
                if exists.kind == TURN:  # another run of this turn id claimed it first
                    raise TurnInProgress(self.conversation_id, turn.turn_id) from None
                return EffectOutcome.from_record(exists.stored)
            turn.opened, turn.nested = turn.opened or opens, named
            if entry is not None:
                self._entry = entry
        return None

    def after(self, call: EffectCall, outcome: EffectOutcome) -> None:
        record = Record(DONE, call.key, outcome.as_record(), if_absent=True)
        try:
            self._save(lambda: TurnWrite(records=[record]), owned=False)
        except RecordExists:  # a result is recorded already (a human answered it): it stands
            return
        except ValueError:  # a context update JSON cannot hold: keep the answer at least
            plain = replace(outcome, context_variables=None)
            record = Record(DONE, call.key, plain.as_record(), if_absent=True)
            try:
                self._save(lambda: TurnWrite(records=[record]), owned=False)
            except RecordExists:
                return

    def prior(self, calls: Sequence[EffectCall]) -> dict[str, EffectOutcome]:
        found = recorded_outcomes(self.store, self.conversation_id, [c.key for c in calls])
        return {key: outcome for key, (outcome, _) in found.items()}

    def settle(
        self, questions: Mapping[str, EffectCall], given: Mapping[str, Any]
    ) -> dict[str, Any]:
        from ..graph.features.errors import ApprovalAlreadyDecided

        turn = self.turn
        recorded = self.store.records(self.conversation_id, APPROVAL, list(questions))
        decided: dict[str, Any] = {}
        for question, value in recorded.items():
            call = questions[question]
            # Decided by another turn, or by another run of this turn id with another decision
            # (two callers answering at once under one turn id): the first decision stands.
            if question in given and (
                value.get("turn") != turn.turn_id or value.get("decision") != given[question]
            ):
                raise ApprovalAlreadyDecided(call.call_id, value.get("decision"), call.tool)
            decided[question] = value.get("decision")
        fresh = {q: d for q, d in given.items() if q in questions and q not in recorded}
        if not fresh:
            return decided
        self._check_in_flight(questions, fresh)
        records = [
            Record(APPROVAL, q, {"decision": d, "turn": turn.turn_id}, if_absent=True)
            for q, d in fresh.items()
        ]
        try:
            self._save(lambda: TurnWrite(records=records))
        except RecordExists as exists:
            call = questions[exists.key]
            stored = exists.stored if isinstance(exists.stored, dict) else {}
            raise ApprovalAlreadyDecided(call.call_id, stored.get("decision"), call.tool) from None
        except TurnInProgress:  # another run of this turn id holds it: if it decided otherwise,
            self._refuse_other_decision(questions, fresh)  # say that, as one after the other
            raise
        decided.update(fresh)
        return decided

    def _refuse_other_decision(
        self, questions: Mapping[str, EffectCall], given: Mapping[str, Any]
    ) -> None:
        """Raise ``ApprovalAlreadyDecided`` for a question whose recorded decision is not the
        one ``given``; for a question about a call in doubt (``<call>#n``) whose own decision
        is not recorded, the decision that let the call run first counts."""
        from ..graph.features.errors import ApprovalAlreadyDecided

        wanted = {*given, *(questions[q].key for q in given)}
        recorded = self.store.records(self.conversation_id, APPROVAL, sorted(wanted))
        for question, decision in given.items():
            call = questions[question]
            value = recorded.get(question, recorded.get(call.key))
            if isinstance(value, dict) and value.get("decision") != decision:
                raise ApprovalAlreadyDecided(call.call_id, value.get("decision"), call.tool)

    def _check_in_flight(
        self, questions: Mapping[str, EffectCall], fresh: Mapping[str, Any]
    ) -> None:
        """A decision about a call in doubt is refused while the turn that started it is still
        open elsewhere (it may be running it right now): only a retry of that turn declares it
        in doubt. Elsewhere includes another run of this turn id, one that started the call
        after this run loaded (two callers deciding at once under one turn id). It is refused
        too once the call's result is recorded: this run read it started while another run
        was running it, and that run has finished it since (:func:`call_states`; the decision
        that let it run stands)."""
        from ..graph.features.errors import ApprovalAlreadyDecided

        doubted = {q: questions[q] for q in fresh if "#" in q[len(questions[q].key) :]}
        if not doubted:
            return
        states = call_states(self.store, self.conversation_id, [c.key for c in doubted.values()])
        for question, call in doubted.items():
            state = states.get(call.key)
            if state is None:
                continue
            outcome, _, entry = state
            elsewhere = False  # started by a turn still running, not this run's
            if entry is not None and entry.get("status") == "open":
                elsewhere = not self._holds(entry)
            if outcome.status != "done" and not elsewhere:
                continue  # in doubt indeed: its starter is gone, or this run took it over
            first = self.store.records(self.conversation_id, APPROVAL, [question, call.key])
            value = first.get(question) or first.get(call.key) or {}
            fallback = outcome.value if outcome.status == "done" else "in flight"
            raise ApprovalAlreadyDecided(call.call_id, value.get("decision", fallback), call.tool)

    def _holds(self, entry: Mapping[str, Any]) -> bool:
        """Whether the open turn ``entry`` is this run's: its own, or the one it took over."""
        turn = self.turn
        if entry.get("owner") == turn.owner:
            return True
        return turn.resumed and not turn.opened and entry == turn.taken_from

    def asked(self, question: str) -> bool:
        return True  # Session runs stop for decisions; they never interrupt()

    def in_flight(self, messages: Sequence[BaseMessage]) -> AIMessage | None:
        return None  # a Session resumes a turn from its open entry, not by position

    def idempotency_key(self, call: EffectCall) -> str:
        from ..graph.features.effects import default_idempotency_key

        return default_idempotency_key(call.key, self.conversation_id)


def takes_effects(swarm: Any) -> bool:
    """Whether ``swarm.run`` takes an effect ledger (``Swarm`` does; a Swarm-like object of
    the caller's own may not: its effect tools then run as any tool)."""
    kind = type(swarm)
    known = _TAKES.get(kind)
    if known is None:
        try:
            parameters = list(inspect.signature(swarm.run).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        known = any(p.name == "effects" or p.kind is p.VAR_KEYWORD for p in parameters)
        _TAKES[kind] = known
    return known


_TAKES: dict[type, bool] = {}


def _storable(value: Any) -> bool:
    """Whether a store can hold ``value`` as JSON.

    Example:
        >>> _storable({"n": 1}), _storable({"when": object()})
        (True, False)
    """
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True
