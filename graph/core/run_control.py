"""Per-run settings and counters that ``Swarm.run`` hands to the graph through its config.

They live in ``config["configurable"]`` rather than in the state because they belong
to one call (``max_turns``, ``model_override``, ``debug``), not to the conversation:
a checkpointed thread must not remember them.

Example:
    >>> control = RunControl(max_turns=3)
    >>> config = control.config()
    >>> current_control(config) is control
    True
    >>> current_control({}).max_turns
    inf
"""

from __future__ import annotations

import datetime
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from langchain_core.runnables import RunnableConfig

from .errors import SwarmError
from .state import BRANCH_LABEL

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import BaseMessage

    from .middleware import MiddlewareStop, RunMiddleware
    from .types import Agent

RUN_CONTROL_KEY = "__swarmgraph_run"
#: The config key of what sets up each control of a compiled graph invoked directly (a function
#: of the fresh ``RunControl``; graph/observed_graph.py: a traced invoke installs its middleware).
SETUP_KEY = "__swarmgraph_setup"


#: What the books count, in total and per agent.
COUNTS = ("model_calls", "input_tokens", "output_tokens", "tool_calls", "handoffs")


@dataclass(eq=False)
class Books:
    """One run's counters and trajectory (kept in the run's ``RunControl`` as ``ledger``),
    by plain counting. A feature that limits a run may bring a subclass that also checks (a
    ``Budget``'s ``Ledger``, graph/features/budget.py); the core only books.

    Example:
        >>> books = Books()
        >>> books.model_called("Triage", "gpt-4o", input_tokens=10, output_tokens=2, tool_calls=[])
        >>> books.handed_off("Triage", "Sales")
        >>> books.usage["model_calls"], books.usage["by_agent"]["Triage"]["handoffs"]
        (1, 1)
        >>> [step["kind"] for step in books.trajectory]
        ['model', 'handoff']
    """

    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    by_agent: dict[str, dict[str, int]] = field(default_factory=dict)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    #: ``time.perf_counter()`` when the run began: branch times are seconds since then.
    started: float = field(default_factory=time.perf_counter)
    # Parallel branches book from several threads (or tasks) at once.
    _lock: Any = field(default_factory=threading.Lock, repr=False)

    @property
    def usage(self) -> dict[str, Any]:
        """``Response.usage``: the totals plus ``by_agent`` (copies)."""
        copies = {agent: dict(counts) for agent, counts in self.by_agent.items()}
        return {**self.totals, "by_agent": copies}

    # -- records (after a step) -------------------------------------------------------
    def model_called(
        self, agent: str, model: str, *, input_tokens: int, output_tokens: int, tool_calls: list
    ) -> None:
        entry = {
            "agent": agent,
            "kind": "model",
            "name": model,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "tool_calls": [call["name"] for call in tool_calls],
        }
        counts = {"model_calls": 1, "input_tokens": input_tokens, "output_tokens": output_tokens}
        self.book(agent, entry, counts)

    def tool_called(
        self, agent: str, name: str, call_id: str, arguments: Any, **extra: Any
    ) -> None:
        entry = {
            "agent": agent,
            "kind": "tool",
            "name": name,
            "id": call_id,
            "arguments": arguments,
        }
        self.book(agent, entry | extra, {"tool_calls": 1})

    def handed_off(self, agent: str, to: str, *, route: str | None = None) -> None:
        if route is None:
            entry = {"agent": agent, "kind": "handoff", "name": to}
        else:
            entry = {"agent": agent, "kind": "route", "name": route, "to": to}
        self.book(agent, entry, {"handoffs": 1})

    def fanned_out(self, agent: str, tool: str, labels: Sequence[str]) -> None:
        """``agent``'s tool ``tool`` handed the conversation to parallel branches ``labels``
        (one handoff each)."""
        entry = {"agent": agent, "kind": "fan_out", "name": tool, "branches": list(labels)}
        self.book(agent, entry, {"handoffs": len(labels)})

    def checked(
        self,
        agent: str,
        kind: str,
        name: str,
        reason: str | None,
        *,
        when: str | None = None,
        model: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> None:
        """A guardrail or precondition ran on ``agent`` (``kind``: ``"guardrail"`` or
        ``"precondition"``): on the trajectory, passed or not; a guardrail's own model call
        (``model`` or tokens given) counts as a model call of ``agent``, with its tokens."""
        entry: dict[str, Any] = {"agent": agent, "kind": kind, "name": name}
        if when is not None:
            entry["when"] = when
        entry["passed"] = reason is None
        if reason is not None:
            entry["reason"] = reason
        counts: dict[str, int] = {}
        if model is not None or input_tokens or output_tokens:
            counts = {
                "model_calls": 1,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
            }
            entry.update(model=model, input_tokens=input_tokens, output_tokens=output_tokens)
        self.book(agent, entry, counts, labelled=False)  # as it ran, outside a branch label

    # -- any entry ----------------------------------------------------------------------
    def book(
        self, agent: str, entry: dict[str, Any], counts: dict[str, int], labelled: bool = True
    ) -> None:
        """Count ``counts`` for ``agent`` and the run, and put ``entry`` on the trajectory
        (``labelled``: with the branch it ran in). An agent is in ``by_agent`` once
        something of its own was counted. A feature books its own kinds of entry here (a
        fan-out's branches and join: graph/features/branches.py; a call a human denied:
        graph/features/decisions.py)."""
        branch = BRANCH_LABEL.get() if labelled else None
        if branch is not None:
            entry["branch"] = branch
        with self._lock:
            if counts:
                mine = self.by_agent.get(agent)
                if mine is None:
                    mine = self.by_agent[agent] = dict.fromkeys(COUNTS, 0)
                for key, value in counts.items():
                    self.totals[key] += value
                    mine[key] += value
            self.trajectory.append(entry)


class RunState:
    """A feature's state for one run: one object per feature, kept by the run's
    :class:`RunControl` under its class (:meth:`RunControl.own`, :meth:`RunControl.state_of`),
    so every access to it is typed (``RunControl.features``). The core knows one thing about
    it: whether the feature stopped the run (:meth:`halts`), which :meth:`RunControl.turns_left`
    asks.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Calls(RunState):
        ...     made: int = 0
        >>> control = RunControl()
        >>> control.state_of(Calls) is None, control.own(Calls) is control.own(Calls)
        (True, True)
        >>> control.own(Calls).made += 1
        >>> control.state_of(Calls), control.turns_left()
        (Calls(made=1), True)
    """

    __slots__ = ()

    def halts(self) -> bool:
        """Whether the feature stopped the run here: no node goes on after it."""
        return False

    def stop_error(self) -> SwarmError | None:
        """What ``Swarm.run`` raises, holding the Response, for the stop this feature made
        (a tripped guardrail), if any."""
        return None


#: :attr:`RunHooks.prompt_context`: ``(active agent, messages) -> text or None``.
PromptContext: TypeAlias = "Callable[[Agent, Sequence[BaseMessage]], str | None]"
#: :attr:`RunHooks.tool_inputs`: ``active agent -> {injected parameter: value}``.
ToolInputs: TypeAlias = "Callable[[Agent], Mapping[str, Any]]"


@dataclass(frozen=True)
class RunHooks:
    """What a caller like ``Session`` hands one run, as one object (``Swarm.run(hooks=)``,
    kept in ``RunControl.hooks``); a compiled graph's own (``build_swarm_graph``'s
    ``prompt_context=``/``tool_inputs=``) are one too, ``GraphRuntime.hooks``.

    ``effects``: where ``@effect`` and ``@needs_approval`` tools are recorded before and after
    they run (an :class:`~swarmgraph.graph.features.effects.EffectLedger`): the core only
    carries it to the effects feature, which reads it here (``effects.run_ledger``).
    ``prompt_context(agent, messages) -> str | None``: text for that agent's system prompt at
    each model call (a Session's long-term recall: what it remembers about the user that is
    relevant now); the core carries it to the middleware that asks it
    (graph/features/prompt_context.py), which ``Swarm.run`` installs when it is set.
    ``tool_inputs(agent) -> {name: value}`` gives the injected tool parameters other than
    ``context_variables`` (graph/core/injected.py, e.g. ``long_term``) of the agent whose
    calls run.
    ``conversation_id``: the Session's conversation the run is a turn of (what a trace records
    as ``gen_ai.conversation.id``). ``middleware``: LangChain ``AgentMiddleware`` the caller
    installs for this run only, around every agent's (outermost: around the graph's, the
    agent's own and the run's options', such as a budget's); a Session turn watched by
    ``swarmgraph ui`` brings the page's this way (swarmgraph/app/ui/steps.py).

    Example:
        >>> hooks = RunHooks(prompt_context=lambda agent, messages: "Today is Monday.")
        >>> hooks.tool_inputs is None, RunControl().hooks == RunHooks()
        (True, True)
    """

    effects: object | None = None
    prompt_context: PromptContext | None = None
    tool_inputs: ToolInputs | None = None
    conversation_id: str | None = None
    middleware: Sequence[AgentMiddleware] = ()


#: A run without hooks (a plain Swarm.run).
NO_HOOKS = RunHooks()


S = TypeVar("S", bound=RunState)


@dataclass
class RunControl:
    """One run's settings (Swarm.run's arguments) and its running counters: the core's only.
    A feature keeps its state for the run as one typed object (a :class:`RunState`: :meth:`own`,
    :meth:`state_of`)."""

    model_override: str | None = None
    max_turns: float = math.inf
    execute_tools: bool = True
    debug: bool = False
    new_messages: int = 0
    #: Middleware this run's own options install for each agent (``Swarm.run(budget=)``:
    #: graph/prepared_run.py), around the graph's; None (a plain run): none.
    middleware: RunMiddleware | None = None
    #: The run is ``Swarm.run``'s, which ends by returning a Response: it stops for approval
    #: (``Response.pending``) instead of calling ``interrupt()``, and a tripped guardrail is
    #: raised with the Response once the step is booked (:meth:`stop_error`), not from the
    #: node. False: the compiled graph, which has no Response to give. (Swarm.run's
    #: ``approvals`` are the approvals feature's own state: ``ApprovalsRun.given``.)
    swarm_run: bool = False
    #: The limit that refused the run's next step (a budget's: ``Swarm.run`` raises it, holding
    #: the Response); set by the feature that checks it; no node goes on after it (the core's
    #: to know: :meth:`turns_left` reads it, tracing watches it being set).
    exceeded: SwarmError | None = None
    #: This run's agents by node name (``Swarm`` compiles one graph per topology and passes
    #: the caller's Agent objects here); None: the nodes use the agents the graph was built on.
    agents: dict[str, Agent] | None = None
    #: Agents a tool handed off to that no node was built for, by state key (this run only).
    dynamic: dict[str, Agent] = field(default_factory=dict)
    #: What the caller hands the run (:class:`RunHooks`: a Session's prompt context and tool
    #: inputs); a hook it leaves unset is the graph's own (``GraphRuntime.hooks``).
    hooks: RunHooks = NO_HOOKS
    #: Usage in total and by agent and the trajectory (:class:`Books`); a run with a budget
    #: passes the budget's own subclass, which checks too (graph/features/budget.py).
    ledger: Books = field(default_factory=Books)
    #: Whether an agent of this run has a tool a feature marked (graph/core/marks.py: a mark,
    #: or an injected parameter that brings middleware; ``GraphRuntime.marked`` finds out once,
    #: ``Swarm`` sets it from the topology). False: the middleware marks bring never joins the
    #: run; None: not found out yet.
    marked: bool | None = None
    #: Each feature's state for this run, by its class (:meth:`own`, :meth:`state_of`).
    features: dict[type[RunState], RunState] = field(default_factory=dict)
    #: The middleware that stopped the run (a hook's ``jump_to="end"``: graph/core/middleware.py's
    #: ``MiddlewareStop``); ``Swarm.run``'s Response says who and why; no node goes on after it.
    stopped: MiddlewareStop | None = None

    def state_of(self, kind: type[S]) -> S | None:
        """The run's state of the feature whose state is ``kind``, if it made one."""
        return cast("S | None", self.features.get(kind))

    def own(self, kind: type[S]) -> S:
        """The run's state of the feature whose state is ``kind``, made (``kind()``) if new."""
        found = self.features.get(kind)
        if found is None:  # parallel branches may ask at once: setdefault keeps the first
            found = self.features.setdefault(kind, kind())
        return cast("S", found)

    def stop_error(self) -> SwarmError | None:
        """The error a feature that stopped the run has ``Swarm.run`` raise (holding the
        Response), if one did (:meth:`RunState.stop_error`)."""
        for state in self.features.values():
            error = state.stop_error()
            if error is not None:
                return error
        return None

    def config(self, recursion_limit: int | None = None) -> RunnableConfig:
        config: RunnableConfig = {"configurable": {RUN_CONTROL_KEY: self}}
        if recursion_limit is not None:
            config["recursion_limit"] = recursion_limit
        return config

    def turns_left(self) -> bool:
        return (
            self.exceeded is None
            and self.stopped is None
            and self.new_messages < self.max_turns
            and not (self.features and any(state.halts() for state in self.features.values()))
        )

    def debug_print(self, *args: Any) -> None:
        """Swarm's ``debug_print``: timestamped grey lines on stdout."""
        if not self.debug:
            return
        timestamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        message = " ".join(map(str, args))
        print(f"\033[97m[\033[90m{timestamp}\033[97m]\033[90m {message}\033[0m")


def current_control(config: RunnableConfig | None) -> RunControl:
    """The run's control object, or a fresh default one when the graph is used directly."""
    configurable = (config or {}).get("configurable") or {}
    control = configurable.get(RUN_CONTROL_KEY)
    if control is None:
        control = RunControl()
        setup = configurable.get(SETUP_KEY)
        if setup is not None:  # a traced invoke (graph/observed_graph.py)
            setup(control)
    return control
