"""What the features raise when they stop a run (a budget's limit, an approval decided twice,
a guardrail that tripped, parallel branches that conflict or fail), and the typed context's
warning. Each error derives from :class:`~swarmgraph.graph.core.errors.SwarmError` (the
core's root of the errors that stop a run), so ``except SwarmError`` catches them with the
core's own; they live here because the core names no feature.
"""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import Any

from ..core.errors import SwarmError, SwarmgraphWarning, error_fields

__all__ = [
    "DELETED",
    "ApprovalAlreadyDecided",
    "BranchFailed",
    "BranchStateWarning",
    "BudgetExceeded",
    "ContextConflict",
    "ContextSchemaWarning",
    "GuardrailTripped",
]


@error_fields
class BudgetExceeded(SwarmError):
    """A :class:`~swarmgraph.graph.features.budget.Budget` limit would be passed by the next step.

    ``limit`` names it (``"max_handoffs"``, or ``"per_agent['Sales'].max_model_calls"``),
    ``value`` is the limit, ``agent`` the agent that was about to pass it. ``response`` holds
    everything produced before the stop; every tool call in it is answered.
    """

    limit: str
    value: int
    agent: str

    def __post_init__(self) -> None:
        super().__init__(
            f"Budget exceeded: {self.limit}={self.value} would be passed by agent "
            f"{self.agent!r}. "
            "The run stopped; .response holds what it produced so far."
        )


@error_fields
class ApprovalAlreadyDecided(SwarmError):
    """A decision about a pending tool call came second: the call was decided already (in
    this process or another, by this turn id or another), and the first decision stands.

    ``call_id`` names the call, ``decision`` is the stored one (``True``, ``False`` or a
    reason, or the answer given for a call in doubt), ``tool`` the tool. The tool ran at most
    once, under the first decision; nothing of the refused run was stored.

    Example:
        >>> print(ApprovalAlreadyDecided("call-7", False, tool="process_refund"))
        ... # doctest: +NORMALIZE_WHITESPACE
        process_refund call 'call-7' was already decided: False (the first decision stands;
        nothing was run or stored for this one)
    """

    call_id: str
    decision: Any
    tool: str = ""

    def __post_init__(self) -> None:
        what = f"{self.tool} call" if self.tool else "call"
        super().__init__(
            f"{what} {self.call_id!r} was already decided: {self.decision!r} (the first decision "
            "stands; nothing was run or stored for this one)"
        )


@error_fields
class GuardrailTripped(SwarmError):
    """A guardrail refused: an agent's input guardrail when it was about to take the
    conversation (its model was never called), or its output guardrail on its final answer.

    ``agent`` is the guarded agent's name, ``guardrail`` the guardrail's name, ``reason`` what
    it returned, ``kind`` ``"input"`` or ``"output"``. ``response`` holds everything the run
    produced before the stop, every tool call in it answered. ``Agent(on_trip=fallback)``
    hands the conversation to ``fallback`` instead of raising.

    Example:
        >>> print(GuardrailTripped("Refunds", "no_threats", "a threat", kind="input"))
        Guardrail no_threats of Refunds tripped (input): a threat. The run stopped; \
.response holds what it produced so far.
    """

    agent: str
    guardrail: str
    reason: str
    _: KW_ONLY
    kind: str = "input"

    def __post_init__(self) -> None:
        super().__init__(
            f"Guardrail {self.guardrail} of {self.agent} tripped ({self.kind}): {self.reason}. "
            "The run stopped; .response holds what it produced so far."
        )


#: How a branch's deletion of a key shows in :attr:`ContextConflict.values`.
DELETED = "<deleted>"


class ContextConflict(SwarmError):
    """Parallel branches wrote different values to the same context key, and no merge rule
    says how to combine them (``Parallel(..., merge={key: rule})``).

    ``key`` is the first conflicting key and ``values`` its value in each branch that
    changed it (by branch label, in the order the agents were given; :data:`DELETED` for a
    branch that deleted it); ``conflicts`` holds every conflicting key the same way, so no
    write is dropped unreported. ``response`` holds the run so far: every tool call answered
    (the fan-out call with every branch's answer), each branch's messages in
    ``response.branches``, the context with every key that did not conflict merged.

    Example:
        >>> err = ContextConflict({"total": {"Billing": 5, "Tech": 7}})
        >>> err.key, err.values
        ('total', {'Billing': 5, 'Tech': 7})
        >>> print(err)  # doctest: +NORMALIZE_WHITESPACE
        Parallel branches wrote different values to context_variables['total']: Billing=5,
        Tech=7. Give Parallel(..., merge={'total': rule}) a rule that combines them (e.g.
        operator.add), or let one branch own the key; .response holds every branch's answer.
    """

    def __init__(self, conflicts: dict[str, dict[str, Any]]) -> None:
        self.conflicts = {key: dict(values) for key, values in conflicts.items()}
        self.key = next(iter(self.conflicts))
        self.values = self.conflicts[self.key]
        described = "; ".join(
            f"context_variables[{key!r}]: "
            + ", ".join(
                f"{label}={value!r}" if value != DELETED else f"{label} deleted it"
                for label, value in values.items()
            )
            for key, values in self.conflicts.items()
        )
        keys = ", ".join(f"{key!r}: rule" for key in self.conflicts)
        super().__init__(
            f"Parallel branches wrote different values to {described}. Give "
            f"Parallel(..., merge={{{keys}}}) a rule that combines them (e.g. operator.add), "
            "or let one branch own the key; .response holds every branch's answer."
        )


@error_fields
class BranchFailed(SwarmError):
    """A parallel branch raised: the run stops at the join, once every other branch is done.

    ``branch`` is the branch's label, ``agent`` the agent that was running in it; the
    original exception is the ``__cause__`` (when the branch ran in this process).
    ``response`` holds the run so far: the fan-out call answered (the failed branch's entry
    says what it raised), every branch's messages in ``response.branches``.

    Example:
        >>> print(BranchFailed("Tech", "Tech", "ValueError: model down"))
        ... # doctest: +NORMALIZE_WHITESPACE
        Parallel branch 'Tech' (agent 'Tech') raised ValueError: model down; the run stopped
        at the join. .response holds every branch's output, .response.branches their messages.
    """

    branch: str
    agent: str
    error: str

    def __post_init__(self) -> None:
        super().__init__(
            f"Parallel branch {self.branch!r} (agent {self.agent!r}) raised {self.error}; the "
            "run stopped at "
            "the join. .response holds every branch's output, .response.branches their messages."
        )


class ContextSchemaWarning(SwarmgraphWarning):
    """A stored context did not fit the ``context_schema`` any more (it changed since the
    context was stored): the keys dropped or reset are named."""


class BranchStateWarning(SwarmgraphWarning):
    """Parallel branches wrote state keys of the graph's other than the swarm's own (a
    middleware's ``state_schema`` keys, written by its hooks inside a branch) that the join does
    not carry back: the main run keeps what it had before the fan-out. The branches and their
    keys are named (a tool's ``Command`` writing such a key inside a branch is refused before
    anything is written: the model reads why)."""
