"""One turn of a conversation, driven in its own thread, its AG-UI events into a run log.

The turn is ``Session.run``'s (loaded, checked and saved as always), watched as it runs by the
page's middleware (:mod:`.steps`, the run's own: ``RunHooks(middleware=)``): no LangGraph
stream, so a turn nobody watches costs about what a plain ``Session.run`` costs. The events, in
order: ``RUN_STARTED``, ``STATE_SNAPSHOT`` (``context_variables`` and the active agent as
stored), ``MESSAGES_SNAPSHOT`` (the stored conversation and the new message), then per step
``STEP_STARTED``, the replies' text and tool calls, the tool results, a ``STATE_DELTA`` and
``STEP_FINISHED``; a ``CUSTOM`` ``swarmgraph.memory_window`` (what the memory model put into
the run's history) and ``swarmgraph.recall`` (long-term facts in a prompt); once the turn is
saved a ``MESSAGES_SNAPSHOT`` of the stored conversation, each message marked, and
``RUN_FINISHED`` (its outcome ``interrupt`` with the calls that wait for approval,
``cancelled`` after a stop), or ``RUN_ERROR``. Nothing here reads the request: a client that
goes away stops nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ag_ui.core import Interrupt

from ...graph.core.run_control import RunHooks
from ...memory.store import NO_MESSAGES, Window
from .events import WINDOW_EVENT, AguiTurn
from .messages import agui_message_dicts
from .runs import RunLog
from .steps import TokenWatcher, TurnStopped, UiMiddleware, UiQuietMiddleware, watching

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from ...memory import Session

__all__ = ["TurnRequest", "interrupts_of", "start_turn", "state_of"]


@dataclass
class TurnRequest:
    """What one run is asked to do: a new user message, or decisions on waiting calls."""

    thread_id: str
    run_id: str
    message: BaseMessage | None = None
    approvals: dict[str, bool | str] = field(default_factory=dict)
    #: The AG-UI input as received (echoed in ``RUN_STARTED``), as a plain dict.
    received: dict[str, Any] | None = None


def state_of(session: Session, default_agent: str, record: Any = None) -> dict[str, Any]:
    """The AG-UI state of a stored conversation: its context and the agent holding it, read
    from the store (or from ``record``, a ``Snapshot`` of it already read)."""
    if record is None:
        record = session.store.load(session.conversation_id, window=NO_MESSAGES)
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


def start_turn(
    session: Session,
    swarm: Any,
    agent: Any,
    request: TurnRequest,
    log: RunLog,
    on_done: Callable[[], None] = lambda: None,
    *,
    tokens: bool = True,
) -> None:
    """Drive ``request`` in a thread of its own (:class:`_Workers`: an idle one, else a new
    one), and return at once. ``tokens``: make the model stream its replies token by token
    (a client watches); else each reply is told whole, for the cost of a plain run."""
    _workers.run(_drive, session, swarm, agent, request, log, on_done, tokens)


class _Workers:
    """The threads that drive turns: each turn gets one to itself (turns never wait for each
    other), an idle one when there is one, else a new one; a thread idle for ``keep``
    seconds ends (unless a turn was handed to it meanwhile). Daemons, like the one thread a
    turn had before: kept ones spare each turn a new thread's start and first run, which
    cost a short turn a share of its CPU time (measured side by side: a ``Session.run`` in
    a new thread against one in a kept thread). Each turn runs in a fresh ``contextvars``
    context, as in a new thread.

    Example:
        >>> done = threading.Event()
        >>> _Workers().run(done.set)
        >>> done.wait(5)
        True
    """

    def __init__(self, keep: float = 60.0) -> None:
        self.keep = keep
        self._jobs: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)  # one token per thread waiting for a job

    def run(self, target: Callable[..., object], *args: Any) -> None:
        """Call ``target(*args)`` in a thread of its own."""
        self._jobs.put(partial(contextvars.Context().run, target, *args))
        if not self._idle.acquire(blocking=False):  # no thread waits: one more
            threading.Thread(target=self._work, name="swarmgraph-ui-turn", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.keep)
            except queue.Empty:
                if self._idle.acquire(blocking=False):  # uncounted: no job was meant for it
                    return
                job = self._jobs.get()  # a job was put for the thread it was counted as
            with contextlib.suppress(Exception):  # _drive reports its own errors
                job()
            self._idle.release()


_workers = _Workers()


def _drive(
    session: Session,
    swarm: Any,
    agent: Any,
    request: TurnRequest,
    log: RunLog,
    on_done: Callable[[], None],
    tokens: bool,
) -> None:
    try:
        _turn(session, swarm, agent, request, log, tokens)
    except BaseException as error:
        from ..terminal import one_line

        log.append(
            {"type": "RUN_ERROR", "message": one_line(error, session.url),
             "code": type(error).__name__}
        )  # fmt: skip
    finally:
        log.finish()
        on_done()


def _dump(models: Sequence[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in models]


def _turn(
    session: Session, swarm: Any, agent: Any, request: TurnRequest, log: RunLog, tokens: bool
) -> None:
    emit = log.append
    thread, run = request.thread_id, request.run_id
    emit({"type": "RUN_STARTED", "threadId": thread, "runId": run})
    record = session.store.load(session.conversation_id)  # one read: messages and state
    state = state_of(session, agent.name, record)
    emit({"type": "STATE_SNAPSHOT", "snapshot": state})
    shown = list(record.messages)
    new = [request.message] if request.message is not None else []
    this_turn = {m.id for m in new if m.id}
    emit(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                *agui_message_dicts(shown),
                *agui_message_dicts(new, stored=False, this_turn=this_turn),
            ],
        }
    )
    turn = AguiTurn(emit, state, ids=run)
    # Once the turn has loaded (its first step starts), what the memory model sent is known.
    turn.first_step = lambda: emit(
        {"type": "CUSTOM", "name": WINDOW_EVENT, "value": _window(session, shown)}
    )
    recall = session.long_term is not None
    # A reply nobody streams, in a prompt with no recall block: told without wrap_model_call
    # (the request and response a step builds around each model call for it).
    kind = UiMiddleware if tokens or recall else UiQuietMiddleware
    page = kind(turn, log.stop_requested, recall=recall)
    hooks = RunHooks(middleware=(page,))  # the run's own middleware, for this turn only
    try:
        with watching(TokenWatcher(turn)) if tokens else contextlib.nullcontext():
            response = session.run(
                swarm,
                agent,
                request.message,
                turn_id=run,
                approvals=request.approvals or None,
                hooks=hooks,
            )
    except TurnStopped:  # raised into the run: it stopped there, and nothing of it is saved
        turn.end({})
        emit({"type": "MESSAGES_SNAPSHOT", "messages": agui_message_dicts(session.messages)})
        emit(
            {"type": "RUN_FINISHED", "threadId": thread, "runId": run,
             "outcome": {"type": "cancelled"}}
        )  # fmt: skip
        return
    final = {
        "context_variables": dict(response.context_variables or {}),
        "active_agent": getattr(response.agent, "name", None) or turn.state.get("active_agent"),
    }
    ran = getattr(response, "_langchain_messages", None)
    page.ended(ran or [])
    turn.end(final)
    stored = _stored_after(session, shown, None if ran is None else [*new, *ran])
    sent = {m.id for m in session.last_sent if m.id}
    mine = {m.id for m in stored[len(shown) :] if m.id}
    kept = {s.id for s in stored}
    added = [m for m in session.last_sent if m.id is None or m.id not in kept]
    emit(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                *agui_message_dicts(added, stored=False, in_prompt={m.id for m in added if m.id}),
                *agui_message_dicts(stored, in_prompt=sent, this_turn=mine),
            ],
        }
    )
    waiting = interrupts_of(session, getattr(response, "pending", None))
    outcome: dict[str, Any] = {"type": "success"}
    if waiting:
        outcome = {"type": "interrupt", "interrupts": _dump(waiting)}
    emit({"type": "RUN_FINISHED", "threadId": thread, "runId": run, "outcome": outcome})


def _stored_after(
    session: Session, shown: list[BaseMessage], saved: list[BaseMessage] | None = None
) -> list[BaseMessage]:
    """The conversation as stored now: ``shown`` (read when the turn started) and what was
    stored after it. ``saved``: the messages this turn's save wrote (the caller's and the
    run's, the very objects the Session encoded): when the stored count says nothing else was
    written since ``shown`` was read, they are what follows it, and no message is read or
    decoded again (one count of the stored messages); else what follows ``shown`` is read from
    its position on. A conversation cleared meanwhile is read whole."""
    cid = session.conversation_id
    if saved is not None:
        if "messages" not in session.persist:
            saved = []
        # The count alone (no record decoded): what tells whether anything else was stored.
        if session.store.count(cid) == len(shown) + len(saved):
            return [*shown, *saved]
    later = session.store.load(cid, window=Window(start=len(shown)))
    return [*shown[: later.start or 0], *later.messages]


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
