"""A turn that did not finish cleanly: one a :class:`~swarmgraph.graph.core.errors.SwarmError`
stopped after it did something (kept as far as it got, every tool call answered), one an
earlier attempt left open while it ran an effect tool (resumed from its entry, its messages
carried over), and a save that finds the turn saved or held by another run.

A retry of a turn id already stored gets the stored turn back (:func:`replayed`). A steady
turn that finishes never enters this module.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> ask = AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "c1"}])
    >>> [m.content for m in answered([ask], RuntimeError("budget"))][1:]
    ['Error: the run stopped before this call ran (RuntimeError: budget)']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, ToolMessage

from .errors import TurnInProgress
from .store import NO_MESSAGES, Snapshot
from .turn_index import TURN, find_turn, stored_turn_messages
from .turn_write import run_messages

if TYPE_CHECKING:
    from ..graph.core.errors import SwarmError
    from ..graph.core.types import Response
    from .effect_ledger import TurnState
    from .store import ConversationStore


def replayed(
    store: ConversationStore,
    conversation_id: str,
    stored: dict[str, Any],
    context: dict | None,
    swarm: Any,
) -> Response:
    """A stored turn (its entry, ``stored``) as a ``Response``: its run's messages from the
    store, and the stored ``context`` (``None``: the Session keeps none) as the run would
    have it. A turn id already stored is never run twice."""
    from ..graph.core.messages import to_openai
    from ..graph.core.types import Response
    from .turn_context import restored

    size = stored["new"] + stored["run"]
    kept = stored_turn_messages(store, conversation_id, stored, size) if size else []
    return Response(
        messages=to_openai(kept[stored["new"] :]),
        context_variables=restored(context, swarm) if context is not None else {},
    )


def answered(messages: list[BaseMessage], error: BaseException) -> list[BaseMessage]:
    """``messages`` with every tool call answered: a call the stop left unanswered gets an
    ``Error:`` saying why, so the stored conversation never ends on a call nobody answers."""
    from ..graph.features.approvals import open_calls

    found = open_calls(messages)
    if found is None:
        return messages
    why = f"Error: the run stopped before this call ran ({type(error).__name__}: {error})"
    extra = [ToolMessage(why, tool_call_id=c.get("id") or "", name=c["name"]) for c in found[1]]
    return [*messages, *extra]


def kept_run(turn: Any, error: SwarmError) -> list[BaseMessage] | None:
    """What a run a :class:`SwarmError` stopped (a budget, the step limit, a handoff loop)
    saves: its messages, every tool call answered, so nothing that ran is forgotten (the
    error is raised after); ``None``: nothing to save (nothing happened, or a decision that
    came second: ``ApprovalAlreadyDecided``). ``error.response`` becomes the whole turn's."""
    run: list[BaseMessage] = []
    if error.response is not None:
        error.response = whole(turn, error.response)
        run = run_messages(error.response)
    return stopped_messages(run, error, opened=turn.opened)


def stopped_messages(
    run: list[BaseMessage], error: SwarmError, *, opened: bool = False
) -> list[BaseMessage] | None:
    """The rule of what a stopped run keeps, for ``Session.run`` (:func:`kept_run`) and a run
    on Temporal (swarmgraph/temporal/workflow.py) alike: ``run``, its messages, with every tool
    call answered; ``None`` when there is nothing to save (nothing happened and no earlier
    attempt ``opened`` the turn, or a decision that came second: ``ApprovalAlreadyDecided``)."""
    from ..graph.features.errors import ApprovalAlreadyDecided

    if isinstance(error, ApprovalAlreadyDecided) or error.response is None:
        return None
    if not run and not opened:
        return None  # nothing happened
    return answered(run, error)


def resume_open(turn: Any, stored: dict[str, Any], run_kwargs: dict[str, Any]) -> None:
    """Take over a turn an earlier attempt left open (it ran an effect and never finished):
    its caller's messages, the run's so far (carried into this run), its contexts, its agent.
    Decisions made then are recorded: they are used as made."""
    from langchain_core.messages import messages_from_dict

    kept = messages_from_dict(stored.get("messages", []))
    size = int(stored.get("new", 0))
    turn.new, turn.carried = kept[:size], kept[size:]
    turn.base = stored.get("base") or {}
    turn.given = stored.get("context")
    turn.agent, turn.rank = stored.get("agent"), int(stored.get("rank", 0))
    turn.resumed, turn.taken_from = True, stored
    run_kwargs.pop("approvals", None)
    turn.nested = list(stored.get("nested") or [])  # kept if this retry stops again
    for call in turn.nested:  # a crash in a nested fan-out is not resumed: say so
        warnings.warn(
            f"turn {turn.turn_id!r} was cut short after it started {call.get('tool')} (call "
            f"{call.get('call')!r} in branch {call.get('branch')!r}), which may have happened: "
            "a fan-out inside a branch is not resumed, so this retry asks the models again "
            "and a call they make there is a new effect (docs/parallel.md)",
            RuntimeWarning,
            stacklevel=2,
        )
    if stored.get("branches"):  # it died inside parallel branches: they go on from there
        from .fan_out_resume import resume_branches

        resume_branches(turn, stored, run_kwargs)


def whole(turn: TurnState, response: Response) -> Response:
    """A resumed turn's Response holds the whole turn's messages: those an earlier attempt
    kept (up to the effect call it was running) before this run's own, in ``messages`` and
    ``langchain_messages`` alike.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from swarmgraph.graph.core.types import Response
        >>> from swarmgraph.memory.effect_ledger import TurnState
        >>> turn = TurnState("t1", carried=[HumanMessage("hi")])
        >>> response = whole(turn, Response(messages=[{"role": "assistant", "content": "ok"}]))
        >>> [m["role"] for m in response.messages], [m.type for m in response.langchain_messages]
        (['user', 'assistant'], ['human', 'ai'])
    """
    from ..graph.core.messages import to_langchain, to_openai

    earlier = turn.carried
    own = response.langchain_messages
    if own is None or len(own) != len(response.messages):
        own = to_langchain(response.messages)
    response.messages = [*to_openai(earlier), *response.messages]
    response._langchain_messages = [*earlier, *own]
    return response


def saved_elsewhere(
    store: ConversationStore,
    conversation_id: str,
    turn: TurnState,
    counted: Callable[[Snapshot], Snapshot],
) -> bool:
    """Read the record again after a conflict: True when an earlier attempt of this turn
    saved it already; :class:`TurnInProgress` when another run holds it now."""
    latest = store.load(conversation_id, window=NO_MESSAGES, records=[(TURN, turn.turn_id)])
    turn.latest, turn.version = counted(latest), latest.version
    entry = find_turn(latest, turn.turn_id)
    if entry is None:
        return False
    if entry.get("status", "done") == "done":
        return True
    mine = entry.get("owner") == turn.owner or (
        turn.resumed and not turn.opened and entry == turn.taken_from
    )
    if not mine:
        raise TurnInProgress(conversation_id, turn.turn_id)
    return False
