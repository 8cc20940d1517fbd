"""Helpers shared by the Postgres/Redis/fault tests: workers, turn checks, message samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from swarmgraph.memory import open_history

ROOT = Path(__file__).resolve().parents[1]
PROCS = Path(__file__).parent / "procs"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def fresh_id(prefix: str = "conv") -> str:
    """A conversation id no other test uses (the servers live for the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def every_kind_of_message() -> list:
    """One of each message kind, with names, ids, tool calls, unicode and large content."""
    return [
        SystemMessage("be brief", id="s1"),
        HumanMessage("我叫小明, order 7 'quoted' \"double\" \\ back", name="Ming", id="h1"),
        AIMessage(
            "",
            name="Triage",
            id="a1",
            tool_calls=[
                {"name": "lookup", "args": {"order_id": 7, "tags": ["a", "ü"]}, "id": "call_1"}
            ],
        ),
        ToolMessage("order 7: shipped", tool_call_id="call_1", name="lookup", id="t1"),
        AIMessage("x" * 200_000, name="Refunds", id="a2"),
    ]


def worker(script: str, *args: str) -> subprocess.Popen:
    """Start ``tests/procs/<script>`` with ``args`` (stdout/stderr piped)."""
    return subprocess.Popen(
        [sys.executable, str(PROCS / script), *args],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_worker(script: str, *args: str, timeout: float = 120) -> dict:
    """Run a worker to the end; return the JSON of its last stdout line."""
    proc = worker(script, *args)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def whole_turns(url: str, cid: str) -> tuple[list[tuple[str, int]], int]:
    """The stored turns of a ``session_worker`` conversation and how many were torn.

    A whole turn is four contiguous messages: user ``W:i``, the tool call, its result, the
    reply. Returns ``(turns, torn)``; ``torn`` counts any window of four that is not one.
    """
    messages = open_history(url, cid).get_messages()
    turns, torn = [], len(messages) % 4
    for start in range(0, len(messages) - len(messages) % 4, 4):
        human, call, result, reply = messages[start : start + 4]
        try:
            writer, i = human.content.split(":")
            ok = (
                isinstance(human, HumanMessage)
                and call.tool_calls[0]["args"] == {"writer": writer, "i": int(i)}
                and isinstance(result, ToolMessage)
                and result.content == f"{writer}:{i} recorded"
                and reply.content == f"{writer}:{i} done"
            )
        except (ValueError, IndexError, AttributeError):
            ok = False
        if ok:
            turns.append((writer, int(i)))
        else:
            torn += 1
    return turns, torn


#: Every storage backend, for ``@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)``
#: with the ``backend_url`` fixture of conftest.py.
BACKENDS = [
    "sqlite",
    "memory",
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("redis", marks=pytest.mark.redis),
]
