"""The mark that lets Temporal retry a tool: ``@idempotent``.

A tool call on Temporal is an activity. An activity whose worker dies mid-call, or that times
out, is started again only when running it twice is harmless: the tool says so with
:func:`idempotent` (a read, a lookup, or an ``@effect`` tool that de-duplicates on the
``idempotency_key`` it is given). Any other tool runs at most once: if its attempt is lost,
the model reads that the call is *in doubt* (it may or may not have happened).

Example:
    >>> @idempotent
    ... def lookup(order_id: int) -> str:
    ...     '''Read an order.'''
    ...     return f"order {order_id}"
    >>> is_idempotent(lookup), is_idempotent(print)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["IDEMPOTENT_MARK", "idempotent", "is_idempotent"]

F = TypeVar("F", bound=Callable[..., Any])

#: The attribute :func:`idempotent` sets on a tool.
IDEMPOTENT_MARK = "__swarmgraph_idempotent__"


def idempotent(func: F) -> F:
    """Mark ``func`` safe to run again: Temporal retries its activity (with backoff) after a
    timeout or a lost worker. Stack it with ``@effect`` for a tool that de-duplicates on its
    ``idempotency_key``."""
    setattr(func, IDEMPOTENT_MARK, True)
    return func


def is_idempotent(func: Any) -> bool:
    """Whether ``func`` (or a function it wraps, through ``__wrapped__``) is marked."""
    seen = 0
    while func is not None and seen < 16:  # a wrapper chain, never a cycle
        if getattr(func, IDEMPOTENT_MARK, False) is True:
            return True
        func, seen = getattr(func, "__wrapped__", None), seen + 1
    return False
