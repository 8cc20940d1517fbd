"""Who performs a ``Session`` turn's steps: one body, written once, for ``run`` and ``arun``.

A ``Session`` turn (memory/session.py) is a generator that yields each :class:`Step` that
waits (a storage read or write, the model run) and gets its result back; :func:`run_steps`
performs the steps in this thread (``Session.run``), :func:`arun_steps` from async code
(``Session.arun``: the model awaited, storage in a thread). An error a step raises is thrown
back into the turn where it yielded that step, so the turn's own ``try`` sees it. (The
engine's agent step is one body the same way, a coroutine handed a driver:
graph/core/drivers.py, whose :func:`~swarmgraph.graph.core.drivers.drive` runs the sync one
here too.)

Example:
    >>> import asyncio
    >>> def turn():
    ...     loaded = yield Step(len, ("abc",))
    ...     return loaded * 2
    >>> run_steps(turn()), asyncio.run(arun_steps(turn()))
    (6, 6)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, NamedTuple, TypeVar

from ..graph.core.drivers import drive

__all__ = ["Step", "arun_steps", "run_steps"]

T = TypeVar("T")


class Step(NamedTuple):
    """One step of a turn that waits: ``call(*args, **kwargs)``, or for ``arun`` ``await
    aio(*args, **kwargs)`` when given (else the call, in a thread)."""

    call: Callable[..., Any]
    args: tuple[Any, ...] = ()
    aio: Callable[..., Awaitable[Any]] | None = None
    kwargs: Mapping[str, Any] = {}  # never mutated: spread into the call


def run_steps(turn: Generator[Step, Any, T]) -> T:
    """Drive a turn's steps in this thread."""
    return drive(_steps(turn, _in_place))


async def arun_steps(turn: Generator[Step, Any, T]) -> T:
    """Drive a turn's steps from async code: storage in a thread, the model awaited."""
    return await _steps(turn, _awaited)


async def _in_place(step: Step) -> Any:
    """``run_steps``' way: the step's call, here (it never suspends, so ``drive`` ends it)."""
    return step.call(*step.args, **step.kwargs)


async def _awaited(step: Step) -> Any:
    """``arun_steps``' way: the step's ``aio`` awaited, else its call in a worker thread."""
    if step.aio is not None:
        return await step.aio(*step.args, **step.kwargs)
    return await asyncio.to_thread(step.call, *step.args, **step.kwargs)


async def _steps(turn: Generator[Step, Any, T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    """The one loop of both: each step ``perform`` does, its result sent back into the turn
    (or its error thrown in where the turn yielded the step, so the turn's ``try`` sees it)."""
    try:
        step = next(turn)
        while True:
            try:
                done = await perform(step)
            except BaseException as error:
                step = turn.throw(error)
            else:
                step = turn.send(done)
    except StopIteration as finished:
        return finished.value
