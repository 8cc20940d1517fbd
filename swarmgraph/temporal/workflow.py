"""A swarm run as one Temporal workflow: ``SwarmRun``.

The workflow imports the start agent by its path (swarmgraph/temporal/roster.py) and runs the
engine's own ``Swarm.arun`` with the Temporal driver standing in for its I/O
(swarmgraph/temporal/driver.py): every decision is made here, every model and tool call is an
activity whose result the history keeps. A run that stops for ``@needs_approval`` waits in
the workflow (no worker is held: Temporal keeps the run's history, any worker picks it up) for
the ``decide`` update, then goes on as ``Swarm.run(..., approvals=)`` does. The input and the
result are JSON (swarmgraph/temporal/wire.py); an error of the run fails the workflow at once
with its kind and the ``Response`` so far (never a workflow task retried for ever).
"""

from __future__ import annotations

import math
import threading
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from ..graph.core.drivers import STAND_IN
from ..graph.core.errors import SwarmError, SwarmgraphError
from ..graph.core.messages import to_langchain
from ..graph.swarm import Swarm
from .driver import ActivityOptions, TemporalDriver
from .errors import TemporalInputError
from .remote_model import RemoteModel
from .roster import Roster
from .session_turn import SESSION_LOAD, SESSION_SAVE, new_input
from .wire import budget_in, messages_in, messages_out, response_in, response_out

__all__ = ["WORKFLOW", "SwarmRun", "workflow_swarm"]

WORKFLOW = "swarmgraph.SwarmRun"

_STORE_TIMEOUT = timedelta(seconds=60)
_STORE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=10)
_LOCK = threading.Lock()
_SWARMS: dict[str, Swarm] = {}  # by task queue: the Swarm settings its worker was given


def workflow_swarm(task_queue: str, like: Swarm | None = None) -> Swarm:
    """The workflow-side ``Swarm`` of ``task_queue``: ``like``'s settings, every model a
    :class:`RemoteModel` (made once per queue, when its worker starts)."""
    with _LOCK:
        found = _SWARMS.get(task_queue)
        if found is None or like is not None:
            base = like or Swarm()
            typed = base.context_schema
            found = _SWARMS[task_queue] = Swarm(
                chat_model=_remote,
                max_consecutive_handoffs=base.max_consecutive_handoffs,
                step_limit=base.step_limit,
                parallel_handoffs=base.parallel_handoffs,
                # the typed context is validated and reduced in the workflow, as in-process
                context_schema=None if typed is None else typed.schema,
            )
        return found


def _remote(name: str) -> RemoteModel:
    return RemoteModel(model_name=name)


@workflow.defn(name=WORKFLOW)
class SwarmRun:
    """One run: ``run(request)`` gives the ``Response`` as JSON; ``pending`` (query) lists the
    calls waiting for a decision, ``decide`` (update) answers them ``{id: True | False |
    "reason"}``."""

    def __init__(self) -> None:
        self._pending: list[dict[str, Any]] = []  # approvals the run stopped for
        self._decisions: dict[str, Any] | None = None
        self._doubts: dict[str, dict[str, Any]] = {}  # tool calls in doubt, by question id
        self._answers: dict[str, Any] = {}
        self._asked = 0
        self._driver: TemporalDriver | None = None

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            roster = Roster.load(request["agent"])
            roster.refuse_uncarried()  # before any activity: nothing half-run
        except TemporalInputError as exc:
            raise ApplicationError(
                str(exc), type="TemporalInputError", non_retryable=True
            ) from None
        swarm = workflow_swarm(workflow.info().task_queue)
        options = ActivityOptions(**request.get("options", {}))
        ask = self._ask if options.in_doubt == "ask" else None
        self._driver = TemporalDriver(roster, options, ask, swarm.context_schema)
        token = STAND_IN.set(self._driver)
        response: Any = None
        try:
            response = await self._run(swarm, roster, request)
        except FailureError:
            raise
        except SwarmgraphError as exc:
            raise _failure(exc, getattr(exc, "response", None)) from None
        finally:
            STAND_IN.reset(token)
        return response_out(response)

    async def _run(self, swarm: Swarm, roster: Roster, request: dict[str, Any]) -> Any:
        agent = roster.start
        history: list[Any] = list(request["messages"])
        context = dict(request.get("context_variables") or {})
        session = request.get("session")
        loaded = None
        hooks: dict[str, Any] = {}
        if session is not None:  # a Session turn: what Session.run would send (an activity)
            session = {
                **session,
                "agent": request["agent"],
                "turn_id": session.get("turn_id") or workflow.info().workflow_id,
                "new": messages_out(new_input(history)),
                "context": context,
            }
            loaded = await workflow.execute_activity(
                SESSION_LOAD,
                session,
                start_to_close_timeout=_STORE_TIMEOUT,
                retry_policy=_STORE_RETRY,
            )
            if "stored" in loaded:  # this turn id is stored: its turn, not a second run
                return response_in(loaded["stored"], roster.agents.get)
            history = messages_in(loaded["messages"])
            context = loaded["context"]
            agent = roster.agents.get(loaded["active_agent"] or "") or agent
            recall = loaded.get("recalled") or {}
            if recall:  # the long-term recall block, looked up (read by the load activity)
                hooks["prompt_context"] = lambda who, _messages: recall.get(who.name)
        turns = request.get("max_turns")
        budget = budget_in(request.get("budget"))
        approvals: dict[str, Any] | None = None
        branches: list[dict[str, Any]] | None = None
        added: list[dict[str, Any]] = []
        trajectory: list[dict[str, Any]] = []
        while True:
            try:
                response: Any = await swarm.arun(
                    agent,
                    history,
                    context,
                    model_override=request.get("model_override"),
                    max_turns=math.inf if turns is None else turns,
                    budget=budget,
                    approvals=approvals,
                    branches=branches,
                    **hooks,
                )
            except SwarmError as error:  # a Session keeps what ran (a budget stop after tools)
                if session is not None and loaded is not None:
                    await self._keep(session, loaded, request, error, added)
                raise
            added += response.messages
            trajectory += response.trajectory
            if not response.pending:
                final = response.model_copy(update={"messages": added, "trajectory": trajectory})
                if session is not None and loaded is not None:
                    await self._save(session, loaded, request, final)
                return final
            # Waiting holds no worker: the history has the run so far; a decision (on any
            # worker, days later) replays it from there.
            self._pending = [p.model_dump() for p in response.pending]
            await workflow.wait_condition(lambda: self._decisions is not None)
            approvals, self._decisions, self._pending = self._decisions, None, []
            history = history + response.messages
            agent = response.agent or agent
            context = response.context_variables
            branches = response.branches or None

    async def _keep(
        self,
        session: dict[str, Any],
        loaded: dict[str, Any],
        request: dict[str, Any],
        error: SwarmError,
        added: list[dict[str, Any]],
    ) -> None:
        """What a run a ``SwarmError`` stopped saves, as ``Session.run`` does
        (``memory.turn_recovery.kept_run``): its messages so far, every tool call answered
        with why it did not run; nothing when nothing happened (or a decision came second)."""
        from ..graph.core.messages import to_openai
        from ..memory.turn_recovery import stopped_messages

        ran = [*added, *error.response.messages] if error.response is not None else []
        kept = stopped_messages(to_langchain(ran), error)
        if kept is None or error.response is None:
            return
        update = {"messages": to_openai(kept)}
        await self._save(session, loaded, request, error.response.model_copy(update=update))

    async def _save(
        self, session: dict[str, Any], loaded: dict[str, Any], request: dict[str, Any], final: Any
    ) -> None:
        """The turn, in one write of the conversation's store (an activity)."""
        turn = {**session, **loaded, "response": response_out(final)}
        try:
            await workflow.execute_activity(
                SESSION_SAVE, turn, start_to_close_timeout=_STORE_TIMEOUT, retry_policy=_STORE_RETRY
            )
        except ActivityError as exc:
            cause = exc.cause
            kind = cause.type if isinstance(cause, ApplicationError) else None
            details = {"fields": {}, "response": response_out(final)}
            raise ApplicationError(
                f"the turn ran but was not saved: {getattr(cause, 'message', None) or exc}",
                details,
                type=kind or "SessionSaveFailed",
                non_retryable=True,
            ) from None

    async def _ask(self, question: dict[str, Any]) -> Any:
        """Wait for a human's decision about a tool call in doubt (the driver asks)."""
        self._asked += 1
        key = f"in-doubt-{self._asked}"
        self._doubts[key] = {"id": key, **question}
        await workflow.wait_condition(lambda: key in self._answers)
        del self._doubts[key]
        return self._answers.pop(key)

    @workflow.query(name="pending")
    def pending(self) -> list[dict[str, Any]]:
        """The tool calls waiting for a decision (``PendingApproval`` dicts; a call in doubt
        has ``in_doubt=True``)."""
        return [*self._pending, *self._doubts.values()]

    @workflow.query(name="events")
    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """What the run did so far from event ``since`` on: each model reply (``kind``
        ``"reply"``: its text and the tools it calls) and each tool result (``"tool"``)."""
        return [] if self._driver is None else self._driver.events[since:]

    @workflow.update(name="decide")
    async def decide(self, decisions: dict[str, Any]) -> None:
        """Answer the pending calls: ``{call id: True | False | "reason"}``."""
        approvals = {}
        for key, value in decisions.items():
            if key in self._doubts:
                self._answers[key] = value
            else:
                approvals[key] = value
        if approvals:
            self._decisions = approvals

    @decide.validator
    def _check(self, decisions: dict[str, Any]) -> None:
        waiting = {p["id"] for p in self.pending()}
        unknown = sorted(set(decisions) - waiting)
        if not waiting:
            raise ValueError("this run has no tool call waiting for a decision")
        if unknown:
            raise ValueError(f"no pending call has id {unknown}; pending: {sorted(waiting)}")
        for key, value in decisions.items():
            if not isinstance(value, (bool, str)):
                raise ValueError(f"decision for {key!r} must be True, False or a reason (str)")


def _failure(exc: SwarmgraphError, response: Any) -> ApplicationError:
    """The run's error as a workflow failure: its kind, message, fields and Response so far."""
    fields = {
        k: v for k, v in vars(exc).items() if isinstance(v, (str, int, float, bool, type(None)))
    }
    details = {"fields": fields, "response": None if response is None else response_out(response)}
    return ApplicationError(str(exc), details, type=type(exc).__name__, non_retryable=True)
