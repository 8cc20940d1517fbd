"""Hard limits on a run (:class:`Budget`) and the books that check them (:class:`Ledger`).

A feature: a run without a ``Budget`` keeps plain books (``run_control.Books``: usage and
the trajectory, by counting) and never enters this module's checks. With one, the agent node
asks the ledger *before* every model call, tool call and handoff whether the step fits; a
step that would pass a limit is not taken, the run stops and ``Swarm.run`` raises
:class:`~swarmgraph.graph.core.errors.BudgetExceeded` with everything produced so far.

Parallel branches share one ledger and one budget. A check and what it admits are one atomic
step: the admitted step is *held* against the limit until it is booked, so two branches that
check at the same moment cannot both take the last model call (``max_model_calls``,
``max_tool_calls`` and ``max_handoffs`` are never passed; ``max_tokens`` holds each admitted
prompt's estimate, and only the replies themselves may end a little past it, as in one branch).
Inside a branch every trajectory step carries ``"branch"``: the branch's label.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

from ..core.errors import BudgetExceeded
from ..core.run_control import COUNTS, Books
from ..core.state import branch_scope, current_branch

__all__ = ["Budget", "BudgetExceeded", "Ledger", "branch_scope", "current_branch"]


@dataclass(frozen=True)
class Budget:
    """Limits for one run; ``None`` is no limit. ``per_agent`` holds limits for one agent's
    own steps, by agent name (``per_agent={"Sales": Budget(max_model_calls=2)}``).

    ``max_tokens`` bounds input plus output tokens. It is checked before each model call against
    what is known then: the tokens used so far plus an estimate of the prompt about to be sent,
    so the reply itself may end a little past it (nobody knows a reply's length in advance).

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
        """The books a run with this budget keeps: :class:`Ledger` (how ``RunControl``
        attaches the feature without importing it)."""
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
        return room, bound

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

    def _room(self, agent: str, key: str, field_name: str) -> tuple[float, BudgetExceeded | None]:
        room: float = math.inf
        bound: BudgetExceeded | None = None
        for label, limit, counters, scope in self._limits(field_name, agent):
            left = max(limit - counters[key] - self._held.get((scope, key), 0), 0)
            if left < room:
                room, bound = left, BudgetExceeded(label, limit, agent)
        return room, bound

    def _over(self, agent: str, key: str, field_name: str, more: int) -> BudgetExceeded | None:
        room, bound = self._room(agent, key, field_name)
        return bound if room < more else None
