"""Parallel handoffs: one tool call hands the conversation to several agents at once.

A tool returns :class:`Parallel` (or ``Result(agent=Parallel(...))``); each target runs as its
own *branch*, concurrently, until it answers without tool calls; then the run *joins*: the tool
call is answered with every branch's answer, in the order the agents were given, as one JSON
object (``{"Billing": "...", "Tech": "..."}``), the context changes of the branches are merged
(:func:`merge_contexts`), and the agent that fanned out (or ``join=``) speaks next.

This module holds what a fan-out *is*: the :class:`Parallel` value, the branch labels, the
merge rules and how a tool is recognised as one that fans out. How the graph runs it (the
``Send`` to each branch, the branch node, the join node) is in
:mod:`swarmgraph.graph.features.branches`.

Example:
    >>> import operator
    >>> from swarmgraph.graph import Agent
    >>> billing, tech = Agent(name="Billing"), Agent(name="Tech")
    >>> both = Parallel(billing, tech, merge={"total": operator.add})
    >>> both.labels, both.name
    (('Billing', 'Tech'), 'Parallel(Billing, Tech)')
    >>> merged = merge_contexts({"total": 10}, [("Billing", {"total": 5}), ("Tech", {"total": 7})],
    ...                         both.merge)
    >>> merged.context, merged.conflicts
    ({'total': 22}, {})
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.discovery import tool_says
from ..core.node_names import HANDOFF_MODES  # the builder's option (core)
from ..core.types import CALLER, Agent
from .context_changes import MISSING, OnChange, change_of
from .errors import DELETED
from .native import as_member

__all__ = [
    "FANS_OUT_ATTR",
    "FAN_OUT_MODES",
    "MergeRule",
    "Merged",
    "Parallel",
    "branch_labels",
    "fans_out",
    "merge_contexts",
    "rule_by_reference",
    "rule_reference",
]

#: ``Swarm(parallel_handoffs=...)``'s values (graph/core/node_names.py's ``HANDOFF_MODES``).
FAN_OUT_MODES = HANDOFF_MODES

#: Set on a tool (``True``/``False``) to say whether it may return :class:`Parallel`.
FANS_OUT_ATTR = "__swarmgraph_fans_out__"


def fans_out(func: Callable[..., Any]) -> bool:
    """Whether a tool may return :class:`Parallel`: it says so (``__swarmgraph_fans_out__``),
    or its code names ``Parallel`` (graph/core/discovery.py's ``tool_says``). The graph of an
    agent with such a tool gets the branch and join nodes (graph/options.py asks the same
    test, ``fans_out``, without loading this module).

    Example:
        >>> def ask_both():
        ...     return Parallel(Agent(name="A"), Agent(name="B"))
        >>> def lookup():
        ...     return "42"
        >>> fans_out(ask_both), fans_out(lookup)
        (True, False)
    """
    return tool_says(func, FANS_OUT_ATTR, "Parallel")


#: A merge rule combines the value at the fan-out with a branch's value: ``rule(old, new)``,
#: folded over the branches that changed the key, in the order the agents were given.
MergeRule = Callable[[Any, Any], Any]


class Parallel:
    """Hand the conversation to several agents at once; a tool returns it.

    Args:
        *targets: the agents (or named compiled LangGraph graphs) to run, one branch each;
            or one mapping ``{agent: task}`` that gives each branch its own task.
        task: every branch's only user message, instead of the conversation so far.
        merge: ``{key: rule}``: how to combine branches that wrote different values to one
            context key (``rule(old, new)``, folded onto the value at the fan-out in the order
            the agents were given); without a rule that is a :class:`ContextConflict`.
        join: the agent that speaks after the join (default: the agent that fanned out).

    A branch sees the conversation up to the fan-out through its agent's own ``history=``
    view, the fan-out call answered as a handoff to it (``{"assistant": "Billing"}``, or the
    ``value`` of a ``Result(agent=Parallel(...), value=...)``). Branches are labelled with
    their agents' names; a name given twice gets ``#2``, ``#3``... (:func:`branch_labels`).

    Example:
        >>> billing, tech = Agent(name="Billing"), Agent(name="Tech")
        >>> fan = Parallel({billing: "check invoice 7", tech: "check the router"})
        >>> [(t.name, task) for t, task in zip(fan.targets, fan.tasks)]
        [('Billing', 'check invoice 7'), ('Tech', 'check the router')]
        >>> Parallel(billing, billing).labels
        ('Billing', 'Billing#2')
        >>> Parallel()
        Traceback (most recent call last):
        ...
        ValueError: Parallel needs at least one agent to run
    """

    #: How the tool runner knows a handoff to several agents (graph/core/types.py's
    #: ``MULTI_HANDOFF_ATTR``, graph/core/runtime.py's ``MultiHandoff``).
    __swarmgraph_multi_handoff__ = True

    def __init__(
        self,
        *targets: Any,
        task: str | None = None,
        merge: Mapping[str, MergeRule] | None = None,
        join: Any = None,
    ) -> None:
        tasks: list[str | None]
        if len(targets) == 1 and isinstance(targets[0], Mapping):
            if task is not None:
                raise ValueError("Parallel({agent: task, ...}) already gives each branch a task")
            pairs = list(targets[0].items())
            agents = [agent for agent, _ in pairs]
            tasks = [_checked_task(t) for _, t in pairs]
        else:
            agents = list(targets)
            tasks = [_checked_task(task)] * len(agents)
        if not agents:
            raise ValueError("Parallel needs at least one agent to run")
        members: list[Agent] = []
        for agent in agents:
            if agent is CALLER:
                raise ValueError("Parallel runs named agents; CALLER is not one")
            try:
                members.append(as_member(agent))
            except (TypeError, ValueError) as exc:
                raise TypeError(f"Parallel takes Agents or named compiled graphs: {exc}") from None
        rules = dict(merge or {})
        for key, rule in rules.items():
            if not isinstance(key, str) or not callable(rule):
                raise TypeError(f"Parallel merge= maps context keys to functions, got {key!r}")
        self.targets: tuple[Agent, ...] = tuple(members)
        self.tasks: tuple[str | None, ...] = tuple(tasks)
        self.merge: dict[str, MergeRule] = rules
        self.join: Agent | None = None if join is None else as_member(join)
        self.labels: tuple[str, ...] = branch_labels([a.name for a in members])

    @property
    def name(self) -> str:
        """How messages name this fan-out: ``Parallel(Billing, Tech)``."""
        return f"Parallel({', '.join(a.name for a in self.targets)})"

    def __repr__(self) -> str:
        extra = f", join={self.join.name}" if self.join is not None else ""
        return f"{self.name[:-1]}{extra})"

    def overtaken(self, later: str) -> str:
        """The answer to the call that returned this fan-out when a later call of the same
        reply handed the conversation to ``later`` (the tool runner asks: its branches never
        start; ``parallel_handoffs="all"`` answers it again at its join if they do)."""
        names = ", ".join(agent.name for agent in self.targets)
        return (
            f"Error: the fan-out to {names} was not started: a later call of this "
            f"reply handed the conversation to {later}."
        )

    def unplaced(self, agent: str) -> str:
        """The answer to the call when ``agent``'s graph has no branch and join nodes (the
        agent step asks: its tool was not seen to fan out when the graph was built)."""
        return (
            f"Error: {agent} cannot fan out: this graph was built without the branch and join "
            "nodes (a tool that returns Parallel must name Parallel in its code, or set "
            "tool.__swarmgraph_fans_out__ = True). Carry on with the conversation yourself."
        )


def _checked_task(task: Any) -> str | None:
    if task is not None and not isinstance(task, str):
        raise TypeError(f"a Parallel task is the branch's user message (a str), got {task!r}")
    return task


def branch_labels(names: Sequence[str]) -> tuple[str, ...]:
    """One label per branch, in order: the agent's name, ``#2``, ``#3``... for repeats.

    Example:
        >>> branch_labels(["Billing", "Tech", "Billing"])
        ('Billing', 'Tech', 'Billing#2')
    """
    seen: dict[str, int] = {}
    labels: list[str] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return tuple(labels)


# -- the merge --------------------------------------------------------------------------------
@dataclass
class Merged:
    """The join's context: ``context`` with every change merged, ``conflicts`` the keys that
    could not be (``{key: {label: value}}``, :data:`DELETED` for a deletion), which keep their
    value from the fan-out."""

    context: dict[str, Any]
    conflicts: dict[str, dict[str, Any]] = field(default_factory=dict)


def merge_contexts(
    base: Mapping[str, Any],
    branches: Sequence[tuple[str, Mapping[str, Any]]],
    rules: Mapping[str, MergeRule] | None = None,
) -> Merged:
    """Merge each branch's context (``(label, context)``, in the order the agents were given)
    into ``base``, the context at the fan-out.

    A key one branch changed takes its value; several branches that wrote the same value agree;
    different values are combined by ``rules[key]`` (``rule(old, new)`` folded onto the value at
    the fan-out, or onto the first branch's value for a new key), else they are a conflict. A
    key deleted by one branch and changed by another is a conflict too, rule or not. A rule
    wrapped in :class:`~swarmgraph.graph.features.context_changes.OnChange` (how a typed context's
    additive reducer merges) is given each branch's *change* instead of its value, so
    ``visits`` at 3 with two branches that each added 1 joins as 5, not 11.

    Example:
        >>> merge_contexts({"a": 1, "b": 2}, [("X", {"a": 5, "b": 2}), ("Y", {"a": 1})]).context
        {'a': 5}
        >>> merge_contexts({"a": 1}, [("X", {"a": 2}), ("Y", {"a": 3})]).conflicts
        {'a': {'X': 2, 'Y': 3}}
        >>> merge_contexts({"n": [1]}, [("X", {"n": [2]}), ("Y", {"n": [3]})],
        ...                {"n": lambda old, new: old + new}).context
        {'n': [1, 2, 3]}
        >>> import operator
        >>> merge_contexts({"visits": 3}, [("X", {"visits": 4}), ("Y", {"visits": 4})],
        ...                {"visits": OnChange(operator.add)}).context
        {'visits': 5}
    """
    rules = rules or {}
    keys = list(base)
    for _, context in branches:
        keys.extend(k for k in context if k not in base)
    merged: dict[str, Any] = {}
    conflicts: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(keys):
        writes = [(label, _write(base, context, key)) for label, context in branches]
        writes = [(label, value) for label, value in writes if value is not _UNCHANGED]
        if not writes:
            merged[key] = base[key]
            continue
        values = [value for _, value in writes]
        deleted = [value is _GONE for value in values]
        if all(deleted):
            continue
        if key in rules and not any(deleted):
            try:
                merged[key] = _fold(rules[key], base, key, values)
                continue
            except Exception as exc:  # a rule that fails is reported, never half applied
                conflicts[key] = {**_shown(writes), "rule error": f"{type(exc).__name__}: {exc}"}
        elif not any(deleted) and all(_same(values[0], v) for v in values[1:]):
            merged[key] = values[0]
            continue
        else:
            conflicts[key] = _shown(writes)
        if key in base:  # a conflicting key keeps its value from the fan-out
            merged[key] = base[key]
    return Merged(merged, conflicts)


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_UNCHANGED = _Marker("<unchanged>")
_GONE = _Marker(DELETED)


def _write(base: Mapping[str, Any], context: Mapping[str, Any], key: str) -> Any:
    """What a branch wrote to ``key``: its value, ``_GONE`` (deleted) or ``_UNCHANGED``."""
    if key not in context:
        return _GONE if key in base else _UNCHANGED
    if key in base and _same(base[key], context[key]):
        return _UNCHANGED
    return context[key]


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an __eq__ that raises or returns an array: treat as different
        return a is b


def _fold(rule: MergeRule, base: Mapping[str, Any], key: str, values: list[Any]) -> Any:
    values = [copy.deepcopy(v) for v in values]
    if isinstance(rule, OnChange):  # fold what each branch did, not what it ended with
        if len(values) == 1:  # one writer: its value is the merge, whatever it did
            return values[0]
        before = base.get(key, MISSING)
        changes = [change_of(before, v) for v in values]
        if any(c is MISSING for c in changes):
            raise ValueError(
                "the rule merges what each branch added, and a branch did something else "
                f"(from {before!r} at the fan-out to {values!r})"
            )
        if before is MISSING or before is None:
            return functools.reduce(rule, changes)
        return functools.reduce(rule, changes, copy.deepcopy(before))
    value = copy.deepcopy(base[key]) if key in base else values.pop(0)
    for new in values:
        value = rule(value, new)
    return value


def _shown(writes: list[tuple[str, Any]]) -> dict[str, Any]:
    return {label: DELETED if value is _GONE else value for label, value in writes}


# -- merge rules that outlive the process -----------------------------------------------------
_ON_CHANGE = "on-change:"  # marks a reference to an OnChange rule


def rule_reference(rule: MergeRule) -> str | None:
    """``"module:qualname"`` for a rule another process can import (``operator.add``, a
    module-level function), ``None`` for one it cannot (a lambda, a closure).

    A fan-out that waits for a human's approval may be joined by another process; that
    process finds the rule by this reference.

    Example:
        >>> import operator
        >>> rule_reference(operator.add), rule_reference(lambda a, b: a)
        ('_operator:add', None)
        >>> rule_by_reference("_operator:add") is operator.add
        True
    """
    if isinstance(rule, OnChange):  # the wrapped rule's name, marked
        inner = rule_reference(rule.rule)
        return None if inner is None else f"{_ON_CHANGE}{inner}"
    module = getattr(rule, "__module__", None)
    name = getattr(rule, "__qualname__", None)
    if not module or not name or "<" in name:
        return None
    try:
        found = rule_by_reference(f"{module}:{name}")
    except (ImportError, AttributeError):
        return None
    return f"{module}:{name}" if found is rule else None


def rule_by_reference(reference: str) -> MergeRule:
    """The rule :func:`rule_reference` named."""
    if reference.startswith(_ON_CHANGE):
        return OnChange(rule_by_reference(reference[len(_ON_CHANGE) :]))
    module, _, name = reference.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


# -- which tools fan out ----------------------------------------------------------------------
