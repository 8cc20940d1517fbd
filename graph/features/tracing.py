"""OpenTelemetry spans of a run, in the GenAI semantic conventions, as LangChain 1.x middleware:
:class:`TracingMiddleware` (``wrap_model_call`` and ``wrap_tool_call``), which the API installs
as the run's own middleware when tracing is on (:func:`trace_run`, called as a ``Swarm.run`` or
an invoke of a compiled graph starts); the switches of the active agent are heard as the run's
ledger books them.

Tracing is on whenever a tracer provider is configured: the global one
(``opentelemetry.trace.set_tracer_provider``, or ``OTEL_PYTHON_TRACER_PROVIDER``), unless it is
the API's default proxy or a no-op, or the one given to :func:`use_tracer_provider`. Without
one nothing is imported beyond that check and nothing is emitted; without ``opentelemetry-api``
installed (the ``tracing`` extra) a run is what it always was.

One run is one trace (its root span a child of whatever span is current when it starts): an
``invoke_workflow {workflow}`` span (a compiled graph's name, else the first agent's); under it
an ``invoke_agent {agent}`` span per agent turn (until the agent hands off, or the run ends: a
LangGraph member's turn too); under that a ``chat {model}`` span per model call and an
``execute_tool {tool}`` span per tool call (a handoff's with the conventions' transfer
attributes); a parallel branch is a ``branch {path}`` span under the agent that fanned out, its
agents' spans under it. Handoffs, routes, a budget stop, a guardrail trip, approvals asked and
answered and an in-doubt effect are span events, each stamped as it happens on the turn it
happens in; a Session's long-term recall is a ``search_memory`` span, the memory tools' calls
(``remember``, ``recall``/``history``, ``forget``) hold ``update_memory``, ``search_memory`` and
``delete_memory`` spans, and what a Session writes after its turn (extraction, the outbox) is
an ``update_memory`` span of the turn's trace (:func:`memory_update`). docs/tracing.md lists
every name.

Privacy by default: no message text, tool arguments or results, context values, approval or
guardrail reasons unless content capture is on (``use_tracer_provider(capture_content=True)``,
or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` as the community GenAI
instrumentations read it); no URL is ever recorded.

Example:
    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> exporter = InMemorySpanExporter()
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(SimpleSpanProcessor(exporter))
    >>> use_tracer_provider(provider)
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
    >>> _ = swarm.run(Agent(), [{"role": "user", "content": "hi"}])
    >>> use_tracer_provider(None)
    >>> [span.name for span in exporter.get_finished_spans()]
    ['chat gpt-4o', 'invoke_agent Agent', 'invoke_workflow Agent']
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .errors import BudgetExceeded

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.messages import BaseMessage
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from opentelemetry.trace import Span, SpanContext, Tracer, TracerProvider

    from ..core.run_control import RunControl
    from ..core.types import Agent, Response
    from .approvals import PendingApproval as WaitingCall

from langchain.agents.middleware import AgentMiddleware
from langgraph.errors import GraphInterrupt

from ..core.marks import loaded
from ..core.middleware import RunMiddleware
from ..core.state import BRANCH_LABEL, current_branch
from ..core.types import AGENTS_KEPT

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "TracedRun",
    "TracingMiddleware",
    "memory_update",
    "run_traceparent",
    "trace_run",
    "traced_run",
    "tracing_on",
    "use_tracer_provider",
]

#: The switch the community GenAI instrumentations read for content capture.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = {"true", "1", "yes", "span_only", "span_and_event", "event_only"}
_SCOPE = "swarmgraph"

_chosen: dict[str, Any] = {"provider": None, "capture": None}


class _EndedRun:
    """The last run that ended in this context, of a conversation: a Session's writes after
    its turn (:func:`memory_update`) join its trace. ``applied``: its outbox's first apply
    came (the one right after the turn); a later one is another turn's work."""

    def __init__(self, conversation: str, context: SpanContext) -> None:
        self.conversation = conversation
        self.context = context
        self.applied = False


_LAST_RUN: ContextVar[_EndedRun | None] = ContextVar("swarmgraph_last_traced_run", default=None)
#: The memory tools (graph/features/memory_tools.py) as the GenAI conventions' memory operations.
_MEMORY_OPERATIONS = {
    "remember": "update_memory",
    "recall": "search_memory",
    "forget": "delete_memory",
    "history": "search_memory",  # a read of the fact's past values
}


def use_tracer_provider(
    provider: TracerProvider | None, *, capture_content: bool | None = None
) -> None:
    """Trace every run with ``provider`` from now on (``None``: the global one again, if any);
    ``capture_content`` overrides :data:`CAPTURE_CONTENT_ENV` (``None``: read it per run).

    Example:
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> provider = TracerProvider()
        >>> use_tracer_provider(provider)
        >>> _provider() is provider
        True
        >>> use_tracer_provider(None)  # back to the global provider: none is set here
        >>> _provider() is None
        True
    """
    _chosen["provider"] = provider
    _chosen["capture"] = capture_content


def _provider() -> TracerProvider | None:
    """The provider runs are traced with: the chosen one, else the global one unless it is
    the API's default (a proxy that records nothing) or a no-op."""
    if _chosen["provider"] is not None:
        return _chosen["provider"]
    otel = sys.modules.get("opentelemetry.trace")  # nobody set a provider before importing it
    if otel is None:
        return None
    provider = otel.get_tracer_provider()
    if isinstance(provider, (otel.ProxyTracerProvider, otel.NoOpTracerProvider)):
        return None
    return provider


def tracing_on() -> bool:
    """Whether runs are traced now: a tracer provider is configured (see the module's
    docstring).

    Example:
        >>> tracing_on()  # no provider configured here
        False
    """
    return _provider() is not None


#: :data:`CAPTURE_CONTENT_ENV` as ``os.environ`` keeps it (its ``get`` encodes the name on each
#: call, and each traced run asks): read from the mapping underneath, the key encoded once.
_CAPTURE_KEY = os.environ.encodekey(CAPTURE_CONTENT_ENV)


def _captures() -> bool:
    chosen = _chosen["capture"]
    if chosen is not None:
        return bool(chosen)
    environ = getattr(os.environ, "_data", None)
    if environ is None:  # (no such mapping: asked the ordinary way)
        return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURE_ON
    value = environ.get(_CAPTURE_KEY)
    if value is None:
        return False
    return os.environ.decodevalue(value).strip().lower() in _CAPTURE_ON


def trace_run(
    control: RunControl,
    agent: Agent,
    conversation_id: str | None = None,
    *,
    invoked: bool = False,
    workflow: str | None = None,
) -> TracedRun | None:
    """Trace the run of ``control`` (starting at ``agent``) when a tracer provider is
    configured: its root span started and a :class:`TracingMiddleware` per agent installed as
    the run's own middleware (``control.middleware``, around a budget's, if any); ``None``, and
    nothing installed, without a provider. The API calls it as a run starts
    (graph/prepared_run.py, graph/observed_graph.py) and ends the run with
    :meth:`TracedRun.ended`. ``invoked``: a compiled graph invoked directly (``control`` is a
    stand-in naming its agents; each step makes its own control, handed to
    :meth:`TracedRun.install`); ``workflow``: the compiled graph's own name, if given one.

    Example:
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> from swarmgraph.graph.core.run_control import RunControl
        >>> from swarmgraph.graph.core.types import Agent
        >>> control = RunControl()
        >>> use_tracer_provider(TracerProvider(), capture_content=True)
        >>> run = trace_run(control, Agent())
        >>> run.capture, [type(m).__name__ for m in control.middleware.of(Agent())]
        (True, ['TracingMiddleware'])
        >>> run.ended(None)
        >>> use_tracer_provider(None)  # back to the global provider: none is set here
        >>> trace_run(RunControl(), Agent()) is None
        True
    """
    provider = _provider()
    if provider is None:
        return None
    run = TracedRun(
        _tracer_of(provider), control, agent, conversation_id, invoked, workflow, _captures()
    )
    run.install(control)
    return run


def traced_run() -> TracedRun | None:
    """The traced run whose steps run in this context (what a feature's moment outside a
    step's middleware hooks tells: a parallel branch, a LangGraph member's turn, calls waiting
    for a decision), or ``None``: the run is not traced."""
    return _RUN.get()


#: ``opentelemetry.trace`` and ``opentelemetry.context``, bound by the first traced run (a run
#: with a provider: the API is there). Each span's call used to import its names again (a
#: ``from ... import`` in the function: a module lookup and an attribute fetch each time).
_trace: Any = None
_context: Any = None
_types: Any = None  # graph/core/types.py (Agent, Result), bound with them


def _bind_api() -> None:
    global _trace, _context, _types
    if _trace is None:
        from opentelemetry import context, trace

        from ..core import types

        _context, _trace, _types = context, trace, types


def _failed(span: Span, exc: BaseException) -> None:
    """What OpenTelemetry's ``use_span`` does when its block raises: the exception recorded
    on ``span`` and its status set to an error (inlined: its two nested generator context
    managers per span were a measurable part of a traced handoff)."""
    if span.is_recording():
        span.record_exception(exc)
        span.set_status(_trace.Status(_trace.StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


class _Current:
    """``span`` made the current span around a call, recorded as failed if the call raises,
    and ended. A plain class, not ``start_as_current_span`` or a generator: one span per model
    and tool call is on the traced run's hot path."""

    __slots__ = ("span", "token")

    def __init__(self, span: Span) -> None:
        self.span = span

    def __enter__(self) -> Span:
        self.token = _context.attach(_trace.set_span_in_context(self.span))
        return self.span

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if isinstance(exc, Exception):
            _failed(self.span, exc)
        _context.detach(self.token)
        self.span.end()


#: The tracer of the provider runs are traced with, kept: the SDK builds a new tracer (and its
#: instrumentation scope) on every ``get_tracer``, which was a part of each traced run's cost.
_kept_tracer: tuple[Any, Any] = (None, None)  # the provider, its tracer


def _tracer_of(provider: TracerProvider) -> Tracer:
    global _kept_tracer
    kept, tracer = _kept_tracer
    if kept is not provider:
        tracer = provider.get_tracer(_SCOPE)
        _kept_tracer = (provider, tracer)
    return tracer


class TracingMiddleware(AgentMiddleware):
    """One agent's spans, as LangChain 1.x middleware: ``wrap_model_call`` is its ``chat``
    span, ``wrap_tool_call`` its ``execute_tool`` span (each the current span around the call,
    so a LangChain instrumentation's own spans nest under it). The run's own middleware
    (``RunControl.middleware``), installed by :func:`trace_run`.

    No ``before_handoff`` hook: the agent's ``invoke_agent`` span ends with the handoff's event
    as the switch is booked (``Books.handed_off``, which :meth:`TracedRun.install` hears: every
    switch, once every ``before_handoff`` hook let it through, goes on the ledger there). A
    hook would put every traced handoff through the core's handoff machinery (a ``Handoff``
    made, the hooks asked), which an agent with no such hook skips.

    One object per agent, shared by every traced run (so the step's middleware stack, built
    once per list of middleware, is built once, not per run); each call finds its run's
    :class:`TracedRun` in a context variable the run sets as it starts (copied into the
    threads and tasks LangGraph runs its steps in).

    No ``before_agent``/``after_agent``: a turn's span opens at the agent's first call and
    closes at its handoff or the run's end (:meth:`TracedRun.ended`, which the API calls also
    when the run fails, where ``after_agent`` is not called), and a run-level ``before_agent``
    needs a state key the graph was compiled with (``ENTERED_KEY``), while tracing is switched
    on at run time."""

    def __init__(self, agent: Agent) -> None:
        super().__init__()
        self.agent = agent

    # Each hook makes its span the current one around the call, records a failure on it and
    # ends it: what ``start_as_current_span`` does (_Current), written out in the hook (one
    # span per model and tool call is on the traced run's hot path: no object and no
    # __enter__/__exit__ calls per call).
    # -- the model call -----------------------------------------------------------------
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        run = _RUN.get()
        if run is None:  # (a step of no traced run: not one this middleware was installed in)
            return handler(request)
        span = run.chat_span(self.agent, request)
        token = _context.attach(_trace.set_span_in_context(span))
        try:
            response = handler(request)
            run.chat_done(span, response)
            return response
        except Exception as exc:
            _failed(span, exc)
            raise
        finally:
            _context.detach(token)
            span.end()

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        run = _RUN.get()
        if run is None:
            return await handler(request)
        span = run.chat_span(self.agent, request)
        token = _context.attach(_trace.set_span_in_context(span))
        try:
            response = await handler(request)
            run.chat_done(span, response)
            return response
        except Exception as exc:
            _failed(span, exc)
            raise
        finally:
            _context.detach(token)
            span.end()

    # -- a tool call --------------------------------------------------------------------
    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        run = _RUN.get()
        if run is None:
            return handler(request)
        span, memory = run.tool_span(self.agent, request.tool_call)
        token = _context.attach(_trace.set_span_in_context(span))
        try:
            if memory is None:
                answer = handler(request)
            else:  # Agent(memory_tools=True)'s remember / recall / forget: a memory operation
                with _Current(memory):
                    answer = handler(request)
            run.tool_done(span, answer)
            return answer
        except Exception as exc:
            _failed(span, exc)
            raise
        finally:
            _context.detach(token)
            span.end()

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        run = _RUN.get()
        if run is None:
            return await handler(request)
        span, memory = run.tool_span(self.agent, request.tool_call)
        token = _context.attach(_trace.set_span_in_context(span))
        try:
            if memory is None:
                answer = await handler(request)
            else:
                with _Current(memory):
                    answer = await handler(request)
            run.tool_done(span, answer)
            return answer
        except Exception as exc:
            _failed(span, exc)
            raise
        finally:
            _context.detach(token)
            span.end()


_NO_META: dict[str, Any] = {}
#: The traced run whose steps run in this context (set as it starts, reset as it ends).
_RUN: ContextVar[TracedRun | None] = ContextVar("swarmgraph_traced_run", default=None)
#: Each agent's :class:`TracingMiddleware`, by ``id`` (the agent kept beside it, so the id
#: cannot be reused while cached).
_AGENTS: dict[int, tuple[Agent, tuple[TracingMiddleware]]] = {}


def _tracing_of(agent: Agent) -> tuple[TracingMiddleware]:
    """``agent``'s tracing middleware (one object per agent, shared by every traced run)."""
    made = _AGENTS.get(id(agent))
    if made is None or made[0] is not agent:
        if len(_AGENTS) > AGENTS_KEPT:
            _AGENTS.clear()
        made = _AGENTS[id(agent)] = (agent, (TracingMiddleware(agent),))
    return made[1]


#: The run middleware of every traced run without a budget: one object, so its stacks are
#: built once per agent, not per run.
_SHARED = RunMiddleware(_tracing_of)


class TracedRun:
    """One run's spans (:func:`traced_run` finds the one whose steps run here). Agent turns
    span several graph steps, so their spans are started and ended explicitly (per parallel
    branch: branches run at once, in threads or tasks)."""

    def __init__(
        self,
        tracer: Tracer,
        control: RunControl,
        agent: Agent,
        conversation: str | None,
        invoked: bool,
        workflow: str | None,
        capture: bool,
    ) -> None:
        _bind_api()
        self.tracer = tracer
        self.capture = capture
        self.control = control  # the run's (an invoked graph's: its stand-in)
        self.invoked = invoked
        self.conversation = conversation
        #: The open agent span by branch, with the context that makes it a parent (made once:
        #: each of its calls' spans starts under it).
        self._agents: dict[str | None, tuple[Agent, Span, Any]] = {}
        self._branches: dict[str, Span] = {}
        self._lock = threading.Lock()
        self._asked: set[str] = set()  # calls whose asking is stamped already
        self._stop: Any = None  # the budget stop stamped already
        self._tokens = [0, 0]  # input, output: the chat spans' (an invoked graph has no ledger)
        self._ended = False
        self._recall: Any = None  # the run's recall, traced (a Session's long-term memory)
        self._recalled: Any = None  # the recall hook it wraps
        under = control.middleware  # a budget's, installed before: the run's own, outermost
        #: The run's own middleware: the shared tracing one, or around a budget's, this run's.
        self.middleware = _SHARED if under is None else RunMiddleware.around(under.of, _SHARED)
        #: A budget's stop is watched as it happens (``RunControl.exceeded`` set).
        self._budgeted = under is not None
        self.root = self._start(agent, workflow)
        self._root_context = _trace.set_span_in_context(self.root)
        self._token = _RUN.set(self)

    # -- the run ----------------------------------------------------------------------
    def _start(self, agent: Agent, workflow: str | None) -> Span:
        name = workflow or agent.name  # Swarm's run is named by its first agent
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": name,
            "swarmgraph.agent.first": agent.name,
        }
        if self.conversation is not None:
            attributes["gen_ai.conversation.id"] = self.conversation
        root = self.tracer.start_span(f"invoke_workflow {name}", attributes=attributes)
        module = loaded("approvals")  # a run's given decisions exist only once it is loaded
        approvals = None if module is None else self.control.state_of(module.ApprovalsRun)
        for call_id, decision in (approvals.given if approvals else {}).items():
            answered: dict[str, Any] = {
                "gen_ai.tool.call.id": call_id,
                "swarmgraph.approval.approved": decision is True,
            }
            if self.capture and isinstance(decision, str):
                answered["swarmgraph.approval.answer"] = decision
            root.add_event("swarmgraph.approval.answered", answered)
        hooks = self.control.hooks
        if hooks.prompt_context is not None:  # a Session's long-term recall
            self._recall = self._recalling(hooks.prompt_context)
            self._recalled = hooks.prompt_context  # (given back as the run ends: _release)
        return root

    def install(self, control: RunControl) -> None:
        """Trace ``control``'s part of the run: this run's middleware, its state, its recall,
        and the steps and budget stop it records, watched (a compiled graph invoked directly
        makes a control per step: each is handed here, graph/core/run_control.py's
        ``SETUP_KEY``)."""
        control.middleware = self.middleware
        hooks = control.hooks
        if self._recall is not None and hooks.prompt_context in (
            None,
            self.control.hooks.prompt_context,
        ):
            control.hooks = replace(hooks, prompt_context=self._recall)
        ledger = control.ledger
        booked = vars(ledger)
        if "checked" not in booked:  # each guardrail's and precondition's check, heard
            ledger.checked = _Checks(ledger.checked, self)  # type: ignore[method-assign]
        if "handed_off" not in booked:  # each switch of the active agent, heard
            ledger.handed_off = _Switches(ledger.handed_off, self)  # type: ignore[method-assign]
        if self._budgeted and not isinstance(control, _Watched):
            # The same object as a subclass that adds no state, only the watching
            # __setattr__: whoever holds the control keeps holding it.
            control.__class__ = _watched(type(control))
        control.__dict__["_traced_by"] = self

    def ended(
        self,
        response: Response | None,
        error: BaseException | None = None,
        control: RunControl | None = None,
    ) -> None:
        """The run ended (once: a failing run's ``__exit__`` and ``finish`` may both say so):
        its ``Response`` (also when a budget or a guardrail stopped it: ``control`` says which;
        an invoked graph has none), or the error that ended it."""
        if self._ended:
            return
        self._ended = True
        try:
            _RUN.reset(self._token)
        except ValueError:  # ended from another context (a stream closed elsewhere)
            _RUN.set(None)
        root = self.root
        with self._lock:
            open_spans = [open_[1] for open_ in self._agents.values()]
            self._agents.clear()
        control = control or self.control
        usage = control.ledger.totals
        tokens = self._tokens if self.invoked else [usage["input_tokens"], usage["output_tokens"]]
        ended: dict[str, Any] = {
            "gen_ai.usage.input_tokens": tokens[0],
            "gen_ai.usage.output_tokens": tokens[1],
        }
        if response is not None and response.agent is not None:
            ended["swarmgraph.agent.final"] = response.agent.name
        root.set_attributes(ended)  # one call (and one lock of the span) for all
        stopped = error or control.exceeded or control.stop_error()
        if stopped is not None:
            if error is not None:
                root.record_exception(error)
            root.set_status(_trace.Status(_trace.StatusCode.ERROR, type(stopped).__name__))
        for span in open_spans:
            span.end()
        root.end()
        if self.conversation is not None:  # what the turn writes next joins its trace
            _LAST_RUN.set(_EndedRun(self.conversation, root.get_span_context()))
        self._release(self.control)

    def _release(self, control: RunControl) -> None:
        """Undo what :meth:`install` hooked into the run's own ``control``: while the run
        runs, it and its control refer to each other (``_traced_by``, the ledger's checks,
        a recall hook); left so, each traced run would leave a reference cycle (its control,
        ledger, root span...: some 30 objects a handoff) for the garbage collector to find,
        instead of being freed as the caller drops it, as an untraced run is."""
        control.__dict__.pop("_traced_by", None)
        ledger = control.ledger
        booked = vars(ledger)
        checks = booked.get("checked")
        if isinstance(checks, _Checks) and checks.run is self:
            del ledger.checked  # (the class's method again: a bound one kept would be a cycle)
        switches = booked.get("handed_off")
        if isinstance(switches, _Switches) and switches.run is self:
            del ledger.handed_off
        if self._recall is not None and control.hooks.prompt_context is self._recall:
            control.hooks = replace(control.hooks, prompt_context=self._recalled)

    # -- agent turns --------------------------------------------------------------------
    def _agent_span(self, agent: Agent, branch: str | None) -> Span:
        """The open ``invoke_agent`` span of ``agent`` in ``branch``: started when another
        agent's was open there, or none."""
        return self._open(agent, branch)[1]

    def _open_now(self, agent: Agent) -> tuple[Agent, Span, Any]:
        """:meth:`_open` in the branch of the call running here (a model or tool call's)."""
        return self._open(agent, BRANCH_LABEL.get())

    def _open(self, agent: Agent, branch: str | None) -> tuple[Agent, Span, Any]:
        """``agent``'s open turn in ``branch`` (its span, and the context that makes it a
        parent), started when another agent's was open there, or none."""
        open_ = self._agents.get(branch)  # (a dict read is atomic: the lock is for a change)
        if open_ is not None and open_[0] is agent:
            return open_
        with self._lock:
            open_ = self._agents.get(branch)
            if open_ is not None and open_[0] is agent:
                return open_
            if open_ is not None:
                open_[1].end()
            parent = self._branches.get(branch) if branch is not None else None
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent.name,
            }
            if self.conversation is not None:
                attributes["gen_ai.conversation.id"] = self.conversation
            if branch is not None:
                attributes["swarmgraph.branch"] = branch
            span = self.tracer.start_span(
                f"invoke_agent {agent.name}",
                context=self._root_context
                if parent is None
                else _trace.set_span_in_context(parent),
                attributes=attributes,
            )
            open_ = self._agents[branch] = (agent, span, _trace.set_span_in_context(span))
            return open_

    def switched(self, to: str, route: str | None) -> None:
        """The active agent of the current branch switched to agent ``to`` (``route``: the
        route's label when a route, not a tool, handed off): its turn's span ends."""
        branch = current_branch()
        with self._lock:
            open_ = self._agents.pop(branch, None)
        if open_ is None:
            return
        span = open_[1]
        if route is None:
            span.add_event("swarmgraph.handoff", {"swarmgraph.handoff.to": to})
        else:
            span.add_event(
                "swarmgraph.route", {"swarmgraph.route.label": route, "swarmgraph.handoff.to": to}
            )
        span.end()

    def member_turn(self, agent: Agent) -> AbstractContextManager[Any]:
        """A LangGraph member's turn (graph/features/native.py: its graph runs its own loop,
        so its calls are not a swarm step's) is its ``invoke_agent`` span, current while its
        graph runs (an instrumentation of LangChain or LangGraph nests the member's own model
        and tool calls under it)."""
        return _trace.use_span(self._agent_span(agent, current_branch()), end_on_exit=False)

    # -- what happens during a turn: stamped as it happens, on the turn it belongs to ----
    def _turn_of(self, name: str | None) -> Span:
        """The open ``invoke_agent`` span of the current branch (the turn something happened
        in); none open: the turn of agent ``name`` starts here (an input guardrail runs
        before the agent's first model call), or, for an agent not in the run's roster,
        the branch's or the run's span."""
        branch = current_branch()
        with self._lock:
            open_ = self._agents.get(branch)
        if open_ is not None:
            return open_[1]
        # (the roster read here, not kept per run: only a check or a budget stop asks it)
        roster = self.control.agents or {}
        agent = next((a for a in roster.values() if a.name == name), None) if name else None
        if agent is not None:
            return self._agent_span(agent, branch)
        with self._lock:
            return self._branches.get(branch or "") or self.root

    def tripped(self, agent: str, kind: str, name: str, reason: str, when: str | None) -> None:
        """A check refused (``kind``: ``"guardrail"`` or ``"precondition"``; also one whose
        agent's on_trip took over, so the run went on), stamped on the turn it ran in."""
        tripped: dict[str, Any] = {
            "swarmgraph.guardrail.name": name,
            "swarmgraph.guardrail.kind": when or kind,
            "gen_ai.agent.name": agent,
        }
        if self.capture:
            tripped["swarmgraph.guardrail.reason"] = str(reason)
        self._turn_of(agent).add_event(f"swarmgraph.{kind}.tripped", tripped)

    def on_budget_stop(self, stop: BudgetExceeded) -> None:
        """A budget limit stopped the run, as it did (``RunControl.exceeded`` set)."""
        if stop is self._stop:
            return
        self._stop = stop
        self._turn_of(stop.agent).add_event(
            "swarmgraph.budget.exceeded",
            {
                "swarmgraph.budget.limit": stop.limit,
                "swarmgraph.budget.value": stop.value,
                "gen_ai.agent.name": stop.agent,
            },
        )

    def asked(self, calls: Sequence[WaitingCall]) -> None:
        """The run (or the parallel branch it runs in) stopped for these calls' decisions, as
        it did: approval-marked calls and ``@effect`` calls in doubt (``in_doubt``)."""
        self._stamp_asked(calls, self._turn_of)

    def _stamp_asked(self, calls: Sequence[WaitingCall], turn_of: Callable[[str], Span]) -> None:
        """Each of ``calls`` not stamped yet, on ``turn_of(its agent)``."""
        for pending in calls:
            with self._lock:  # awaiting grows: [*already asked, *new]
                if pending.id in self._asked:
                    continue
                self._asked.add(pending.id)
            asked: dict[str, Any] = {
                "gen_ai.tool.name": pending.tool,
                "gen_ai.tool.call.id": pending.id,
                "gen_ai.agent.name": pending.agent,
                "swarmgraph.effect.in_doubt": pending.in_doubt,
            }
            span = turn_of(pending.agent)
            span.add_event("swarmgraph.approval.asked", asked)
            if pending.in_doubt:
                span.add_event("swarmgraph.effect.in_doubt", asked)

    # -- calls (TracingMiddleware's) ----------------------------------------------------
    def chat_span(self, agent: Agent, request: ModelRequest) -> Span:
        """The ``chat`` span of ``agent``'s model call ``request``, started."""
        open_ = self._agents.get(BRANCH_LABEL.get())  # (_open's own first look, inlined)
        parent = (open_ if open_ is not None and open_[0] is agent else self._open_now(agent))[2]
        runnable = request.model
        cached = _PARAMS.get(id(runnable))  # (_chat_model_params' own first look, inlined)
        if cached is not None and cached[0] is runnable:
            provider, named = cached[1], cached[2]
        else:
            provider, named = _chat_model_params(runnable)
        # The chat model's own name (a fixed chat_model= answers for every agent.model);
        # what the agent asked for where the model stands in for any (ScriptedChatModel's).
        model = named or self.control.model_override or agent.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.agent.name": agent.name,
        }
        if self.conversation is not None:
            attributes["gen_ai.conversation.id"] = self.conversation
        if self.capture:
            system = request.system_message
            prompt = [system, *request.messages] if system is not None else request.messages
            attributes["gen_ai.input.messages"] = _messages_json(prompt)
        return self.tracer.start_span(
            f"chat {model}",
            context=parent,
            kind=_trace.SpanKind.CLIENT,
            attributes=attributes,
        )

    def chat_done(self, span: Span, response: Any) -> None:
        """The reply's finish reason, usage and model on its ``chat`` span."""
        result = getattr(response, "result", None)  # a ModelResponse (else the message)
        reply = result[-1] if result else response
        meta = getattr(reply, "response_metadata", None) or _NO_META
        finish = meta.get("finish_reason") or (
            "tool_calls" if getattr(reply, "tool_calls", None) else "stop"
        )
        # A list, which the SDK stores as the same tuple: on Python 3.11 its check of a tuple
        # against ``Sequence`` (a registered class) misses the ABC cache and runs the Python
        # subclass hook on every span; a list's is cached.
        answered: dict[str, Any] = {"gen_ai.response.finish_reasons": [str(finish)]}
        usage = getattr(reply, "usage_metadata", None)
        if usage:
            tokens = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
            answered["gen_ai.usage.input_tokens"] = tokens[0]
            answered["gen_ai.usage.output_tokens"] = tokens[1]
            if self.invoked:  # an invoked graph's totals are its chat spans' (no ledger)
                with self._lock:
                    self._tokens[0] += tokens[0]
                    self._tokens[1] += tokens[1]
        named = meta.get("model_name")
        if named:
            answered["gen_ai.response.model"] = str(named)
        if self.capture:
            answered["gen_ai.output.messages"] = _messages_json([reply])
        span.set_attributes(answered)  # one call (and one lock of the span) for all

    def tool_span(self, agent: Agent, call: Mapping[str, Any]) -> tuple[Span, Span | None]:
        """The ``execute_tool`` span of ``agent``'s tool call ``call`` (LangChain's
        ``ToolCall``), started, and the memory operation's span under it, for a memory tool's
        call (``None`` for any other)."""
        open_ = self._agents.get(BRANCH_LABEL.get())
        parent = (open_ if open_ is not None and open_[0] is agent else self._open_now(agent))[2]
        name, arguments = call["name"], call["args"]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call["id"],
            "gen_ai.tool.type": "function",
            "gen_ai.agent.name": agent.name,
        }
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(arguments)
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=parent,
            attributes=attributes,
        )
        memory = _MEMORY_OPERATIONS.get(name) if agent.memory_tools else None
        if memory is None:
            return span, None
        scope = arguments.get("scope") if isinstance(arguments, dict) else None
        inner = self.tracer.start_span(
            memory,
            context=_trace.set_span_in_context(span),
            attributes={
                "gen_ai.operation.name": memory,
                "gen_ai.agent.name": agent.name,
                "swarmgraph.memory.scope": str(scope or "user"),
            },
        )
        return span, inner

    def tool_done(self, span: Span, answer: Any) -> None:
        """A tool call's transfer (a handoff) and, with content capture, its result, on its
        ``execute_tool`` span; ``answer``: the call's ``ToolMessage``, the tool's own return
        value as its ``artifact`` (graph/core/tool_wrapping.py)."""
        raw = getattr(answer, "artifact", None)
        done: dict[str, Any] = {}
        target = _transfer_target(raw)
        if target is not None:  # the GenAI conventions' transfer (a Swarm handoff)
            done["gen_ai.transfer.mode"] = "pass_control"
            done["gen_ai.transfer.target.type"] = "agent"
            done["gen_ai.transfer.target.name"] = target
        if self.capture:
            done["gen_ai.tool.call.result"] = (
                _result_text(raw) if raw is not None else str(getattr(answer, "content", answer))
            )
        if done:
            span.set_attributes(done)

    async def branch(self, path: str, agent: Agent, proceed: Callable[[], Awaitable[Any]]) -> Any:
        """One parallel branch of a fan-out (graph/features/branches.py), which runs its own
        agent steps: its ``branch`` span under the agent that fanned out."""
        outer = path.rpartition("/")[0] or None
        with self._lock:
            fanned = self._agents.get(outer)
        parent = fanned[1] if fanned is not None else self._branches.get(outer or "", self.root)
        span = self.tracer.start_span(
            f"branch {path}",
            context=_trace.set_span_in_context(parent),
            attributes={"swarmgraph.branch": path, "gen_ai.agent.name": agent.name},
        )
        with self._lock:
            self._branches[path] = span
        try:
            return await proceed()
        except GraphInterrupt as stop:  # a compiled graph's branch asks: on its turn, now
            from .approvals import payload_pending

            with self._lock:
                open_ = self._agents.get(path)
            if open_ is not None:
                calls = [c for each in stop.args[0] for c in payload_pending(each.value)]
                self._stamp_asked(calls, lambda _: open_[1])
            raise
        finally:
            with self._lock:  # the branch's agents are done with it
                inside = [k for k in self._agents if k == path]
                ended = [self._agents.pop(k)[1] for k in inside]
                self._branches.pop(path, None)
            for each in ended:
                each.end()
            span.end()

    # -- long-term memory -------------------------------------------------------------
    def _recalling(self, hook: Any) -> Any:
        """``hook`` (the run's prompt context: a Session's long-term recall) as a
        ``search_memory`` span under the asking agent."""

        def recall(agent: Agent, messages: Sequence[BaseMessage]) -> str | None:
            parent = self._agent_span(agent, current_branch())
            with self.tracer.start_as_current_span(
                "search_memory",
                context=_trace.set_span_in_context(parent),
                attributes={
                    "gen_ai.operation.name": "search_memory",
                    "gen_ai.agent.name": agent.name,
                },
            ) as span:
                text = hook(agent, messages)
                span.set_attribute("swarmgraph.memory.recalled", bool(text))
                if self.capture and text:
                    span.set_attribute("swarmgraph.memory.text", str(text))
                return text

        return recall


class _Checks:
    """A run's ``Books.checked`` (every guardrail and precondition check goes on the trajectory
    through it) that tells the traced run of each check that refused: the features that check
    stay free of tracing calls, and no other step of the run is watched."""

    __slots__ = ("checked", "run")

    def __init__(self, checked: Callable[..., None], run: TracedRun) -> None:
        self.checked = checked
        self.run = run

    def __call__(self, agent: str, kind: str, name: str, reason: str | None, **more: Any) -> None:
        self.checked(agent, kind, name, reason, **more)
        if reason is not None and kind in ("guardrail", "precondition"):
            self.run.tripped(agent, kind, name, reason, more.get("when"))


class _Switches:
    """A run's ``Books.handed_off`` (every switch of the active agent goes on the ledger
    through it, once the target's ``before_handoff`` hooks let it through:
    ``GraphRuntime.switch``; a branch starting or a fan-out is none) that ends the source's
    turn with the handoff's event as the switch is booked."""

    __slots__ = ("handed_off", "run")

    def __init__(self, handed_off: Callable[..., None], run: TracedRun) -> None:
        self.handed_off = handed_off
        self.run = run

    def __call__(self, agent: str, to: str, *, route: str | None = None) -> None:
        self.handed_off(agent, to, route=route)
        self.run.switched(to, route)


class _Watched:
    """Marks a traced control's class (see :meth:`TracedRun.install`): a budget stop
    (``exceeded`` set, by whichever feature checks the limit) is stamped as it happens."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name != "exceeded" or value is None:
            return
        run: TracedRun | None = self.__dict__.get("_traced_by")
        if run is not None and isinstance(value, BudgetExceeded):  # (another limit: no fields)
            run.on_budget_stop(value)


_watched_classes: dict[type, type] = {}


def _watched(base: type) -> type:
    """``base`` (``RunControl``) with :class:`_Watched`'s ``__setattr__``, made once."""
    made = _watched_classes.get(base)
    if made is None:
        made = _watched_classes[base] = type(f"Watched{base.__name__}", (_Watched, base), {})
    return made


def run_traceparent(conversation_id: str | None) -> str | None:
    """The W3C ``traceparent`` of the last traced run of ``conversation_id`` that ended in
    this context (``None``: none, or no provider): what a turn's outbox carries, so whoever
    applies it later, in any process, links its ``update_memory`` span to the turn.

    Example:
        >>> run_traceparent("conv-1") is None  # no provider configured here
        True
    """
    last = _LAST_RUN.get()
    if _provider() is None or last is None or last.conversation != conversation_id:
        return None
    from opentelemetry.trace import NonRecordingSpan, set_span_in_context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    context = set_span_in_context(NonRecordingSpan(last.context))
    TraceContextTextMapPropagator().inject(carrier, context=context)
    return carrier.get("traceparent")


def _origin(traceparent: Any) -> SpanContext | None:
    """The span context a ``traceparent`` names (``None``: none, or not a valid one)."""
    if not isinstance(traceparent, str):
        return None
    from opentelemetry.trace import get_current_span
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    context = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    found = get_current_span(context).get_span_context()
    return found if found.is_valid else None


def memory_update(
    conversation_id: str | None,
    turn_id: str | None,
    step: str,
    changes: Sequence[Mapping[str, Any]] | None = None,
    origin: str | None = None,
) -> AbstractContextManager[Span | None]:
    """An ``update_memory`` span around a write to long-term memory outside the run (a
    Session's, after its turn: ``step`` ``"extract"``, the extractor staging what the
    user's messages say, or ``"apply"``, a turn's outbox written to the store); nothing
    without a tracer provider. ``changes``: the outbox's records (counted; their keys only
    with content capture); ``origin``: the ``traceparent`` of the run that staged them
    (:func:`run_traceparent`, carried by the outbox).

    Its parent: the extraction, and an outbox's first apply right after its own run, are in
    the trace of that run (the last of ``conversation_id`` that ended in this context); an
    outbox applied later (by a later turn, maybe in another process: the store failed after
    the save, or the process died) is work of the applier's time, so it is under the current
    span, with a span link to the run that staged it (the OpenTelemetry way to point at a
    trace that ended).

    Example:
        >>> with memory_update("conv-1", "t1", "apply", []) as span:
        ...     span is None  # no provider configured here
        True
    """
    provider = _provider()
    if provider is None:
        return nullcontext()
    tracer = _tracer_of(provider)
    return _memory_span(tracer, conversation_id, turn_id, step, changes, origin)


@contextmanager
def _memory_span(
    tracer: Tracer,
    conversation_id: str | None,
    turn_id: str | None,
    step: str,
    changes: Sequence[Mapping[str, Any]] | None,
    origin: str | None,
) -> Iterator[Span]:
    from opentelemetry.trace import Link, NonRecordingSpan, set_span_in_context

    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "update_memory",
        "swarmgraph.memory.step": step,
    }
    if conversation_id is not None:
        attributes["gen_ai.conversation.id"] = conversation_id
    if turn_id is not None:
        attributes["swarmgraph.memory.turn_id"] = turn_id
    if changes is not None:
        attributes["swarmgraph.memory.remembered"] = sum(
            1 for c in changes if c.get("op") == "remember"
        )
        attributes["swarmgraph.memory.forgotten"] = sum(
            1 for c in changes if c.get("op") != "remember"
        )
        if _captures():
            attributes["swarmgraph.memory.keys"] = [str(c.get("key")) for c in changes]
    last = _LAST_RUN.get()
    if last is not None and (conversation_id is None or last.conversation != conversation_id):
        last = None  # another conversation's run: not this write's
    parent, links = None, []
    if step != "apply":  # the extraction: right after its run, in its context
        parent = last.context if last is not None else None
    else:
        staged_by = _origin(origin)
        if last is not None and not last.applied and _same(staged_by, last.context):
            parent, last.applied = last.context, True  # right after the turn that staged it
        elif staged_by is not None:  # later: the applier's, pointing at the turn
            links = [Link(staged_by, {"swarmgraph.memory.link": "staged_by"})]
    context = None if parent is None else set_span_in_context(NonRecordingSpan(parent))
    with tracer.start_as_current_span(
        "update_memory", context=context, attributes=attributes, links=links
    ) as span:
        yield span


def _same(one: SpanContext | None, other: SpanContext) -> bool:
    return one is not None and (one.trace_id, one.span_id) == (other.trace_id, other.span_id)


#: ScriptedChatModel's default ``model_name``: it stands in for whatever ``agent.model`` asks.
_STAND_IN_NAME = "scripted"
#: Each chat model's (provider, model name), by ``id``, the model kept beside them so the id
#: cannot be reused while cached: LangChain's ``_get_ls_params`` costs each call otherwise.
_PARAMS: dict[int, tuple[Any, str, str | None]] = {}


def _chat_model_params(runnable: Any) -> tuple[str, str | None]:
    """The provider a chat model reports (LangChain's ``ls_provider``: ``openai``...) and the
    model it names (``ls_model_name``; ``None`` for a stand-in), its tools bound or not."""
    cached = _PARAMS.get(id(runnable))  # the model as called: no attribute looked up
    if cached is not None and cached[0] is runnable:
        return cached[1], cached[2]
    # (A missing attribute of a pydantic model raises inside its __getattr__: too dear to
    # ask each call whether the model is a binding.)
    bound = getattr(runnable, "bound", runnable)
    cached = _PARAMS.get(id(bound))
    if cached is not None and cached[0] is bound:
        _keep_params(runnable, cached[1], cached[2])
        return cached[1], cached[2]
    params: dict[str, Any] = {}
    get = getattr(bound, "_get_ls_params", None)
    if callable(get):
        try:
            params = get()
        except Exception:  # a model's own params method must not fail the run
            params = {}
    provider = str(params.get("ls_provider") or getattr(bound, "_llm_type", None) or "unknown")
    named = params.get("ls_model_name")
    name = str(named) if named and named != _STAND_IN_NAME else None
    _keep_params(bound, provider, name)
    _keep_params(runnable, provider, name)
    return provider, name


def _keep_params(model: Any, provider: str, name: str | None) -> None:
    if len(_PARAMS) > 256:  # models (or bindings) made per request must not grow this forever
        _PARAMS.clear()
    _PARAMS[id(model)] = (model, provider, name)


def _transfer_target(raw: Any) -> str | None:
    """The agent a tool's return value hands the conversation to (an ``Agent``, or a
    ``Result`` with one): Swarm's own way to say a call is a transfer, so no guess from
    the tool's name."""
    agent = raw.agent if isinstance(raw, _types.Result) else raw
    return agent.name if isinstance(agent, _types.Agent) else None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _messages_json(messages: Sequence[Any]) -> str:
    """Messages as the GenAI conventions' ``{role, parts}`` records (content capture only)."""
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
    records = []
    for message in messages:
        record: dict[str, Any] = {
            "role": roles.get(getattr(message, "type", ""), "user"),
            "parts": [{"type": "text", "content": str(getattr(message, "content", message))}],
        }
        for call in getattr(message, "tool_calls", None) or []:
            record["parts"].append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call["name"],
                    "arguments": call["args"],
                }
            )
        records.append(record)
    return _json(records)


def _result_text(raw: Any) -> str:
    value = getattr(raw, "value", raw)  # a Result's value
    name = getattr(raw, "name", None)
    if value is raw and name is not None and hasattr(raw, "instructions"):  # an Agent
        return _json({"assistant": name})
    return value if isinstance(value, str) else _json(value)
