"""Start a swarm run on Temporal, wait for it, answer its approvals: the caller's side.

A run names its start agent by import path (``"app:triage"``, ``"path/app.py:triage"``),
because the workers import it (swarmgraph/temporal/roster.py); an ``Agent`` object is
accepted when it is a module-level name of an importable module. The input is checked before
anything starts: plain JSON only (the run's history stores it).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

from ..graph.core.types import Agent, Response
from ..graph.features.budget import Budget
from ..graph.features.errors import BudgetExceeded
from .driver import ActivityOptions
from .errors import TemporalInputError, TemporalRunFailed, TemporalUnavailable
from .tracing import plugins_for
from .wire import budget_out, check_json, response_in, turns_out
from .workflow import WORKFLOW

__all__ = [
    "agent_ref",
    "connect",
    "decide_on_temporal",
    "pending_on_temporal",
    "result_of",
    "run_on_temporal",
    "start_on_temporal",
]


async def connect(
    address: str, namespace: str = "default", *, tracing: bool | None = None
) -> Client:
    """A client of the Temporal server at ``address`` (``HOST:PORT``), or
    :class:`TemporalUnavailable` saying it did not answer.

    ``tracing``: carry the trace into the workflow and its activities (temporalio's
    OpenTelemetry plugin, on this client and every worker made from it; one run, one trace);
    ``None`` (default): on when the global tracer provider is replay-safe
    (swarmgraph/temporal/tracing.py)."""
    plugins = plugins_for(tracing)  # a refusal comes before any connection
    try:
        return await Client.connect(address, namespace=namespace, plugins=plugins)
    except Exception as exc:  # the core raises RuntimeError with a transport message
        raise TemporalUnavailable(
            f"no Temporal server answered at {address} (namespace {namespace!r}): {exc}"
        ) from None


def agent_ref(agent: Agent | str) -> str:
    """The import path a worker loads ``agent`` from: ``agent`` itself when it is a string,
    else the module-level name that holds this very object (``__main__`` excluded: a worker
    cannot import a script run as ``__main__``, name its file instead)."""
    if isinstance(agent, str):
        return agent
    if not isinstance(agent, Agent):
        raise TemporalInputError(f"agent must be an Agent or 'module:attr', got {type(agent)}")
    for name, module in list(sys.modules.items()):
        if name == "__main__" or module is None or name.startswith("_"):
            continue
        for attr, value in list(getattr(module, "__dict__", {}).items()):
            if value is agent:
                return f"{name}:{attr}"
    raise TemporalInputError(
        f"agent {agent.name!r} is not a module-level name of any importable module: pass its "
        "import path ('package.module:attr' or 'path/to/app.py:attr'), which the workers load"
    )


async def start_on_temporal(
    client: Client,
    agent: Agent | str,
    messages: Sequence[Mapping[str, Any]],
    context_variables: Mapping[str, Any] | None = None,
    *,
    task_queue: str,
    id: str | None = None,
    model_override: str | None = None,
    max_turns: float = math.inf,
    budget: Budget | None = None,
    options: ActivityOptions | None = None,
    conversation_id: str | None = None,
    session_url: str | None = None,
    turn_id: str | None = None,
    session_options: Mapping[str, Any] | None = None,
) -> WorkflowHandle[Any, Any]:
    """Start ``agent`` on ``messages`` as workflow ``id`` (default ``swarm-<uuid>``) on
    ``task_queue``; the handle's run is waited for with :func:`result_of`. The arguments
    are those of ``Swarm.run``; ``options`` sets the activities' timeouts and attempts.
    ``conversation_id``: the run is a turn of that stored conversation (``session_url``, or
    ``$SWARMGRAPH_DB``, or the default SQLite file, resolved here: every worker must reach
    it), loaded and saved by activities through ``Session``'s own load and save
    (swarmgraph/temporal/session_turn.py): ``turn_id`` names the turn (default: the workflow
    id; a stored one is returned, not run again), ``session_options`` are the ``Session``
    settings the workers use (``window``, ``memory`` as a spec string, ``persist``,
    ``user_id``, ``long_term=True``, ``recall``)."""
    ref = agent_ref(agent)
    request = {
        "agent": ref,
        "messages": [dict(m) for m in messages],
        "context_variables": dict(context_variables or {}),
        "model_override": model_override,
        "max_turns": turns_out(max_turns),
        "budget": budget_out(budget),
        "options": dataclasses.asdict(options or ActivityOptions()),
    }
    if conversation_id is not None:
        from ..memory.ids import check_conversation_id
        from ..memory.urls import default_url

        where = session_url or default_url()
        turn: dict[str, Any] = {
            "url": where,
            "conversation_id": check_conversation_id(conversation_id),
            **_session_options(session_options or {}),
        }
        if turn_id is not None:
            from ..memory.ids import check_turn_id

            turn["turn_id"] = check_turn_id(turn_id)
        request["session"] = turn
    elif turn_id is not None or session_options:
        raise TypeError("turn_id= and session_options= name a Session turn: give conversation_id=")
    check_json(request["messages"], "messages")
    check_json(request["context_variables"], "context_variables")
    _refuse_uncarried(ref)
    if id is None and turn_id is not None:  # the turn's workflow: one at a time per turn
        id = turn_workflow_id(conversation_id or "", turn_id)
    try:
        return await client.start_workflow(
            WORKFLOW, request, id=id or f"swarm-{uuid.uuid4()}", task_queue=task_queue
        )
    except WorkflowAlreadyStartedError:
        if conversation_id is None or turn_id is None:
            raise
        from ..memory.errors import TurnInProgress  # as a Session turn held by another run

        raise TurnInProgress(conversation_id, turn_id) from None


def _refuse_uncarried(ref: str) -> None:
    """The workers' check, here first when this process can import the agent: a run of a
    feature Temporal does not carry is refused before it starts (a caller that cannot
    import it learns it from the workflow's failure, before any activity ran)."""
    from .roster import Roster

    try:
        roster = Roster.load(ref)
    except TemporalInputError:  # the workers may import what the caller cannot
        return
    roster.refuse_uncarried()


def turn_workflow_id(conversation_id: str, turn_id: str) -> str:
    """The workflow id of turn ``turn_id`` of a conversation (when no ``id=`` is given): one
    workflow at a time runs a turn (a second start is ``TurnInProgress``), and the turn's
    ``@effect`` keys (workflow id + call id) name the turn.

    Example:
        >>> turn_workflow_id("conv-7", "t-1")
        'turn:conv-7:t-1'
    """
    return f"turn:{conversation_id}:{turn_id}"


def _session_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Session`` settings of a turn on Temporal, checked here (before anything
    starts): each must cross as JSON, so a policy is its spec string."""
    from .session_turn import SESSION_OPTIONS

    unknown = sorted(set(options) - set(SESSION_OPTIONS))
    if unknown:
        raise TypeError(f"session_options takes {list(SESSION_OPTIONS)}, not {unknown}")
    memory = options.get("memory")
    if memory is not None:
        from ..memory.policies import parse_memory

        if not isinstance(memory, str):
            raise TypeError(
                "session_options['memory'] crosses to the workers as a spec string "
                f"('window:K', 'tokens:N'), got {type(memory).__name__}"
            )
        if memory.partition(":")[0].strip() == "summary":
            raise TemporalInputError(
                "a summary memory policy is not carried on Temporal (it needs a summariser "
                "model the turn's activities do not have): use 'window:K' or 'tokens:N'"
            )
        parse_memory(memory)  # an unknown spec fails here, not on a worker
    if options.get("long_term") not in (None, True, False):
        raise TypeError(
            "session_options['long_term'] is True or False: the workers open the user's "
            "memory on session_url (a LongTermMemory object cannot cross)"
        )
    kept = {k: v for k, v in options.items() if v is not None}
    if "persist" in kept:
        kept["persist"] = list(kept["persist"])
    check_json(kept, "session_options")
    return kept


async def run_on_temporal(
    client: Client,
    agent: Agent | str,
    messages: Sequence[Mapping[str, Any]],
    context_variables: Mapping[str, Any] | None = None,
    **start: Any,
) -> Response:
    """:func:`start_on_temporal` and wait: the run's ``Response``, as ``Swarm.run`` gives it
    (a run that waits for approval waits here too; answer it from elsewhere with
    :func:`decide_on_temporal`). Errors: ``BudgetExceeded`` (with ``.response``) as
    in-process, any other failure as :class:`TemporalRunFailed`."""
    handle = await start_on_temporal(client, agent, messages, context_variables, **start)
    return await result_of(handle, agent)


async def result_of(handle: WorkflowHandle[Any, Any], agent: Agent | str | None = None) -> Response:
    """Wait for the run of ``handle``; its ``Response`` (``Response.agent`` is the caller's own
    Agent object when ``agent``'s module is importable here, else an ``Agent`` of that name)."""
    named = _namer(agent)
    try:
        data = await handle.result()
    except WorkflowFailureError as exc:
        raise _error_of(exc, named) from None
    return response_in(data, named)


async def pending_on_temporal(handle: WorkflowHandle[Any, Any]) -> list[Any]:
    """The calls the run waits on (``PendingApproval``s; ``[]`` when none)."""
    from ..graph.features.approvals import PendingApproval

    return [PendingApproval(**p) for p in await handle.query("pending")]


async def events_on_temporal(handle: WorkflowHandle[Any, Any], since: int = 0) -> list[Any]:
    """What the run did so far (a query; poll it while the run goes on), from event
    ``since`` on: ``{"kind": "reply", "model", "content", "tool_calls"}`` per model reply,
    ``{"kind": "tool", "agent", "tool", "ok"}`` per tool result. Not Swarm's stream chunks:
    a reply comes whole, once its activity completed."""
    return list(await handle.query("events", since))


async def decide_on_temporal(
    handle: WorkflowHandle[Any, Any], approvals: Mapping[str, bool | str]
) -> None:
    """Answer the run's pending calls ``{id: True | False | "reason"}``; an id that is not
    pending is refused (``temporalio.client.WorkflowUpdateFailedError``), nothing is run."""
    await handle.execute_update("decide", dict(approvals))


def _namer(agent: Agent | str | None) -> Any:
    roster = None
    if agent is not None:
        try:
            from .roster import Roster

            roster = Roster.load(agent_ref(agent))
        except TemporalInputError:
            roster = None
    return lambda name: None if roster is None else roster.agents.get(name)


def _error_of(exc: WorkflowFailureError, named: Any) -> Exception:
    cause = exc.cause
    if not isinstance(cause, ApplicationError):
        return TemporalRunFailed(f"the run's workflow failed: {cause or exc}", "WorkflowFailure")
    details = cause.details[0] if cause.details else {}
    fields = details.get("fields", {}) if isinstance(details, dict) else {}
    data = details.get("response") if isinstance(details, dict) else None
    response = None if data is None else response_in(data, named)
    error: Exception
    if cause.type == "BudgetExceeded" and {"limit", "value", "agent"} <= set(fields):
        error = BudgetExceeded(fields["limit"], fields["value"], fields["agent"])
        error.response = response
        return error
    if cause.type == "TemporalInputError":
        return TemporalInputError(cause.message)
    return TemporalRunFailed(cause.message, cause.type or "ApplicationError", response)
