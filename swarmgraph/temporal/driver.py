"""The third driver (graph/core/drivers.py): the step's model call and tool calls as activities.

The workflow runs the engine's own step, unchanged (``Swarm.arun``: handoffs, routes,
guardrails, preconditions, budgets and the join of a fan-out are decided there, in the
workflow, from the activities' recorded results); :data:`~swarmgraph.graph.core.drivers.STAND_IN`
hands each call that leaves the process to :class:`TemporalDriver`:

- the model call: the ``swarmgraph.model_call`` activity, retried with exponential backoff
  (a 429 or a 5xx goes away; ``model_attempts`` bounds it);
- a tool call: ``swarmgraph.tool_call``, retried only when the tool is ``@idempotent``; a
  lost attempt of any other tool is *in doubt*: the run waits for a human's decision (as a
  pending approval with ``in_doubt=True``: run it again, refuse it, or give its result), or,
  with ``ActivityOptions(in_doubt="error")``, the model reads :class:`ToolInDoubt`;
  a tool taking ``idempotency_key`` gets one made of the workflow id and the call;
- a sync store trip: in place (the workflow has no store of its own).

On replay every activity's result comes from the run's history, so no tool runs again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

from ..graph.core.drivers import AsyncDriver
from ..graph.core.injected import INJECTED
from ..graph.core.schema import tool_spec
from ..graph.features.effects import default_idempotency_key
from .activities import MODEL_ACTIVITY, TOOL_ACTIVITY
from .errors import TemporalInputError, ToolInDoubt
from .marks import is_idempotent
from .remote_model import RemoteModel
from .roster import Roster
from .wire import check_json, context_in, context_out, decode_result, messages_in, messages_out

if TYPE_CHECKING:
    from ..graph.features.context_schema import ContextSchema

__all__ = ["ActivityOptions", "TemporalDriver"]

T = TypeVar("T")
#: ``ask(question) -> True | False | str``: a human's decision about a call in doubt.
AskHuman = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class ActivityOptions:
    """Timeouts (seconds) and attempts of the run's activities; part of the run's input, so
    every worker (and every replay) uses the same ones.

    Example:
        >>> ActivityOptions().tool_heartbeat_s
        30.0
    """

    model_timeout_s: float = 120.0
    #: How soon a model call whose worker died is retried (the call heartbeats while it waits).
    model_heartbeat_s: float = 30.0
    model_attempts: int = 5
    tool_timeout_s: float = 300.0
    #: How soon a tool call whose worker died is noticed (the tool heartbeats while it runs).
    tool_heartbeat_s: float = 30.0
    #: Attempts of an ``@idempotent`` tool (any other tool runs once).
    tool_attempts: int = 5
    #: A lost attempt of a tool that is not idempotent: ``"ask"`` a human (the run waits for
    #: ``decide``), or ``"error"`` (the model reads ``ToolInDoubt``).
    in_doubt: str = "ask"

    def __post_init__(self) -> None:
        if self.in_doubt not in ("ask", "error"):
            raise TemporalInputError(f"in_doubt must be 'ask' or 'error', got {self.in_doubt!r}")


class TemporalDriver(AsyncDriver):
    """Hands the step's model call and tool calls to activities (inside a workflow only)."""

    def __init__(
        self,
        roster: Roster,
        options: ActivityOptions,
        ask: AskHuman | None = None,
        schema: ContextSchema | None = None,
    ) -> None:
        self.roster = roster
        self.options = options
        #: The run's typed context (``context_schema=``), or None: a plain dict.
        self.schema = schema
        #: Who decides a call in doubt (the workflow's ``decide`` update), or None: the
        #: model reads :class:`ToolInDoubt`.
        self.ask = ask
        self.calls = 0  # activities scheduled so far: their ids' sequence
        #: What the run did so far, one entry per model reply and per tool result (the
        #: ``events`` query: a caller polls it while the run goes on).
        self.events: list[dict[str, Any]] = []

    def _activity_id(self, kind: str, what: Any) -> str:
        """``<n>.<kind>.<digest of what is sent>``: a replay that would send something else
        (an instruction function that is not deterministic, another tool) schedules an id the
        history does not hold, and Temporal fails it (``NondeterminismError``) instead of
        silently pairing the old result with the new call."""
        self.calls += 1
        text = json.dumps(what, sort_keys=True, default=str, ensure_ascii=False)
        return f"{self.calls}.{kind}.{hashlib.sha256(text.encode()).hexdigest()[:16]}"

    async def invoke(
        self, runnable: Any, prompt: Any, config: Any, kwargs: Mapping[str, Any]
    ) -> Any:
        if not isinstance(runnable, RemoteModel):
            raise TemporalInputError(
                f"a model call of a Temporal run reached {type(runnable).__name__}: agents on "
                "Temporal name their model (Agent.model); the worker's Swarm supplies it"
            )
        options = self.options
        call = {
            "model": runnable.model_name,
            "prompt": messages_out(prompt),
            "kwargs": dict(kwargs),
        }
        sent = [_said(m) for m in prompt], runnable.model_name, sorted(kwargs, key=str)
        reply = await workflow.execute_activity(
            MODEL_ACTIVITY,
            call,
            activity_id=self._activity_id("model", sent),
            start_to_close_timeout=timedelta(seconds=options.model_timeout_s),
            heartbeat_timeout=timedelta(seconds=options.model_heartbeat_s),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=60),
                maximum_attempts=options.model_attempts,
            ),
            summary=runnable.model_name,
        )
        message = messages_in([reply])[0]
        called = [c["name"] for c in getattr(message, "tool_calls", None) or []]
        self.events.append(
            {"kind": "reply", "model": runnable.model_name, "content": message.text,
             "tool_calls": called}
        )  # fmt: skip
        return message

    async def call_tool(self, func: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
        where = self.roster.names.get(id(func))
        if where is None:
            raise TemporalInputError(
                f"tool {tool_spec(func).name!r} is not a tool of an agent reachable from "
                f"{self.roster.ref!r}: on Temporal every tool must be importable by the workers"
            )
        agent, name = where
        sent = dict(kwargs)
        context = kwargs.get("context_variables")
        if "context_variables" in sent:  # JSON on the way (a typed context's values dumped)
            sent["context_variables"] = context_out(context)
        if "idempotency_key" in sent:  # stable for this call of this workflow, on any worker
            sent["idempotency_key"] = default_idempotency_key(
                str(sent["idempotency_key"]), workflow.info().workflow_id
            )
        check_json(sent, f"the arguments of {name}")
        retried = is_idempotent(func)
        while True:
            try:
                out = await self._tool_activity(agent, name, sent, retried)
                break
            except _Lost as lost:
                if self.ask is None:
                    raise ToolInDoubt(lost.text) from None
                # A human decides, as for an effect call in doubt on the Session path: True
                # runs it again, False refuses it, a string is its result ("it did: noted").
                shown = {k: v for k, v in sent.items() if k not in INJECTED}
                question = {"agent": agent, "tool": name, "arguments": shown, "in_doubt": True}
                decision = await self.ask(question)
                if decision is False:
                    raise ToolInDoubt(f"{lost.text}; a human refused to run it again") from None
                if isinstance(decision, str):
                    return decision
        self.events.append(
            {"kind": "tool", "agent": agent, "tool": name, "ok": "raised" not in out}
        )
        if "context_variables" in out:  # the engine reads what the tool changed in place
            back = out["context_variables"]
            if isinstance(context, BaseModel):  # ``context_variables: Model``: its fields
                fresh = context_in(back, model=type(context))
                for key in type(context).model_fields:
                    setattr(context, key, getattr(fresh, key, None))
            elif isinstance(context, dict):
                context.clear()
                context.update(context_in(back, self.schema))
        if "raised" in out:  # the tool's own exception, under its own name: as in-process
            raise type(out["raised"], (Exception,), {})(out["message"])
        return decode_result(out["returned"], self.roster.agent)

    async def _tool_activity(
        self, agent: str, name: str, sent: dict[str, Any], retried: bool
    ) -> dict[str, Any]:
        """One tool activity (its retries included); :class:`_Lost` when an attempt of a tool
        that is not idempotent was lost."""
        options = self.options
        try:
            return await workflow.execute_activity(
                TOOL_ACTIVITY,
                {"start": self.roster.ref, "agent": agent, "tool": name, "kwargs": sent},
                activity_id=self._activity_id(f"{agent}.{name}", sent),
                start_to_close_timeout=timedelta(seconds=options.tool_timeout_s),
                heartbeat_timeout=timedelta(seconds=options.tool_heartbeat_s),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=1),
                    backoff_coefficient=2.0,
                    maximum_attempts=options.tool_attempts if retried else 1,
                ),
                summary=f"{agent}.{name}",
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == "TemporalInputError":
                raise TemporalInputError(cause.message) from None
            if isinstance(cause, TimeoutError) and not retried:
                raise _Lost(
                    f"its activity was lost ({cause.message or 'timed out'}) and the tool is not "
                    "marked @idempotent: it may or may not have happened; it was not run again"
                ) from None
            raise ToolInDoubt(f"its activity failed: {cause or exc}") from None

    async def off_loop(self, func: Callable[..., T], *args: Any) -> T:
        return func(*args)


class _Lost(Exception):
    """An attempt of a tool that is not idempotent was lost (``text`` says how)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _said(message: Any) -> tuple[Any, ...]:
    """What a prompt message says (not its ids or metadata, which the engine may stamp anew)."""
    calls = [(c.get("name"), c.get("args")) for c in getattr(message, "tool_calls", None) or ()]
    return message.type, message.content, getattr(message, "name", None), calls
