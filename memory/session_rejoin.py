"""Turns you can rejoin: :meth:`RejoinableTurns.start` and :meth:`RejoinableTurns.rejoin`.

``Session.start`` runs a turn in a thread of its own (it is ``Session.stream``'s turn: loaded,
checked and saved as ``Session.run`` saves it) and keeps its events, numbered from 1, in the
conversation's store (:mod:`.turn_events`): Swarm's stream events as ``Session.stream`` yields
them (``{"delim": "start"}``, deltas, ``{"tool_result": ...}``), and last one of
``{"saved": {...}}`` (the turn is stored: its agent and context), ``{"error": {...}}`` (the
run raised; nothing of it is stored) or ``{"stopped": true}`` (:meth:`RunningTurn.stop`).
Nobody needs to read them for the turn to go on.

``Session.rejoin(turn_id, after=n)``, from any ``Session`` on the same store (another object,
another process), yields ``(number, event)`` for every event after ``n``, then the live ones
until the turn is over: a reader that lost its place rejoins at the last number it has, and
gets nothing twice and nothing skipped. Closing a reader stops nothing. The log is bounded
(``events_limit``) and kept until the conversation's next kept turn starts; a crash costs
what :mod:`.turn_events` says.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> from swarmgraph.memory import Session
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello there!"]))
    >>> turn = Session("doc-rejoin", url="memory://doc-rejoin").start(
    ...     swarm, Agent(), "hi", turn_id="t1")
    >>> later = Session("doc-rejoin", url="memory://doc-rejoin")   # another object, same store
    >>> events = list(later.rejoin("t1"))
    >>> [number for number, _ in events] == list(range(1, len(events) + 1))
    True
    >>> "".join(event.get("content") or "" for _, event in events), events[-1][1]["saved"]["agent"]
    ('Hello there!', 'Agent')
    >>> turn.result().messages[-1]["content"], [m.content for m in later.messages]
    ('Hello there!', ['hi', 'Hello there!'])
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from contextlib import closing
from typing import TYPE_CHECKING, Any, cast

from .ids import check_turn_id
from .turn_events import LIMIT, TurnEventWriter, follow_turn_events

if TYPE_CHECKING:
    from ..graph.core.types import Agent, Response
    from ..graph.swarm import Swarm
    from .turn_write import MessageInput

__all__ = ["RejoinableTurns", "RunningTurn"]


class RunningTurn:
    """A turn :meth:`RejoinableTurns.start` runs in its own thread."""

    def __init__(self, url: str, conversation_id: str, turn_id: str) -> None:
        self.url, self.conversation_id, self.turn_id = url, conversation_id, turn_id
        self._stop = threading.Event()
        self._done = threading.Event()
        self._response: Response | None = None
        self._error: BaseException | None = None

    @property
    def done(self) -> bool:
        """Whether the turn is over (saved, failed or stopped) and its events all kept."""
        return self._done.is_set()

    def stop(self) -> None:
        """Stop the run at its next event; nothing of the turn is saved (an ``@effect`` that
        already ran is in its ledger: a retry with this turn id does not run it again)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the turn's end (at most ``timeout`` seconds); whether it ended."""
        return self._done.wait(timeout)

    def result(self, timeout: float | None = None) -> Response:
        """The saved turn's ``Response``, once over; the run's error if it raised."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"turn {self.turn_id} is still running")
        if self._error is not None:
            raise self._error
        if self._response is None:
            raise RuntimeError(f"turn {self.turn_id} was stopped; nothing of it was saved")
        return self._response

    def events(self, after: int = 0, **options: Any) -> Iterator[tuple[int, Any]]:
        """This turn's events after ``after``, then live (:meth:`RejoinableTurns.rejoin`)."""
        return follow_turn_events(self.url, self.conversation_id, self.turn_id, after, **options)


class RejoinableTurns:
    """``Session.start`` and ``Session.rejoin`` (see the module docstring)."""

    url: str
    conversation_id: str
    stream: Any  # Session.stream

    def start(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        events_limit: int = LIMIT,
        **run_kwargs: Any,
    ) -> RunningTurn:
        """Run ``Session.stream``'s turn (same arguments, same rules) in a thread of its own,
        its events kept in the store for :meth:`rejoin`; returns at once, the turn's log
        already open (a rejoin may start now). ``events_limit``: events the log keeps."""
        turn_id = check_turn_id(turn_id)
        writer = TurnEventWriter(self.url, self.conversation_id, turn_id, limit=events_limit)
        running = RunningTurn(self.url, self.conversation_id, turn_id)
        kwargs = {"turn_id": turn_id, "approvals": approvals, "tool_results": True, **run_kwargs}
        thread = threading.Thread(
            target=self._drive,
            args=(running, writer, (swarm, agent, message, context_variables), kwargs),
            name=f"swarmgraph-turn-{turn_id}",
            daemon=True,
        )
        thread.start()
        return running

    def _drive(
        self,
        running: RunningTurn,
        writer: TurnEventWriter,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        try:
            events = cast("Generator[dict[str, Any], None, None]", self.stream(*args, **kwargs))
            with closing(events):  # closing the stream stops the run, unsaved
                for event in events:
                    if "response" in event:
                        running._response = response = event["response"]
                        agent = getattr(response.agent, "name", None)
                        context = dict(response.context_variables or {})
                        writer.append({"saved": {"agent": agent, "context_variables": context}})
                        break
                    if running._stop.is_set():
                        writer.append({"stopped": True})
                        break
                    writer.append(event)
        except BaseException as error:
            running._error = error
            writer.append({"error": {"type": type(error).__name__, "message": str(error)}})
        finally:
            try:
                writer.finish()
            finally:
                running._done.set()

    def rejoin(
        self,
        turn_id: str,
        after: int = 0,
        *,
        poll: float = 0.25,
        stale_after: float | None = 30.0,
    ) -> Iterator[tuple[int, Any]]:
        """``(number, event)`` of turn ``turn_id``'s events after ``after`` (0: from the first),
        then the live ones until the turn is over, from this conversation's store: another
        ``Session`` object or process may be running it. Raises
        :class:`~.turn_events.NoTurnEvents` for a turn whose events are not kept,
        :class:`~.turn_events.EventsDropped` when ``after`` is older than its log keeps, and
        :class:`~.turn_events.TurnEventsAbandoned` when its writer has not been heard from for
        ``stale_after`` seconds (its process is gone). ``poll``: seconds between reads when
        the writer is in another process (one in this process wakes the reader at once)."""
        return follow_turn_events(
            self.url, self.conversation_id, turn_id, after, poll=poll, stale_after=stale_after
        )
