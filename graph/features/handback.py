"""Handing the conversation back: ``CALLER`` and the stack of handoffs it unwinds.

A tool that returns :data:`CALLER` (or ``Result(agent=CALLER)``) gives the conversation back to
the agent that handed it to the current one. The stack is read from the conversation itself
(the senders of the assistant messages), so it survives a stateless ``Swarm.run`` and a restart:
a switch from X to Y pushes X, unless Y is on top already, in which case it is a return and pops.
So A -> B -> C, then C returns to B, then B returns to A; and A <-> B ping-pong never grows it.

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

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

from ..core.types import CALLER, transfer_back

__all__ = ["CALLER", "caller_of", "handoff_stack", "transfer_back"]

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
