"""Where a user's facts live in the store: one namespace per (scope, user, agent), one for
the current values and one for their history, and who may write where.

A user's facts live under ``("swarmgraph", "ltm", "user", <user>)``, an agent's notes under
``("swarmgraph", "ltm", "agent", <user>, <agent>)``, shared facts under
``("swarmgraph", "ltm", "shared")``, superseded values under the same tails in
``"ltm-history"``. ``<user>`` and ``<agent>`` are :func:`~.fact.namespace_label` s, so no id
can name another user's namespace.

Example:
    >>> namespaces("ming", "agent", "Sales")  # doctest: +NORMALIZE_WHITESPACE
    (('swarmgraph', 'ltm', 'agent', 'ming', 'Sales'),
     ('swarmgraph', 'ltm-history', 'agent', 'ming', 'Sales'))
    >>> [ns[2:] for ns in visible("ming", "Sales")]
    [('agent', 'ming', 'Sales'), ('user', 'ming'), ('shared',)]
"""

from __future__ import annotations

import hashlib
import json

from .fact import SCOPES, check_name, namespace_label

ROOT = "swarmgraph"
CURRENT, HISTORY = "ltm", "ltm-history"
#: How recall and listings order scopes: the most specific first.
SCOPE_ORDER: dict[str, int] = {"agent": 0, "user": 1, "shared": 2}


def write_key(*parts: str | None) -> str:
    """The history key of one turn's write (its kind, conversation, turn, key, value): the
    same write applied twice finds itself done."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:40]


def scope_tail(user: str, scope: str, agent: str | None) -> tuple[str, ...]:
    """The namespace labels after ``("swarmgraph", "ltm")`` for ``scope`` (``user`` is the
    user's label; ``agent`` names the agent for ``scope="agent"`` only)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    if scope == "agent":
        if agent is None:
            raise ValueError("scope='agent' needs agent=<the agent's name>")
        return ("agent", user, namespace_label(check_name(agent, "agent name")))
    if agent is not None:
        raise ValueError(f"agent= is for scope='agent' only, not scope={scope!r}")
    return ("user", user) if scope == "user" else ("shared",)


def namespaces(user: str, scope: str, agent: str | None) -> tuple[tuple[str, ...], ...]:
    """``(current, history)``: the two namespaces of ``scope``."""
    tail = scope_tail(user, scope, agent)
    return (ROOT, CURRENT, *tail), (ROOT, HISTORY, *tail)


def writable(
    user: str, scope: str, agent: str | None, *, trusted: bool
) -> tuple[tuple[str, ...], ...]:
    """:func:`namespaces`, refused for ``"shared"`` unless the caller is trusted code."""
    found = namespaces(user, scope, agent)
    if scope == "shared" and not trusted:
        raise PermissionError(
            "shared facts are read by every user and written only by trusted code: "
            "use LongTermMemory(..., trusted=True) in application code (never in a tool "
            "a model can call)"
        )
    return found


def visible(user: str, agent: str | None) -> list[tuple[str, ...]]:
    """The current-fact namespaces an agent (or no agent) may read, most specific first."""
    scopes: list[tuple[str, str | None]] = [("user", None), ("shared", None)]
    if agent is not None:
        scopes.insert(0, ("agent", agent))
    return [namespaces(user, scope, name)[0] for scope, name in scopes]
