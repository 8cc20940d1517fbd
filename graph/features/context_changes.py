"""What a run did to one context value, so that a merge rule can replay it elsewhere.

Two places combine context written by runs that started from the same value: the join of
parallel branches (:func:`~swarmgraph.graph.features.parallel.merge_contexts`) and a ``Session``
save
that finds another turn saved first (:mod:`swarmgraph.memory.context_merge`). A run reports
its *final* context, not its updates, so an additive rule folded over final values counts the
starting value once per run: from ``visits=3``, two branches that each add 1 report 4 and 4,
and ``3 + 4 + 4`` is 11, not 5. What the rule must take is each run's *change*:
:func:`change_of` (``new - base`` for numbers, the appended part for lists and strings).

A typed context's additive reducers (``Annotated[int, operator.add]``, the operators in
:data:`ADDITIVE`) merge by change; any other reducer (``max``, a set union, a dict merge) is
folded over the values, which is exact for reducers where applying a value twice changes
nothing. :func:`merge_rules_of` turns a schema's reducers into those rules.

Example:
    >>> import operator
    >>> change_of(3, 5), change_of([1], [1, 2]), change_of("ab", "abc"), change_of(None, 2)
    (2, [2], 'c', 2)
    >>> change_of([1, 2], [2]) is MISSING  # not an append: no change a rule can replay
    True
    >>> rules = merge_rules_of({"visits": operator.add, "best": max})
    >>> rules["visits"], rules["best"]
    (OnChange(rule=<built-in function add>), <built-in function max>)
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ADDITIVE", "MISSING", "OnChange", "change_of", "merge_rules_of"]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


#: No value: a key a context does not have, or a change no rule can replay.
MISSING: Any = _Missing()

#: Reducers whose result is the sum of what they were given: merged by each run's change.
ADDITIVE: tuple[Callable[[Any, Any], Any], ...] = (
    operator.add,
    operator.iadd,
    operator.concat,
    operator.iconcat,
)


def change_of(base: Any, new: Any) -> Any:
    """What a run did to one value, as an additive rule takes it: for numbers ``new - base``
    (a missing or ``None`` base counts as 0), for lists and strings the part appended
    (``new[len(base):]`` when ``new`` starts with ``base``; a missing base counts as empty);
    :data:`MISSING` for anything else (a list edited in the middle, a dict, a bool)."""
    if isinstance(new, numbers.Number) and not isinstance(new, bool):
        if base is MISSING or base is None:
            return new
        if isinstance(base, numbers.Number) and not isinstance(base, bool):
            return new - base  # type: ignore[operator]
        return MISSING
    for kind in (list, str):
        if isinstance(new, kind):
            if base is MISSING or base is None:
                return new
            if isinstance(base, kind) and new[: len(base)] == base:
                return new[len(base) :]
    return MISSING


@dataclass(frozen=True)
class OnChange:
    """A merge rule applied to each run's *change* to the key (:func:`change_of`), not to its
    final value: ``rule(merged so far, change)``. How an additive reducer merges exactly."""

    rule: Callable[[Any, Any], Any]

    def __call__(self, merged: Any, change: Any) -> Any:
        return self.rule(merged, change)


def merge_rules_of(reducers: Mapping[str, Callable[[Any, Any], Any]]) -> dict[str, Any]:
    """The merge rules of a typed context's reducers, by key: :class:`OnChange` for the
    additive ones (:data:`ADDITIVE`), the reducer itself (folded over values) for the rest."""
    return {
        key: OnChange(reducer) if reducer in ADDITIVE else reducer
        for key, reducer in reducers.items()
    }
