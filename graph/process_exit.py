"""A quick interpreter exit for processes that loaded the LangChain stack.

When Python exits it tears its modules down and runs the cyclic garbage collector over
everything still alive, several times. LangChain, LangGraph, pydantic and the openai client
leave about 175,000 objects behind, so a script that asked one question spent ~0.35 s
exiting: longer than its whole first answer from a loopback model, and 2.5x the exit of
openai/swarm's (benchmarks/startup.py measures both).

The hook registered here runs at exit (after every ``atexit`` hook the program registered
later, before those registered earlier). It first collects once, so everything that is
garbage at that moment is finalised as usual: files in reference cycles are flushed,
``__del__`` methods and ``weakref.finalize`` callbacks run. Then it freezes the survivors
(:func:`gc.freeze`), so the teardown collections skip them. The one difference left: an
object still reachable at exit that sits in a reference cycle is reclaimed by the operating
system instead of by the collector, so its ``__del__`` does not run. CPython does not
promise that anyway ("It is not guaranteed that __del__() methods are called for objects
that still exist when the interpreter exits"); set ``SWARMGRAPH_FREEZE_AT_EXIT=0`` to keep
Python's full teardown.

The ``swarmgraph`` command does the same freeze in ``main`` (its objects are its own).

Example:
    >>> register()  # the package registered it on import; once is enough
    >>> _REGISTERED
    [<function freeze_at_exit at 0x...>]
"""

from __future__ import annotations

import atexit
import gc
import os

__all__ = ["freeze_at_exit", "register"]

ENV = "SWARMGRAPH_FREEZE_AT_EXIT"
_REGISTERED: list = []


def freeze_at_exit() -> None:
    """Finalise today's garbage, then freeze the rest (see the module docstring); skipped
    when ``SWARMGRAPH_FREEZE_AT_EXIT`` is ``0``, ``false`` or ``no``.

    Example:
        >>> import gc, os
        >>> os.environ["SWARMGRAPH_FREEZE_AT_EXIT"] = "0"
        >>> before = gc.get_freeze_count()
        >>> freeze_at_exit()
        >>> gc.get_freeze_count() == before
        True
        >>> del os.environ["SWARMGRAPH_FREEZE_AT_EXIT"]
    """
    if os.environ.get(ENV, "").strip().lower() in {"0", "false", "no"}:
        return
    gc.collect()
    gc.freeze()


def register() -> None:
    """Register :func:`freeze_at_exit` with :mod:`atexit`, once per process."""
    if not _REGISTERED:
        atexit.register(freeze_at_exit)
        _REGISTERED.append(freeze_at_exit)
