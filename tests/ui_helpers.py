"""Shared by the ``swarmgraph ui`` tests: a served swarm on loopback, an SSE reader, and the
scripted swarm the tests run (a tool that changes context, a handoff, an approval)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from pydantic import TypeAdapter

from swarmgraph import Agent, Result, ScriptedChatModel, Swarm, needs_approval, scripted_tool_call
from swarmgraph.app.ui.server import UiServer, make_server
from swarmgraph.app.ui.service import UiService

EVENT = TypeAdapter(__import__("ag_ui.core", fromlist=["Event"]).Event)


def swarm_agents(gate: Any = None) -> tuple[Agent, Agent]:
    """Triage (``set_order`` changes context, then hands off) and Sales (approval tool)."""
    sales = Agent(name="Sales")

    def transfer_to_sales() -> Agent:
        """Hand the customer to sales."""
        return sales

    def set_order(order_id: int) -> Result:
        """Remember the order the customer talks about."""
        if gate is not None:  # the test lets the turn go on when it has seen what it wants
            assert gate.wait(60) if isinstance(gate, threading.Event) else gate()
        return Result(value="noted", context_variables={"order_id": order_id})

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    def note(text: str) -> Result:
        """Keep a note about the customer."""
        return Result(value="noted", context_variables={"note": text})

    sales.functions = [refund]
    triage = Agent(name="Triage", functions=[set_order, transfer_to_sales, note])
    return triage, sales


def handoff_script(text: str = "Sales here: order 7 it is.") -> list[Any]:
    return [
        scripted_tool_call("set_order", {"order_id": 7}),
        scripted_tool_call("transfer_to_sales"),
        text,
    ]


@contextmanager
def served(script: list[Any], url: str, gate: Any = None, **options: Any) -> Iterator[UiServer]:
    triage, sales = swarm_agents(gate)
    swarm = Swarm(chat_model=ScriptedChatModel(script))
    service = UiService(swarm, triage, url=url, agents=[sales], **options)
    server = make_server(service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def run_input(thread: str, text: str, run_id: str | None = None) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run_id or f"run-{uuid.uuid4().hex[:8]}",
        "messages": [{"id": f"u-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}],
        "state": {},
        "tools": [],
        "context": [],
    }


def sse(lines: Iterator[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(id, event dict)`` of each server-sent event; comments skipped."""
    number, data = 0, []
    for line in lines:
        if line == "":
            if data:
                yield number, json.loads("\n".join(data))
            number, data = 0, []
        elif line.startswith("id:"):
            number = int(line[3:].strip())
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def post_run(base: str, body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    with httpx.stream("POST", base + "agui", json=body, timeout=60) as response:
        assert response.status_code == 200, response.read()
        return list(sse(response.iter_lines()))


def apply_state(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The state a client holds after these events (snapshots replace, deltas patch)."""
    import jsonpatch

    state: dict[str, Any] = {}
    for event in events:
        if event["type"] == "STATE_SNAPSHOT":
            state = event["snapshot"]
        elif event["type"] == "STATE_DELTA":
            state = jsonpatch.apply_patch(state, event["delta"])
    return state
