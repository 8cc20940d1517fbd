"""Observers of a run: the one interface a feature that watches the run (tracing) attaches by.

A :class:`RunObserver` sees a ``Swarm.run`` (and so a ``Session`` turn, and each invoke of
a compiled graph from ``build_swarm_graph``: graph/observed_graph.py) at these points: the run
starting and ending, around each model call, around each tool call, around each parallel
branch, around a LangGraph member's turn, at each switch of the active agent, and as each
step, budget stop and call waiting for a decision is recorded. Each ``around_*`` hook but the
member's gets ``proceed``, a zero-argument coroutine function that does the call (the next
observer's hook, or the call itself), and returns what it returned: the LangChain 1.x
middleware shape (``wrap_model_call``, ``wrap_tool_call``), written as ``async def`` so the
one step body serves ``run`` and ``arun`` (graph/core/drivers.py: under the sync driver nothing
suspends). A member runs its own graph in the node, so its hook is a context manager.

A program attaches observers by registering a factory (:func:`register`): before every run
each factory is asked, with the run's :class:`RunInfo`, for an observer of that run (or
``None``). The tracing feature (graph/features/tracing.py) is one such factory: the core imports it,
which registers it, once an OpenTelemetry tracer provider is configured. A run that nobody
observes costs one check in ``PreparedRun.prepare`` (``RunControl.observers`` stays ``None``)
and one ``is None`` at each call site: this module is not even imported
(``tests/test_layout.py``).

Why not LangChain callbacks: they see the model call (and LangSmith already turns those into
spans), but not a tool call as Swarm runs it (our tool runner, not a LangChain tool), the
switch of agents, a branch, or the run's end with its budget stop and waiting approvals; and
a callback manager is set up on every call whether anyone listens or not.

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
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from .state import current_branch

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .drivers import Driver
    from .errors import BudgetExceeded
    from .types import Agent, Response

__all__ = [
    "BranchInfo",
    "ModelCallInfo",
    "Observers",
    "RunInfo",
    "RunObserver",
    "ToolCallInfo",
    "WaitingCall",
    "observers_for",
    "register",
]

Proceed = Callable[[], Awaitable[Any]]


class WaitingCall(Protocol):
    """A tool call a run stopped for, waiting for a decision, as an observer reads it
    (:meth:`RunObserver.on_asked`): a feature's value (graph/features/approvals.py's
    ``PendingApproval``). ``in_doubt``: it started once and may or may not have happened."""

    @property
    def id(self) -> str: ...

    @property
    def agent(self) -> str: ...

    @property
    def tool(self) -> str: ...

    @property
    def in_doubt(self) -> bool: ...


@dataclass
class RunInfo:
    """What an observer knows of its run: the agent it starts at, the Session's conversation
    (``None`` for a plain ``Swarm.run``), and the run's control (settings and counters:
    ``control.ledger`` holds usage and the trajectory, ``control.exceeded`` a budget stop,
    ``control.stop_error()`` a guardrail's, each feature's own state in ``control.features``)."""

    agent: Agent
    conversation_id: str | None
    #: The run's ``RunControl`` (typed loosely: graph/core/run_control.py names this module's
    #: :class:`Observers`, and two engine modules never import each other).
    control: Any
    #: A compiled graph invoked directly (graph/observed_graph.py): ``control`` is a
    #: stand-in naming the graph's agents (each step has its own), ``conversation_id`` the
    #: thread's id, and the run ends without a ``Response``.
    invoked: bool = False
    #: The workflow's name (``gen_ai.workflow.name``): a compiled graph's own name, if it
    #: was given one; ``None``: the run is named by its first agent.
    workflow: str | None = None


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


@dataclass
class BranchInfo:
    """One parallel branch of a fan-out: its path (``"Billing"``, nested ``"A/B"``) and the
    agent it starts at."""

    path: str
    agent: Agent


class RunObserver:
    """The hooks, each a no-op here: an observer overrides the ones it needs. Hooks run in the
    run's thread (a parallel branch's, for its calls) and must not raise: an observer that
    fails fails the run."""

    def run_started(self, run: RunInfo) -> None:
        """Before the first step."""

    def run_ended(
        self, run: RunInfo, response: Response | None, error: BaseException | None
    ) -> None:
        """After the last step: the run's ``Response`` (also when a budget or a guardrail
        stopped it: ``run.control`` says which), or the error that ended it."""

    async def around_model_call(self, proceed: Proceed, call: ModelCallInfo) -> Any:
        """Around one model call; returns the reply (``await proceed()``)."""
        return await proceed()

    async def around_tool_call(self, proceed: Proceed, call: ToolCallInfo) -> Any:
        """Around one tool function's call (its raw return value, or what it raised); a call
        answered without running (an unknown tool, bad arguments, a held approval, a replayed
        effect) has none."""
        return await proceed()

    async def around_branch(self, proceed: Proceed, branch: BranchInfo) -> Any:
        """Around one parallel branch of a fan-out, which runs its own agent steps."""
        return await proceed()

    def on_switch(self, agent: Agent, target: Agent, route: str | None) -> None:
        """The active agent switched from ``agent`` to ``target`` (``route``: the route's
        label when a route, not a tool, handed off)."""

    def around_member(self, agent: Agent, branch: str | None) -> AbstractContextManager[Any]:
        """Around one turn of a LangGraph member (graph/features/native.py: ``agent.graph`` runs its
        own loop, so its model and tool calls are its own, not seen by the hooks above), in
        the run's thread: a context manager, entered as the member's graph runs."""
        return nullcontext()

    def on_step(self, step: Mapping[str, Any]) -> None:
        """A step went on the run's trajectory (``Response.trajectory``'s entries: a model or
        tool call, a guardrail or precondition check, a handoff...), as it happened."""

    def on_budget_stop(self, stop: BudgetExceeded) -> None:
        """A budget limit stopped the run, as it did (``run.control.exceeded``)."""

    def on_asked(self, calls: Sequence[WaitingCall]) -> None:
        """The run (or the parallel branch it runs in) stopped for these calls' decisions, as
        it did: approval-marked calls and ``@effect`` calls in doubt (``in_doubt``)."""


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
    """The observers of ``run``, one from each registered factory that gives one (tracing's
    registers itself when graph/features/tracing.py is imported); ``None`` when nobody observes
    it."""
    with _lock:
        factories = list(_factories)
    found = [observer for factory in factories if (observer := factory(run)) is not None]
    if not found:
        return None
    observers = Observers(run, tuple(found))
    observers.watch(run.control)
    for each in observers.each:
        each.run_started(run)
    return observers


class Observers:
    """A run's observers, as the core calls them (``RunControl.observers``): each call site
    in the core is one ``if control.observers is not None``."""

    def __init__(self, run: RunInfo, each: tuple[RunObserver, ...]) -> None:
        self.run = run
        self.each = each

    def __bool__(self) -> bool:
        return bool(self.each)

    def watch(self, control: Any) -> None:
        """Tell the observers of ``control``'s steps and budget stop as each happens (calls
        waiting for a human are told by the approvals feature: :meth:`asked`). Each feature
        already records them there (its ``ledger.trajectory``, ``exceeded``), from a dozen
        places: watching those two keeps the features free of observer call sites, and a run
        nobody observes is never watched.
        (A compiled graph invoked directly makes a control per step: each is watched.)"""
        hooks = control.hooks
        if self.run.invoked and control is not self.run.control and hooks.prompt_context is None:
            recall = self.run.control.hooks.prompt_context  # the graph's recall, observed
            control.hooks = replace(hooks, prompt_context=recall)
        ledger = control.ledger
        if not isinstance(ledger.trajectory, _Trajectory):
            ledger.trajectory = _Trajectory(ledger.trajectory, self)
        if not isinstance(control, _Watched):
            # The same object as a subclass that adds no state, only the watching
            # __setattr__: whoever holds the control keeps holding it.
            control.__class__ = _watched(type(control))
        control.__dict__["_observed_by"] = self

    def member_turn(self, agent: Agent) -> ExitStack:
        """Every observer's ``around_member`` for ``agent``'s turn, as one context manager."""
        stack = ExitStack()
        branch = current_branch()
        for observer in self.each:
            stack.enter_context(observer.around_member(agent, branch))
        return stack

    def step(self, entry: Mapping[str, Any]) -> None:
        for observer in self.each:
            observer.on_step(entry)

    def ended(self, response: Response | None, error: BaseException | None = None) -> None:
        """The run ended (once: a failing run's ``__exit__`` and ``finish`` may both say so)."""
        each, self.each = self.each, ()
        for observer in each:
            observer.run_ended(self.run, response, error)

    async def _around(self, hook: str, info: Any, call: Proceed) -> Any:
        """``call`` inside every observer's ``hook``, the first observer outermost."""
        if len(self.each) == 1:  # the usual case (tracing alone): no chain of closures
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

    async def branch(self, path: str, agent: Agent, run: Proceed) -> Any:
        """A parallel branch's run, inside the observers' ``around_branch``."""
        return await self._around("around_branch", BranchInfo(path, agent), run)

    def asked(self, calls: Sequence[WaitingCall]) -> None:
        """The run (or a branch of it) stopped for ``calls``: every call it waits on now."""
        for observer in self.each:
            observer.on_asked(calls)

    def switched(self, agent: Agent, target: Agent, route: str | None) -> None:
        for observer in self.each:
            observer.on_switch(agent, target, route)


class _Trajectory(list[dict[str, Any]]):
    """A run's trajectory that tells its observers of each step appended (Books appends)."""

    def __init__(self, steps: Sequence[dict[str, Any]], observers: Observers) -> None:
        super().__init__(steps)
        self.observers = observers

    def append(self, entry: dict[str, Any]) -> None:
        super().append(entry)
        self.observers.step(entry)


class _Watched:
    """Marks a watched control's class (see :meth:`Observers.watch`)."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        observers: Observers | None = self.__dict__.get("_observed_by")
        if observers is None or value is None:
            return
        if name == "exceeded":
            for observer in observers.each:
                observer.on_budget_stop(value)


_watched_classes: dict[type, type] = {}


def _watched(base: type) -> type:
    """``base`` (``RunControl``) with :class:`_Watched`'s ``__setattr__``, made once."""
    with _lock:
        made = _watched_classes.get(base)
        if made is None:
            made = _watched_classes[base] = type(f"Watched{base.__name__}", (_Watched, base), {})
        return made


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
