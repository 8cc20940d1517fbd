"""An agent's contracts as the middleware they install: ``Agent(input_guardrails=[...],
output_guardrails=[...], on_trip=fallback, requires=...)`` is sugar for
:class:`GuardrailsMiddleware` (graph/options.py's ``middleware_of`` puts it in the agent's own
middleware; an agent without contracts gets none and loads nothing of this).

Its three hooks are the three ways a contract is met (the checks themselves are
:mod:`~swarmgraph.graph.features.guardrails`' and
:mod:`~swarmgraph.graph.features.preconditions`'):

- ``before_model`` (``abefore_model`` on ``arun``, so async guardrails are awaited): a user
  message arriving (the run's first agent, a ``Session``'s stored active agent, a checkpointed
  thread's): the agent's input guardrails. A trip means its model is never called: the run
  stops (:class:`~swarmgraph.graph.features.errors.GuardrailTripped`), or the hook returns
  ``{"jump_to": HandTo(on_trip)}`` and the fallback's node takes the message (and checks it).
- ``after_model``: a final answer (a reply without tool calls): the output guardrails. A trip
  stops the run, the answer kept, or hands the conversation to the fallback, whose entry
  checks run first.
- ``before_handoff``, the swarm's handoff moment (graph/core/middleware.py): any other way in
  (a transfer tool, a route, a ``CALLER`` return, a LangGraph member's handoff, a fallback, a
  parallel branch): the agent's precondition, then its input guardrails. A precondition that
  fails refuses the switch (the transfer call is answered ``Error: Refunds needs order_id``,
  so the model can fix the context); a tripped input guardrail redirects to ``on_trip``
  (``HandTo``), or refuses and stops the run; a branch is refused alone, the run goes on.

``LangChain``'s ``PIIMiddleware`` redacts by fixed patterns; these are any function of the
conversation and the context, with a fallback agent, and they see every way into the agent,
the handoffs a ``create_agent`` loop does not have: so they stay ours.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> def no_threats(context_variables, messages):
    ...     said = [m.content for m in messages if m.type == "human"]
    ...     return "a threat" if "or else" in said[-1] else None
    >>> from swarmgraph.graph.options import middleware_of
    >>> humans = Agent(name="Humans")
    >>> refunds = Agent(name="Refunds", input_guardrails=[no_threats], on_trip=humans)
    >>> [type(m).__name__ for m in middleware_of(refunds)]
    ['GuardrailsMiddleware']
    >>> model = ScriptedChatModel(["A human will call you."])
    >>> response = Swarm(chat_model=model).run(refunds, [{"role": "user", "content": "or else"}])
    >>> response.agent.name, [(s["kind"], s["agent"]) for s in response.trajectory]
    ('Humans', [('guardrail', 'Refunds'), ('handoff', 'Refunds'), ('model', 'Humans')])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage

from ..core.handoffs import Handoff, HandTo
from ..core.hook_context import step_control
from ..core.run_control import RunControl
from ..core.types import Agent
from .guardrails import Trip, acheck_entry, acheck_output, check_entry, check_output, stop
from .preconditions import requires_label

__all__ = ["MAX_REDIRECTS", "GuardrailsMiddleware", "guarded"]

#: Fallbacks tried in a row for one switch (an on_trip chain that loops stops here).
MAX_REDIRECTS = 8


def guarded(agent: Agent) -> bool:
    """Whether ``agent`` has a contract (and so gets a :class:`GuardrailsMiddleware`).

    Example:
        >>> guarded(Agent()), guarded(Agent(requires=["order_id"]))
        (False, True)
    """
    return bool(agent.input_guardrails or agent.output_guardrails) or agent.requires is not None


@dataclass(frozen=True)
class _UserMessage:
    """``HandTo.note`` of a fallback that takes a user message the agent refused: its node
    checks the message itself (``before_model``), so the switch checks nothing."""

    trip: Trip


class GuardrailsMiddleware(AgentMiddleware):
    """``agent``'s contracts (see the module). It reads ``agent``'s fields when it runs, so a
    program that changes them between runs is heard.

    Example:
        >>> refunds = Agent(name="Refunds", requires=["order_id"])
        >>> guard = GuardrailsMiddleware(refunds)
        >>> move = Handoff(Agent(name="Triage"), refunds, {"messages": [], "context_variables": {}})
        >>> guard.before_handoff(move), guard.handoff_label
        ('Refunds needs order_id', 'needs order_id')
    """

    def __init__(self, agent: Agent) -> None:
        super().__init__()
        self.agent = agent

    @property
    def handoff_label(self) -> str | None:
        """What the graph draws on the edges into the agent: what it requires."""
        return requires_label(self.agent)

    # -- a user message arriving -------------------------------------------------------
    def before_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        if not self._user_message(state):
            return None
        control = _control()
        return self._entered(control, check_entry(self.agent, state, control, requires=False))

    async def abefore_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        if not self._user_message(state):
            return None
        control = _control()
        trip = await acheck_entry(self.agent, state, control, requires=False)
        return self._entered(control, trip)

    def _user_message(self, state: Mapping[str, Any]) -> bool:
        """A user message is what the agent takes now (handoffs into it were checked where
        they switched: ``before_handoff``)."""
        messages: Sequence[Any] = state.get("messages") or []
        last = messages[-1] if messages else None
        return bool(self.agent.input_guardrails) and isinstance(last, HumanMessage)

    def _entered(self, control: RunControl, trip: Trip | None) -> dict[str, Any] | None:
        """The verdict on the agent taking a user message: a trip means its model is never
        called; its fallback's node takes the message (and checks it), or the run stops."""
        if control.exceeded is not None:  # a guardrail's model call would pass the budget
            return {"jump_to": "end"}
        if trip is None:
            return None
        fallback = self.agent.on_trip
        if fallback is None:
            stop(control, trip)  # the compiled graph raises here; Swarm.run once it is booked
            return {"jump_to": "end"}
        return {"jump_to": HandTo(fallback, note=_UserMessage(trip))}

    # -- a final answer --------------------------------------------------------------------
    def after_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        if not self._final_answer(state):
            return None
        control = _control()
        return self._answered(control, check_output(self.agent, state, control))

    async def aafter_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        if not self._final_answer(state):
            return None
        control = _control()
        return self._answered(control, await acheck_output(self.agent, state, control))

    def _final_answer(self, state: Mapping[str, Any]) -> bool:
        messages: Sequence[Any] = state.get("messages") or []
        reply = messages[-1] if messages else None
        return (
            bool(self.agent.output_guardrails)
            and isinstance(reply, AIMessage)
            and not (reply.tool_calls or reply.invalid_tool_calls)
        )

    def _answered(self, control: RunControl, trip: Trip | None) -> dict[str, Any] | None:
        """The verdict on a final answer: a trip hands the conversation to the fallback (its
        own checks first), or stops the run; the answer stays in the conversation."""
        if trip is None:
            return None
        fallback = self.agent.on_trip
        if fallback is None:
            stop(control, trip)
            return None  # a final answer: the run ends on it
        return {"jump_to": HandTo(fallback, note=trip)}

    # -- any other way in: the handoff moment ----------------------------------------------
    def before_handoff(self, handoff: Handoff) -> str | HandTo | None:
        if self._unchecked(handoff):
            return None
        control = _control()
        return self._verdict(handoff, control, check_entry(self.agent, handoff.state, control))

    async def abefore_handoff(self, handoff: Handoff) -> str | HandTo | None:
        if self._unchecked(handoff):
            return None
        control = _control()
        trip = await acheck_entry(self.agent, handoff.state, control)
        return self._verdict(handoff, control, trip)

    def _unchecked(self, handoff: Handoff) -> bool:
        """Not this agent's way in, or a fallback taking a user message (its node checks it).
        A fan-out is checked branch by branch as each starts (``way="branch"``), and a fan-out's
        join brings no message from outside the run: neither is a way a contract checks."""
        return (
            handoff.target is not self.agent
            or handoff.way in ("fan_out", "join")
            or isinstance(handoff.note, _UserMessage)
        )

    def _verdict(self, handoff: Handoff, control: RunControl, trip: Trip | None) -> Any:
        """The switch's fate: through (``None``), refused (the reason the transfer call is
        answered with), or to the fallback (``HandTo``)."""
        agent = self.agent
        if handoff.way == "branch":  # no fallback: the branch alone is refused
            if trip is None:  # passed, or a budget stopped the run: as budgets stop a branch
                return None
            if trip.kind == "precondition":
                return trip.reason
            return f"{agent.name} refused the conversation: {trip.reason}"
        if control.exceeded is not None:  # a guardrail's model call would pass the budget
            return str(control.exceeded)
        if trip is None:
            return None
        refused = handoff.note if isinstance(handoff.note, Trip) else None  # a fallback's switch
        if trip.kind == "precondition":
            if refused is None:
                return trip.reason
            stop(control, refused)  # the fallback cannot take it either: the first refusal stands
            return f"{refused.agent.name} refused the conversation: {refused.reason}"
        fallback = agent.on_trip
        if fallback is None or handoff.redirects >= MAX_REDIRECTS:
            stop(control, trip)
            return f"{agent.name} refused the conversation: {trip.reason}"
        return HandTo(fallback, note=refused or trip)


def _control() -> RunControl:
    """The run's control (the step's, set around each hook), or a fresh one outside a run."""
    control = step_control()
    return control if isinstance(control, RunControl) else RunControl()
