"""Approvals with Session: a turn that waits is stored, seen and resumed from another process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from openai_stub import OpenAIStub, StubReply, stub_text, stub_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.approvals import ApprovalPendingError
from test_control import refund_swarm

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call

WORKER = Path(__file__).parent / "procs" / "approval_worker.py"


def worker(*args: str) -> object:
    done = subprocess.run(
        [sys.executable, str(WORKER), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_approval_across_a_process_restart_with_session_on_the_openai_stub(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    replies = [
        stub_tool_call("transfer_to_refunds", "{}"),
        StubReply(tool_calls=[("call_refund", "process_refund", '{"order_id": 7}')]),
        stub_text("Your refund is on its way."),
    ]
    with OpenAIStub(replies) as stub:
        pending = worker(url, "conv-7", stub.base_url, "start")
        assert pending == [
            {"id": "call_refund", "agent": "Refunds", "tool": "process_refund",
             "arguments": {"order_id": 7}}
        ]  # fmt: skip
        assert worker(url, "conv-7", stub.base_url, "pending") == pending  # a fresh process
        done = worker(url, "conv-7", stub.base_url, "resume")
        sent = stub.requests[-1]["messages"]
    assert done == {"last": "Your refund is on its way.", "agent": "Refunds"}
    assert sent[-1]["role"] == "tool" and sent[-1]["content"] == "Refunded order 7."
    session = Session("conv-7", url=url)
    assert session.pending == [] and session.context_variables == {"refunded": 7}
    assert [m.type for m in session.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]


def refunds_agent(log: list) -> Agent:
    return refund_swarm(log)[1]  # Refunds, whose process_refund needs approval


def test_session_rules_for_a_waiting_turn(tmp_path):
    log: list = []
    refunds = refunds_agent(log)
    model = ScriptedChatModel(
        [scripted_tool_call("process_refund", {"order_id": 3}, id="r3"), "Denied, sorry."]
    )
    swarm = Swarm(chat_model=model)
    session = Session("c", url=f"sqlite:///{tmp_path / 's.db'}")
    with pytest.raises(ValueError, match="nothing waits for approval"):
        session.run(swarm, refunds, approvals={"x": True})
    first = session.run(swarm, refunds, "refund 3")
    assert [p.id for p in first.pending] == ["r3"] == [p.id for p in session.pending]

    with pytest.raises(
        ApprovalPendingError, match=r"waits for approval of process_refund\(order_id=3\)"
    ):
        session.run(swarm, refunds, "hello?")
    with pytest.raises(ValueError, match="needs a message, or approvals="):
        session.run(swarm, refunds)
    assert len(session.messages) == 2  # nothing was stored by the refused calls

    done = session.run(swarm, refunds, approvals={"r3": "over the limit"})
    assert log == [] and session.pending == []
    assert [m.content for m in session.messages][-2:] == [
        "Error: denied: over the limit",
        "Denied, sorry.",
    ]
    assert done.messages[-1]["content"] == "Denied, sorry."


def test_session_arun_resumes_too(tmp_path):
    import asyncio

    log: list = []
    refunds = refunds_agent(log)
    model = ScriptedChatModel(
        [scripted_tool_call("process_refund", {"order_id": 4}, id="r4"), "ok"]
    )
    swarm = Swarm(chat_model=model)
    session = Session("c", url=f"sqlite:///{tmp_path / 'a.db'}")
    first = asyncio.run(session.arun(swarm, refunds, "refund 4"))
    assert [p.id for p in first.pending] == ["r4"]
    asyncio.run(session.arun(swarm, refunds, approvals={"r4": True}))
    assert log == [4] and session.pending == []
