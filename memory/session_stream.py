"""Streaming a ``Session`` turn: :meth:`StreamedTurns.stream` and :meth:`StreamedTurns.astream`.

A streamed turn is the same turn as ``Session.run`` (``Session._turn``, the load, the approval
and turn-id checks, the effect ledger, the one atomic save with its conflict handling), driven
by a driver that runs the model step with ``stream=True`` and hands each of Swarm's events to
the caller as it comes: ``{"delim": "start"}``, the deltas of each reply, ``{"delim": "end"}``
(and ``{"tool_result": ...}`` with ``tool_results=True``), exactly as ``Swarm.run(stream=True)``
yields them. The run's own last event, ``{"response": Response}``, is held back until the turn
is saved, then yielded: **seeing** ``{"response": ...}`` **means the turn is stored.**

A consumer that stops before that event (``break``, an exception in its loop body,
``KeyboardInterrupt``, ``close()``) stops the run there, and the turn is not saved: no message
of it, no context change, the active agent as it was, as for a ``Session.run`` that raised. An
``@effect`` tool that already ran is in the turn's effect ledger, as after a crash: a retry with
the same ``turn_id`` resumes the turn without running it again (docs/storage.md,
"Durability"). A run a :class:`~swarmgraph.graph.core.errors.SwarmError` stops (a budget) is saved
as far as it got, as ``run`` saves it, and the error is raised from the iterator. The run
stops when the iterator is closed: at once with ``close()`` (``contextlib.closing``,
``contextlib.aclosing``), else when it is garbage-collected; it never saves after that.

``Session`` takes its two methods (and the text ``run(stream=True)`` is refused with) from
here; ``Session.run`` calls no function of this module.

Example:
    >>> import os, tempfile
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> from swarmgraph.memory import Session
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "stream.db")
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello there!"]))
    >>> session = Session("conv-1", url=url)
    >>> for event in session.stream(swarm, Agent(), "hi"):
    ...     if event.get("content"):
    ...         print(repr(event["content"]), "stored:", len(Session("conv-1", url=url).messages))
    ...     elif "response" in event:
    ...         print("response stored:", len(Session("conv-1", url=url).messages))
    'Hello ' stored: 0
    'there!' stored: 0
    response stored: 2
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from contextlib import closing
from typing import TYPE_CHECKING, Any

from .turn_driver import Step

if TYPE_CHECKING:
    from ..graph.core.types import Agent, Response
    from ..graph.swarm import Swarm
    from .turn_write import MessageInput

__all__ = ["NOT_STREAMED", "StreamedTurns", "astream_steps", "stream_steps"]

#: What ``Session.run(..., stream=True)`` is told: it returns one Response, never an iterator.
NOT_STREAMED = (
    "Session.run does not stream (it returns the saved turn's Response): iterate "
    "session.stream(swarm, agent, message, ...) instead (async: session.astream), same arguments"
)
_NO_RESPONSE = "the run's stream ended without its {'response': ...} event"

#: A turn written once (``Session._turn``): steps that wait yielded, the Response returned.
Turn = Generator[Step, Any, "Response"]


class StreamedTurns:
    """``Session.stream`` / ``Session.astream``: one turn, with Swarm's stream events as they
    happen (see the module docstring for what is saved, and when)."""

    #: ``Session._turn``: the turn written once for ``run``, ``arun`` and these two.
    _turn: Callable[..., Turn]

    def stream(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> Iterator[dict[str, Any]]:
        """``Session.run``'s turn (same arguments, same rules), as an iterator of Swarm's stream
        events; the last, ``{"response": Response}``, comes once the turn is saved. Stopping
        early saves nothing of the turn (module docstring). Nothing runs until the first
        ``next()``. A turn id already stored yields only its stored ``{"response": ...}``.

        Example:
            >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
            >>> from swarmgraph.memory import Session
            >>> session = Session("doc-stream", url="memory://doc-stream")
            >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi!"]))
            >>> [next(iter(e)) for e in session.stream(swarm, Agent(), "hey")]
            ['delim', 'content', 'content', 'content', 'delim', 'response']
            >>> [m.content for m in session.messages]
            ['hey', 'Hi!']
        """
        _refuse_stream_flag(run_kwargs)
        turn = self._turn(swarm, agent, message, context_variables, turn_id, approvals, run_kwargs)
        return stream_steps(turn, swarm)

    def astream(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """:meth:`stream` for async code (``async for event in session.astream(...)``): the
        model through ``swarm.arun(stream=True)``, storage in a thread, as ``Session.arun``."""
        _refuse_stream_flag(run_kwargs)
        turn = self._turn(swarm, agent, message, context_variables, turn_id, approvals, run_kwargs)
        return astream_steps(turn, swarm)


def _refuse_stream_flag(run_kwargs: dict[str, Any]) -> None:
    if "stream" in run_kwargs:
        raise TypeError("Session.stream and Session.astream always stream: drop stream=")


def _is_model_step(step: Step, swarm: Any) -> bool:
    """The turn's one model step is ``Step(swarm.run, ..., swarm.arun)``; the others are
    storage, the memory policy's fold, long-term memory's extraction."""
    return bool(step.call == getattr(swarm, "run", None))


def stream_steps(turn: Turn, swarm: Any) -> Iterator[dict[str, Any]]:
    """Drive a turn in this thread as :func:`~.turn_driver.run_steps` does, except its model step:
    that one runs with ``stream=True`` and its events are yielded as they come; the Response
    its stream ends with goes back into the turn, and is yielded once the turn returns (saved).

    Example:
        >>> def turn():
        ...     response = yield Step(str.upper, ("saved",))
        ...     return response
        >>> list(stream_steps(turn(), swarm=None))
        [{'response': 'SAVED'}]
    """
    try:
        step = next(turn)
        while True:
            try:
                if _is_model_step(step, swarm):
                    events = step.call(*step.args, **{**step.kwargs, "stream": True})
                    done = yield from _relayed(events)
                else:
                    done = step.call(*step.args, **step.kwargs)
            except GeneratorExit:  # the consumer stopped: the turn stops where it is, unsaved
                turn.close()
                raise
            except BaseException as error:  # the turn sees it where it yielded the step
                step = turn.throw(error)
            else:
                step = turn.send(done)
    except StopIteration as finished:
        yield {"response": finished.value}


def _relayed(events: Iterator[dict[str, Any]]) -> Generator[dict[str, Any], None, Any]:
    """Every event of a run's stream but its last, ``{"response": ...}``, whose Response it
    returns. Closed when the consumer stops, so the run's own stream stops there too."""
    with closing(events):  # type: ignore[type-var]  # Swarm's stream is a generator
        for event in events:
            if "response" in event:
                return event["response"]
            yield event
    raise RuntimeError(_NO_RESPONSE)


async def astream_steps(turn: Turn, swarm: Any) -> AsyncIterator[dict[str, Any]]:
    """:func:`stream_steps` from async code: the model's stream awaited, storage in a thread
    (as :func:`~.turn_driver.arun_steps`).

    Example:
        >>> import asyncio
        >>> def turn():
        ...     response = yield Step(str.upper, ("saved",))
        ...     return response
        >>> async def events():
        ...     return [event async for event in astream_steps(turn(), swarm=None)]
        >>> asyncio.run(events())
        [{'response': 'SAVED'}]
    """
    try:
        step = next(turn)
        while True:
            try:
                if _is_model_step(step, swarm):
                    if step.aio is None:
                        raise TypeError(f"{type(swarm).__name__} has no arun: use Session.stream")
                    done = None
                    events = await step.aio(*step.args, **{**step.kwargs, "stream": True})
                    try:
                        async for event in events:
                            if "response" in event:
                                done = event["response"]
                                break
                            yield event
                    finally:  # the consumer stopped (or the run failed): its stream stops too
                        await events.aclose()
                    if done is None:
                        raise RuntimeError(_NO_RESPONSE)
                elif step.aio is not None:
                    done = await step.aio(*step.args, **step.kwargs)
                else:
                    done = await asyncio.to_thread(step.call, *step.args, **step.kwargs)
            except GeneratorExit:
                turn.close()
                raise
            except BaseException as error:
                step = turn.throw(error)
            else:
                step = turn.send(done)
    except StopIteration as finished:
        yield {"response": finished.value}
