"""A ``Session`` turn on Temporal: loaded by one activity, saved by another, both through
``Session``'s public turn steps (``begin_turn`` / ``reopen_turn`` + ``finish_turn``,
:mod:`swarmgraph.memory.turn_steps`: the two halves ``Session.run`` is made of), so every
Session rule holds.

With ``conversation_id=`` (and ``session_url=``, which every worker must reach: Postgres,
Redis, or one SQLite file they share), the run is one turn of that stored conversation:

* **load** (an activity): a ``Session`` with the caller's settings (``memory=`` spec,
  ``window=``, ``user_id=``/``long_term=``/``recall=``) does what ``Session.run`` does before
  its run: one read with the turn id's entry in the turn index, the long-term outboxes of
  earlier turns applied, the memory policy's fold and arrangement (what the model is sent),
  the stored agent and context (the caller's values over them), and, with long-term memory,
  each reachable agent's recall block for the system prompt (the engine's
  ``prompt_context`` hook: the workflow looks it up by agent name, no I/O in the workflow).
  A turn id already stored comes back as the stored turn: the workflow returns it and
  calls no model (a stored turn id is never run twice).
* **save** (an activity): ``Session.finish_turn``, ``Session.run``'s own save: the turn
  index entry put-if-absent, one conditional write on the version the load read (a turn
  another writer saved in between is rebased key by key, as in-process), the memory
  policy's stored state, the long-term pending list. A save retried after its worker died
  finds its turn id and writes nothing.

The turn id is ``turn_id=`` (default: the workflow id). Any plain
``Session(conversation_id, url=...)`` reads the turn, and ``Session.run(..., turn_id=)`` with
the same id replays it.

Example:
    >>> import os, tempfile
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
    >>> where = {"url": url, "conversation_id": "c1", "turn_id": "wf-1",
    ...          "agent": "swarmgraph.temporal.session_turn:_DOC_AGENT",
    ...          "new": messages_out(to_langchain([{"role": "user", "content": "hi"}]))}
    >>> loaded = load_turn(where)
    >>> sent = [m.content for m in messages_in(loaded["messages"])]
    >>> loaded["version"], sent, loaded["active_agent"]
    (0, ['hi'], 'Doc')
    >>> from swarmgraph.graph import Response
    >>> ran = {"messages": [{"role": "assistant", "content": "hello", "sender": "Doc"}],
    ...        "agent": "Doc", "context_variables": {"n": 1}}
    >>> turn = {**where, **loaded, "response": ran}
    >>> save_turn(turn), save_turn(turn)  # the second (a retry) writes nothing
    ('saved', 'saved before')
    >>> from swarmgraph.memory import Session
    >>> later = Session("c1", url=url)
    >>> later.context_variables, [m.content for m in later.messages]
    ({'n': 1}, ['hi', 'hello'])
    >>> load_turn(where)["stored"]["messages"][0]["content"]  # the turn id is stored
    'hello'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from temporalio import activity

from ..graph.core.messages import to_langchain
from ..graph.core.types import Agent
from .roster import Roster
from .wire import check_json, context_out, messages_in, messages_out, response_in, response_out

if TYPE_CHECKING:
    from ..memory.session import Session

__all__ = [
    "SESSION_LOAD",
    "SESSION_OPTIONS",
    "SESSION_SAVE",
    "TURN_RECORD",
    "load_turn",
    "save_turn",
]

SESSION_LOAD = "swarmgraph.session_load"
SESSION_SAVE = "swarmgraph.session_save"
#: The record kind an earlier version named a turn's workflow by (turns now go in the
#: Session's own turn index, ``memory.turn_index``).
TURN_RECORD = "temporal_turn"
#: The ``Session`` settings a Temporal turn carries (JSON: a policy by its spec string).
SESSION_OPTIONS = ("persist", "window", "memory", "user_id", "long_term", "recall")

#: The agent of this module's doctest.
_DOC_AGENT = Agent(name="Doc")


def _session(where: dict[str, Any]) -> Session:
    """The ``Session`` of the turn, with the caller's settings (each worker makes its own)."""
    from ..memory.session import Session

    options = {k: where[k] for k in SESSION_OPTIONS if where.get(k) is not None}
    if "persist" in options:
        options["persist"] = tuple(options["persist"])
    return Session(where["conversation_id"], url=where["url"], **options)


def _swarm() -> Any:
    from ..graph.swarm import Swarm

    return Swarm()  # the Session's own calls take a Swarm for its settings: plain ones here


def load_turn(where: dict[str, Any]) -> dict[str, Any]:
    """What ``Session.run`` would send for this turn, as JSON: ``messages`` (the policy's
    window and arrangement, the new input last), ``context``, ``active_agent``, ``recalled``
    (agent name -> recall block), and what the save needs (``new``: the input with its
    message ids, ``version``, ``base``, ``state``); or ``{"stored": Response}`` for a turn id
    already stored (nothing is run)."""
    session, roster = _session(where), Roster.load(where["agent"])
    new = messages_in(where.get("new") or [])
    caller = where.get("context") or None
    plan = session.begin_turn(_swarm(), roster.start, new, caller, turn_id=where["turn_id"])
    if plan.stored is not None:
        return {"stored": response_out(plan.stored)}
    sent = plan.run_kwargs["messages"]
    recall: dict[str, str] = {}
    if plan.memory is not None:  # the recall block each agent's system prompt gets this turn
        for name, each in roster.agents.items():
            text = plan.memory.prompt_context(each, sent)
            if text:
                recall[name] = text
    loaded = {
        "messages": messages_out(sent),
        "new": messages_out(plan.new),
        "context": context_out(plan.given),
        "base": context_out(plan.base),
        "active_agent": plan.start.name if plan.start is not None else roster.start.name,
        "version": plan.version,
        "state": plan.folded.state,
        "recalled": recall,
    }
    check_json(loaded, "the loaded turn")
    return loaded


def save_turn(turn: dict[str, Any]) -> str:
    """Save the run's ``response`` (JSON) as the turn through ``Session.finish_turn``;
    ``"saved before"`` when the turn id is stored already (a retried save writes nothing)."""
    session, roster = _session(turn), Roster.load(turn["agent"])
    new, version, base = messages_in(turn["new"]), turn["version"], turn["base"]
    kept = {"version": version, "base": base, "state": turn.get("state")}
    plan = session.reopen_turn(_swarm(), roster.start, turn["turn_id"], new, **kept)
    if plan is None:
        return "saved before"
    session.finish_turn(plan, response_in(turn["response"], roster.agents.get))
    return "saved"


@activity.defn(name=SESSION_LOAD)
def load_activity(where: dict[str, Any]) -> dict[str, Any]:
    """:func:`load_turn` as an activity (sync: it runs on the worker's activity threads)."""
    from temporalio.exceptions import ApplicationError

    from .errors import TemporalInputError

    try:
        return load_turn(where)
    except (TemporalInputError, ValueError, TypeError) as exc:  # no retry makes it fit
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from None


@activity.defn(name=SESSION_SAVE)
def save_activity(turn: dict[str, Any]) -> str:
    """:func:`save_turn` as an activity."""
    from temporalio.exceptions import ApplicationError

    from ..memory.errors import ContextSerializationError, TurnInProgress

    try:
        return save_turn(turn)
    except (ContextSerializationError, TurnInProgress) as exc:  # no retry makes it fit
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from None


def new_input(messages: list[dict[str, Any]]) -> list[Any]:
    """The run's new input as LangChain messages (what the turn stores)."""
    return to_langchain(messages)
