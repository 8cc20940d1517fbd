"""The graph :func:`~swarmgraph.graph.build_swarm_graph` returns: a LangGraph ``StateGraph``
whose compiled graph is observed (graph/core/hooks.py: traced) on each invoke of its own.

``Swarm.run`` starts and ends its run itself (graph/prepared_run.py); a compiled graph that a
LangGraph user invokes (``build_swarm_graph(...).compile().invoke(...)``, a LangGraph server's
run of a graph in langgraph.json) has no such run around it. This subclass gives it one: each
``invoke`` / ``stream`` (and their async forms, which LangGraph routes through ``stream`` and
``astream``) is one observed run, one trace, whenever an observer is registered or a tracer
provider is configured; otherwise it is the compiled graph as LangGraph made it, plus one
check per invoke. Its nodes pick the run's observers up from the config (``OBSERVERS_KEY``,
read by ``run_control.current_control``), since a directly invoked graph has no run control
of its own: each node step makes a fresh one. Approvals, which such a graph asks through
LangGraph's ``interrupt()``, are read from the thread (its checkpointer) as the invoke stops
(asked) and as a ``Command(resume=...)`` invoke starts (answered), and told the observers as
``Swarm.run``'s are; the graph's own ``prompt_context`` (in its ``hooks``) goes to them as a
run's does.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
    >>> app = build_swarm_graph([Agent()], chat_model=ScriptedChatModel(["Hi."])).compile()
    >>> type(app).__name__, app.invoke({"messages": [("user", "hi")]})["messages"][-1].content
    ('ObservedCompiledGraph', 'Hi.')
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

from .core.run_control import NO_HOOKS, OBSERVERS_KEY, RUN_CONTROL_KEY, RunHooks

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from .core.hooks import Observers
    from .core.types import Agent

__all__ = ["ObservedCompiledGraph", "ObservedStateGraph"]

_UNNAMED = "LangGraph"  # what LangGraph names a graph compiled without a name


class ObservedStateGraph(StateGraph):
    """A ``StateGraph`` whose ``compile()`` gives an :class:`ObservedCompiledGraph`; its
    ``default_agent`` and ``agents`` (by node name) name the runs (``build_swarm_graph``
    sets them)."""

    default_agent: Agent | None = None
    agents: dict[str, Agent] | None = None
    #: The graph's own hooks (``build_swarm_graph(prompt_context=, tool_inputs=)``): an observed
    #: invoke hands its recall to its observers (tracing: a ``search_memory`` span per recall).
    hooks: RunHooks = NO_HOOKS

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        compiled = super().compile(*args, **kwargs)
        # LangGraph's own copy (Pregel.copy), as the subclass: same fields, same graph.
        fields = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
        return ObservedCompiledGraph(**fields)


class ObservedCompiledGraph(CompiledStateGraph):
    """A compiled swarm graph whose every invoke of its own is one observed run."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        observers = _observers(self, config, input)
        if observers is None:
            yield from super().stream(input, config, **kwargs)
            return
        error: BaseException | None = None
        try:
            yield from super().stream(input, _with(config, observers), **kwargs)
            if _checkpointed(self):  # it may have stopped for a decision: interrupt()
                _asked(observers, self.get_state(config or {}).interrupts)
        except BaseException as exc:
            error = exc
            raise
        finally:  # also when the caller stops reading the stream early
            observers.ended(None, error)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        observers = _observers(self, config, input, await _aanswered(self, config, input))
        if observers is None:
            async for chunk in super().astream(input, config, **kwargs):
                yield chunk
            return
        error: BaseException | None = None
        try:
            async for chunk in super().astream(input, _with(config, observers), **kwargs):
                yield chunk
            if _checkpointed(self):
                _asked(observers, (await self.aget_state(config or {})).interrupts)
        except BaseException as exc:
            error = exc
            raise
        finally:
            observers.ended(None, error)


def _observers(
    graph: ObservedCompiledGraph,
    config: RunnableConfig | None,
    input: Any = None,
    interrupts: Sequence[Interrupt] | None = None,
) -> Observers | None:
    """The observers of one invoke of ``graph``: ``None`` when nothing observes runs, or the
    invoke is inside a run already observed (``Swarm.run``'s, or an outer invoke's).
    ``interrupts``: what the thread waits on (read here when not given, only if observed):
    a ``Command(resume=)`` input answers them, and the run's observers hear its decisions
    as ``Swarm.run(approvals=)``'s."""
    configurable = (config or {}).get("configurable") or {}
    traced = _traced()
    if not _observable(configurable, traced):
        return None
    if traced:
        from .features import tracing  # noqa: F401 (imported, it registers its observer)
    from .core.hooks import RunInfo, observers_for
    from .core.run_control import RunControl

    builder = graph.builder
    agents = dict(getattr(builder, "agents", None) or {})
    first = getattr(builder, "default_agent", None)
    if first is None:  # not from build_swarm_graph: no agents to name
        return None
    thread = configurable.get("thread_id")
    # The run's own control is a stand-in (each node step makes its own): it names the
    # graph's agents for the observers.
    conversation = None if thread is None else str(thread)
    named = graph.name if graph.name != _UNNAMED else None
    control = RunControl(agents=agents, hooks=getattr(builder, "hooks", NO_HOOKS))
    if _resumes(input) and _checkpointed(graph):
        if interrupts is None:
            interrupts = graph.get_state(config or {}).interrupts
        decisions = _decisions(input.resume, interrupts)
        if decisions:  # what Swarm.run's observers read of approvals= (its decisions)
            from .features.approvals import ApprovalsRun

            control.own(ApprovalsRun).given = decisions
    info = RunInfo(first, conversation, control, invoked=True, workflow=named)
    return observers_for(info)


def _traced() -> bool:
    """Whether a tracer provider is configured (none before its API is imported); the same
    test as ``PreparedRun.prepare``'s, which is written inline to keep the plain path short."""
    otel = sys.modules.get("opentelemetry.trace")
    return otel is not None and not isinstance(
        otel.get_tracer_provider(), (otel.ProxyTracerProvider, otel.NoOpTracerProvider)
    )


def _observable(configurable: Any, traced: bool) -> bool:
    """Whether an invoke with these ``configurable`` settings may have observers: not inside
    a run observed already, and tracing on or the observer interface loaded."""
    if RUN_CONTROL_KEY in configurable or OBSERVERS_KEY in configurable:
        return False
    return traced or f"{__package__}.core.hooks" in sys.modules


def _checkpointed(graph: ObservedCompiledGraph) -> bool:
    """Whether ``graph`` keeps threads (without a checkpointer nothing can be resumed)."""
    return graph.checkpointer not in (None, False)


def _resumes(input: Any) -> bool:
    return isinstance(input, Command) and input.resume is not None


async def _aanswered(
    graph: ObservedCompiledGraph, config: RunnableConfig | None, input: Any
) -> Sequence[Interrupt] | None:
    """The interrupts a resuming async invoke answers (read without blocking the loop);
    ``None``: it resumes nothing, or nothing observes it."""
    if not _resumes(input) or not _checkpointed(graph):
        return None
    if not _observable((config or {}).get("configurable") or {}, _traced()):
        return None  # nothing observes it: no read
    return (await graph.aget_state(config or {})).interrupts


def _decisions(resume: Any, interrupts: Sequence[Interrupt]) -> dict[str, Any]:
    """``{call id: decision}`` of ``Command(resume=resume)`` over the waiting ``interrupts``:
    one value for the one waiting, or a value per interrupt id (LangGraph's form for several).
    A value the graph will refuse gives none here (the graph raises its own error)."""
    from .features.approvals import payload_pending, resume_decisions

    by_id = resume if isinstance(resume, dict) else None
    decisions: dict[str, Any] = {}
    for each in interrupts:
        if by_id is not None and each.id in by_id:
            value = by_id[each.id]
        elif len(interrupts) == 1:
            value = resume
        else:
            continue
        pending = payload_pending(each.value)
        if not pending:
            continue
        try:
            decisions.update(resume_decisions(value, pending))
        except (TypeError, ValueError):
            continue
    return decisions


def _asked(observers: Observers, interrupts: Sequence[Interrupt]) -> None:
    """The invoke stopped at ``interrupts``: each approval's calls, asked (as ``Swarm.run``'s
    ``ApprovalsRun.wait`` tells its observers)."""
    from .features.approvals import payload_pending

    calls = [pending for each in interrupts for pending in payload_pending(each.value)]
    if calls:
        for observer in observers.each:
            observer.on_asked(calls)


def _with(config: RunnableConfig | None, observers: Observers) -> RunnableConfig:
    """``config`` with the observers for the nodes to find."""
    given: dict[str, Any] = dict(config or {})
    given["configurable"] = {**(given.get("configurable") or {}), OBSERVERS_KEY: observers}
    return given  # type: ignore[return-value]
