"""Hard limits on a run (:class:`Budget`), the books that check them (:class:`Ledger`), and
the middleware that asks them (:class:`BudgetMiddleware`).

A feature, attached as middleware: ``Swarm.run(budget=Budget(...))`` is sugar that gives the
run a :class:`Ledger` as its books and installs a :class:`BudgetMiddleware` for each agent of
the run (``RunControl.middleware``, graph/core/middleware.py's ``RunMiddleware``), outermost,
around ``Swarm(middleware=)`` and the agent's own. A run without a ``Budget`` keeps plain books
(``run_control.Books``: usage and the trajectory, by counting) and never enters this module.
The middleware's hooks, at the step's moments:

- ``before_model``: a model call that would pass ``max_model_calls`` or ``max_tokens`` is not
  made; the hook jumps to the end (``Response.stopped`` names it);
- ``after_model``: the reply's tool calls past ``max_tool_calls`` are answered
  ``Error: Budget exceeded: ...`` and do not run; the calls within it run, then the run stops;
- ``before_handoff`` (the swarm's extension hook, with a ``Handoff``): a switch (a handoff, a
  route, a hook's ``HandTo``, a fan-out's join) or a fan-out (``way="fan_out"``: one per
  branch, all admitted or none) that would pass ``max_handoffs`` is refused, its transfer
  answered ``Error: Budget exceeded: ...``. It is asked on the stack of the agent taking the
  conversation, after that agent's other hooks let the switch through (a run's own options'
  hooks come last), and counts against the agent handing off (``Handoff.source``); a branch
  starting (``way="branch"``) was counted when its fan-out was admitted.

Each stop sets ``RunControl.exceeded`` (the core's "a limit refused the next step") and
``RunControl.stopped`` (``Response.stopped``: this middleware, and the hook), and
``Swarm.run`` raises it: :class:`~swarmgraph.graph.features.errors.BudgetExceeded`, with
everything produced so far. Other features that make a model call of their own (a guardrail
that calls a model, a LangGraph member's turn) ask the run's own middleware first
(``RunMiddleware.refuses_model_call``: this ``before_model``), without importing this module.

Parallel branches share one ledger and one budget. A check and what it admits are one atomic
step: the admitted step is *held* against the limit until it is booked, so two branches that
check at the same moment cannot both take the last model call (``max_model_calls``,
``max_tool_calls`` and ``max_handoffs`` are never passed; ``max_tokens`` holds each admitted
prompt's estimate, and only the replies themselves may end a little past it, as in one branch).
Inside a branch every trajectory step carries ``"branch"``: the branch's label.

Why ours beside LangChain's ``ModelCallLimitMiddleware`` and ``ToolCallLimitMiddleware``: both
run on a swarm agent unchanged (docs/middleware.md), and for a count of model or tool calls
they are enough. A :class:`Budget` does what they cannot: it limits handoffs (the
``before_handoff`` moment, which LangChain's hooks do not see) and tokens, per agent as well
as per run; it admits a fan-out's branches all or none against one ledger the branches share
(a check and what it admits are one atomic step, above); and ``Swarm.run`` raises
:class:`~swarmgraph.graph.features.errors.BudgetExceeded` holding the Response so far.

Example:
    >>> ledger = Ledger(Budget(max_model_calls=1, per_agent={"Sales": Budget(max_tool_calls=0)}))
    >>> ledger.before_model("Triage", []) is None
    True
    >>> ledger.model_called("Triage", "gpt-4o", input_tokens=10, output_tokens=2, tool_calls=[])
    >>> print(ledger.before_model("Triage", []))
    Budget exceeded: max_model_calls=1 would be passed by agent 'Triage'. The run stopped; \
.response holds what it produced so far.
    >>> ledger.tool_allowance("Sales")[1].limit
    "per_agent['Sales'].max_tool_calls"
    >>> ledger.usage["by_agent"]["Triage"]["input_tokens"]
    10
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.runtime import Runtime

from ..core.handoffs import Handoff
from ..core.marks import loaded
from ..core.middleware import MiddlewareStop, RunMiddleware
from ..core.run_control import COUNTS, Books, RunControl
from ..core.schema import tool_spec
from ..core.state import branch_scope, current_branch
from ..core.types import Agent
from .errors import BudgetExceeded

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetMiddleware",
    "Ledger",
    "attach",
    "branch_scope",
    "current_branch",
]


@dataclass(frozen=True)
class Budget:
    """Limits for one run; ``None`` is no limit. ``per_agent`` holds limits for one agent's
    own steps, by agent name (``per_agent={"Sales": Budget(max_model_calls=2)}``).

    ``max_tokens`` bounds input plus output tokens. It is checked before each model call against
    what is known then: the tokens used so far plus an estimate of the prompt about to be sent
    (the agent's instructions and the conversation; for a guardrail's or a LangGraph member's
    own model call, the agent's instructions and what that call is sent), so the reply itself
    may end a little past it (nobody knows a reply's length in advance).

    Example:
        >>> Budget(max_handoffs=3).max_handoffs
        3
        >>> Budget(max_model_calls=-1)
        Traceback (most recent call last):
        ...
        ValueError: Budget.max_model_calls must be a non-negative int or None, got -1
    """

    max_model_calls: int | None = None
    max_tokens: int | None = None
    max_handoffs: int | None = None
    max_tool_calls: int | None = None
    per_agent: Mapping[str, Budget] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("max_model_calls", "max_tokens", "max_handoffs", "max_tool_calls"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"Budget.{name} must be a non-negative int or None, got {value!r}")
        if not isinstance(self.per_agent, Mapping):
            raise TypeError("Budget.per_agent must be a dict {agent name: Budget}")
        for name, inner in self.per_agent.items():
            if not isinstance(inner, Budget):
                raise TypeError(f"Budget.per_agent[{name!r}] must be a Budget, got {inner!r}")
            if inner.per_agent:
                raise ValueError(f"Budget.per_agent[{name!r}] cannot have a per_agent of its own")

    def ledger(self) -> Ledger:
        """The books a run with this budget keeps: :class:`Ledger`."""
        return Ledger(self)


class Ledger(Books):
    """One run's books (:class:`~swarmgraph.graph.core.run_control.Books`) with its budget's
    checks."""

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__()
        self.budget = budget
        # A check and the step it admits are held under the lock until the step is booked;
        # booking takes the lock again (Books._book), so it is reentrant here.
        self._lock = threading.RLock()
        self._held: dict[tuple[str | None, str], int] = {}
        self._held_tokens: dict[str, list[int]] = {}

    # -- checks (before a step) -------------------------------------------------------
    def before_model(self, agent: str, prompt: Sequence[BaseMessage]) -> BudgetExceeded | None:
        """The limit one more model call by ``agent`` (sending ``prompt``) would pass, if any;
        none: the call is admitted (held until :meth:`model_called` books it)."""
        if self.budget is None:
            return None
        limits = self._limits("max_tokens", agent)
        estimate = count_tokens_approximately(list(prompt)) if limits else 0
        with self._lock:
            over = self._over(agent, "model_calls", "max_model_calls", 1)
            if over is not None:
                return over
            for label, limit, counts, scope in limits:
                used = counts["input_tokens"] + counts["output_tokens"]
                if used + self._held.get((scope, "tokens"), 0) + estimate > limit:
                    return BudgetExceeded(label, limit, agent)
            self._hold(agent, "model_calls", 1)
            if estimate:
                self._hold(agent, "tokens", estimate)
                self._held_tokens.setdefault(agent, []).append(estimate)
        return None

    def tool_allowance(self, agent: str, wanted: int = 0) -> tuple[float, BudgetExceeded | None]:
        """How many more tool calls ``agent`` may make, and the limit that bounds them; up to
        ``wanted`` of them are admitted (held until :meth:`tool_called` books each)."""
        if self.budget is None:
            return math.inf, None
        with self._lock:
            room, bound = self._room(agent, "tool_calls", "max_tool_calls")
            self._hold(agent, "tool_calls", int(min(room, wanted)))
        return room, None if bound is None else BudgetExceeded(*bound, agent)

    def before_handoff(self, agent: str, count: int = 1) -> BudgetExceeded | None:
        """The limit ``count`` more handoffs (or routes, or branches of a fan-out) from
        ``agent`` would pass, if any; none: they are admitted (held until booked)."""
        if self.budget is None:
            return None
        with self._lock:
            over = self._over(agent, "handoffs", "max_handoffs", count)
            if over is None:
                self._hold(agent, "handoffs", count)
        return over

    def counts_tokens(self, agent: str) -> bool:
        """Whether a ``max_tokens`` limit applies to ``agent``'s model calls (then the prompt
        is estimated before each)."""
        return bool(self._limits("max_tokens", agent))

    # -- records (after a step): what was admitted is no longer held -----------------
    def model_called(
        self, agent: str, model: str, *, input_tokens: int, output_tokens: int, tool_calls: list
    ) -> None:
        with self._lock:
            self._release(agent, "model_calls", 1)
            estimates = self._held_tokens.get(agent)
            if estimates:
                self._release(agent, "tokens", estimates.pop(0))
            super().model_called(
                agent,
                model,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                tool_calls=tool_calls,
            )

    def tool_called(
        self, agent: str, name: str, call_id: str, arguments: Any, **extra: Any
    ) -> None:
        with self._lock:
            self._release(agent, "tool_calls", 1)
            super().tool_called(agent, name, call_id, arguments, **extra)

    def handed_off(self, agent: str, to: str, *, route: str | None = None) -> None:
        with self._lock:
            self._release(agent, "handoffs", 1)
            super().handed_off(agent, to, route=route)

    def fanned_out(self, agent: str, tool: str, labels: Sequence[str]) -> None:
        with self._lock:
            self._release(agent, "handoffs", len(labels))
            super().fanned_out(agent, tool, labels)

    # -- internals ----------------------------------------------------------------------
    def _hold(self, agent: str, key: str, amount: int) -> None:
        if amount <= 0 or self.budget is None:
            return
        for scope in (None, agent):
            self._held[(scope, key)] = self._held.get((scope, key), 0) + amount

    def _release(self, agent: str, key: str, amount: int) -> None:
        if not self._held:
            return
        for scope in (None, agent):
            held = self._held.get((scope, key), 0)
            if held:
                self._held[(scope, key)] = max(held - amount, 0)

    def _limits(
        self, field_name: str, agent: str
    ) -> list[tuple[str, int, dict[str, int], str | None]]:
        """``(label, limit, counters, scope)`` for each limit on ``field_name`` that applies;
        ``scope`` is ``None`` for the run's limit, ``agent`` for its own."""
        found: list[tuple[str, int, dict[str, int], str | None]] = []
        if self.budget is None:
            return found
        limit = getattr(self.budget, field_name)
        if limit is not None:
            found.append((field_name, limit, self.totals, None))
        inner = self.budget.per_agent.get(agent)
        if inner is not None and getattr(inner, field_name) is not None:
            counters = self.by_agent.get(agent) or dict.fromkeys(COUNTS, 0)
            found.append(
                (f"per_agent[{agent!r}].{field_name}", getattr(inner, field_name), counters, agent)
            )
        return found

    def _room(self, agent: str, key: str, field_name: str) -> tuple[float, tuple[str, int] | None]:
        """How many more ``key`` steps ``agent`` may take, and the ``(label, limit)`` that
        bounds them (the error itself is made only for a stop: most checks pass)."""
        room: float = math.inf
        bound: tuple[str, int] | None = None
        for label, limit, counters, scope in self._limits(field_name, agent):
            left = max(limit - counters[key] - self._held.get((scope, key), 0), 0)
            if left < room:
                room, bound = left, (label, limit)
        return room, bound

    def _over(self, agent: str, key: str, field_name: str, more: int) -> BudgetExceeded | None:
        room, bound = self._room(agent, key, field_name)
        return BudgetExceeded(*bound, agent) if bound is not None and room < more else None


class BudgetMiddleware(AgentMiddleware):
    """One agent's side of a run's budget: its hooks ask the run's :class:`Ledger` before
    each model call (``before_model``), before the reply's tool calls run (``after_model``)
    and before a handoff (``before_handoff``, the swarm's extension hook). :func:`attach`
    makes one per agent of a run; a stop sets ``control.exceeded`` (see the module).

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
        >>> from swarmgraph.graph.features.errors import BudgetExceeded
        >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
        >>> try:
        ...     swarm.run(Agent(), [{"role": "user", "content": "hi"}],
        ...               budget=Budget(max_model_calls=0))
        ... except BudgetExceeded as stop:
        ...     print(stop.limit, stop.response.stopped["middleware"])
        max_model_calls BudgetMiddleware
    """

    def __init__(self, ledger: Ledger, control: RunControl, agent: Agent) -> None:
        super().__init__()
        self.ledger, self.control, self.agent = ledger, control, agent
        self._held: set[str] | None = None  # the agent's approval-marked tools (read once)

    def _stop(self, over: BudgetExceeded, hook: str) -> None:
        """The run stops on ``over`` (the first reason stands): ``Swarm.run`` raises it, and
        ``Response.stopped`` names this middleware and ``hook``."""
        control = self.control
        if control.exceeded is None:
            control.exceeded = over
        if control.stopped is None:
            control.stopped = MiddlewareStop(self.name, hook, str(over))
        control.debug_print(str(over))

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """No model call past ``max_model_calls`` or ``max_tokens``: the run ends here."""
        messages = state["messages"]
        if self.ledger.counts_tokens(self.agent.name):  # the prompt as sent: instructions first
            messages = [self._instructions(state), *messages]
        over = self.ledger.before_model(self.agent.name, messages)
        if over is None:
            return None
        self._stop(over, "before_model")
        return {"jump_to": "end"}

    def after_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """The reply's calls past ``max_tool_calls`` answered ``Error: ...`` (they do not
        run); the others run, then the run stops. Calls that wait for approval are not
        counted (they do not run now), nor calls another hook answered."""
        if not self.control.execute_tools:  # the caller runs the tools
            return None
        messages = state["messages"]
        at = len(messages) - 1
        while at >= 0 and not isinstance(messages[at], AIMessage):
            at -= 1
        reply = messages[at] if at >= 0 else None
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return None
        answered = {m.tool_call_id for m in messages[at + 1 :] if isinstance(m, ToolMessage)}
        held = self._waiting_tools()
        calls = [c for c in reply.tool_calls if c.get("id") not in answered]
        calls = [c for c in calls if c["name"] not in held]
        room, bound = self.ledger.tool_allowance(self.agent.name, len(calls))
        if len(calls) <= room:
            return None
        assert bound is not None
        self._stop(bound, "after_model")
        refused = [
            ToolMessage(content=f"Error: {bound}", tool_call_id=c.get("id") or "", name=c["name"])
            for c in calls[int(room) :]
        ]
        return {"messages": refused}

    def before_handoff(self, handoff: Handoff) -> str | None:
        """No switch past ``max_handoffs`` (a handoff, a route, a hook's ``HandTo``, a join:
        one each; a fan-out: one per branch, admitted together), counted against the agent
        handing off; a branch starting was counted with its fan-out.

        Example:
            >>> control, sales = RunControl(), Agent(name="Sales")
            >>> attach(Budget(max_handoffs=1), control)
            >>> (mine,) = control.middleware.of(sales)
            >>> desk = Agent(name="Desk")
            >>> two = Handoff(desk, desk, {}, "fan_out", branches=(sales, sales))
            >>> mine.before_handoff(two)[:43]
            'Budget exceeded: max_handoffs=1 would be pa'
            >>> control.stopped.hook, mine.before_handoff(Handoff(desk, sales, {}))
            ('before_handoff', None)
        """
        if handoff.way == "branch":
            return None
        count = len(handoff.branches) if handoff.way == "fan_out" else 1
        over = self.ledger.before_handoff(handoff.source.name, count)
        if over is None:
            return None
        self._stop(over, "before_handoff")
        return str(over)

    def _instructions(self, state: Mapping[str, Any]) -> SystemMessage:
        """The agent's instructions as the step built them a moment ago (a function of the
        context is called with it, as Swarm calls it before every model call)."""
        instructions = self.agent.instructions
        if callable(instructions):
            instructions = instructions(defaultdict(str, state.get("context_variables") or {}))
        return SystemMessage(content=str(instructions))

    def _waiting_tools(self) -> set[str]:
        """The agent's approval-marked tools: their calls are held, not run, in this step."""
        approvals = loaded("approvals")  # no tool is marked before its module is loaded
        if not self.control.marked or approvals is None:
            return set()
        if self._held is None:
            tools = self.agent.tools
            self._held = {tool_spec(f).name for f in tools if approvals.requires_approval(f)}
        return self._held


def attach(budget: Budget, control: RunControl) -> None:
    """Give the run ``control`` the budget: its books (a :class:`Ledger`) and a
    :class:`BudgetMiddleware` for each of its agents (``control.middleware``): what
    ``Swarm.run(budget=)`` does (graph/prepared_run.py).

    Example:
        >>> control = RunControl()
        >>> attach(Budget(max_handoffs=1), control)
        >>> [type(m).__name__ for m in control.middleware.of(Agent(name="Sales"))]
        ['BudgetMiddleware']
    """
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, got {type(budget).__name__}")
    ledger = control.ledger = budget.ledger()
    made: dict[int, tuple[Agent, tuple[BudgetMiddleware]]] = {}

    def of(agent: Agent) -> tuple[BudgetMiddleware]:
        known = made.get(id(agent))
        if known is None:  # one per agent object of the run (kept with it: ids stay unique)
            known = made[id(agent)] = (agent, (BudgetMiddleware(ledger, control, agent),))
        return known[1]

    control.middleware = RunMiddleware(of)
