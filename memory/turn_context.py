"""The context of a turn: what the run starts from (the stored context, restored under the
Swarm's schema, with the caller's values over it), how it is stored (a typed context as
JSON-ready values), and how its changes are replayed over another turn's save that came in
between (:mod:`.context_merge`).

A typed context (``Swarm(context_schema=Model)``) is stored as JSON-ready values (a date as
ISO text, a nested model as a dict) and restored validated. When the schema changed since it was
stored, a key it no longer has is dropped and a value that no longer fits is reset to its
default (a ``ContextSchemaWarning`` names both); a required key the store cannot fill is a
``ContextValidationError`` before any model call, unless this turn's ``context_variables``
gives it.

Example:
    >>> from swarmgraph.graph import Swarm, ScriptedChatModel
    >>> swarm = Swarm(chat_model=ScriptedChatModel([]))
    >>> start_context({"order_id": 7, "tier": "gold"}, {"tier": "vip"}, swarm)
    {'order_id': 7, 'tier': 'vip'}
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .context_json import encode_context
from .context_merge import MergeRule, rebase
from .errors import ContextConflictWarning

if TYPE_CHECKING:
    from ..graph.core.types import Response
    from ..graph.swarm import Swarm


def rebase_context(latest: dict, base: dict, new: dict) -> dict:
    """Replay one run's changes (``base`` -> ``new``) on top of ``latest`` (someone else's
    save that came in between).

    Keys the run added or changed take the run's value, keys it deleted are deleted, and
    everything else keeps the latest stored value, so two concurrent runs lose neither's
    writes unless both wrote the same key (then the later save wins, and ``Session`` reports
    it; merge rules combine them: :mod:`swarmgraph.memory.context_merge`). (The engine's
    ``graph.state.merge_context`` is another thing: the reducer of one run's updates.)

    Example:
        >>> rebase_context({"a": 1, "b": 9}, base={"a": 1, "b": 2}, new={"a": 5, "b": 2})
        {'a': 5, 'b': 9}
    """
    return rebase(latest, base=base, new=new)


def stored_form(swarm: Swarm) -> Any:
    """How a turn's context is stored: a typed context's ``dump`` (JSON-ready values), or
    ``None`` (Swarm's plain dict, stored as it is)."""
    schema = getattr(swarm, "context_schema", None)
    return None if schema is None else schema.dump


def start_context(stored: dict, caller: dict | None, swarm: Swarm) -> dict:
    """The context a new turn's run is given: the stored one (restored under the Swarm's
    schema: dropped / reset keys warn) with the caller's values over it, validated before any
    model call. A new dict, no deep copy: the loaded one was just decoded (ours alone), and
    Swarm.run deep-copies what it is given before any tool can touch it."""
    schema = getattr(swarm, "context_schema", None)
    if schema is not None:  # stored under an older schema: dropped / reset keys warn
        stored = schema.restore(stored)
    elif caller:  # a value the save would refuse fails now, not after the model ran
        encode_context(caller, size_limit=None)
    context = {**stored, **caller} if caller else dict(stored)
    if schema is not None:  # a clear error before any model call; the base to rebase on
        context = schema.validate(context)
    return context


def merge_rules(swarm: Swarm, merge: dict[str, MergeRule]) -> dict[str, MergeRule]:
    """The merge rules of a Session's saves: ``merge=``, over a typed context's
    additive reducers (``Annotated[int, operator.add]``: for them this turn's change is
    the sum of its own updates, so the rule is exact; other reducers are not replayed
    this way, so such a key is reported, never merged wrongly)."""
    schema = getattr(swarm, "context_schema", None)
    if schema is None:
        return merge
    from ..graph.features.context_changes import ADDITIVE
    from ..graph.features.context_schema import context_reducers

    additive = {k: r for k, r in context_reducers(schema).items() if r in ADDITIVE}
    return {**additive, **merge}


def restored(stored: dict, swarm: Swarm) -> dict:
    """The stored context as the run would have it: validated when the Swarm types it."""
    schema = getattr(swarm, "context_schema", None)
    if schema is None:
        return dict(stored)
    try:
        return schema.validate(schema.restore(stored))
    except ValueError:  # it no longer fits: the stored turn is returned as it was stored
        return dict(stored)


def report_conflicts(
    response: Response, conflicts: list[dict[str, Any]], conversation_id: str
) -> None:
    """Tell the caller which keys another turn changed while this one ran, and this turn's
    value was stored over (``response.context_conflicts`` and a warning)."""
    response.context_conflicts = conflicts
    keys = ", ".join(repr(c["key"]) for c in conflicts)
    warnings.warn(
        f"conversation {conversation_id!r}: another turn changed {keys} while "
        "this one ran; this turn's value was stored over it (Session(merge={key: "
        "rule}) combines them; see response.context_conflicts)",
        ContextConflictWarning,
        stacklevel=5,  # the caller of Session.run: run, run_steps, _save
    )
