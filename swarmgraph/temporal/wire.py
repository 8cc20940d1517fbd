"""What crosses Temporal's boundary (workflow input, activity arguments and results, the
run's outcome): plain JSON, converted here from and to the engine's objects.

Messages travel as LangChain's message dicts; a tool's result as a tagged dict (an agent by
its name, which the other side resolves among the agents the start agent can reach); a
``Response`` with its agent by name and its pending approvals as dicts.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> back = messages_in(messages_out([AIMessage("hi", name="Sales")]))
    >>> back[0].content, back[0].name
    ('hi', 'Sales')
    >>> encode_result({"ok": 1}), encode_result(object)["text"][:6]
    ({'value': {'ok': 1}}, '<class')
    >>> budget_in(budget_out(Budget(max_handoffs=2))) == Budget(max_handoffs=2)
    True
    >>> import datetime
    >>> context_out({"day": datetime.date(2024, 5, 1)})
    {'day': '2024-05-01'}
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ..graph.core.types import CALLER, Agent, Response, Result
from ..graph.features.budget import Budget
from .errors import TemporalInputError

__all__ = [
    "budget_in",
    "budget_out",
    "check_json",
    "context_in",
    "context_out",
    "decode_result",
    "encode_result",
    "messages_in",
    "messages_out",
    "response_in",
    "response_out",
]


def messages_out(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as JSON-ready dicts."""
    return messages_to_dict(list(messages))


def messages_in(data: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """The messages :func:`messages_out` wrote."""
    return messages_from_dict([dict(d) for d in data])


def check_json(value: Any, what: str) -> None:
    """Raise :class:`TemporalInputError` naming ``what`` when ``value`` is not plain JSON
    (Temporal stores every input and result in the run's history as JSON)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TemporalInputError(
            f"{what} must be plain JSON to cross Temporal's history (dicts, lists, str, "
            f"numbers, bools, None): {exc}"
        ) from None


def context_out(context: Any) -> Any:
    """A context (a dict, or the model instance a typed tool got) as JSON values: a typed
    context's nested models as dicts, dates as ISO text (what its schema's ``dump`` makes);
    what JSON cannot hold is left as it is, for :func:`check_json` to name."""
    try:
        return to_jsonable_python(context)
    except PydanticSerializationError:
        return dict(context) if isinstance(context, Mapping) else context


def context_in(
    data: Mapping[str, Any], schema: Any = None, model: type[BaseModel] | None = None
) -> Any:
    """The context :func:`context_out` wrote, as the run's typed context reads it: an
    instance of ``model`` (a tool's ``context_variables: Model``), else validated by
    ``schema`` (``context_schema=``) when it fits, else the JSON dict as it is (the engine's
    own check after the tool call then answers what does not fit)."""
    if model is not None:
        try:
            return model.model_validate(dict(data))
        except ValidationError:
            return model.model_construct(**dict(data))
    if schema is not None and not schema.problems(data):
        return schema.validate(data)
    return dict(data)


def _agent_out(agent: Any) -> dict[str, Any]:
    return {"caller": True} if agent is CALLER else {"agent": agent.name}


def encode_result(raw: Any) -> dict[str, Any]:
    """A tool's return value as JSON: an agent by name, a ``Result`` by its fields, a
    ``Parallel`` by its agents' names, tasks and merge rules' import paths, JSON as it is,
    anything else as its text (what the engine would have made of it anyway)."""
    if isinstance(raw, Agent):
        return _agent_out(raw)
    parallel = sys.modules.get("swarmgraph.graph.features.parallel")  # loaded once a tool fans out
    if parallel is not None and isinstance(raw, parallel.Parallel):
        return {
            "parallel": {
                "targets": [a.name for a in raw.targets],
                "tasks": list(raw.tasks),
                "merge": {key: _function_ref(rule) for key, rule in raw.merge.items()},
                "join": None if raw.join is None else raw.join.name,
            }
        }
    if isinstance(raw, Result):
        target = raw.agent
        if target is not None and not isinstance(target, Agent):
            raise TemporalInputError(
                f"a tool returned Result(agent={type(target).__name__}): on Temporal a tool "
                "hands off to an Agent only"
            )
        return {
            "result": {
                "value": raw.value,
                "agent": None if target is None else _agent_out(target),
                "context_variables": context_out(dict(raw.context_variables)),
            }
        }
    try:
        check_json(raw, "a tool's result")
    except TemporalInputError:
        return {"text": str(raw)}
    return {"value": raw}


def decode_result(data: Mapping[str, Any], agent_named: Callable[[str], Agent]) -> Any:
    """The value :func:`encode_result` wrote, its agents looked up by ``agent_named``."""
    if "caller" in data:
        return CALLER
    if "agent" in data:
        return agent_named(data["agent"])
    if "result" in data:
        fields = data["result"]
        target = fields["agent"]
        agent = None if target is None else decode_result(target, agent_named)
        return Result(
            value=fields["value"], agent=agent, context_variables=fields["context_variables"]
        )
    if "text" in data:
        return data["text"]
    if "parallel" in data:
        from ..graph.features.parallel import Parallel

        fan = data["parallel"]
        join = None if fan["join"] is None else agent_named(fan["join"])
        merge = {key: _function_at(ref) for key, ref in fan["merge"].items()}
        targets = [agent_named(name) for name in fan["targets"]]
        if len(set(fan["tasks"])) == 1:  # one task (or none) for every branch
            return Parallel(*targets, task=fan["tasks"][0], merge=merge, join=join)
        if len(set(fan["targets"])) < len(targets):
            raise TemporalInputError("Parallel({agent: task}) with an agent twice cannot travel")
        return Parallel(dict(zip(targets, fan["tasks"], strict=True)), merge=merge, join=join)
    return data["value"]


def _function_ref(func: Any) -> str:
    """``module:qualname`` of a merge rule, which the workflow imports."""
    module, name = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if not module or "<" in name or _function_at(f"{module}:{name}") is not func:
        raise TemporalInputError(
            f"Parallel merge rule {func!r} is not importable by name: on Temporal a merge rule "
            "must be a module-level function (operator.add, or one of your module's)"
        )
    return f"{module}:{name}"


def _function_at(ref: str) -> Any:
    module, _, name = ref.partition(":")
    try:
        value: Any = importlib.import_module(module)
    except ImportError as exc:
        raise TemporalInputError(f"cannot import merge rule {ref!r}: {exc}") from None
    for part in name.split("."):
        value = getattr(value, part, None)
    return value


def budget_out(budget: Budget | None) -> dict[str, Any] | None:
    """A :class:`Budget` as JSON."""
    return None if budget is None else dataclasses.asdict(budget)


def budget_in(data: Mapping[str, Any] | None) -> Budget | None:
    """The :class:`Budget` :func:`budget_out` wrote."""
    if data is None:
        return None
    fields = dict(data)
    fields["per_agent"] = {k: budget_in(v) for k, v in (fields.get("per_agent") or {}).items()}
    return Budget(**fields)


def response_out(response: Response) -> dict[str, Any]:
    """A run's :class:`Response` as JSON (its agent by name)."""
    data = {
        "messages": response.messages,
        "agent": None if response.agent is None else response.agent.name,
        "context_variables": context_out(response.context_variables),
        "usage": response.usage,
        "trajectory": response.trajectory,
        "pending": [p.model_dump() for p in response.pending],
        "branches": [
            {k: (v.name if isinstance(v, Agent) else v) for k, v in b.items()}
            for b in response.branches
        ],
        "context_conflicts": response.context_conflicts,
    }
    return json.loads(json.dumps(data, default=str))  # anything odd as its text, never a crash


def response_in(data: Mapping[str, Any], agent_named: Callable[[str], Agent | None]) -> Response:
    """The :class:`Response` :func:`response_out` wrote; its agent looked up by
    ``agent_named`` (an ``Agent`` of that name only, when the caller cannot import it)."""
    from ..graph.features.approvals import PendingApproval

    name = data.get("agent")
    agent = None if name is None else (agent_named(name) or Agent(name=name))
    return Response(
        messages=list(data.get("messages", [])),
        agent=agent,
        context_variables=dict(data.get("context_variables", {})),
        usage=dict(data.get("usage", {})),
        trajectory=list(data.get("trajectory", [])),
        pending=[PendingApproval(**p) for p in data.get("pending", [])],
        branches=list(data.get("branches", [])),
        context_conflicts=list(data.get("context_conflicts", [])),
    )


def turns_out(max_turns: float) -> float | None:
    """``max_turns`` as JSON (infinity is not)."""
    return None if math.isinf(max_turns) else max_turns
