"""The graph :func:`~swarmgraph.graph.build_swarm_graph` returns: a LangGraph ``StateGraph``
whose compiled graph is traced (graph/features/tracing.py) on each invoke of its own.

``Swarm.run`` starts and ends its run itself (graph/prepared_run.py); a compiled graph that a
LangGraph user invokes (``build_swarm_graph(...).compile().invoke(...)``, a LangGraph server's
run of a graph in langgraph.json) has no such run around it. This subclass gives it one: each
``invoke`` / ``stream`` (and their async forms, which LangGraph routes through ``stream`` and
``astream``) is one traced run, one trace, whenever a tracer provider is configured; otherwise
it is the compiled graph as LangGraph made it, plus one check per invoke. A directly invoked
graph has no run control of its own (each node step makes a fresh one), so the tracing
middleware reaches its nodes through the config: ``SETUP_KEY``, a function that
``run_control.current_control`` hands each fresh control (``TracedRun.install``). Approvals,
which such a graph asks through LangGraph's ``interrupt()``, are read from the thread (its
checkpointer) as the invoke stops (asked) and as a ``Command(resume=...)`` invoke starts
(answered), and told the traced run as ``Swarm.run``'s are; the graph's own
``prompt_context`` (in its ``hooks``) is traced as a run's is.

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

from .core.run_control import NO_HOOKS, RUN_CONTROL_KEY, SETUP_KEY, RunHooks
from .prepared_run import provider_maybe_set

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from .core.types import Agent
    from .features.tracing import TracedRun

__all__ = ["ObservedCompiledGraph", "ObservedStateGraph"]

_UNNAMED = "LangGraph"  # what LangGraph names a graph compiled without a name
#: Tracing's module: loaded, a provider may have been given to swarmgraph.
_TRACING = f"{__package__}.features.tracing"


class ObservedStateGraph(StateGraph):
    """A ``StateGraph`` whose ``compile()`` gives an :class:`ObservedCompiledGraph`; its
    ``default_agent`` and ``agents`` (by node name) name the runs (``build_swarm_graph``
    sets them)."""

    default_agent: Agent | None = None
    agents: dict[str, Agent] | None = None
    #: The graph's own hooks (``build_swarm_graph(prompt_context=, tool_inputs=)``): a traced
    #: invoke traces its recall (a ``search_memory`` span per recall).
    hooks: RunHooks = NO_HOOKS

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        compiled = super().compile(*args, **kwargs)
        # LangGraph's own copy (Pregel.copy), as the subclass: same fields, same graph.
        fields = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
        return ObservedCompiledGraph(**fields)


class ObservedCompiledGraph(CompiledStateGraph):
    """A compiled swarm graph whose every invoke of its own is one traced run."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        traced = _traced_run(self, config, input)
        if traced is None:
            yield from super().stream(input, config, **kwargs)
            return
        error: BaseException | None = None
        try:
            yield from super().stream(input, _with(config, traced), **kwargs)
            if _checkpointed(self):  # it may have stopped for a decision: interrupt()
                _asked(traced, self.get_state(config or {}).interrupts)
        except BaseException as exc:
            error = exc
            raise
        finally:  # also when the caller stops reading the stream early
            traced.ended(None, error)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        traced = _traced_run(self, config, input, await _aanswered(self, config, input))
        if traced is None:
            async for chunk in super().astream(input, config, **kwargs):
                yield chunk
            return
        error: BaseException | None = None
        try:
            async for chunk in super().astream(input, _with(config, traced), **kwargs):
                yield chunk
            if _checkpointed(self):
                _asked(traced, (await self.aget_state(config or {})).interrupts)
        except BaseException as exc:
            error = exc
            raise
        finally:
            traced.ended(None, error)


def _traced_run(
    graph: ObservedCompiledGraph,
    config: RunnableConfig | None,
    input: Any = None,
    interrupts: Sequence[Interrupt] | None = None,
) -> TracedRun | None:
    """The traced run of one invoke of ``graph``: ``None`` when tracing is off, or the
    invoke is inside a run traced already (``Swarm.run``'s, or an outer invoke's).
    ``interrupts``: what the thread waits on (read here when not given, only if traced):
    a ``Command(resume=)`` input answers them, and the trace shows its decisions as
    ``Swarm.run(approvals=)``'s."""
    configurable = (config or {}).get("configurable") or {}
    if not _observable(configurable, _traced()):
        return None
    from .core.run_control import RunControl
    from .features.tracing import trace_run, tracing_on

    if not tracing_on():  # the module is loaded, but no provider is set now
        return None
    builder = graph.builder
    agents = dict(getattr(builder, "agents", None) or {})
    first = getattr(builder, "default_agent", None)
    if first is None:  # not from build_swarm_graph: no agents to name
        return None
    thread = configurable.get("thread_id")
    # The run's own control is a stand-in (each node step makes its own): it names the
    # graph's agents for the trace.
    conversation = None if thread is None else str(thread)
    named = graph.name if graph.name != _UNNAMED else None
    control = RunControl(agents=agents, hooks=getattr(builder, "hooks", NO_HOOKS))
    if _resumes(input) and _checkpointed(graph):
        if interrupts is None:
            interrupts = graph.get_state(config or {}).interrupts
        decisions = _decisions(input.resume, interrupts)
        if decisions:  # what Swarm.run's trace reads of approvals= (its decisions)
            from .features.approvals import ApprovalsRun

            control.own(ApprovalsRun).given = decisions
    return trace_run(control, first, conversation, invoked=True, workflow=named)


def _traced() -> bool:
    """Whether a tracer provider is configured (none before its API is imported), or one
    was given to swarmgraph (the tracing module is loaded); the same test as
    ``PreparedRun.prepare``'s, which is written inline to keep the plain path short."""
    otel = sys.modules.get("opentelemetry.trace")
    if _TRACING in sys.modules:
        return True
    return otel is not None and provider_maybe_set(otel)


def _observable(configurable: Any, traced: bool) -> bool:
    """Whether an invoke with these ``configurable`` settings may be traced: not inside
    a run traced already, and tracing maybe on."""
    if RUN_CONTROL_KEY in configurable or SETUP_KEY in configurable:
        return False
    return traced


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


def _asked(traced: TracedRun, interrupts: Sequence[Interrupt]) -> None:
    """The invoke stopped at ``interrupts``: each approval's calls, asked (as ``Swarm.run``'s
    ``ApprovalsRun.wait`` tells its traced run)."""
    from .features.approvals import payload_pending

    calls = [pending for each in interrupts for pending in payload_pending(each.value)]
    if calls:
        traced.asked(calls)


def _with(config: RunnableConfig | None, traced: TracedRun) -> RunnableConfig:
    """``config`` with what sets up each step's control for the traced run."""
    given: dict[str, Any] = dict(config or {})
    given["configurable"] = {**(given.get("configurable") or {}), SETUP_KEY: traced.install}
    return given  # type: ignore[return-value]
