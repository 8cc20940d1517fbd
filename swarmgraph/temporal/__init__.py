"""swarmgraph on Temporal: a swarm run as a durable workflow (extra ``temporal``).

Each model call and each tool call is an activity; handoffs, routes, guardrails, budgets and
approvals are decided in the workflow by the engine's own step (docs/temporal.md says why this
mapping and what it guarantees). Agents and tools must be importable by the workers: a run
names its start agent by import path.

Example:
    >>> from swarmgraph.temporal import ActivityOptions, idempotent
    >>> ActivityOptions(tool_heartbeat_s=2).tool_heartbeat_s
    2
"""

from __future__ import annotations

from .client import (
    agent_ref,
    connect,
    decide_on_temporal,
    events_on_temporal,
    pending_on_temporal,
    result_of,
    run_on_temporal,
    start_on_temporal,
)
from .driver import ActivityOptions, TemporalDriver
from .errors import TemporalInputError, TemporalRunFailed, TemporalUnavailable, ToolInDoubt
from .marks import idempotent, is_idempotent
from .worker import worker
from .workflow import SwarmRun

__all__ = [
    "ActivityOptions",
    "SwarmRun",
    "TemporalDriver",
    "TemporalInputError",
    "TemporalRunFailed",
    "TemporalUnavailable",
    "ToolInDoubt",
    "agent_ref",
    "connect",
    "decide_on_temporal",
    "events_on_temporal",
    "idempotent",
    "is_idempotent",
    "pending_on_temporal",
    "result_of",
    "run_on_temporal",
    "start_on_temporal",
    "worker",
]
