"""A run's books: usage in total and per agent, and the trajectory of its steps, by plain
counting (``Response.usage`` and ``Response.trajectory``).

This is the core's part of what a run records; it checks nothing. A :class:`Budget`
(graph/budget.py, a feature) brings its own books, :class:`~swarmgraph.graph.budget.Ledger`,
which adds the checks before each step; the agent node asks them only when the run has a
budget, and a feature may ask :class:`Books` too: it admits every step.

Inside a parallel branch every trajectory step carries ``"branch"``: the branch's label
(:func:`branch_scope`, a context variable, so LangGraph's worker threads and asyncio tasks
inherit it).

Example:
    >>> books = Books()
    >>> books.model_called("Triage", "gpt-4o", input_tokens=10, output_tokens=2, tool_calls=[])
    >>> books.handed_off("Triage", "Sales")
    >>> books.usage["model_calls"], books.usage["by_agent"]["Triage"]["handoffs"]
    (1, 1)
    >>> [step["kind"] for step in books.trajectory]
    ['model', 'handoff']
    >>> books.before_model("Triage", []) is None   # no budget: every step is admitted
    True
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .errors import BudgetExceeded

__all__ = ["COUNTS", "Books", "branch_scope", "current_branch"]

#: What the books count, in total and per agent.
COUNTS = ("model_calls", "input_tokens", "output_tokens", "tool_calls", "handoffs")

#: The label of the parallel branch the current code runs in (``None``: the main run).
_BRANCH: ContextVar[str | None] = ContextVar("swarmgraph_branch", default=None)


def current_branch() -> str | None:
    """The label of the parallel branch running here, ``None`` outside one.

    Example:
        >>> with branch_scope("Billing"):
        ...     current_branch()
        'Billing'
        >>> current_branch() is None
        True
    """
    return _BRANCH.get()


@contextmanager
def branch_scope(label: str) -> Iterator[str]:
    """Run the block as parallel branch ``label`` (nested: ``"Outer/Inner"``)."""
    outer = _BRANCH.get()
    path = label if outer is None else f"{outer}/{label}"
    token = _BRANCH.set(path)
    try:
        yield path
    finally:
        _BRANCH.reset(token)


class Books:
    """One run's counters and trajectory (kept in the run's ``RunControl`` as ``ledger``)."""

    #: The run's budget: none here (see graph/budget.py's Ledger).
    budget: Any = None

    def __init__(self) -> None:
        self.totals: dict[str, int] = dict.fromkeys(COUNTS, 0)
        self.by_agent: dict[str, dict[str, int]] = {}
        self.trajectory: list[dict[str, Any]] = []
        #: ``time.perf_counter()`` when the run began: branch times are seconds since then.
        self.started = time.perf_counter()
        # Parallel branches book from several threads (or tasks) at once.
        self._lock = threading.Lock()

    @property
    def usage(self) -> dict[str, Any]:
        """``Response.usage``: the totals plus ``by_agent`` (copies)."""
        return {**self.totals, "by_agent": {k: dict(v) for k, v in self.by_agent.items()}}

    # -- checks: without a budget every step is admitted -------------------------------
    def before_model(self, agent: str, prompt: Sequence[BaseMessage]) -> BudgetExceeded | None:
        """The limit one more model call would pass: none without a budget."""
        return None

    def tool_allowance(self, agent: str, wanted: int = 0) -> tuple[float, BudgetExceeded | None]:
        """How many more tool calls ``agent`` may make: any number without a budget."""
        return math.inf, None

    def before_handoff(self, agent: str, count: int = 1) -> BudgetExceeded | None:
        """The limit ``count`` more handoffs would pass: none without a budget."""
        return None

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
            "tool_calls": [c["name"] for c in tool_calls],
        }
        counts = {"model_calls": 1, "input_tokens": input_tokens, "output_tokens": output_tokens}
        self._book(agent, entry, counts)

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
        self._book(agent, entry | extra, {"tool_calls": 1})

    def tool_denied(self, agent: str, name: str, call_id: str, answer: str) -> None:
        """A call a human denied: on the trajectory, not counted as a tool call."""
        entry = {"agent": agent, "kind": "tool", "name": name, "id": call_id, "denied": answer}
        self._book(agent, entry, {})

    def handed_off(self, agent: str, to: str, *, route: str | None = None) -> None:
        if route is None:
            entry = {"agent": agent, "kind": "handoff", "name": to}
        else:
            entry = {"agent": agent, "kind": "route", "name": route, "to": to}
        self._book(agent, entry, {"handoffs": 1})

    def fanned_out(self, agent: str, tool: str, labels: Sequence[str]) -> None:
        """``agent``'s tool ``tool`` handed the conversation to parallel branches ``labels``
        (one handoff each)."""
        entry = {"agent": agent, "kind": "fan_out", "name": tool, "branches": list(labels)}
        self._book(agent, entry, {"handoffs": len(labels)})

    def branch_ran(self, label: str, agent: str, started: float, ended: float, status: str) -> None:
        """Branch ``label`` (started at ``agent``) ran from ``started`` to ``ended``
        (``time.perf_counter()`` values, stored as seconds since the run began)."""
        with self._lock:
            self.trajectory.append(
                {
                    "agent": agent,
                    "kind": "branch",
                    "name": label,
                    "branch": label,
                    "status": status,
                    "start": round(started - self.started, 6),
                    "end": round(ended - self.started, 6),
                }
            )

    def joined(self, agent: str, labels: Sequence[str], conflicts: Sequence[str] = ()) -> None:
        """The branches ``labels`` joined; ``agent`` speaks next."""
        entry: dict[str, Any] = {"agent": agent, "kind": "join", "branches": list(labels)}
        if conflicts:
            entry["conflicts"] = list(conflicts)
        self._book(agent, entry, {})

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
        self._book(agent, entry, counts, labelled=False)  # as it ran, outside a branch label

    # -- internals ----------------------------------------------------------------------
    def _book(
        self, agent: str, entry: dict[str, Any], counts: dict[str, int], labelled: bool = True
    ) -> None:
        """Count ``counts`` for ``agent`` and the run, and put ``entry`` on the trajectory
        (``labelled``: with the branch it ran in). An agent is in ``by_agent`` once
        something of its own was counted."""
        branch = _BRANCH.get() if labelled else None
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
