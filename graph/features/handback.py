"""Handing the conversation back: ``CALLER`` and the stack of handoffs it unwinds.

A tool that returns :data:`CALLER` (or ``Result(agent=CALLER)``) gives the conversation back to
the agent that handed it to the current one. The stack is read from the conversation itself
(the senders of the assistant messages), so it survives a stateless ``Swarm.run`` and a restart:
a switch from X to Y pushes X, unless Y is on top already, in which case it is a return and pops.
So A -> B -> C, then C returns to B, then B returns to A; and A <-> B ping-pong never grows it.

The hand-back attaches as middleware: a tool that hands to ``CALLER`` brings
:class:`HandBackMiddleware` into that step (graph/options.py's ``middleware_for_target``, which
the runtime asks after a tool handed off), whose ``next_agent`` hook (the step's "who takes
over" moment, graph/core/handoffs.py's ``Takeover``) resolves ``CALLER`` to the caller.
``can_return=True`` only adds the ``transfer_back`` tool that returns ``CALLER``.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> said = [HumanMessage("hi"), AIMessage("", name="A"), AIMessage("", name="B"),
    ...         AIMessage("", name="C")]
    >>> handoff_stack(said)
    ['A', 'B']
    >>> caller_of(said + [AIMessage("", name="B")])
    'A'
    >>> caller_of([AIMessage("", name="A")]) is None
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage

from ..core.handoffs import Takeover
from ..core.types import CALLER, transfer_back

__all__ = [
    "CALLER",
    "HandBackMiddleware",
    "caller_of",
    "handoff_stack",
    "transfer_back",
]

#: How deep the stack may grow; a long conversation of nested handoffs keeps the newest.
MAX_DEPTH = 64


def handoff_stack(messages: Sequence[BaseMessage]) -> list[str]:
    """Names of the agents a return would go back to, innermost last."""
    stack: list[str] = []
    current: str | None = None
    for message in messages:
        if not isinstance(message, AIMessage) or not message.name:
            continue
        sender = message.name
        if current is not None and sender != current:
            if stack and stack[-1] == sender:
                stack.pop()
            else:
                stack.append(current)
                del stack[:-MAX_DEPTH]
        current = sender
    return stack


def caller_of(messages: Sequence[BaseMessage]) -> str | None:
    """The name of the agent that handed the conversation to the last speaker, if any."""
    stack = handoff_stack(messages)
    return stack[-1] if stack else None


class HandBackMiddleware(AgentMiddleware):
    """``CALLER`` resolved, as the middleware ``CALLER`` brings into a step: when a tool of the
    step handed to ``CALLER``, ``next_agent`` hands to the agent that handed the
    conversation to this one (read from the conversation, :func:`caller_of`), and the call's
    answer names it; with nobody to return to, the call's answer says so and nobody takes over.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> from swarmgraph.graph.core.types import Agent
        >>> triage = Agent(name="Triage")
        >>> said = [AIMessage("", name="Triage"), AIMessage("", name="Refunds")]
        >>> now = Takeover(Agent(name="Refunds"), CALLER, {}, said, [], {"Triage": triage}.get)
        >>> HandBackMiddleware().next_agent(now).target is triage
        True
    """

    @property
    def name(self) -> str:
        return "HandBackMiddleware"

    def next_agent(self, takeover: Takeover) -> Takeover | None:
        """``CALLER`` as the agent to return to (or nobody, with an error the model reads)."""
        if takeover.target is not CALLER:
            return None
        caller = caller_of([*takeover.history, *takeover.added])
        target = None if caller is None else takeover.find(caller)
        if target is None:
            return takeover.replace(
                target=None,
                answer=f"Error: nobody handed the conversation to {takeover.agent.name}, so "
                "there is no caller to return to. Carry on with the conversation yourself.",
                answer_if=None,
            )
        # Swarm's handoff answer names the agent, not the placeholder
        return takeover.replace(
            target=target,
            answer=json.dumps({"assistant": target.name}),
            answer_if=json.dumps({"assistant": CALLER.name}),
        )
