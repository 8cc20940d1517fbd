"""One turn of a conversation, driven in its own thread, its AG-UI events into a run log.

The turn is ``Session.stream``'s (so it is loaded, checked and saved as ``Session.run``
saves it), with each tool answer streamed too; the graph's steps come from a
:class:`~.steps.StepWatcher`. The events, in order: ``RUN_STARTED``, ``STATE_SNAPSHOT``
(``context_variables`` and the active agent as stored), ``MESSAGES_SNAPSHOT`` (the stored
conversation and the new message), then per step ``STEP_STARTED``, the replies' text and tool
calls, the tool results, a ``STATE_DELTA`` and ``STEP_FINISHED``; a ``CUSTOM``
``swarmgraph.memory_window`` (what the memory model put into the run's history) and
``swarmgraph.recall`` (long-term facts in a prompt); once the turn is saved a
``MESSAGES_SNAPSHOT`` of the stored conversation, each message marked, and ``RUN_FINISHED``
(its outcome ``interrupt`` with the calls that wait for approval, ``cancelled`` after a stop),
or ``RUN_ERROR``. Nothing here reads the request: a client that goes away stops nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    MessagesSnapshotEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
)
from ag_ui.encoder import EventEncoder

from .events import WINDOW_EVENT, AguiTurn
from .messages import agui_messages
from .runs import RunLog
from .steps import StepWatcher, watching

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from ...memory import Session

__all__ = ["TurnRequest", "interrupts_of", "start_turn", "state_of"]

_ENCODER = EventEncoder()


@dataclass
class TurnRequest:
    """What one run is asked to do: a new user message, or decisions on waiting calls."""

    thread_id: str
    run_id: str
    message: BaseMessage | None = None
    approvals: dict[str, bool | str] = field(default_factory=dict)
    #: The AG-UI input as received (echoed in ``RUN_STARTED``), as a plain dict.
    received: dict[str, Any] | None = None


def state_of(session: Session, default_agent: str) -> dict[str, Any]:
    """The AG-UI state of a stored conversation: its context and the agent holding it."""
    record = session.store.load(session.conversation_id, window=_no_messages())
    return {
        "conversation_id": session.conversation_id,
        "persist": sorted(session.persist),
        "context_variables": record.context if "context" in session.persist else {},
        "active_agent": (record.active_agent if "context" in session.persist else None)
        or default_agent,
        "last_step": None,
        "changed_this_turn": {},
    }


def interrupts_of(session: Session, pending: Sequence[Any] | None = None) -> list[Interrupt]:
    """The calls of ``session`` that wait for a decision (``pending``: the run's own list,
    read instead of the store), as AG-UI interrupts (id: the call's)."""
    return [
        Interrupt(
            id=pending.id,
            reason="tool_approval" if not pending.in_doubt else "effect_in_doubt",
            tool_call_id=pending.id,
            message=f"{pending.agent} wants to run {pending.describe()}",
            metadata={"swarmgraph": {"agent": pending.agent, "tool": pending.tool}},
        )
        for pending in (session.pending if pending is None else pending)
    ]


def _no_messages() -> Any:
    from ...memory.store import NO_MESSAGES

    return NO_MESSAGES


def start_turn(
    session: Session,
    swarm: Any,
    agent: Any,
    request: TurnRequest,
    log: RunLog,
    on_done: Callable[[], None] = lambda: None,
) -> threading.Thread:
    """Drive ``request`` in a new thread (named after the run); returns it, started."""
    thread = threading.Thread(
        target=_drive,
        args=(session, swarm, agent, request, log, on_done),
        name=f"swarmgraph-ui-{request.run_id}",
        daemon=True,
    )
    thread.start()
    return thread


def _drive(
    session: Session,
    swarm: Any,
    agent: Any,
    request: TurnRequest,
    log: RunLog,
    on_done: Callable[[], None],
) -> None:
    def emit(event: BaseEvent) -> None:
        log.append(_ENCODER.encode(event))

    try:
        _turn(session, swarm, agent, request, log, emit)
    except BaseException as error:
        from ..terminal import one_line

        emit(RunErrorEvent(message=one_line(error, session.url), code=type(error).__name__))
    finally:
        log.finish()
        on_done()


def _turn(
    session: Session,
    swarm: Any,
    agent: Any,
    request: TurnRequest,
    log: RunLog,
    emit: Callable[[BaseEvent], None],
) -> None:
    thread, run = request.thread_id, request.run_id
    emit(RunStartedEvent(thread_id=thread, run_id=run))
    state = state_of(session, agent.name)
    emit(StateSnapshotEvent(snapshot=state))
    shown = list(session.messages)
    new = [request.message] if request.message is not None else []
    emit(
        MessagesSnapshotEvent(
            messages=[
                *agui_messages(shown),
                *agui_messages(new, stored=False, this_turn={m.id for m in new if m.id}),
            ]
        )
    )
    turn = AguiTurn(emit, state)
    watcher = StepWatcher()
    window_told = False
    response = None
    stopped = False
    events = session.stream(
        swarm,
        agent,
        request.message,
        turn_id=run,
        approvals=request.approvals or None,
        tool_results=True,
    )
    # Session.stream's iterator is a generator: closing it stops the run (a stop, an error).
    with watching(watcher), closing(cast("Generator[dict[str, Any], None, None]", events)):
        for event in events:
            if not window_told:  # the turn has loaded: what the memory model sent is known
                window_told = True
                emit(CustomEvent(name=WINDOW_EVENT, value=_window(session, shown)))
            if "response" in event:
                response = event["response"]
                break
            if log.stop_requested.is_set():
                stopped = True  # closing the stream stops the run; nothing of it is saved
                break
            starts = event.get("delim") == "start"
            turn.feed(event, watcher.take() if starts else ())
    if stopped or response is None:
        turn.end(watcher.take(), {})
        emit(MessagesSnapshotEvent(messages=agui_messages(session.messages)))
        emit(RunFinishedEvent(thread_id=thread, run_id=run, outcome=RunFinishedCancelledOutcome()))
        return
    final = {
        "context_variables": dict(response.context_variables or {}),
        "active_agent": getattr(response.agent, "name", None) or turn.state.get("active_agent"),
    }
    turn.end(watcher.take(), final)
    stored = list(session.messages)
    sent = {m.id for m in session.last_sent if m.id}
    mine = {m.id for m in stored[len(shown) :] if m.id}
    added = [m for m in session.last_sent if m.id is None or m.id not in {s.id for s in stored}]
    emit(
        MessagesSnapshotEvent(
            messages=[
                *agui_messages(added, stored=False, in_prompt={m.id for m in added if m.id}),
                *agui_messages(stored, in_prompt=sent, this_turn=mine),
            ]
        )
    )
    waiting = interrupts_of(session, getattr(response, "pending", None))
    outcome: Any = (
        RunFinishedInterruptOutcome(interrupts=waiting) if waiting else RunFinishedSuccessOutcome()
    )
    emit(RunFinishedEvent(thread_id=thread, run_id=run, outcome=outcome))


def _window(session: Session, shown: list[BaseMessage]) -> dict[str, Any]:
    """What the memory model handed the run, against what is stored."""
    stored_ids = {m.id for m in shown}
    sent = session.last_sent
    return {
        "policy": repr(session.memory),
        "stored": len(shown),
        "in_prompt": [m.id for m in sent if m.id in stored_ids],
        "added": [
            {"role": m.type, "text": str(m.content)[:2000]}
            for m in sent
            if m.id not in stored_ids and m.type != "human"
        ],
    }
