"""``Session``: the seed's three steps (load, run, save) for one conversation, as one object.

Messages ("what was said") go to a LangChain chat history; context ("the key fields") and the
name of the agent holding the conversation go to a context store. ``persist`` says which
halves outlive the run, so the difference is something you can run and measure:

=========================  ======================================================================
``persist``                what a new Session (a "refresh", a new process) brings back
=========================  ======================================================================
``("messages","context")`` the earlier text (the model can read it), the context fields (tools and
                           instructions get them) and the active agent
``("messages",)``          the text only: the model can *read* "order 7", but
                           ``context_variables`` starts empty and the given agent starts
``("context",)``           the fields and the active agent, but the model sees no earlier text
``()``                     nothing: every run starts fresh, as plain Swarm does
=========================  ======================================================================

A turn is saved in one transaction when both halves share one database (a process killed
mid-turn leaves the whole turn or none of it). If the returned context cannot be stored as
JSON, the turn's messages are still saved, the stored context stays as it was, and
:class:`ContextSerializationError` is raised afterwards with the run's ``.response`` attached.
Concurrent turns on one conversation never interleave messages; their context changes are
merged key by key (each run's changes applied over the latest stored version). A run that
raises stores nothing: the turn did not happen, and the exception reaches the caller. A run's
messages are stored as the engine made them (message ids, the model's usage and response
metadata included), not rebuilt from ``Response.messages``' Swarm-style dicts.

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
import copy
import uuid
import warnings
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from .approvals import check_turn, pending_in
from .backends import open_context_store, open_history
from .context_json import DEFAULT_SIZE_LIMIT, ContextSerializationError
from .context_store import ContextRecord
from .errors import ContextVersionConflict, TurnOutcomeUnknown, UnknownAgentWarning
from .policies import BufferMemory, MemoryPolicy, SummaryMemory, SummaryState, WindowMemory
from .urls import check_conversation_id, default_url

HALVES = ("messages", "context")


def merge_context(latest: dict, base: dict, new: dict) -> dict:
    """Apply one run's changes (``base`` -> ``new``) over ``latest`` (someone else's save).

    Keys the run added or changed take the run's value, keys it deleted are deleted, and
    everything else keeps the latest stored value, so two concurrent runs lose neither's
    writes unless both wrote the same key (then the later save wins).

    Example:
        >>> merge_context({"a": 1, "b": 9}, base={"a": 1, "b": 2}, new={"a": 5, "b": 2})
        {'a': 5, 'b': 9}
    """
    merged = copy.deepcopy(latest)
    for key, value in new.items():
        if key not in base or base[key] != value:
            merged[key] = copy.deepcopy(value)
    for key in base:
        if key not in new:
            merged.pop(key, None)
    return merged


def as_messages(message: Any) -> list[BaseMessage]:
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
    if isinstance(message, (dict, BaseMessage)):
        message = [message]
    if not isinstance(message, (list, tuple)):
        raise TypeError(
            "message must be a str, a message dict, a LangChain message or a list of them, "
            f"got {type(message).__name__}"
        )
    # Dicts come back as new objects; only the caller's own LangChain messages need a copy.
    converted = to_langchain(message)
    pairs = zip(converted, message, strict=True)
    return [m.model_copy(deep=True) if m is src else m for m, src in pairs]


def _persist_tuple(persist: Any) -> tuple[str, ...]:
    if isinstance(persist, str):
        persist = (persist,)
    chosen = tuple(persist)
    unknown = [p for p in chosen if p not in HALVES]
    if unknown:
        raise ValueError(
            f"persist may only name 'messages' and 'context', got {unknown!r} "
            "(use ('messages', 'context'), ('messages',), ('context',) or ())"
        )
    return tuple(h for h in HALVES if h in chosen)


@dataclass
class _Loaded:
    shown: list[BaseMessage]
    record: ContextRecord
    summary: SummaryState | None = None  # the summary policy's state, before/after its fold
    summary_changed: bool = False


def run_messages(response: Any) -> list[BaseMessage]:
    """The messages a run added, as LangChain messages: the engine's own objects when
    ``Swarm`` made the response (no dict round trip), else converted from ``response.messages``.

    Example:
        >>> from swarmgraph.graph import Response
        >>> [m.type for m in run_messages(Response(messages=[{"role": "user", "content": "hi"}]))]
        ['human']
    """
    from ..graph.messages import to_langchain

    native = getattr(response, "_langchain_messages", None)
    if native is not None and len(native) == len(response.messages):
        return list(native)
    return to_langchain(response.messages)


#: How many recent turn ids a conversation remembers (in its context record's ``meta``); a
#: retry after :class:`TurnOutcomeUnknown` comes within moments, far inside this window.
TURN_LOG = 32


def _check_turn_id(turn_id: str | None) -> str:
    if turn_id is None:
        return uuid.uuid4().hex
    if not isinstance(turn_id, str) or not turn_id or len(turn_id) > 200:
        raise ValueError(f"turn_id must be a non-empty string of at most 200 chars: {turn_id!r}")
    return turn_id


def find_turn(meta: dict, turn_id: str) -> dict | None:
    """The stored record of ``turn_id`` in a context record's ``meta`` (``None``: not stored).

    Example:
        >>> find_turn({"turns": [{"id": "t1", "new": 1, "run": 1, "agent": "A"}]}, "t1")["agent"]
        'A'
        >>> find_turn({}, "t1") is None
        True
    """
    for turn in reversed(meta.get("turns", [])):
        if turn.get("id") == turn_id:
            return turn
    return None


def _logged(meta: dict, entry: dict, loaded: _Loaded) -> dict:
    """``meta`` with this turn's ``entry`` appended to its log of the last ``TURN_LOG`` turns,
    and the summary policy's new state unless a later summary is stored already.

    Example:
        >>> _logged({"turns": [{"id": "t1"}]}, {"id": "t2"}, _Loaded([], ContextRecord()))
        {'turns': [{'id': 't1'}, {'id': 't2'}]}
    """
    logged = {**meta, "turns": [*meta.get("turns", []), entry][-TURN_LOG:]}
    summary = loaded.summary if loaded.summary_changed else None
    if summary and summary.summarized > SummaryState.from_meta(logged).summarized:
        logged.update(summary.to_meta())
    return logged


def _ranked(meta: dict, rank: int) -> dict:
    """``meta`` with the active agent's rank among agents of its name (absent when 0).

    Example:
        >>> _ranked({"turns": []}, 1), _ranked({"agent_rank": 1}, 0)
        ({'turns': [], 'agent_rank': 1}, {})
    """
    ranked = {k: v for k, v in meta.items() if k != "agent_rank"}
    if rank:
        ranked["agent_rank"] = rank
    return ranked


class Session:
    """One conversation that outlives a run; see the module docstring for ``persist``.

    Args:
        conversation_id: any non-empty string without NUL (always a bound parameter).
        url: where both halves live: ``sqlite:///file.db``, ``memory://``, ``postgresql://``,
            ``redis://``. Default (``None``): ``$SWARMGRAPH_DB``, else
            ``.swarmgraph/swarmgraph.db`` under the working directory, the same store the
            ``swarmgraph`` CLI uses (:func:`swarmgraph.memory.urls.default_url`).
        persist: which halves outlive a run.
        window: load only the last ``window`` messages (shorthand for ``WindowMemory``).
        memory: a policy (:mod:`swarmgraph.memory.policies`) or a spec string like
            ``"tokens:2000"``.
        agents: agents a stored active-agent name may resolve to, besides every agent
            reachable by handoff from the agent passed to :meth:`run`.
        context_size_limit: bytes of context JSON above which saving warns.
    """

    def __init__(
        self,
        conversation_id: str,
        url: str | None = None,
        *,
        persist: Iterable[str] = HALVES,
        window: int | None = None,
        memory: MemoryPolicy | str | None = None,
        agents: Sequence[Any] | None = None,
        context_size_limit: int | None = DEFAULT_SIZE_LIMIT,
    ) -> None:
        self.conversation_id = check_conversation_id(conversation_id)
        self.url = url = default_url() if url is None else url
        self.persist = _persist_tuple(persist)
        if window is not None and memory is not None:
            raise ValueError("give window=k or memory=..., not both (window=k is WindowMemory(k))")
        if isinstance(memory, str):
            from .policies import parse_memory

            memory = parse_memory(memory)
        self.memory: MemoryPolicy = (
            WindowMemory(window) if window is not None else memory or BufferMemory()
        )
        self.history = open_history(url, conversation_id)
        self.store = open_context_store(url, size_limit=context_size_limit)
        self._agents: dict[str, Any] = {}
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
    @property
    def messages(self) -> list[BaseMessage]:
        """Every stored message of this conversation (LangChain messages)."""
        return self.history.get_messages()

    @property
    def context_variables(self) -> dict:
        """The stored context (a fresh copy; ``{}`` if none)."""
        return self.store.load(self.conversation_id).context

    @property
    def active_agent_name(self) -> str | None:
        """The name of the agent that held the conversation after the last saved run."""
        return self.store.load(self.conversation_id).active_agent

    def clear(self) -> None:
        """Forget both halves of this conversation (one transaction when they share a file)."""
        with self._write() as (history_conn, store_conn):
            self.history.clear(connection=history_conn)
            self.store.delete(self.conversation_id, connection=store_conn)

    async def aclear(self) -> None:
        """:meth:`clear` from async code (one thread hop; the backends are sync, pooled)."""
        await asyncio.to_thread(self.clear)

    # -- one turn: load, run, save -----------------------------------------------------------
    # The context row is read once (in the load), merged once (over the caller's values),
    # and encoded once (by the store's save, a conditional write on the version loaded that
    # also writes the meta: this turn's id in the log, so one row write a turn). Only when
    # another writer saved in between does the save read the row again and merge.
    # Nothing here deep-copies the context: Swarm.run deep-copies its input, as Swarm does.
    def run(
        self,
        swarm: Any,
        agent: Any,
        message: Any = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> Any:
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
        self._check_run_kwargs(run_kwargs)
        new = as_messages(message) if message is not None else []
        turn_id = _check_turn_id(turn_id)
        loaded = self._read()
        stored = self._stored_turn(loaded, turn_id)
        if stored is not None:
            return self._replay(stored, loaded, agent)
        self._check_approvals(loaded, new, approvals, run_kwargs)
        if loaded.summary is not None:
            self._fold(loaded, self.memory.fold(loaded.shown, loaded.summary))
        given = agent
        agent, context = self._prepare(agent, loaded, context_variables)
        self.last_sent = [*loaded.shown, *new]
        response = swarm.run(
            agent=agent, messages=list(self.last_sent), context_variables=context, **run_kwargs
        )
        self._save(loaded, context, new, response, turn_id, given)
        self._record_usage(response)
        return response

    async def arun(
        self,
        swarm: Any,
        agent: Any,
        message: Any = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> Any:
        """:meth:`run` for async code: ``swarm.arun``, and one thread hop each for the load
        and the save (the backends are sync with bounded pools, so 1,000 concurrent sessions
        never open more connections than the pool allows)."""
        self._check_run_kwargs(run_kwargs)
        new = as_messages(message) if message is not None else []
        turn_id = _check_turn_id(turn_id)
        loaded = await asyncio.to_thread(self._read)
        stored = self._stored_turn(loaded, turn_id)
        if stored is not None:
            return await asyncio.to_thread(self._replay, stored, loaded, agent)
        self._check_approvals(loaded, new, approvals, run_kwargs)
        if loaded.summary is not None:
            self._fold(loaded, await self.memory.afold(loaded.shown, loaded.summary))
        given = agent
        agent, context = self._prepare(agent, loaded, context_variables)
        self.last_sent = [*loaded.shown, *new]
        response = await swarm.arun(
            agent=agent, messages=list(self.last_sent), context_variables=context, **run_kwargs
        )
        await asyncio.to_thread(self._save, loaded, context, new, response, turn_id, given)
        self._record_usage(response)
        return response

    def _read(self) -> _Loaded:
        """Everything a turn reads from storage, in one go (no model call: the summary
        policy's fold runs after it, sync or async)."""
        record = ContextRecord()
        summary_policy = isinstance(self.memory, SummaryMemory) and "messages" in self.persist
        if self.persist:  # the context row also holds the log of stored turn ids
            record = self.store.load(self.conversation_id)
        if "messages" not in self.persist:
            return _Loaded([], record)
        if summary_policy:
            state = SummaryState.from_meta(record.meta)
            recent = self.history.get_messages_since(state.summarized)
            if not recent and state.summarized and self.history.count() < state.summarized:
                state, recent = SummaryState(), self.history.get_messages()  # history cleared
            return _Loaded(recent, record, state)
        stored = self.history.get_messages(limit=self.memory.load_limit)
        return _Loaded(self.memory.select(stored), record)

    @staticmethod
    def _fold(loaded: _Loaded, folded: tuple[list[BaseMessage], SummaryState]) -> None:
        shown, state = folded
        loaded.summary_changed = state != loaded.summary
        loaded.shown, loaded.summary = shown, state

    def _save(
        self,
        loaded: _Loaded,
        sent_context: dict,
        new: list,
        response: Any,
        turn_id: str,
        given: Any,
    ) -> None:
        plan = self._plan(new, response)
        if not self.persist:
            return
        entry = {
            "id": turn_id,
            "new": len(new) if plan.messages else 0,
            "run": len(plan.messages) - len(new) if plan.messages else 0,
            "agent": getattr(response.agent, "name", None),
        }
        # Two agents may share a name: the rank says which of them (see _namesakes).
        rank = self._rank(given, response.agent)
        if rank:
            entry["rank"] = rank
            if plan.agent_name is not None:
                plan.agent_rank = rank
        # One transaction when both halves share a database (_write() hands out one connection).
        try:
            with self._write() as (history_conn, store_conn):
                saved, error = self._save_record(loaded, sent_context, plan, store_conn, entry)
                if not saved:  # an earlier attempt of this turn stored it: a no-op
                    return
                if plan.messages:
                    self.history.add_messages(plan.messages, connection=history_conn)
        except TurnOutcomeUnknown as unknown:
            raise TurnOutcomeUnknown(self.url, unknown.reason, turn_id=turn_id) from None
        if error is not None:
            error.response = response
            raise error

    def _stored_turn(self, loaded: _Loaded, turn_id: str) -> dict | None:
        return find_turn(loaded.record.meta, turn_id) if self.persist else None

    def _replay(self, turn: dict, loaded: _Loaded, agent: Any) -> Any:
        """The stored turn as a ``Response``: its messages from the history, the agent that
        held the conversation after it, the stored context. No model call."""
        from ..graph.messages import to_openai
        from ..graph.types import Response

        turns = loaded.record.meta.get("turns", [])
        later = turns[turns.index(turn) + 1 :]
        size = turn["new"] + turn["run"]
        after = sum(t["new"] + t["run"] for t in later)
        stored = self.history.get_messages(limit=size + after)[:size] if size else []
        response = Response(
            messages=to_openai(stored[turn["new"] :]),
            agent=self._resolve_agent(agent, turn.get("agent"), turn.get("rank", 0)),
            context_variables=dict(loaded.record.context) if "context" in self.persist else {},
        )
        self.last_sent = []
        self._record_usage(response)
        return response

    def _save_record(
        self, loaded: _Loaded, sent: dict, plan: _Plan, conn: Any, entry: dict
    ) -> tuple[bool, ContextSerializationError | None]:
        """Write the run's context and this turn's log entry (``entry``) to the context row,
        one write inside the turn's transaction, first of the turn's writes.

        Returns whether it wrote (``False``: the turn id is already stored, nothing was
        written) and a context JSON cannot hold (raised after the commit, so the turn's
        messages and its log entry are still written; the stored context stays).

        The usual case is one conditional write on the version loaded and no read: if it
        succeeds nobody wrote the row since the load (every write, meta included, bumps the
        version), so the loaded meta is current and the turn id was not stored then (the load
        would have found it). Only a conflict reads the row again, under the conversation's
        lock, checks the turn id, merges, and writes on the version it read.
        """
        cid, store = self.conversation_id, self.store

        def write(record: ContextRecord, context: dict | None) -> ContextSerializationError | None:
            meta = _logged(record.meta, entry, loaded)
            error = None
            if context is not None:
                try:
                    store.save(
                        cid,
                        context,
                        expected_version=record.version,
                        active_agent=plan.agent_name,
                        meta=_ranked(meta, plan.agent_rank),
                        connection=conn,
                    )
                    return None
                except ContextSerializationError as caught:  # raised before anything was written
                    error = caught
            # No context to store (none kept, or none storable): the turn is still logged.
            store.save_meta(cid, meta, expected_version=record.version, connection=conn)
            return error

        try:  # the usual case: nobody wrote since our load
            return True, write(loaded.record, plan.context)
        except ContextVersionConflict:  # someone did: merge over theirs, write again
            latest = store.load(cid, connection=conn)
            if find_turn(latest.meta, entry["id"]) is not None:
                return False, None
            if plan.context is None:
                return True, write(latest, None)
            return True, write(latest, merge_context(latest.context, sent, plan.context))

    # -- shared pieces -------------------------------------------------------------------
    @property
    def pending(self) -> list:
        """Tool calls of the last stored turn that wait for approval (``PendingApproval`` s),
        read from the stored conversation, so another process sees them too."""
        if "messages" not in self.persist:
            return []
        return pending_in(self.history.get_messages(limit=_PENDING_TAIL))

    def _check_approvals(
        self, loaded: _Loaded, new: list, approvals: dict | None, run_kwargs: dict
    ) -> None:
        check_turn(self.conversation_id, pending_in(loaded.shown), new, approvals)
        if approvals is not None:
            run_kwargs["approvals"] = approvals

    @staticmethod
    def _check_run_kwargs(run_kwargs: dict) -> None:
        if run_kwargs.get("stream"):
            raise ValueError(
                "Session.run does not stream: it must see the whole response to save it"
            )
        for name in ("messages", "context_variables", "agent"):
            if name in run_kwargs:
                raise TypeError(f"Session.run builds {name!r} itself; pass it positionally")

    def _namesakes(self, given: Any, name: str) -> list[Any]:
        """The agents called ``name`` a conversation may resume with, in one fixed order:
        the agent passed to :meth:`run`, then ``agents=``, then every agent reachable from
        the given one (discovery's order). Two distinct agents may share a name, so a turn
        stores its active agent's place in this list (its rank) beside the name."""
        from ..graph.discovery import reachable_agents

        found: list[Any] = []
        for candidate in (given, *self._agents.values(), *reachable_agents([given])):
            if getattr(candidate, "name", None) == name and all(c is not candidate for c in found):
                found.append(candidate)
        return found

    def _rank(self, given: Any, agent: Any) -> int:
        if agent is None or agent is given:
            return 0
        if self._agents.get(agent.name) is agent and getattr(given, "name", None) != agent.name:
            return 0  # first of its name in _namesakes' order, no discovery needed
        namesakes = self._namesakes(given, agent.name)
        return next((i for i, known in enumerate(namesakes) if known is agent), 0)

    def _resolve_agent(self, given: Any, stored_name: str | None, rank: int = 0) -> Any:
        if not stored_name:
            return given
        if rank == 0:  # the usual case, no discovery: the given agent or agents=
            if getattr(given, "name", None) == stored_name:
                return given
            if stored_name in self._agents:
                return self._agents[stored_name]
        namesakes = self._namesakes(given, stored_name)
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

    def _prepare(self, agent: Any, loaded: _Loaded, caller: dict | None) -> tuple[Any, dict]:
        if caller is not None and not isinstance(caller, dict):
            raise TypeError(f"context_variables must be a dict, got {type(caller).__name__}")
        # The record is loaded for the turn log too; only a Session that keeps the context
        # resumes its fields and its agent (persist=("messages",) starts fresh, as documented).
        record = loaded.record if "context" in self.persist else ContextRecord()
        # A new dict, no deep copy: the loaded one was just decoded (ours alone), and
        # Swarm.run deep-copies what it is given before any tool can touch it.
        context = {**record.context, **caller} if caller else dict(record.context)
        rank = record.meta.get("agent_rank", 0)
        return self._resolve_agent(agent, record.active_agent, rank), context

    def _plan(self, new: list, response: Any) -> _Plan:
        plan = _Plan()
        if "messages" in self.persist:
            plan.messages = [*new, *run_messages(response)]
        if "context" in self.persist:
            plan.context = response.context_variables
            plan.agent_name = getattr(response.agent, "name", None)
        return plan

    def _write(self) -> AbstractContextManager:
        return _Write(self.history, self.store)

    def _record_usage(self, response: Any) -> None:
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
        usage["summary_input_tokens"] = getattr(self.memory, "last_input_tokens", 0)
        self.last_usage = usage


#: How many stored messages ``Session.pending`` reads: enough for one reply's tool answers.
_PENDING_TAIL = 64


@dataclass
class _Plan:
    messages: list | None = None
    context: dict | None = None
    agent_name: str | None = None
    agent_rank: int = 0  # which of several agents sharing agent_name (0: the first)


class _Write:
    """Both stores' write transactions: one shared transaction when they share a domain."""

    def __init__(self, history: Any, store: Any) -> None:
        self.shared = history.transaction_domain is store.transaction_domain
        self.history, self.store = history, store

    def __enter__(self) -> tuple[Any, Any]:
        self._history_tx = self.history.begin_write()
        history_conn = self._history_tx.__enter__()
        if self.shared:
            self._store_tx = nullcontext(history_conn)
        else:
            self._store_tx = self.store.begin_write()
        return history_conn, self._store_tx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            self._store_tx.__exit__(*exc)
        finally:
            self._history_tx.__exit__(*exc)
