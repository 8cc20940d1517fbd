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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.runnables import RunnableConfig

from .books import Books, current_branch
from .errors import BudgetExceeded, GuardrailTripped

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .approvals import PendingApproval
    from .budget import Budget
    from .effects import EffectLedger
    from .types import Agent

RUN_CONTROL_KEY = "__swarmgraph_run"

#: ``(active agent, the conversation's messages) -> text or None``, asked before every model
#: call: text to append to that agent's system prompt (a Session's long-term recall: what it
#: remembers about the user that is relevant now, from the scopes that agent may read).
PromptContext: TypeAlias = "Callable[[Agent, Sequence[BaseMessage]], str | None]"
#: ``active agent -> {injected parameter: value}``: the values of the injected tool
#: parameters (``graph.schema.INJECTED``) other than ``context_variables``, for the tools of
#: the agent whose calls run now (e.g. ``{"long_term": <the user's memory as it sees it>}``).
ToolInputs: TypeAlias = "Callable[[Agent], Mapping[str, Any]]"


@dataclass
class RunControl:
    """One run's settings (Swarm.run's arguments) and its running counters."""

    model_override: str | None = None
    max_turns: float = math.inf
    execute_tools: bool = True
    debug: bool = False
    new_messages: int = 0
    budget: Budget | None = None
    #: Swarm.run's ``approvals``; ``None`` means "ask": the compiled graph interrupts.
    approvals: dict[str, bool | str] | None = None
    #: Swarm.run stops (returns ``Response.pending``) instead of calling ``interrupt()``.
    stop_for_approval: bool = False
    #: The approval-marked calls the run stopped for, by parallel branch (``None``: the main
    #: run); read and set through :attr:`awaiting`.
    waiting_in: dict[str | None, list[PendingApproval]] = field(default_factory=dict)
    #: The budget limit that stopped the run (``Swarm.run`` raises it, holding the Response);
    #: no node goes on after it.
    exceeded: BudgetExceeded | None = None
    #: The guardrail that stopped the run (``Swarm.run`` raises it, holding the Response); no
    #: node goes on after it.
    tripped: GuardrailTripped | None = None
    #: The context dict last validated against the run's ``context_schema`` (on entry, after
    #: a tool update): a node reading that very object skips validating it again.
    valid_context: dict[str, Any] | None = None
    #: A tripped guardrail stops the run for ``Swarm.run`` to raise (``tripped``); False (the
    #: compiled graph, which has no Response to give): the node raises it at once.
    halt_on_trip: bool = False
    #: This run's agents by node name (``Swarm`` compiles one graph per topology and passes
    #: the caller's Agent objects here); None: the nodes use the agents the graph was built on.
    agents: dict[str, Agent] | None = None
    #: Agents a tool handed off to that no node was built for, by state key (this run only).
    dynamic: dict[str, Agent] = field(default_factory=dict)
    #: Where effect tools are recorded (graph/effects.py): ``Session`` passes one to every
    #: run; None: a compiled graph with a store uses the store, else nothing is recorded.
    effects: EffectLedger | None = None
    #: Text for the system prompt of each model call (see :data:`PromptContext`).
    prompt_context: PromptContext | None = None
    #: Values of injected tool parameters (see :data:`ToolInputs`).
    tool_inputs: ToolInputs | None = None
    #: Whether an agent of this run has a tool marked ``@needs_approval`` or ``@effect``
    #: (``GraphRuntime.decides`` finds out once): none, and approvals and effects are skipped.
    decides: bool | None = None
    #: Usage in total and by agent and the trajectory (graph/books.py), with the budget's
    #: checks when the run has one (``Budget.ledger()``: graph/budget.py).
    ledger: Books = field(init=False)
    #: Parallel branches (graph/branches.py): each finished branch's record, in the order they
    #: finished (``Response.branches`` sorts them), the fan-outs' ids in the order they
    #: happened, what a branch raised (the join re-raises it), and the fan-out a resumed run
    #: picks up (``Swarm.run(..., branches=)``).
    branches: list[dict[str, Any]] = field(default_factory=list)
    fan_outs: list[str] = field(default_factory=list)
    branch_errors: dict[tuple[str, int], BaseException] = field(default_factory=dict)
    resume: Any = None  # the Sends that pick a paused fan-out up (graph/branches.py)
    resumed: Any = None  # (plan, results of the branches that had answered) for its join
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.ledger = Books() if self.budget is None else self.budget.ledger()

    @property
    def awaiting(self) -> list[PendingApproval] | None:
        """The approval-marked calls the run stopped for (``Swarm.run`` returns them as
        ``Response.pending``); no node goes on after it. Inside a parallel branch, that
        branch's own: one branch waiting for a human stops no other branch."""
        return self.waiting_in.get(current_branch())

    @awaiting.setter
    def awaiting(self, calls: list[PendingApproval] | None) -> None:
        if calls is None:
            self.waiting_in.pop(current_branch(), None)
        else:
            self.waiting_in[current_branch()] = calls

    def waiting_under(self, branch: str) -> bool:
        """Whether branch ``branch`` (or a branch nested in it) stopped for approval."""
        return any(
            key is not None and (key == branch or key.startswith(f"{branch}/"))
            for key in self.waiting_in
        )

    def config(self, recursion_limit: int | None = None) -> RunnableConfig:
        config: RunnableConfig = {"configurable": {RUN_CONTROL_KEY: self}}
        if recursion_limit is not None:
            config["recursion_limit"] = recursion_limit
        return config

    def turns_left(self) -> bool:
        return (
            (not self.waiting_in or self.awaiting is None)
            and self.exceeded is None
            and self.tripped is None
            and self.new_messages < self.max_turns
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
        return RunControl()
    return control
