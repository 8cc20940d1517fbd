"""One ``Swarm.run`` from its settings to its ``Response``, shared by ``run``, ``arun`` and
their streams (they differ only by ``await``, as httpx's clients do).

- :class:`RunRequest`: the run's settings, Swarm.run's arguments, checked once;
- :class:`PreparedRun`: the compiled graph, its input and config, the run's counters; it turns
  the final state into a :class:`Response` and, used as a context manager around the stream,
  gives a failing run's error the Response of what it produced.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> request = RunRequest(Agent(), [{"role": "user", "content": "hi"}], max_turns=3)
    >>> Swarm(chat_model=ScriptedChatModel(["Hello!"]))._start(request).control.max_turns
    3
"""

from __future__ import annotations

import copy
import math
import os
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypedDict, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Overwrite

from .core.errors import StepLimitError, SwarmError
from .core.loop import copy_context
from .core.marks import loaded
from .core.messages import to_langchain, to_openai
from .core.run_control import (
    NO_HOOKS,
    PromptContext,
    RunControl,
    RunHooks,
    ToolInputs,
)
from .core.runtime import GraphRuntime
from .core.state import SwarmState
from .core.types import Agent, Response

if TYPE_CHECKING:
    from .features.approvals import WaitingCalls
    from .features.budget import Budget
    from .features.effects import EffectLedger
    from .features.tracing import TracedRun

__all__ = [
    "NO_HOOKS",
    "PreparedRun",
    "RunExtras",
    "RunHooks",
    "RunRequest",
    "fold_hooks",
    "hooks_of",
]


class RunExtras(TypedDict, total=False):
    """``Swarm.run``'s keywords beyond Swarm's own, ``budget``, ``approvals`` and
    ``branches``: ``tool_results`` (stream each tool answer too), ``hooks`` (a
    :class:`RunHooks`), or its fields one by one, as they were passed before."""

    tool_results: bool
    hooks: RunHooks
    effects: EffectLedger | None
    prompt_context: PromptContext | None
    tool_inputs: ToolInputs | None
    conversation_id: str | None


_HOOK_FIELDS = ("effects", "prompt_context", "tool_inputs", "conversation_id")
_FOLDED = frozenset({*_HOOK_FIELDS, "hooks"})
#: Tracing (graph/features/tracing.py): a run is traced when a tracer provider is set.
_TRACING = f"{__package__}.features.tracing"
#: The variable OpenTelemetry's ``get_tracer_provider`` loads a provider from, as
#: ``os.environ`` keeps it: its ``in`` encodes the name on each call (most of what asking
#: ``get_tracer_provider`` cost a run with tracing off), a dict lookup of the kept key does not.
_PROVIDER_VARIABLE = os.environ.encodekey("OTEL_PYTHON_TRACER_PROVIDER")
_UNKNOWN = object()


def provider_maybe_set(otel: Any) -> bool:
    """Whether ``otel`` (``opentelemetry.trace``, imported) may have a tracer provider: one was
    set (``set_tracer_provider``), or ``OTEL_PYTHON_TRACER_PROVIDER`` names one to load. False
    is certain (its ``get_tracer_provider`` would give the default proxy, which records
    nothing); True is a maybe that graph/features/tracing.py settles (a no-op provider set
    globally traces nothing). Two dict lookups, not ``get_tracer_provider``'s environment
    read, as every untraced run asks it.

    Example:
        >>> import opentelemetry.trace as otel
        >>> provider_maybe_set(otel)  # nothing set here
        False
    """
    # (An API without the module global it keeps the provider in: asked the long way.)
    kept = getattr(otel, "_TRACER_PROVIDER", _UNKNOWN)
    if kept is _UNKNOWN:
        return not isinstance(
            otel.get_tracer_provider(), (otel.ProxyTracerProvider, otel.NoOpTracerProvider)
        )
    if kept is not None:
        return True
    environ = getattr(os.environ, "_data", None)
    if environ is None:  # (no such mapping: asked the ordinary way)
        return "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
    return _PROVIDER_VARIABLE in environ


def hooks_of(extras: Mapping[str, Any]) -> RunHooks:
    """The :class:`RunHooks` that ``extras`` (``Swarm.run``'s ``**extras``) carry: ``hooks=``,
    with any hook passed by its own name on top; an unknown keyword is a ``TypeError``.

    Example:
        >>> hooks_of({"effects": None, "tool_results": True}) == RunHooks()
        True
        >>> hooks_of({"effect": None})
        Traceback (most recent call last):
        ...
        TypeError: Swarm.run() got an unexpected keyword argument 'effect'
    """
    unknown = sorted(set(extras) - {"tool_results", "hooks", *_HOOK_FIELDS})
    if unknown:
        raise TypeError(f"Swarm.run() got an unexpected keyword argument {unknown[0]!r}")
    hooks = extras.get("hooks") or NO_HOOKS
    given = {name: extras[name] for name in _HOOK_FIELDS if extras.get(name) is not None}
    return replace(hooks, **given) if given else hooks


def fold_hooks(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` for ``Swarm.run`` with the hooks given by their own names (``effects=``,
    ``prompt_context=``, ``tool_inputs=``, ``conversation_id=``, and ``hooks=``) folded into
    one ``hooks=`` :class:`RunHooks`, as ``Session`` hands them to the run; none given, no
    ``hooks``.

    Example:
        >>> folded = fold_hooks({"conversation_id": "c1", "effects": None, "max_turns": 3})
        >>> folded["max_turns"], folded["hooks"].conversation_id, "effects" in folded
        (3, 'c1', False)
        >>> fold_hooks({"max_turns": 3})
        {'max_turns': 3}
    """
    folded: dict[str, Any] = {}
    given: dict[str, Any] = {}
    for name, value in kwargs.items():  # a loop, not two comprehensions: a Session turn's path
        (given if name in _FOLDED else folded)[name] = value
    if given:
        folded["hooks"] = hooks_of(given)
    return folded


@dataclass(frozen=True)
class RunRequest:
    """One run's settings: ``Swarm.run``'s arguments (bar ``stream``, which only picks the
    shape of the result), made once by ``run`` / ``arun``."""

    agent: Agent
    messages: list[Any]  # OpenAI-style dicts or LangChain messages
    context_variables: dict[str, Any] | None = None
    model_override: str | None = None
    debug: bool = False
    max_turns: float = math.inf
    execute_tools: bool = True
    budget: Budget | None = None
    approvals: Mapping[str, bool | str] | None = None
    #: What a Session hands the run (effect ledger, prompt context, tool inputs).
    hooks: RunHooks = NO_HOOKS
    #: ``Response.branches`` of a run that paused inside a parallel branch (to resume it).
    branches: Sequence[Mapping[str, Any]] | None = None


@dataclass
class PreparedRun(AbstractContextManager):
    """One prepared run: the compiled graph, its input (``state``) and config, and its
    counters.

    ``final`` is the last state the graph streamed (the input until then): what the Response
    is made of, also when the run fails. ``with run:`` around the stream gives a failing
    run's error that Response (see :meth:`__exit__`).
    """

    app: CompiledStateGraph
    runtime: GraphRuntime
    control: RunControl
    state: SwarmState
    config: RunnableConfig
    start: int  # messages before this index were the caller's history
    final: SwarmState
    #: The run's spans when tracing is on (graph/features/tracing.py), ended with the run.
    traced: TracedRun | None = None

    @classmethod
    def prepare(
        cls,
        request: RunRequest,
        agent: Agent,
        app: CompiledStateGraph,
        runtime: GraphRuntime,
        roster: dict[str, Agent],
        step_limit: int,
    ) -> PreparedRun:
        """The graph's input and config for ``request``, starting at ``agent`` (a member of
        ``roster``, this run's agents by node name)."""
        # Swarm deep-copies both inputs; dicts are rebuilt by to_langchain, and
        # LangChain messages are copied so add_messages never stamps ids on the caller's.
        copies = [
            m.model_copy() if isinstance(m, BaseMessage) else copy.deepcopy(m)
            for m in request.messages
        ]
        # The state's messages are typed as LangChain's AnyMessage union, whose classes are
        # the ones to_langchain builds.
        history = cast("list[AnyMessage]", to_langchain(copies))
        if not isinstance(request.max_turns, (int, float)):
            kind = type(request.max_turns).__name__
            raise TypeError(f"max_turns must be a number (an int, or float('inf')), got {kind}")
        control = RunControl(
            model_override=request.model_override,
            max_turns=request.max_turns,
            execute_tools=request.execute_tools,
            debug=request.debug,
            agents=roster,
            swarm_run=True,  # stateless, as Swarm: return Response.pending, raise trips with it
            hooks=request.hooks,
        )
        if request.budget is not None:  # sugar: the budget's books and middleware
            from .features.budget import attach

            attach(request.budget, control)
        if request.hooks.middleware:  # the caller's own for this run (a Session's page)
            from .core.middleware import RunMiddleware

            mine = tuple(request.hooks.middleware)
            control.middleware = RunMiddleware.around(lambda agent: mine, control.middleware)
        if request.hooks.prompt_context is not None and runtime.hooks.prompt_context is None:
            # sugar: the prompt context's middleware, outermost (a graph built with its own
            # prompt context has it already, and asks the run's first)
            from .core.middleware import RunMiddleware
            from .features.prompt_context import prompt_context_of

            control.middleware = RunMiddleware.around(prompt_context_of(), control.middleware)
        paused = None
        if request.branches:  # a fan-out that paused for approval goes on
            from .features.branches import resume_fan_out

            paused = resume_fan_out(
                runtime, history, request.branches, control, request.context_variables
            )
        if request.approvals is not None:
            from .features.decisions import checked_approvals  # kept as the feature's state

            checked_approvals(runtime, agent, history, request.approvals, control, paused)
        context = copy_context(request.context_variables)
        # A typed context: a clear error now, before any model call. No ContextSchemaMiddleware
        # exists before its module is loaded, so other graph middleware does not load it.
        typed = loaded("context_middleware") if runtime.middleware else None
        if typed is not None:
            schema = typed.schema_in(runtime.middleware)
            if schema is not None:
                context = schema.validate(context)
                schema.keep(control, context)  # its middleware does not check it again
        state: SwarmState = {
            "messages": history,
            "context_variables": context,
            "active_agent": runtime.key_for(agent, control),
            "handoff_trail": [],
        }
        max_turns = request.max_turns
        limit = step_limit if math.isinf(max_turns) else max(int(max_turns) + 5, 25)
        # The context is the channel's first value: written as it is, not merged into the
        # empty one through the reducer (a Swarm graph starts each run empty).
        graph_input = cast("SwarmState", {**state, "context_variables": Overwrite(context)})
        config = control.config(limit)
        # Inline on purpose (observed_graph._traced is its twin): a plain run enters no function
        # here, and langsmith imports OpenTelemetry's API (when installed) even in a plain program.
        otel = sys.modules.get("opentelemetry.trace")  # no provider before its API is imported
        traced = None
        tracing: Any = sys.modules.get(_TRACING)  # loaded: a provider may be given to swarmgraph
        if tracing is not None or (otel is not None and provider_maybe_set(otel)):
            if tracing is None:
                from .features import tracing
            # sugar: the tracing middleware, installed as the run's own when a provider is set
            traced = tracing.trace_run(control, agent, request.hooks.conversation_id)
        return cls(app, runtime, control, graph_input, config, len(history), state, traced)

    # -- the result ---------------------------------------------------------------------
    def response(self, final: SwarmState, unsaved: Any = None) -> Response:
        """The Response of what the run produced up to ``final`` (plus ``unsaved``: what the
        step that failed would have written, see :attr:`SwarmError.unsaved`)."""
        if unsaved:
            final = _applied(final, unsaved)
        new = self.new_messages(final)
        agent = self.runtime.agent_for(final.get("active_agent"), self.control)
        # With execute_tools=False the caller runs the tools: nothing waits for approval.
        waiting = (
            self.control.execute_tools
            # no tool of the run is marked (graph/core/marks.py): none waits for a decision
            and self.control.marked is not False
            and self._waiting(agent, final["messages"])
        )
        branches: list[dict[str, Any]] = []
        fan_out = loaded("branches")  # the run may have fanned out (graph/features/branches.py)
        if fan_out is not None and self.control.state_of(fan_out.FanOutRun) is not None:
            branches = fan_out.branch_records(self.control)
        pending = waiting[1].pending if waiting else []
        if not pending and branches and any(b["status"] == "waiting" for b in branches):
            # inside branches of a fan-out: every branch's waiting calls
            from .features.approvals import ApprovalsRun

            waiting_in = self.control.own(ApprovalsRun).waiting
            pending = [p for key, calls in waiting_in.items() if key for p in calls]
        response = Response(
            messages=to_openai(new),
            agent=agent,
            context_variables=final.get("context_variables", {}),
            usage=self.control.ledger.usage,
            trajectory=list(self.control.ledger.trajectory),
            pending=pending,
            branches=branches,
            stopped=None if self.control.stopped is None else vars(self.control.stopped).copy(),
        )
        response._langchain_messages = new
        return response

    def finish(self) -> Response:
        """The run's Response, or :class:`BudgetExceeded` / :class:`GuardrailTripped` (holding
        it) if a budget (``control.exceeded``, set by its middleware) or a guardrail stopped
        it."""
        response = self.response(self.final)
        if self.traced is not None:  # the run's end, traced
            self.traced.ended(response)
        stopped = self.control.exceeded or self.control.stop_error()
        if stopped is not None:
            stopped.response = response
            raise stopped
        approvals = loaded("approvals")  # calls wait only once its module is loaded
        waiting = approvals and self.control.state_of(approvals.ApprovalsRun)
        waiting_in = waiting.waiting if waiting else None
        nested = sorted(k for k in waiting_in if k and "/" in k) if waiting_in else []
        if nested and response.pending:
            error = SwarmError(
                f"an approval inside a nested fan-out (branch {nested[0]!r}) cannot be resumed "
                "by a stateless run: run the swarm's compiled graph with a checkpointer "
                "(build_swarm_graph(...).compile(checkpointer=...)); .response holds the run."
            )
            error.response = response
            raise error
        return response

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """A failing run's error holds the Response of what it produced: a
        :class:`SwarmError` as it is, LangGraph's recursion limit as a :class:`StepLimitError`."""
        if error is not None and self.traced is not None:
            self.traced.ended(None, error)
        if isinstance(error, SwarmError):
            error.response = self.response(self.final, error.unsaved)
        elif isinstance(error, GraphRecursionError):
            raise self.step_limit() from error

    def _waiting(
        self, agent: Agent, messages: Sequence[AnyMessage]
    ) -> tuple[Agent, WaitingCalls] | None:
        """The calls the run's last messages wait on for a decision (the approvals and effects
        feature's ``waiting``, with the run's effect ledger), and whose tools they are."""
        from .features.effects import run_ledger, waiting

        return waiting(self.runtime, agent, messages, self.control, run_ledger(self.control))

    def new_messages(self, final: SwarmState) -> list[AnyMessage]:
        """The messages this run added: those after the caller's history, or, when a middleware
        rewrote that history (``SummarizationMiddleware`` puts a summary in place of old
        turns), those after the last of the caller's messages still there."""
        messages, start = final["messages"], self.start
        if not start or (len(messages) >= start and messages[start - 1].id == self._last_id()):
            return messages[start:]
        known = {m.id for m in self.state["messages"]}
        kept = [i for i, m in enumerate(messages) if m.id in known]
        return messages[kept[-1] + 1 :] if kept else messages

    def _last_id(self) -> str | None:
        history = self.state["messages"]
        return history[-1].id if history else None

    def step_limit(self) -> StepLimitError:
        """LangGraph's recursion limit as a :class:`StepLimitError` that names the agent and
        the tools its last replies kept calling, holding the run's Response."""
        final = self.final
        calls: dict[str, int] = {}
        for message in reversed(self.new_messages(final)):
            if isinstance(message, AIMessage):
                if not message.tool_calls:
                    break  # a reply without tool calls: the loop began after it
                for call in message.tool_calls:
                    calls[call["name"]] = calls.get(call["name"], 0) + 1
        agent = self.runtime.agent_for(final.get("active_agent"), self.control)
        calls = dict(sorted(calls.items(), key=lambda item: -item[1]))
        error = StepLimitError(self.config.get("recursion_limit", 0), agent.name, calls)
        error.response = self.response(final)
        return error

    # -- Swarm's stream ------------------------------------------------------------------
    def stream_options(self) -> dict[str, Any]:
        """``app.stream`` options for Swarm's events: messages and values; inside subgraphs
        too when a LangGraph member can run, so the member's own model streams its tokens
        (it costs ~30% of a streamed run, so only then)."""
        agents = self.runtime.roster(self.control).values()
        # Branches of a fan-out run as subgraphs too: their models stream from inside.
        native = loaded("native")  # no LangGraph member exists before its module is loaded
        subgraphs = self.runtime.after_handoffs is not None or (
            native is not None and any(isinstance(agent, native.GraphAgent) for agent in agents)
        )
        return {"stream_mode": ["messages", "values"], "subgraphs": subgraphs}

    def events(self, *, tool_results: bool = False) -> Iterator[dict[str, Any]]:
        """Swarm's stream: ``{"delim": ...}`` markers, deltas, then ``{"response": ...}``;
        with ``tool_results``, each tool answer too (``{"tool_result": message}``)."""
        if self.control.turns_left():  # max_turns <= 0: no model call, no events
            from .features.swarm_events import SwarmEvents

            events = SwarmEvents(self, tool_results=tool_results)
            with self:
                for item in self.app.stream(self.state, self.config, **self.stream_options()):
                    yield from events.feed(item)
            yield from events.close()
        yield {"response": self.finish()}

    async def aevents(self, *, tool_results: bool = False) -> AsyncIterator[dict[str, Any]]:
        """Async twin of :meth:`events`."""
        if self.control.turns_left():
            from .features.swarm_events import SwarmEvents

            events = SwarmEvents(self, tool_results=tool_results)
            with self:
                async for item in self.app.astream(
                    self.state, self.config, **self.stream_options()
                ):
                    for event in events.feed(item):
                        yield event
            for event in events.close():
                yield event
        yield {"response": self.finish()}


def _applied(final: SwarmState, unsaved: Mapping[str, Any]) -> SwarmState:
    """``final`` with a step's update applied as the reducers would: messages added, the
    context replaced (an ``Overwrite``) or merged, the active agent set."""
    state = cast("dict[str, Any]", dict(final))
    state["messages"] = [*final["messages"], *unsaved.get("messages", [])]
    context = unsaved.get("context_variables")
    if isinstance(context, Overwrite):
        state["context_variables"] = context.value
    elif context is not None:
        state["context_variables"] = {**final.get("context_variables", {}), **context}
    if "active_agent" in unsaved:
        state["active_agent"] = unsaved["active_agent"]
    return cast("SwarmState", state)
