"""Two turns changed the context at once: replay this turn's changes over the stored ones, and
never lose an update silently.

A turn saves on the version it loaded. When another turn saved in between, this turn's
changes (``base`` -> ``new``) are replayed over what is stored now (``latest``):

* a key only this turn changed takes this turn's value; a key only the other changed keeps
  theirs; a key this turn deleted is deleted;
* a key **both** changed from the same base is a conflict, whatever the values: **the same
  value too**. Two turns that both wrote ``counter = 11`` over 10 each counted one, and the
  stored 11 holds only one of them, so equal writes are reported like any other conflict
  (unlike the join of one turn's parallel branches, whose equal writes agree). With a merge
  rule for the key (``Session(..., merge={"visits": operator.add})``) the rule combines
  them: it is called as
  ``rule(stored, change)``, where ``stored`` is the other turn's value and ``change`` is what
  this turn did to the key: for numbers the difference ``new - base`` (a missing base counts
  as 0), for lists and strings the part this turn appended (``new[len(base):]``, when ``new``
  starts with ``base``; a missing base counts as empty; see
  :func:`~swarmgraph.graph.features.context_changes.change_of`, which the join of parallel branches
  uses too). So ``operator.add`` makes counters
  and append-only lists exact however turns interleave. (A typed context's additive reducer,
  ``Annotated[int, operator.add]``, is the same rule: the change is the sum of the run's own
  updates to the key.) Without a rule, or when the change is none of those shapes (a list
  edited in the middle, a dict), this turn's value is kept and the conflict is reported: a
  :class:`~swarmgraph.memory.errors.ContextConflictWarning` and an entry in
  ``response.context_conflicts`` (``key``, ``base``, ``stored``, ``ours``, ``kept``). For a
  counter, ``stored - base`` of the report is the number of increments the kept value lost.

Example:
    >>> import operator
    >>> change_of(3, 5)
    2
    >>> conflicts = []
    >>> rebase({"visits": 5, "a": 1}, base={"visits": 3, "a": 1}, new={"visits": 4, "a": 2},
    ...        merge={"visits": operator.add}, conflicts=conflicts)
    {'visits': 6, 'a': 2}
    >>> rebase({"plan": "gold"}, base={"plan": "free"}, new={"plan": "pro"}, conflicts=conflicts)
    {'plan': 'pro'}
    >>> conflicts
    [{'key': 'plan', 'base': 'free', 'stored': 'gold', 'ours': 'pro', 'kept': 'pro'}]
    >>> conflicts.clear()
    >>> rebase({"counter": 11}, base={"counter": 10}, new={"counter": 11}, conflicts=conflicts)
    {'counter': 11}
    >>> conflicts  # both wrote 11 over 10: one increment is lost, and said so
    [{'key': 'counter', 'base': 10, 'stored': 11, 'ours': 11, 'kept': 11}]
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ..graph.features.context_changes import MISSING, change_of

#: A merge rule: ``rule(stored value, this turn's change) -> merged value``.
MergeRule = Callable[[Any, Any], Any]


def rebase(
    latest: dict[str, Any],
    *,
    base: dict[str, Any],
    new: dict[str, Any],
    merge: Mapping[str, MergeRule] | None = None,
    conflicts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """This turn's changes (``base`` -> ``new``) replayed over ``latest``; see the module
    docstring. Conflicts are appended to ``conflicts`` when given."""
    rebased = copy.deepcopy(latest)
    rules = merge or {}
    for key, value in new.items():
        before = base.get(key, MISSING)
        if before is not MISSING and before == value:
            continue  # this turn left it alone: the stored value stands
        stored = latest.get(key, MISSING)
        if stored is before or (stored is not MISSING and stored == before):
            rebased[key] = copy.deepcopy(value)  # only this turn changed it
            continue
        # Both changed it. A merge rule combines the two changes (two increments that both
        # wrote 2 count as two); without one it is reported even when both wrote the same
        # value: two turns that each counted one and wrote 11 over 10 lost one of them.
        kept = _merged(rules.get(key), stored, before, value)
        rebased[key] = copy.deepcopy(value if kept is MISSING else kept)
        if kept is MISSING and conflicts is not None:
            conflicts.append(_conflict(key, before, stored, value, value))
    for key, before in base.items():
        if key in new:
            continue
        stored = latest.get(key, MISSING)
        rebased.pop(key, None)  # this turn deleted it
        if stored is not MISSING and stored != before and conflicts is not None:
            conflicts.append(_conflict(key, before, stored, MISSING, MISSING))
    return rebased


def _merged(rule: MergeRule | None, stored: Any, before: Any, value: Any) -> Any:
    if rule is None or stored is MISSING:
        return MISSING
    change = change_of(before, value)
    if change is MISSING:
        return MISSING
    return rule(stored, change)


def _conflict(key: str, base: Any, stored: Any, ours: Any, kept: Any) -> dict[str, Any]:
    shown = {"key": key, "base": base, "stored": stored, "ours": ours, "kept": kept}
    return {k: (None if v is MISSING else copy.deepcopy(v)) for k, v in shown.items()}


def check_rules(merge: Mapping[str, MergeRule] | None) -> dict[str, MergeRule]:
    """``merge`` checked: context keys to callables.

    Example:
        >>> import operator
        >>> check_rules({"visits": operator.add})
        {'visits': <built-in function add>}
        >>> check_rules({"visits": 1})
        Traceback (most recent call last):
        ...
        TypeError: merge['visits'] must be a callable rule(stored, change), got 1
    """
    if merge is None:
        return {}
    if not isinstance(merge, Mapping):
        raise TypeError(f"merge must be a dict {{key: rule}}, got {type(merge).__name__}")
    for key, rule in merge.items():
        if not isinstance(key, str) or not callable(rule):
            raise TypeError(f"merge[{key!r}] must be a callable rule(stored, change), got {rule!r}")
    return dict(merge)
