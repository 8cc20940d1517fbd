"""A Temporal worker for swarm runs: the workflow and its two activities on one task queue.

Example (a worker process)::

    client = await connect("127.0.0.1:7233")
    async with worker(client, "swarm", ["app:triage"], chat_model=ChatOpenAI(model="gpt-4o")):
        await asyncio.Event().wait()
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker
from temporalio.workflow import NondeterminismError

from ..graph.core.errors import SwarmgraphError
from ..graph.swarm import Swarm
from .activities import SwarmActivities
from .roster import Roster
from .session_turn import load_activity, save_activity
from .workflow import SwarmRun, workflow_swarm

__all__ = ["worker"]


def worker(
    client: Client,
    task_queue: str,
    agents: Sequence[str],
    *,
    swarm: Swarm | None = None,
    chat_model: Any = None,
    **options: Any,
) -> Worker:
    """A ``temporalio.worker.Worker`` running swarm runs of ``agents`` (import paths, loaded
    now: a bad one fails here, before the worker polls). Models come from ``swarm`` (its
    client or chat model) or ``chat_model``, as for ``Swarm``; ``options`` go to ``Worker``.

    The workflow runs unsandboxed (the engine, LangChain and LangGraph are imported once per
    process, not once per run); it stays deterministic because every call that leaves the
    process is an activity. Instruction functions and guardrails run in the workflow and must
    be deterministic: a replay that sees a different sequence fails the run
    (``NondeterminismError``) instead of retrying it for ever.
    """
    swarm = swarm or Swarm(chat_model=chat_model)
    inside = workflow_swarm(task_queue, swarm)
    for ref in agents:  # import and compile now: a first run must not take seconds in a task
        roster = Roster.load(ref)
        roster.refuse_uncarried()  # a feature no run of it could carry: say so before polling
        inside.graph_for(roster.start)
    activities = SwarmActivities(swarm, options.get("max_concurrent_activities") or 100)
    options.setdefault("workflow_runner", UnsandboxedWorkflowRunner())
    # the Session turn's load and save are sync (the stores are): on threads of their own
    options.setdefault(
        "activity_executor", ThreadPoolExecutor(16, thread_name_prefix="swarmgraph-store")
    )
    # The run's own errors fail it (the workflow turns them into ApplicationErrors); naming
    # them here too tells temporalio's replay-safe spans so: a span that recorded one is
    # ended and exported, not dropped as a workflow task failure's (docs/temporal.md).
    options.setdefault("workflow_failure_exception_types", [NondeterminismError, SwarmgraphError])
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[SwarmRun],
        activities=[activities.model_call, activities.tool_call, load_activity, save_activity],
        **options,
    )
