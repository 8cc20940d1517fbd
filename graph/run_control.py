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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.runnables import RunnableConfig

from .budget import Budget, Ledger
from .errors import BudgetExceeded

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .approvals import PendingApproval
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
    #: The approval-marked calls the run stopped for (``Swarm.run`` returns them as
    #: ``Response.pending``); no node goes on after it.
    awaiting: list[PendingApproval] | None = None
    #: The budget limit that stopped the run (``Swarm.run`` raises it, holding the Response);
    #: no node goes on after it.
    exceeded: BudgetExceeded | None = None
    #: This run's agents by node name (``Swarm`` compiles one graph per topology and passes
    #: the caller's Agent objects here); None: the nodes use the agents the graph was built on.
    agents: dict[str, Agent] | None = None
    #: Agents a tool handed off to that no node was built for, by state key (this run only).
    dynamic: dict[str, Agent] = field(default_factory=dict)
    #: Text for the system prompt of each model call (see :data:`PromptContext`).
    prompt_context: PromptContext | None = None
    #: Values of injected tool parameters (see :data:`ToolInputs`).
    tool_inputs: ToolInputs | None = None
    #: Usage in total and by agent, the trajectory, and the budget's checks.
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = Ledger(self.budget)

    def config(self, recursion_limit: int | None = None) -> RunnableConfig:
        config: RunnableConfig = {"configurable": {RUN_CONTROL_KEY: self}}
        if recursion_limit is not None:
            config["recursion_limit"] = recursion_limit
        return config

    def turns_left(self) -> bool:
        return (
            self.awaiting is None and self.exceeded is None and self.new_messages < self.max_turns
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
