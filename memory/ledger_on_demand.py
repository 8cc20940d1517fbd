"""A turn's effect ledger, made the first time its run uses it.

Whether a run will meet a tool the ledger records (``@effect``, ``@needs_approval``, or one
taking ``idempotency_key``) is not known before it runs: discovery reads the tools of the
agents it can see, but a tool may hand the conversation to an agent nobody could see in advance
(built at run time, looked up in a directory, named in ``Result(agent=)``), and that agent's
marked tools must be recorded all the same (the run's core notices such an agent when it
switches to it: ``GraphRuntime.key_for``). So a ``Session`` turn hands its run a
:class:`LedgerOnDemand` and the ledger is made on first use: a turn whose run never meets a
marked tool never makes it. Handing one over runs none of our code (it is a
``functools.partial``: C-level), which keeps the steady ``Session.run`` path short.

Example:
    >>> made = []
    >>> class Ledger:  # an EffectLedger, for the example (only idempotency_key is called)
    ...     def __init__(self, name):
    ...         made.append(name)
    ...     def idempotency_key(self, call):
    ...         return f"key of {call}"
    >>> ledger = LedgerOnDemand(Ledger, "turn-1")
    >>> made, ledger.made is None  # nothing made yet
    ([], True)
    >>> ledger.idempotency_key("c1"), ledger.idempotency_key("c2"), made  # made once, on use
    ('key of c1', 'key of c2', ['turn-1'])
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage

    from ..graph.features.approvals import Decision
    from ..graph.features.effects import EffectCall, EffectLedger, EffectOutcome, TurnSoFar

__all__ = ["LedgerOnDemand"]

#: One ledger per turn even when parallel branches first use it at once (made rarely: a lock
#: for all of them costs nothing a turn would notice).
_MAKING = threading.Lock()


class LedgerOnDemand(partial):
    """``LedgerOnDemand(make, *args, **kwargs)``: the
    :class:`~swarmgraph.graph.features.effects.EffectLedger` ``make(*args, **kwargs)`` returns,
    made on
    the first call of any of its methods (and only once); see the module docstring."""

    @property
    def made(self) -> EffectLedger | None:
        """The ledger, once made (``None`` before its first use)."""
        return self.__dict__.get("_made")

    def ledger(self) -> EffectLedger:
        """The ledger: made now if this is its first use."""
        made = self.__dict__.get("_made")
        if made is None:
            with _MAKING:
                made = self.__dict__.get("_made")
                if made is None:
                    made = self.__dict__["_made"] = self()
        return made

    # -- the EffectLedger protocol, each call on the ledger it makes --------------------------
    def before(self, call: EffectCall, turn: TurnSoFar) -> EffectOutcome | None:
        return self.ledger().before(call, turn)

    def after(self, call: EffectCall, outcome: EffectOutcome) -> None:
        self.ledger().after(call, outcome)

    def prior(self, calls: Sequence[EffectCall]) -> dict[str, EffectOutcome]:
        return self.ledger().prior(calls)

    def settle(
        self, questions: Mapping[str, EffectCall], given: Mapping[str, Decision]
    ) -> dict[str, Decision]:
        return self.ledger().settle(questions, given)

    def asked(self, question: str) -> bool:
        return self.ledger().asked(question)

    def in_flight(self, messages: Sequence[BaseMessage]) -> AIMessage | None:
        return self.ledger().in_flight(messages)

    def idempotency_key(self, call: EffectCall) -> str:
        return self.ledger().idempotency_key(call)
