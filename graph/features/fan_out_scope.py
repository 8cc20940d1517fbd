"""Which fan-out a parallel branch belongs to, for code the branch calls that must tell
sibling branches apart from branches of another fan-out (``ScriptedChatModel`` refuses to
hand one list of replies to two concurrent siblings).

graph/features/branches.py sets it around each branch's run; outside a branch it is ``None``.

Example:
    >>> with fan_out_scope("f1", "Billing"):
    ...     current_fan_out()
    ('f1', 'Billing')
    >>> current_fan_out() is None
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current_fan_out", "fan_out_scope"]

#: ``(fan-out id, branch path)`` of the branch running here (the innermost one when nested).
_FAN_OUT: ContextVar[tuple[str, str] | None] = ContextVar("swarmgraph_fan_out", default=None)


def current_fan_out() -> tuple[str, str] | None:
    """``(fan-out id, branch path)`` of the parallel branch running here, ``None`` outside."""
    return _FAN_OUT.get()


@contextmanager
def fan_out_scope(fan_out_id: str, path: str) -> Iterator[None]:
    """Run the block as branch ``path`` of the fan-out ``fan_out_id``."""
    token = _FAN_OUT.set((fan_out_id, path))
    try:
        yield
    finally:
        _FAN_OUT.reset(token)
