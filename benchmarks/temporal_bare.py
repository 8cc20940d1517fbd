"""The bare baseline of benchmarks/temporal_runs.py: a temporalio workflow of as many
activities as the handoff run has, one after another, none of swarmgraph in it: what
Temporal itself costs per activity on the same server (its own module: temporalio is
imported only when the Temporal benchmark runs).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

#: As many as the handoff run's (3 model calls, 2 tool calls).
ACTIVITIES = 5


@activity.defn(name="bench.echo")
async def echo(payload: dict[str, Any]) -> dict[str, Any]:
    """The bare baseline's activity: gives its input back."""
    return payload


@workflow.defn(name="bench.Bare")
class Bare:
    """The bare baseline: a temporalio workflow of :data:`ACTIVITIES` activities one
    after another, none of ours in it (what Temporal itself costs per activity)."""

    @workflow.run
    async def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        for _ in range(ACTIVITIES):
            payload = await workflow.execute_activity(
                echo, payload, start_to_close_timeout=timedelta(seconds=60)
            )
        return payload
