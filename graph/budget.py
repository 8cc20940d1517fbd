"""Hard limits on a run (:class:`Budget`) and the run's books (:class:`Ledger`): usage in total and
per agent, and the trajectory of steps in order.

The agent node asks the ledger *before* every model call, tool call and handoff whether the step
fits; a step that would pass a limit is not taken, the run stops and ``Swarm.run`` raises
:class:`~swarmgraph.graph.errors.BudgetExceeded` with everything produced so far.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

from .errors import BudgetExceeded

__all__ = ["Budget", "BudgetExceeded", "Ledger"]

#: What the ledger counts, in total and per agent.
COUNTS = ("model_calls", "input_tokens", "output_tokens", "tool_calls", "handoffs")


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


class Ledger:
    """One run's counters, trajectory and budget checks (kept in the run's ``RunControl``)."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget
        self.totals: dict[str, int] = dict.fromkeys(COUNTS, 0)
        self.by_agent: dict[str, dict[str, int]] = {}
        self.trajectory: list[dict[str, Any]] = []

    @property
    def usage(self) -> dict[str, Any]:
        """``Response.usage``: the totals plus ``by_agent`` (copies)."""
        return {**self.totals, "by_agent": {k: dict(v) for k, v in self.by_agent.items()}}

    # -- checks (before a step) -------------------------------------------------------
    def before_model(self, agent: str, prompt: Sequence[BaseMessage]) -> BudgetExceeded | None:
        """The limit one more model call by ``agent`` (sending ``prompt``) would pass, if any."""
        if self.budget is None:
            return None
        over = self._over(agent, "model_calls", "max_model_calls", 1)
        if over is not None:
            return over
        limits = self._limits("max_tokens", agent)
        if limits:
            estimate = count_tokens_approximately(list(prompt))
            for label, limit, counts in limits:
                used = counts["input_tokens"] + counts["output_tokens"]
                if used + estimate > limit:
                    return BudgetExceeded(label, limit, agent)
        return None

    def tool_allowance(self, agent: str) -> tuple[float, BudgetExceeded | None]:
        """How many more tool calls ``agent`` may make, and the limit that bounds them."""
        return self._room(agent, "tool_calls", "max_tool_calls")

    def before_handoff(self, agent: str) -> BudgetExceeded | None:
        """The limit one more handoff (or route) from ``agent`` would pass, if any."""
        return self._over(agent, "handoffs", "max_handoffs", 1)

    # -- records (after a step) -------------------------------------------------------
    def model_called(
        self, agent: str, model: str, *, input_tokens: int, output_tokens: int, tool_calls: list
    ) -> None:
        self._add(agent, model_calls=1, input_tokens=input_tokens, output_tokens=output_tokens)
        self.trajectory.append(
            {
                "agent": agent,
                "kind": "model",
                "name": model,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "tool_calls": [c["name"] for c in tool_calls],
            }
        )

    def tool_called(
        self, agent: str, name: str, call_id: str, arguments: Any, **extra: Any
    ) -> None:
        self._add(agent, tool_calls=1)
        self.trajectory.append(
            {"agent": agent, "kind": "tool", "name": name, "id": call_id, "arguments": arguments}
            | extra
        )

    def tool_denied(self, agent: str, name: str, call_id: str, answer: str) -> None:
        """A call a human denied: on the trajectory, not counted as a tool call."""
        self.trajectory.append(
            {"agent": agent, "kind": "tool", "name": name, "id": call_id, "denied": answer}
        )

    def handed_off(self, agent: str, to: str, *, route: str | None = None) -> None:
        self._add(agent, handoffs=1)
        if route is None:
            self.trajectory.append({"agent": agent, "kind": "handoff", "name": to})
        else:
            self.trajectory.append({"agent": agent, "kind": "route", "name": route, "to": to})

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
        if model is not None or input_tokens or output_tokens:
            self._add(agent, model_calls=1, input_tokens=input_tokens, output_tokens=output_tokens)
            entry.update(model=model, input_tokens=input_tokens, output_tokens=output_tokens)
        self.trajectory.append(entry)

    # -- internals ----------------------------------------------------------------------
    def _add(self, agent: str, **counts: int) -> None:
        mine = self.by_agent.get(agent)
        if mine is None:
            mine = self.by_agent[agent] = dict.fromkeys(COUNTS, 0)
        for key, value in counts.items():
            self.totals[key] += value
            mine[key] += value

    def _limits(self, field_name: str, agent: str) -> list[tuple[str, int, dict[str, int]]]:
        """``(label, limit, counters)`` for each limit on ``field_name`` that applies."""
        found: list[tuple[str, int, dict[str, int]]] = []
        if self.budget is None:
            return found
        limit = getattr(self.budget, field_name)
        if limit is not None:
            found.append((field_name, limit, self.totals))
        inner = self.budget.per_agent.get(agent)
        if inner is not None and getattr(inner, field_name) is not None:
            counters = self.by_agent.get(agent) or dict.fromkeys(COUNTS, 0)
            found.append(
                (f"per_agent[{agent!r}].{field_name}", getattr(inner, field_name), counters)
            )
        return found

    def _room(self, agent: str, key: str, field_name: str) -> tuple[float, BudgetExceeded | None]:
        room: float = math.inf
        bound: BudgetExceeded | None = None
        for label, limit, counters in self._limits(field_name, agent):
            left = max(limit - counters[key], 0)
            if left < room:
                room, bound = left, BudgetExceeded(label, limit, agent)
        return room, bound

    def _over(self, agent: str, key: str, field_name: str, more: int) -> BudgetExceeded | None:
        room, bound = self._room(agent, key, field_name)
        return bound if room < more else None
