"""LangChain 1.x ``AgentMiddleware`` on a swarm agent: its hooks, called at their moments of
one Swarm step.

``Agent(middleware=[...])``, ``Swarm(..., middleware=[...])`` and ``build_swarm_graph(...,
middleware=[...])`` take any ``langchain.agents.middleware.AgentMiddleware``: LangChain's
built-ins (``ModelCallLimitMiddleware``, ``ToolCallLimitMiddleware``, ``PIIMiddleware``,
``SummarizationMiddleware``, ``ModelRetryMiddleware``, ``ToolRetryMiddleware``...) and what its
decorators make (``@before_model``, ``@wrap_tool_call``, ``@dynamic_prompt``...). A step calls
them where ``create_agent``'s loop would (see docs/middleware.md for each built-in):

==================  ============================================================================
``before_agent``    when an agent takes the conversation: the run's (``Swarm``'s, the graph's)
                    middleware at the start of an invocation, an agent's own when the run enters
                    it (its first step, or the step after a handoff to it)
``before_model``    after the instructions are built, before the model is asked
``wrap_model_call`` around the model call, with LangChain's ``ModelRequest``/``ModelResponse``
``after_model``     once the reply is booked, before its tool calls run (a call the hook
                    answered with a ``ToolMessage`` does not run)
``wrap_tool_call``  around each tool call, with LangGraph's ``ToolCallRequest``; the handler
                    raises what the tool raised, so retries see it, and a call that still fails
                    is answered ``Error: ...`` as in Swarm
``after_agent``     when the run ends on the agent (both lists), or it hands off (its own list)
``before_handoff``  a swarm's own moment, which LangChain lacks (an extension, see below):
                    before the active agent switches (a handoff, a route, a hook's ``HandTo``),
                    a parallel branch starts, or an agent fans out
==================  ============================================================================

Two moments a swarm has and ``create_agent`` lacks are extensions on the same objects (their
types: graph/core/handoffs.py). The
**handoff** (docs/middleware.md, "The handoff moment"): a middleware may define
``before_handoff(handoff)`` (and/or ``async abefore_handoff``), which the core calls with a
``Handoff`` whenever the active agent is about to switch, on the middleware of the agent
taking the conversation (the run's, then that agent's own, then what the run's own options
install, such as ``Swarm.run(budget=)``'s: :class:`RunMiddleware`); it returns ``None`` (go
on), a reason (the switch is refused: the transfer call is answered ``Error: <reason>``), or a
``HandTo`` (hand the conversation to that agent instead, through its own hooks in turn).
A fan-out is asked once, before any branch starts, on the stack of the agent that fans out
(``way="fan_out"``, ``Handoff.branches`` every branch's agent: admitted together or not at
all); each branch then comes into its agent with ``way="branch"``.
A ``before_model``/``after_model`` hook may also return ``{"jump_to": HandTo(agent)}``: the
step hands the conversation to ``agent`` there (no model call after ``before_model``; no tool
call after ``after_model``). A middleware may also say what the graph draws on the edges into
its agent (``handoff_label``, a string).

The **takeover**: after a step's tools ran (and no
limit stopped the run), each middleware that defines ``next_agent(takeover)`` is asked, in
order, who takes over (a ``Takeover``; it returns one changed with ``replace`` or None
for no change): it may pick an agent when no tool handed off (routes), resolve a placeholder
a tool handed to (``CALLER``), or reword the handing call's answer. A middleware that may
switch so lists the agents in ``destinations`` (``Destination``), which discovery walks
and the builder draws. ``Agent(routes=)`` and the ``CALLER`` hand-back are such middleware
(graph/features/routes.py, graph/features/handback.py, installed by graph/options.py).

Two more moments of a step, for what outlives one step (calls left waiting for a decision,
calls that must run at most once: graph/features/decisions.py, installed for a run whose tools
are marked). The **step's start**: a middleware may define ``async def before_step(start)``;
before the model is asked, the core awaits it with a ``StepStart`` (graph/core/runtime.py: the
step's ``Turn``, the runtime, config, driver and node, and ``admit`` to run calls); it returns
True when it planned the step itself (it answered calls an earlier step, or a process that
died, left waiting: the model is not asked), False to go on. Blocking work goes through
``start.io.off_loop``. The **calls about to run**: a middleware may define
``hold_calls(turn, reply, tools)``, called once the reply's calls are admitted (after the
model, and again after ``after_model`` hooks answered some); it returns ``(reply narrowed to
the calls that run now, the calls it holds)``: held calls stay unanswered (a later step's
``before_step`` answers them), and it may set ``turn.records`` (the tool runner's
``CallRecords``). A ``before_step`` hook may also replace the step's context
(``turn.context``): the step reads it, its hooks see it, and it writes it. The **context's
rules**: a middleware may define ``tool_context(control)``, which returns the run's
``ContextWrites`` (graph/core/tool_calls.py): how each tool call's ``Result`` update goes in,
and what the context must fit after each call (a call whose change does not fit is answered
``Error: ...`` and undone). The typed context (``context_schema=``,
graph/features/context_middleware.py) is that middleware, and declares the
``context_variables`` channel in its ``state_schema`` (the one core channel a middleware may
declare again, :func:`middleware_state_schema`).

A hook's state update is applied as a LangGraph node's would be: ``messages`` through
``add_messages`` (so a message with a known id replaces it), other keys into the middleware's
own ``state_schema`` fields, which the builder merges into the graph's state. ``jump_to="end"``
stops the run where it is: the step writes what the hook added, goes nowhere next, and
``Swarm.run``'s Response says who stopped it (``Response.stopped``). Run-level middleware wraps
agent-level middleware; for each list the first is the outermost (LangChain's order: ``before_*``
hooks in order, ``after_*`` hooks in reverse).

Example:
    >>> from langchain.agents.middleware import before_model
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> seen = []
    >>> @before_model
    ... def count(state, runtime):
    ...     seen.append(len(state["messages"]))
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
    >>> response = swarm.run(Agent(middleware=[count]), [{"role": "user", "content": "hi"}])
    >>> response.messages[-1]["content"], seen
    ('Hi.', [1])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast, get_type_hints

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.channels import UntrackedValue
from langgraph.errors import GraphInterrupt
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired, TypedDict

from .drivers import AsyncDriver, Driver
from .handoffs import HandTo
from .hook_context import hook_control
from .langchain_args import tool_runtime
from .middleware_tools import middleware_tools
from .types import AGENTS_KEPT
from .wrap_chains import (
    amodel_layer,
    athrough,
    bound,
    langchain_class,
    model_layer,
    reply_of,
    through,
)

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.runnables import RunnableConfig
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from .types import Agent

__all__ = [
    "AFTER_MODEL_KEY",
    "ENTERED_KEY",
    "MiddlewareStack",
    "MiddlewareStop",
    "RunMiddleware",
    "StepHooks",
    "middleware_state_schema",
    "with_messages",
]

Hook = Literal["before_agent", "before_model", "after_model", "after_agent"]
#: The state key that says which agent's ``before_agent`` hooks ran in this invocation (an
#: ``UntrackedValue``: never checkpointed, so every invocation starts without it).
ENTERED_KEY = "middleware_entered"
#: The state key that holds the id of a reply whose ``after_model`` hooks paused the run
#: (``interrupt()``, as ``HumanInTheLoopMiddleware`` does): the reply is kept, and the agent's
#: next step runs those hooks again before anything else, so a resumed run never asks the
#: model twice. Checkpointed, as the pause is.
AFTER_MODEL_KEY = "middleware_after_model"
#: The keys of LangChain's ``AgentState`` that are not channels of ours: ``messages`` is ours
#: already; ``jump_to`` is read from a hook's update; a swarm has no structured response.
_AGENT_STATE_KEYS = {"messages", "jump_to", "structured_response"}
#: The core's channels a middleware may declare again, its type and reducer replacing the
#: core's (the first middleware that does wins): ``context_variables``, Swarm's plain dict until
#: a middleware types it (graph/features/context_middleware.py, for ``context_schema=``).
_REDECLARED = {"context_variables"}


@dataclass(frozen=True)
class MiddlewareStop:
    """Why a middleware stopped the run: its name, the hook, and the text it left (the last
    message it wrote, e.g. ``ModelCallLimitMiddleware``'s "Model call limits exceeded")."""

    middleware: str
    hook: str
    reason: str


def _extends(middleware: Any, hook: str) -> bool:
    """Whether ``middleware`` defines the swarm extension ``hook`` (sync or ``a``-async)."""
    return callable(getattr(middleware, hook, None)) or callable(
        getattr(middleware, f"a{hook}", None)
    )


def _overrides(middleware: AgentMiddleware, hook: str) -> bool:
    """Whether ``middleware`` implements ``hook`` (sync or async), as ``create_agent`` asks
    (found once per class: a run's own middleware makes a stack per run)."""
    return hook in _overridden(type(middleware))


#: LangChain's hooks a step calls, each found per class by :func:`_overridden`.
_LANGCHAIN_HOOKS = (
    "before_agent",
    "before_model",
    "after_model",
    "after_agent",
    "wrap_model_call",
    "wrap_tool_call",
)
#: The state hooks among them (a step calls them with the state, :meth:`StepHooks._run`).
_STATE_HOOKS = ("before_agent", "before_model", "after_model", "after_agent")


def _overridden(kind: type) -> frozenset[str]:
    """The hooks of :data:`_LANGCHAIN_HOOKS` that middleware class ``kind`` implements (sync
    or async), found once per class: a run's own middleware makes a stack per run."""
    found = _OVERRIDES.get(kind)
    if found is None:
        from langchain.agents.middleware import AgentMiddleware

        if len(_OVERRIDES) > 4096:  # classes made at run time (decorators) must not grow it
            _OVERRIDES.clear()
        found = _OVERRIDES[kind] = frozenset(
            hook
            for hook in _LANGCHAIN_HOOKS
            if getattr(kind, hook) is not getattr(AgentMiddleware, hook)
            or getattr(kind, f"a{hook}") is not getattr(AgentMiddleware, f"a{hook}")
        )
    return found


_OVERRIDES: dict[type, frozenset[str]] = {}


class MiddlewareStack:
    """The middleware one agent's steps call: the run's (``Swarm``/graph-level) around the
    agent's own, each hook's implementers found once (in one pass over the middleware: a
    run's own options make a stack per run)."""

    def __init__(self, run: Sequence[AgentMiddleware], own: Sequence[AgentMiddleware]) -> None:
        self.run, self.own = list(run), list(own)
        every = [*self.run, *self.own]
        outer = len(self.run)  # every[:outer] is the run's, the rest the agent's own
        entering: dict[str, list[AgentMiddleware]] = {"run": [], "own": []}
        leaving: dict[str, list[AgentMiddleware]] = {"run": [], "own": []}
        before_model: list[AgentMiddleware] = []
        after_model: list[AgentMiddleware] = []
        model_wrappers: list[AgentMiddleware] = []
        tool_wrappers: list[AgentMiddleware] = []
        handoff: list[Any] = []
        choosers: list[Any] = []
        step_starts: list[Any] = []
        holders: list[Any] = []
        writer: Any = None
        brings = False
        #: Each state hook's function for the sync and the async driver, and whether it is
        #: awaited (an async hook's), read once (a step calls them often).
        self.calls: dict[tuple[int, str, bool], tuple[Callable[..., Any], bool]] = {}
        for index, m in enumerate(every):
            hooks = _overridden(type(m))
            if hooks:
                side = "run" if index < outer else "own"
                if "before_agent" in hooks:
                    entering[side].append(m)
                if "after_agent" in hooks:
                    leaving[side].append(m)
                if "before_model" in hooks:
                    before_model.append(m)
                if "after_model" in hooks:
                    after_model.append(m)
                if "wrap_model_call" in hooks:
                    model_wrappers.append(m)
                if "wrap_tool_call" in hooks:
                    tool_wrappers.append(m)
                for hook in _STATE_HOOKS:
                    if hook in hooks:  # (a hook never called has no function to read)
                        for awaited in (False, True):
                            self.calls[id(m), hook, awaited] = _hook_function(m, hook, awaited)
            # the swarm's extensions, read on the object (an instance may carry its own)
            if _extends(m, "before_handoff"):
                handoff.append(m)
            brings = brings or bool(getattr(m, "tools", None))
            if callable(getattr(m, "next_agent", None)):
                choosers.append(m)
            if callable(getattr(m, "before_step", None)):
                step_starts.append(m)
            if callable(getattr(m, "hold_calls", None)):
                holders.append(m)
            if writer is None and callable(getattr(m, "tool_context", None)):
                writer = m
        # the after_* hooks in reverse order (LangChain's)
        leaving["run"].reverse()
        leaving["own"].reverse()
        after_model.reverse()
        self.entering, self.leaving = entering, leaving
        self.before_model, self.after_model = before_model, after_model
        self.model_wrappers, self.tool_wrappers = model_wrappers, tool_wrappers
        #: Each wrapper's hook, bound once, for the sync and the async driver (a step wraps
        #: every model and tool call with them: the attribute reads are not repeated per call).
        self.model_wraps = bound(model_wrappers, "wrap_model_call")
        self.tool_wraps = bound(tool_wrappers, "wrap_tool_call")
        #: The swarm's own extension: each middleware with a ``before_handoff`` hook, in order.
        self.handoff = handoff
        #: Every middleware's ``tools`` (``AgentMiddleware.tools``), as step functions: they
        #: join the agent's own in its model's tool list (``GraphRuntime.tools_of``).
        self.tools = middleware_tools(every) if brings else []
        #: The middleware with a ``next_agent`` hook (:class:`Takeover`), in order.
        self.choosers = choosers
        #: The middleware with a ``before_step`` hook (the step's start: it may answer calls
        #: left waiting instead of asking the model), and with a ``hold_calls`` hook (the
        #: reply's calls about to run: it may hold some unanswered), in order.
        self.step_starts: list[Any] = step_starts
        self.holders: list[Any] = holders
        #: The first middleware with a ``tool_context`` hook: how the tool runner applies and
        #: checks each call's ``context_variables`` change (``tool_context(control)`` gives
        #: graph/core/tool_calls.py's ``ContextWrites``); None, Swarm's plain dict rules.
        self.context_writer: Any = writer
        self.enters = bool(entering["run"] or entering["own"])
        self.leaves = bool(leaving["run"] or leaving["own"])
        #: Whether a step's hooks need the agent's state key (``before_agent`` and
        #: ``after_agent`` read it); a stack without those never looks it up.
        self.keyed = self.enters or self.leaves


class RunMiddleware:
    """Middleware one run's own options install (``Swarm.run(budget=...)``, made by
    graph/prepared_run.py): ``of(agent)`` gives an agent's list, outermost, around the graph's
    (``Swarm(middleware=)``) and the agent's own. Kept in ``RunControl.middleware``; a run
    without such options has none, and its steps ask nothing more. The stacks are the run's
    own (its middleware objects live and die with it).

    ``of`` gives the same middleware for the same agent object each time it is asked (each
    agent's stack is built once and kept): a feature makes one middleware per agent and keeps
    it, as a budget does.

    Its ``before_handoff`` hooks are asked last, after every other hook let the switch
    through: one that admits a switch may hold it against a limit until it is booked (a
    budget's ``max_handoffs``), so it is asked only about a switch that happens, and once
    about a switch another hook redirected.

    Example:
        >>> from langchain.agents.middleware import AgentMiddleware
        >>> from swarmgraph.graph.core.types import Agent
        >>> class Watch(AgentMiddleware):
        ...     def before_model(self, state, runtime):
        ...         return None
        >>> watch = Watch()
        >>> run = RunMiddleware(lambda agent: (watch,))
        >>> stack = run.stack_for(Agent(), [], [])
        >>> stack.before_model == [watch], run.stack_for(Agent(), [], []) is stack
        (True, True)
        >>> class Door(AgentMiddleware):
        ...     def before_handoff(self, handoff):
        ...         return None
        >>> door, mine = Door(), Door()
        >>> RunMiddleware(lambda agent: (mine,)).stack_for(Agent(), [door], []).handoff == [
        ...     door, mine]
        True
    """

    def __init__(self, of: Callable[[Agent], Sequence[AgentMiddleware]]) -> None:
        self.of = of
        self._stacks: dict[tuple[tuple[int, ...], tuple[int, ...]], MiddlewareStack] = {}
        #: Each agent's stack where this run's options are its only middleware (the usual
        #: case: a budget's or tracing's alone), by the agent's ``id`` (the agent kept beside
        #: it, so the id cannot be reused while kept): every step asks, and this answers
        #: without asking ``of`` or making a key of every middleware's id.
        self._alone: dict[int, tuple[Agent, MiddlewareStack | None]] = {}

    def stack_for(
        self, agent: Agent, graph: Sequence[AgentMiddleware], own: Sequence[AgentMiddleware]
    ) -> MiddlewareStack | None:
        """``agent``'s stack: this run's middleware for it around ``graph``'s (the run-level
        list the graph was built with) around ``own``; None when all three are empty."""
        alone = not graph and not own
        if alone:
            kept = self._alone.get(id(agent))
            if kept is not None and kept[0] is agent:
                return kept[1]
        mine = self.of(agent)
        stack: MiddlewareStack | None = None
        if mine or not alone:
            run = [*mine, *graph]
            key = (tuple(map(id, run)), tuple(map(id, own)))
            stack = self._stacks.get(key)
            if stack is None:
                if len(self._stacks) > AGENTS_KEPT:
                    self._stacks.clear()
                stack = self._stacks[key] = MiddlewareStack(run, own)
                if mine and stack.handoff:  # the run's options' handoff hooks last (see above)
                    first = [m for m in stack.handoff if all(m is not x for x in mine)]
                    stack.handoff = [*first, *(m for m in stack.handoff if m not in first)]
        if alone:
            if len(self._alone) > AGENTS_KEPT:
                self._alone.clear()
            self._alone[id(agent)] = (agent, stack)
        return stack

    @classmethod
    def around(
        cls, outer: Callable[[Agent], Sequence[AgentMiddleware]], under: RunMiddleware | None
    ) -> RunMiddleware:
        """A run's middleware: ``outer(agent)``'s around ``under``'s (the run's options
        installed before), for each agent; ``under`` None: ``outer``'s alone.

        Example:
            >>> from langchain.agents.middleware import AgentMiddleware
            >>> from swarmgraph.graph.core.types import Agent
            >>> first, second = AgentMiddleware(), AgentMiddleware()
            >>> both = RunMiddleware.around(lambda a: (first,), RunMiddleware(lambda a: (second,)))
            >>> both.of(Agent()) == (first, second)
            True
        """
        if under is None:
            return cls(outer)
        inner = under.of
        return cls(lambda agent: (*outer(agent), *inner(agent)))

    def refuses_model_call(self, agent: Agent, messages: Sequence[BaseMessage]) -> bool:
        """For a model call a feature makes for ``agent`` outside its step (a guardrail that
        calls a model, a LangGraph member's turn): whether a ``before_model`` hook of this
        run's own middleware ends the run instead (a budget with no model call left). Only
        the run's options are asked: the user's middleware wraps the agent's own model."""
        for m in self.of(agent):
            if _overrides(m, "before_model"):
                update = m.before_model(cast("Any", {"messages": list(messages)}), Runtime())
                if isinstance(update, Command):
                    update = _command_update(update, m, "before_model")
                if update and update.get("jump_to") == "end":
                    return True
        return False


def middleware_state_schema(base: type, middleware: Sequence[AgentMiddleware]) -> type:
    """``base`` (the graph's state) with every middleware's ``state_schema`` fields and the
    step's own bookkeeping key (:data:`ENTERED_KEY`), as one ``TypedDict``: LangGraph then keeps
    ``ModelCallLimitMiddleware``'s counters like any channel (``UntrackedValue`` ones per run).

    Example:
        >>> from langchain.agents.middleware import ModelCallLimitMiddleware
        >>> from swarmgraph.graph.core.state import SwarmState
        >>> schema = middleware_state_schema(SwarmState, [ModelCallLimitMiddleware(run_limit=2)])
        >>> sorted(k for k in schema.__annotations__ if "count" in k)
        ['run_model_call_count', 'thread_model_call_count']
    """
    fields: dict[str, Any] = dict(get_type_hints(base, include_extras=True))
    redeclared: set[str] = set()
    for each in middleware:
        for key, hint in get_type_hints(each.state_schema, include_extras=True).items():
            if key in _AGENT_STATE_KEYS:
                continue
            if key not in fields:
                fields[key] = hint
            elif key in _REDECLARED and key not in redeclared:
                fields[key] = hint
                redeclared.add(key)
    # the step's own keys, only where a hook needs them (every channel costs each step)
    if any(_overrides(m, "before_agent") for m in middleware):
        fields[ENTERED_KEY] = NotRequired[Annotated[str | None, UntrackedValue]]
    if any(_overrides(m, "after_model") for m in middleware):
        fields[AFTER_MODEL_KEY] = NotRequired[str | None]
    return TypedDict(f"{base.__name__}WithMiddleware", fields)  # type: ignore[operator]


class StepHooks:
    """One step's middleware calls, and what they wrote: the working state they see (the
    step's input with their updates applied), the messages they wrote in order, their other
    state keys, and the stop, if one jumped to the end.

    The step (graph/core/node.py) asks it at each moment; everything the hooks wrote goes into
    the step's update through :meth:`written_update`.
    """

    # What a hook did, None until one does (read from the class until then: a step makes one
    # of these, and most steps' hooks do none of it).
    #: The stop, when a hook jumped to the end.
    stopped: MiddlewareStop | None = None
    #: The hook that paused the run with ``interrupt()``, and what it asked.
    paused_by: MiddlewareStop | None = None
    jump: str | None = None
    #: Where a hook handed the conversation (``jump_to=HandTo(agent)``), or None.
    handed: HandTo | None = None
    #: The ``Command`` s ``wrap_model_call`` hooks returned with the reply
    #: (``ExtendedModelResponse``), inner first, for the step to apply after it.
    model_commands: list[Any] | None = None

    def __init__(
        self,
        stack: MiddlewareStack,
        state: Mapping[str, Any],
        config: RunnableConfig,
        io: Driver,
        agent_key: str | None,
        control: object | None = None,
    ) -> None:
        self.stack = stack
        #: The run's ``RunControl``, for hooks that read it (``hook_context.step_control``).
        self.control = control
        self.io = io
        #: The agent's state key, which ``before_agent``/``after_agent`` read (None where the
        #: stack has neither: ``MiddlewareStack.keyed``).
        self.agent_key = agent_key
        self.awaited = isinstance(io, AsyncDriver)
        #: The conversation as the hooks see it; the state's own list until a hook writes
        #: (``with_messages`` makes a new list, never changing the state's).
        self.messages: list[BaseMessage] = state.get("messages") or []
        self.values: dict[str, Any] = {}
        self.written: list[BaseMessage] = []
        self._state = state
        self.config = config
        configurable = config.get("configurable") or {}
        self.runtime: Runtime = configurable.get("__pregel_runtime") or Runtime()

    # -- the state hooks see ---------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """The state as a hook sees it: the step's input, with every hook update so far."""
        return {**self._state, **self.values, "messages": self.messages}

    def apply_model_commands(self) -> bool:
        """Apply the ``Command`` s ``wrap_model_call`` hooks returned with the reply (see
        :attr:`model_commands`), inner first, as ``create_agent`` applies them after its model
        node: their messages after the reply, their keys as any hook's. True when one jumped
        to the end. Like ``create_agent``, a command that goes somewhere is refused."""
        commands, self.model_commands = self.model_commands or [], None
        for command in commands:
            if _goes_somewhere(command):
                raise NotImplementedError(
                    "a wrap_model_call hook returned a Command with goto, resume or graph, "
                    "which create_agent does not support either: write the jump_to key from "
                    "before_model/after_model, or return an Agent from a tool to hand off"
                )
            if self.apply(command.update, None, "wrap_model_call"):
                return True
        return False

    def apply(
        self, update: Mapping[str, Any] | None, by: AgentMiddleware | None, hook: str
    ) -> bool:
        """Apply one hook's update; True when it jumped to the end (the run stops). A hook
        may return a LangGraph ``Command`` for its update, as a ``create_agent`` node may."""
        if isinstance(update, Command):
            update = _command_update(update, by, hook)
        if not update:
            return False
        update = dict(update)
        jump = update.pop("jump_to", None)
        update.pop("structured_response", None)
        added = update.pop("messages", None)
        if added:
            added = list(added)
            self.messages = with_messages(self.messages, added)  # ids given, as by the channel
            self.written.extend(added)
        self.values.update(update)
        if jump is None:
            return False
        if isinstance(jump, HandTo):  # the swarm's jump: to another agent
            self.handed = jump
            return True
        self.jump = jump
        if jump == "end":
            said = next((m for m in reversed(added or ()) if isinstance(m, BaseMessage)), None)
            name = by.name if by is not None else "a middleware"
            reason = said.text if said is not None else f"{name} ended the run in {hook}"
            self.stopped = MiddlewareStop(name, hook, reason)
            return True
        return False

    async def _run(self, hook: Hook, middleware: Sequence[AgentMiddleware]) -> bool:
        calls, awaited = self.stack.calls, self.awaited
        with hook_control(self.control):  # (set once for the hooks of this moment)
            for m in middleware:
                call, awaits = calls[id(m), hook, awaited]
                try:
                    update = call(self.view(), self.runtime)
                    if awaits:
                        update = await update
                except GraphInterrupt as pause:  # interrupt(): who paused, and what it asks
                    self.paused_by = MiddlewareStop(m.name, hook, _asks(pause))
                    raise
                if self.apply(update, m, hook):
                    return True
        return False

    # -- the moments ---------------------------------------------------------------------
    async def enter(self) -> bool:
        """``before_agent``: the run's middleware when the invocation starts, the agent's own
        when the run enters it. True: a hook stopped the run (or handed it over: ``handed``)."""
        entered = self._state.get(ENTERED_KEY)
        if not self.stack.enters or entered == self.agent_key:
            return False
        self.values[ENTERED_KEY] = self.agent_key
        if entered is None and await self._run("before_agent", self.stack.entering["run"]):
            return True
        return await self._run("before_agent", self.stack.entering["own"])

    async def before_model(self) -> bool:
        """``before_model``, in order. True: a hook stopped the run."""
        return await self._run("before_model", self.stack.before_model)

    async def after_model(self) -> bool:
        """``after_model``, in reverse order. True: a hook stopped the run."""
        return await self._run("after_model", self.stack.after_model)

    def paused_reply(self) -> AIMessage | None:
        """The reply whose ``after_model`` hooks paused the run (see :data:`AFTER_MODEL_KEY`),
        when this step resumes it."""
        pending = self._state.get(AFTER_MODEL_KEY)
        if not pending:  # (every hooked step asks; one resuming a pause is rare)
            return None
        last = self.messages[-1] if self.messages else None
        if pending and isinstance(last, AIMessage) and last.id == pending:
            return last
        return None

    async def leave(self, run_ends: bool) -> None:
        """``after_agent``: the agent's own when it hands off or the run ends on it, then the
        run's when the run ends."""
        if await self._run("after_agent", self.stack.leaving["own"]) or not run_ends:
            return
        await self._run("after_agent", self.stack.leaving["run"])

    # -- around the model and the tools -------------------------------------------------------
    async def call_model(
        self,
        request: ModelRequest,
        call: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> AIMessage:
        """The model call through every ``wrap_model_call``, the first outermost; ``call``
        asks the model for a request (the step's own call when nothing changed it) and gives
        its reply as LangChain's ``ModelResponse`` (:func:`model_response`)."""
        wraps = self.stack.model_wraps
        with hook_control(self.control):
            if self.awaited:
                composed = await athrough(wraps[1], request, call, amodel_layer)
            else:
                composed = through(wraps[0], request, call, model_layer)
        if composed.commands:  # applied with the reply, after it (_after_model)
            self.model_commands = composed.commands
        return reply_of(composed.response)

    async def call_tool(
        self,
        request: ToolCallRequest,
        run: Callable[[ToolCallRequest], Awaitable[ToolMessage]],
    ) -> Any:
        """A tool call through every ``wrap_tool_call``, the first outermost."""
        wraps = self.stack.tool_wraps
        with hook_control(self.control):
            if self.awaited:
                return await athrough(wraps[1], request, run)
            return through(wraps[0], request, run)

    def tool_request(
        self, tool_call: dict[str, Any], tool: Any, tools: list[Any]
    ) -> ToolCallRequest:
        """LangGraph's ``ToolCallRequest`` for one call of the reply, as ``ToolNode`` makes it:
        ``tool_call`` is LangChain's ``ToolCall`` (``name``, ``args``, ``id``, ``type``), given
        as it is; ``tool`` the ``BaseTool`` it calls (a LangChain tool, or a swarm function's
        ``FunctionTool``, graph/core/request_tools.py; None for a tool the agent has not);
        ``runtime`` a ``ToolRuntime`` for the call (the step's config, LangGraph's context, store
        and stream writer, ``tools``: the step's tools, listed so)."""
        state = self.view()
        fields = {
            "tool_call": tool_call,
            "tool": tool,
            "state": state,
            "runtime": tool_runtime(state, self.runtime, self.config, tool_call.get("id"), tools),
        }
        request: ToolCallRequest = _made("ToolCallRequest", fields)
        return request

    def model_request(
        self, model: Any, prompt: Sequence[BaseMessage], tools: list[Any], choice: Any
    ) -> ModelRequest:
        """LangChain's ``ModelRequest`` for the step's prompt (its first message the system
        prompt, the instructions) and the agent's tools as ``BaseTool`` s
        (graph/core/request_tools.py), ``tools`` a list made for this request (it becomes the
        request's own); every field as
        ``ModelRequest(...)`` sets it from these arguments."""
        system = prompt[0] if prompt and isinstance(prompt[0], SystemMessage) else None
        fields = {
            "model": model,
            "messages": prompt[1:] if system is not None else list(prompt),  # (a new list)
            "system_message": system,
            "tool_choice": choice,
            "tools": tools,  # (the caller's own list, made for this request)
            "response_format": None,
            "state": self.view(),
            "runtime": self.runtime,
            "model_settings": {},
        }
        request: ModelRequest = _made("ModelRequest", fields)
        return request

    # -- what the step writes ----------------------------------------------------------------
    def written_update(self) -> dict[str, Any]:
        """The hooks' state keys for the step's update (their messages go in separately, in
        the order they were written)."""
        return dict(self.values)

    def answered(self) -> set[str]:
        """The tool call ids a hook answered (those calls do not run)."""
        return {m.tool_call_id for m in self.written if isinstance(m, ToolMessage)}

    def current(self, reply: AIMessage) -> AIMessage:
        """``reply`` as the hooks left it (a hook that rewrote it wrote one with its id)."""
        for message in reversed(self.messages):
            if message.id == reply.id and isinstance(message, AIMessage):
                return message
        return reply


def _hook_function(
    middleware: AgentMiddleware, hook: str, awaited: bool
) -> tuple[Callable[..., Any], bool]:
    """The function a step calls for ``hook`` of ``middleware`` and whether its result is
    awaited: the async twin under the async driver where the middleware has one, else the
    sync hook, called as it is; an async-only hook under the sync driver (its coroutine is
    driven in place)."""
    from langchain.agents.middleware import AgentMiddleware

    kind = type(middleware)
    has_sync = getattr(kind, hook) is not getattr(AgentMiddleware, hook)
    has_async = getattr(kind, f"a{hook}") is not getattr(AgentMiddleware, f"a{hook}")
    if has_async and (awaited or not has_sync):
        return getattr(middleware, f"a{hook}"), True
    return getattr(middleware, hook), False


#: Each request class whose instance may be made by setting its fields at once (a dataclass
#: whose fields are exactly the ones the step gives; found once per class), else False.
_DIRECT: dict[str, Any] = {}


def _made(name: str, fields: dict[str, Any]) -> Any:
    """An instance of the request class ``name`` (:func:`langchain_class`) with every field given
    in ``fields``. ``ModelRequest`` and LangGraph's ``ToolCallRequest`` set each field in their
    ``__init__`` one ``__setattr__`` at a time (``ToolCallRequest``'s own checks each, and
    imports ``warnings`` each time); the same object is made by filling the instance's
    ``__dict__`` at once, which every model and tool call a middleware wraps pays. A class
    whose fields are not exactly those given (another version of LangChain) is made through
    its constructor.

    Example:
        >>> call = {"name": "f", "args": {}, "id": "c1", "type": "tool_call"}
        >>> request = _made("ToolCallRequest",
        ...     {"tool_call": call, "tool": None, "state": {}, "runtime": None})
        >>> request.tool_call["id"], request.override(state={"x": 1}).state
        ('c1', {'x': 1})
    """
    kind: Any = _DIRECT.get(name)
    if kind is None:
        from dataclasses import fields as fields_of
        from dataclasses import is_dataclass

        found = langchain_class(name)
        direct = (
            is_dataclass(found)
            and "__slots__" not in vars(found)
            and {f.name for f in fields_of(found)} == set(fields)
        )
        kind = _DIRECT[name] = found if direct else False  # (False: made by its constructor)
    if kind is False:
        return langchain_class(name)(**fields)
    made = object.__new__(kind)
    made.__dict__.update(fields)
    return made


def _goes_somewhere(command: Command) -> bool:
    """Whether a hook's ``Command`` does more than update the state (``create_agent`` follows
    no such command from a hook either)."""
    return bool(command.goto) or command.resume is not None or command.graph is not None


def _command_update(command: Command, by: AgentMiddleware | None, hook: str) -> Any:
    """The update of a ``Command`` a state hook returned; one that goes somewhere is a clear
    error (a swarm step's hooks jump with ``jump_to``)."""
    if _goes_somewhere(command):
        name = by.name if by is not None else "a middleware"
        raise TypeError(
            f"{name}'s {hook} returned a Command with goto, resume or graph, which a swarm "
            'step does not follow: return {"jump_to": "end"} to end the run, or '
            '{"jump_to": HandTo(agent)} to hand the conversation to another agent'
        )
    return command.update


def with_messages(messages: list[BaseMessage], more: Sequence[Any]) -> list[BaseMessage]:
    """``messages`` with ``more`` applied as the ``messages`` channel applies an update
    (``add_messages``: a known id replaces, ``RemoveMessage`` removes, new ones get ids)."""
    return cast("list[BaseMessage]", add_messages(cast("Any", messages), cast("Any", list(more))))


def _asks(pause: GraphInterrupt) -> str:
    """What an ``interrupt()`` asked, as text (its values, e.g. HumanInTheLoopMiddleware's
    action requests)."""
    found = pause.args[0] if pause.args else ()
    values = [getattr(i, "value", i) for i in found] if isinstance(found, Sequence) else [found]
    return f"waiting for a human: {values!r}"
