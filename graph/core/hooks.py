"""Observers of a run's model and tool calls: what the web UI's step stream
(swarmgraph/app/ui/steps.py) attaches by; every feature of the engine attaches as LangChain 1.x
middleware instead (graph/core/middleware.py; tracing too: graph/features/tracing.py).

Why the UI is not a middleware (yet): it watches the runs of a ``Swarm`` it did not build (a
``Session`` turn of the caller's swarm), chosen by a context variable of the thread that drives
the turn; installing middleware into every run of any swarm would take a registry like this
one, under another name. A ``RunObserver`` sees each
``Swarm.run`` (and so each ``Session`` turn) around each model call and each tool function's
call. Each hook gets ``proceed``, a zero-argument coroutine function that does the call (the
next observer's hook, or the call itself), and returns what it returned: the LangChain 1.x
middleware shape (``wrap_model_call``, ``wrap_tool_call``), written as ``async def`` so the one
step body serves ``run`` and ``arun`` (graph/core/drivers.py: under the sync driver nothing
suspends).

A program attaches observers by registering a factory (:func:`register`): before every run
each factory is asked, with the run's :class:`RunInfo`, for an observer of that run (or
``None``). A run that nobody observes costs one check in ``PreparedRun.prepare``
(``RunControl.observers`` stays ``None``) and one ``is None`` at each call site: this module is
not even imported (``tests/test_layout.py``).

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> class Count(RunObserver):
    ...     calls = 0
    ...     async def around_model_call(self, proceed, call):
    ...         Count.calls += 1
    ...         return await proceed()
    >>> unregister = register(lambda run: Count())
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
    >>> _ = swarm.run(Agent(), [{"role": "user", "content": "hi"}])
    >>> unregister(); Count.calls
    1
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .state import current_branch

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .drivers import Driver
    from .types import Agent

__all__ = [
    "ModelCallInfo",
    "Observers",
    "RunInfo",
    "RunObserver",
    "ToolCallInfo",
    "observers_for",
    "register",
]

Proceed = Callable[[], Awaitable[Any]]


@dataclass
class RunInfo:
    """What an observer knows of its run: the agent it starts at, the Session's conversation
    (``None`` for a plain ``Swarm.run``), and the run's control (settings and counters)."""

    agent: Agent
    conversation_id: str | None
    #: The run's ``RunControl`` (typed loosely: graph/core/run_control.py names this module's
    #: :class:`Observers`, and two engine modules never import each other).
    control: Any


@dataclass
class ModelCallInfo:
    """One model call: which agent asks which model (``model``: ``model_override`` or
    ``agent.model``) with what ``prompt``; ``runnable`` is the chat model (its tools bound);
    ``branch`` the parallel branch it runs in (``None``: the main run)."""

    agent: Agent
    model: str
    prompt: Sequence[BaseMessage]
    runnable: Any
    branch: str | None


@dataclass
class ToolCallInfo:
    """One tool call as the model asked for it: ``arguments`` is the parsed dict (or the raw
    text when it was not JSON)."""

    agent: Agent
    name: str
    call_id: str
    arguments: Any
    branch: str | None


class RunObserver:
    """The hooks, each a no-op here: an observer overrides the ones it needs. Hooks run in the
    run's thread (a parallel branch's, for its calls); what one raises fails the call (a
    model call's: the run)."""

    async def around_model_call(self, proceed: Proceed, call: ModelCallInfo) -> Any:
        """Around one model call; returns the reply (``await proceed()``)."""
        return await proceed()

    async def around_tool_call(self, proceed: Proceed, call: ToolCallInfo) -> Any:
        """Around one tool function's call (its raw return value, or what it raised); a call
        answered without running (an unknown tool, bad arguments, a held approval, a replayed
        effect) has none."""
        return await proceed()


#: ``RunInfo -> RunObserver | None``, asked before every run.
ObserverFactory = Callable[[RunInfo], "RunObserver | None"]

_factories: list[ObserverFactory] = []
_lock = threading.Lock()


def register(factory: ObserverFactory) -> Callable[[], None]:
    """Ask ``factory`` for an observer of every run from now on; returns the function that
    stops asking it.

    Example:
        >>> stop = register(lambda run: None)
        >>> stop(); stop()  # a second call does nothing
    """
    with _lock:
        _factories.append(factory)

    def unregister() -> None:
        with _lock:
            if factory in _factories:
                _factories.remove(factory)

    return unregister


def observers_for(run: RunInfo) -> Observers | None:
    """The observers of ``run``, one from each registered factory that gives one; ``None``
    when nobody observes it."""
    with _lock:
        factories = list(_factories)
    found = [observer for factory in factories if (observer := factory(run)) is not None]
    if not found:
        return None
    return Observers(run, tuple(found))


class Observers:
    """A run's observers, as the core calls them (``RunControl.observers``): each call site
    in the core is one ``if control.observers is not None``."""

    def __init__(self, run: RunInfo, each: tuple[RunObserver, ...]) -> None:
        self.run = run
        self.each = each

    def __bool__(self) -> bool:
        return bool(self.each)

    async def _around(self, hook: str, info: Any, call: Proceed) -> Any:
        """``call`` inside every observer's ``hook``, the first observer outermost."""
        if len(self.each) == 1:  # the usual case: no chain of closures
            return await getattr(self.each[0], hook)(call, info)

        async def step(index: int) -> Any:
            if index == len(self.each):
                return await call()
            around = getattr(self.each[index], hook)
            return await around(lambda: step(index + 1), info)

        return await step(0)

    async def model_call(
        self,
        agent: Agent,
        model: str,
        call: Callable[[], Awaitable[Any]],
        runnable: Any,
        prompt: list[BaseMessage],
    ) -> Any:
        """``call()`` (``agent``'s call of ``model``: ``runnable`` with ``prompt``) inside the
        observers' ``around_model_call``."""
        info = ModelCallInfo(agent, model, prompt, runnable, current_branch())
        return await self._around("around_model_call", info, call)

    def tools_of(self, agent: Agent) -> ToolObserver:
        """What the tool runner calls each tool through, for ``agent``'s calls."""
        return ToolObserver(self, agent)


class ToolObserver:
    """One agent's tool calls through the observers (graph/core/tool_calls.py's ``observer=``)."""

    def __init__(self, observers: Observers, agent: Agent) -> None:
        self.observers = observers
        self.agent = agent

    async def call(
        self, io: Driver, call: Any, func: Callable[..., Any], kwargs: Mapping[str, Any]
    ) -> Any:
        """``func(**kwargs)`` through ``io`` for ``call`` (its ``id``, ``name``, ``args``)."""
        info = ToolCallInfo(self.agent, call.name, call.id, call.args, current_branch())
        return await self.observers._around(
            "around_tool_call", info, lambda: io.call_tool(func, kwargs)
        )
