"""A ``Session`` turn on Temporal: loaded by one activity, saved by another.

With ``conversation_id=`` (and ``session_url=``, which every worker must reach: Postgres,
Redis, or one SQLite file they share), the run is one turn of that stored conversation: the
load activity reads its messages, context and active agent; the workflow runs the swarm on
them and the new input; the save activity writes the turn in one atomic write of the store
(the same ``ConversationStore.save`` a ``Session`` makes), with the workflow id as a
put-if-absent record, so a save retried after its worker died is written once. Any plain
``Session(conversation_id, url=...)`` then reads the turn. The save expects the version the
load read: a turn another writer saved in between fails the run (``ContextVersionConflict``,
with the ``Response``) instead of interleaving two turns' messages.

Example:
    >>> import os, tempfile
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
    >>> loaded = load_turn({"url": url, "conversation_id": "c1"})
    >>> loaded["version"], loaded["messages"], loaded["active_agent"]
    (0, [], None)
    >>> turn = {"url": url, "conversation_id": "c1", "turn": "wf-1", "version": 0,
    ...         "messages": messages_out(to_langchain([{"role": "user", "content": "hi"}])),
    ...         "context": {"n": 1}, "active_agent": "Sales"}
    >>> save_turn(turn), save_turn(turn)  # the second (a retry) writes nothing
    ('saved', 'saved before')
    >>> from swarmgraph.memory import Session
    >>> later = Session("c1", url=url)
    >>> later.context_variables, [m.content for m in later.messages]
    ({'n': 1}, ['hi'])
"""

from __future__ import annotations

from typing import Any

from temporalio import activity

from ..graph.messages import to_langchain
from .wire import messages_in, messages_out

__all__ = ["SESSION_LOAD", "SESSION_SAVE", "TURN_RECORD", "load_turn", "save_turn"]

SESSION_LOAD = "swarmgraph.session_load"
SESSION_SAVE = "swarmgraph.session_save"
#: The record kind that names the workflows whose turn a conversation holds.
TURN_RECORD = "temporal_turn"


def _store(url: str) -> Any:
    from ..memory.backends import open_store

    return open_store(url)


def load_turn(where: dict[str, Any]) -> dict[str, Any]:
    """``{"url", "conversation_id"}``: the conversation's messages, context, active agent and
    version, as JSON."""
    snapshot = _store(where["url"]).load(where["conversation_id"])
    return {
        "messages": messages_out(snapshot.messages),
        "context": snapshot.context,
        "active_agent": snapshot.active_agent,
        "version": snapshot.version,
    }


def save_turn(turn: dict[str, Any]) -> str:
    """Write one turn (``messages`` appended, ``context``, ``active_agent``) if the stored
    version is still ``version``; ``"saved before"`` when this workflow's turn is stored."""
    from ..memory.errors import ContextVersionConflict, RecordExists
    from ..memory.store import Record, TurnWrite

    write = TurnWrite(
        messages=messages_in(turn["messages"]),
        context=turn["context"],
        active_agent=turn["active_agent"],
        records=[Record(TURN_RECORD, turn["turn"], {"version": turn["version"]}, if_absent=True)],
    )
    store, conversation = _store(turn["url"]), turn["conversation_id"]
    try:
        store.save(conversation, write, expected_version=turn["version"])
    except RecordExists:
        return "saved before"
    except ContextVersionConflict:  # moved on: by this very turn (a retried save), or another
        if store.records(conversation, TURN_RECORD, [turn["turn"]]):
            return "saved before"
        raise
    return "saved"


@activity.defn(name=SESSION_LOAD)
def load_activity(where: dict[str, Any]) -> dict[str, Any]:
    """:func:`load_turn` as an activity (sync: it runs on the worker's activity threads)."""
    return load_turn(where)


@activity.defn(name=SESSION_SAVE)
def save_activity(turn: dict[str, Any]) -> str:
    """:func:`save_turn` as an activity."""
    from temporalio.exceptions import ApplicationError

    from ..memory.errors import ContextVersionConflict

    try:
        return save_turn(turn)
    except ContextVersionConflict as exc:  # no retry makes it fit: the run says so
        raise ApplicationError(
            str(exc), type="ContextVersionConflict", non_retryable=True
        ) from None


def new_input(messages: list[dict[str, Any]]) -> list[Any]:
    """The run's new input as LangChain messages (what the turn stores)."""
    return to_langchain(messages)
