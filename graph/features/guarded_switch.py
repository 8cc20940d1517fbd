"""A handoff that waits for its target's checks: what our agent nodes and LangGraph members'
nodes share for every switch (a transfer tool, a route, a ``CALLER`` return, a member's
``handoff_tool``, a fallback after a trip).

The target's precondition and input guardrails run first (:func:`~.guardrails.check_entry`);
then, by the verdict:

- passed: :meth:`GraphRuntime.switch` switches (budget, loop check, active agent, ledger);
- precondition failed: no switch, the transfer call is answered ``Error: Refunds needs order_id``
  so the model can fix the context;
- input guardrail tripped: the target's ``on_trip`` agent takes the conversation instead (its
  own checks run in turn), or the run stops with :class:`GuardrailTripped`, the transfer call
  answered with the refusal so every call has its answer.

Example:
    >>> from swarmgraph.graph.core.models import ModelResolver
    >>> from swarmgraph.graph.core.run_control import RunControl
    >>> from swarmgraph.graph.core.runtime import GraphRuntime
    >>> from swarmgraph.graph.core.types import Agent
    >>> refunds = Agent(name="Refunds", requires=["order_id"])
    >>> triage = Agent(name="Triage", handoffs=[refunds])
    >>> runtime = GraphRuntime({"Triage": triage, "Refunds": refunds}, ModelResolver(), 10)
    >>> update, control = {"messages": []}, RunControl()
    >>> gate = GuardedSwitch(runtime, triage, {"messages": []}, update, control, {}).to(refunds)
    >>> gate.run(control) is None, "active_agent" in update
    (True, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from ..core.messages import reanswer
from ..core.run_control import RunControl
from ..core.state import StateUpdate, SwarmState
from ..core.types import Agent
from .guardrails import Gate, Trip, guarded, stop

if TYPE_CHECKING:
    from ..core.runtime import GraphRuntime, Turn

__all__ = ["MAX_REDIRECTS", "GuardedSwitch", "answer_gate", "entry_gate", "reanswer"]

#: Fallbacks tried in a row for one switch (an on_trip chain that loops stops here).
MAX_REDIRECTS = 8


@dataclass(eq=False)
class GuardedSwitch:
    """One switch away from ``source`` in a step whose update is ``update``; ``call_id`` is the
    transfer call to answer when the switch turns out otherwise, ``label`` the route's name."""

    runtime: GraphRuntime
    source: Agent
    state: SwarmState
    update: StateUpdate
    control: RunControl
    context: Mapping[str, Any]
    label: str | None = field(default=None, kw_only=True)
    call_id: str | None = field(default=None, kw_only=True)

    def to(self, target: Agent, *, redirects: int = 0, refused: Trip | None = None) -> Gate | None:
        """Switch to ``target`` now when it has no checks; else the :class:`Gate` they wait in.
        ``refused``: the trip this switch is the fallback for (the run stops with it when the
        fallback's precondition fails too)."""
        if not guarded(target):
            self.switch(target)
            return None
        view = {
            "messages": [*self.state["messages"], *self.update.get("messages", ())],
            "context_variables": self.context,
        }
        settle = partial(self._settle, target, redirects, refused)
        return Gate(target, "entry", view, settle)

    def _settle(
        self, target: Agent, redirects: int, refused: Trip | None, trip: Trip | None
    ) -> Gate | None:
        control = self.control
        if control.exceeded is not None:  # a guardrail's model call would pass the budget
            self._answer(f"Error: {control.exceeded}")
            return None
        if trip is None:
            self.switch(target)
            return None
        if trip.kind == "precondition":
            if refused is None:
                self._answer(f"Error: {trip.reason}")
            else:  # the fallback cannot take it either: the first refusal stands
                who = refused.agent.name
                self._answer(f"Error: {who} refused the conversation: {refused.reason}")
                stop(control, refused)
            return None
        fallback = target.on_trip
        if fallback is None or redirects >= MAX_REDIRECTS:
            self._answer(f"Error: {target.name} refused the conversation: {trip.reason}")
            stop(control, trip)
            return None
        self._answer(
            json.dumps({"assistant": fallback.name}), only_if=json.dumps({"assistant": target.name})
        )
        return self.to(fallback, redirects=redirects + 1, refused=refused or trip)

    def switch(self, target: Agent) -> bool:
        """Switch through :meth:`GraphRuntime.switch`; False when the budget stopped it (the
        transfer call then says so)."""
        control = self.control
        switched = self.runtime.switch(
            self.source, target, self.state, self.update, control, route=self.label
        )
        if not switched:
            self._answer(f"Error: {control.exceeded}")
        elif self.label is not None:
            control.debug_print(f"{self.source.name} \u21d2 {target.name} (route)")
        return switched

    def _answer(self, content: str, only_if: str | None = None) -> None:
        if self.call_id is not None:
            reanswer(self.update.setdefault("messages", []), self.call_id, content, only_if)


def entry_gate(runtime: GraphRuntime, turn: Turn) -> Gate:
    """The gate of an agent taking a new user message: its input guardrails (a run's first
    agent, a resumed Session's; handoffs into it were checked where they switched)."""
    taking = {"messages": turn.state["messages"], "context_variables": turn.context}
    return Gate(turn.agent, "entry", taking, partial(_entered, runtime, turn), requires=False)


def answer_gate(runtime: GraphRuntime, turn: Turn, reply: BaseMessage) -> Gate:
    """The gate of a final answer: the agent's output guardrails."""
    answered = {"messages": [*turn.state["messages"], reply], "context_variables": turn.context}
    return Gate(turn.agent, "output", answered, partial(_answered, runtime, turn))


def _entered(runtime: GraphRuntime, turn: Turn, trip: Trip | None) -> Gate | None:
    """The verdict on the agent taking a new user message: a trip means its model is never
    called; its fallback's node takes the message (and checks it) instead, or the run stops."""
    if trip is None:
        return None
    turn.call = None
    fallback = turn.agent.on_trip
    if fallback is None:
        stop(turn.control, trip)
    else:  # switched, the step goes to the fallback's node (AgentNode._next)
        runtime.switch(turn.agent, fallback, turn.state, turn.update, turn.control)
    return None


def _answered(runtime: GraphRuntime, turn: Turn, trip: Trip | None) -> Gate | None:
    """The verdict on a final answer: a trip hands the conversation to the fallback (its
    own checks first), or stops the run; the answer stays in the conversation."""
    if trip is None:
        return None
    fallback = turn.agent.on_trip
    if fallback is None:
        stop(turn.control, trip)
        return None
    # Once it switches (its checks passed), the step goes to its node (AgentNode._next).
    switch = GuardedSwitch(runtime, turn.agent, turn.state, turn.update, turn.control, turn.context)
    return switch.to(fallback, refused=trip)
