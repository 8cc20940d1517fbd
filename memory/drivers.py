"""Drivers for a turn written once: ``Session._turn`` is a generator that yields each step
that waits (a storage read or write, the model run) and gets its result back; :func:`run_steps`
performs the steps in this thread (``Session.run``), :func:`arun_steps` from async code
(``Session.arun``: the model awaited, storage in a thread). An error a step raises is thrown
back into the turn where it yielded that step, so the turn's own ``try`` sees it.

Example:
    >>> def turn():
    ...     loaded = yield Step(len, ("abc",))
    ...     return loaded * 2
    >>> run_steps(turn())
    6
    >>> import asyncio
    >>> asyncio.run(arun_steps(turn()))
    6
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, NamedTuple, TypeVar

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
    try:
        step = next(turn)
        while True:
            try:
                done = step.call(*step.args, **step.kwargs)
            except BaseException as error:  # the turn sees it where it yielded the step
                step = turn.throw(error)
            else:
                step = turn.send(done)
    except StopIteration as finished:
        return finished.value


async def arun_steps(turn: Generator[Step, Any, T]) -> T:
    """Drive a turn's steps from async code: storage in a thread, the model awaited."""
    try:
        step = next(turn)
        while True:
            try:
                if step.aio is not None:
                    done = await step.aio(*step.args, **step.kwargs)
                else:
                    done = await asyncio.to_thread(step.call, *step.args, **step.kwargs)
            except BaseException as error:  # the turn sees it where it yielded the step
                step = turn.throw(error)
            else:
                step = turn.send(done)
    except StopIteration as finished:
        return finished.value
