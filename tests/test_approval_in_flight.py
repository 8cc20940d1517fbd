"""A decision read while another process runs the approved call (issue 40), pinned with
threads and events, never by timing.

The first caller approves a waiting refund; its tool runs and holds there. The second caller
loads the conversation meanwhile: the ledger holds the call *started* and not done, which is
what a crash leaves, so the second caller's run sees it as a call in doubt and decides about
"attempt 1" (``<call>#1``), not about "may it run?". Then the first caller's turn finishes
(the refund recorded done, the turn saved) at one moment of the second caller's settle: before
each of its store reads, or after it. Whatever the moment, the first decision stands: the
second caller gets ``ApprovalAlreadyDecided`` with it, the refund ran once, one decision is
stored and the call has one answer. (tests/test_effect_faults.py races two forked processes
for this under load; before the fix, about one run in five on a loaded machine let both
win.)
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session, approval_resume
from swarmgraph.memory.effect_ledger import TurnLedger

from swarmgraph import ApprovalAlreadyDecided, Response, needs_approval

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")

#: When the first caller's turn finishes: before the second caller's n-th store call inside
#: ``settle`` (it reads the decisions, the attempts started, the turn entries, the results,
#: in an order that is the fix's to choose), or after its settle is over (``None``).
FINISH_AT = (0, 1, 2, 3, 4, None)


@pytest.mark.parametrize("second_decision", [False, True], ids=["deny", "approve"])
@pytest.mark.parametrize("finish_at", FINISH_AT, ids=lambda n: f"before-read-{n}" if n is not None else "after")
def test_a_decision_read_while_another_caller_runs_the_call_is_refused(
    url: str, finish_at: int | None, second_decision: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    in_tool, release = threading.Event(), threading.Event()

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        ran.append(threading.current_thread().name)
        if threading.current_thread().name == "first":
            in_tool.set()  # the call is recorded started, not done: hold it here
            assert release.wait(30)
        return f"Refunded order {order_id}."

    def respond(messages: list) -> Any:  # stateless: either caller may ask it
        if messages[-1].type == "human":
            return scripted_tool_call("refund", {"order_id": 7}, id="c1")
        return "Done."

    agent = Agent(name="Refunds", functions=[refund])
    swarm = Swarm(chat_model=ScriptedChatModel(respond=respond))
    cid = fresh_id("in-flight")
    [waiting] = Session(cid, url=url).run(swarm, agent, "refund 7").pending

    got: dict[str, Any] = {}

    def first_caller() -> None:
        try:
            got["first"] = Session(cid, url=url).run(swarm, agent, approvals={waiting.id: True})
        except BaseException as error:  # surfaced below
            got["first"] = error

    first = threading.Thread(target=first_caller, name="first")

    def finish_first() -> None:
        if not release.is_set():
            release.set()
            if first.ident is None:  # the second caller never got as far as starting it
                return
            first.join(30)
            assert not first.is_alive()

    second = Session(cid, url=url)
    settling = threading.local()
    calls = {"n": 0}

    def counted(method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if getattr(settling, "on", False):  # the second caller, inside its settle
                if calls["n"] == finish_at:
                    finish_first()
                calls["n"] += 1
            return method(*args, **kwargs)

        return call

    monkeypatch.setattr(second.store, "records", counted(second.store.records))
    monkeypatch.setattr(second.store, "save", counted(second.store.save))
    settle = TurnLedger.settle

    def settle_pinned(self: TurnLedger, *args: Any, **kwargs: Any) -> Any:
        # The first caller holds in its tool until released: a settle meanwhile is the
        # second caller's (run on whichever thread its step runs on).
        settling.on = in_tool.is_set() and not release.is_set()
        try:
            return settle(self, *args, **kwargs)
        finally:
            settling.on = False

    monkeypatch.setattr(TurnLedger, "settle", settle_pinned)
    checked = approval_resume.check_approvals

    def checked_then_first_starts(*args: Any, **kwargs: Any) -> Any:
        """The second caller's check of its decision against what waits (before its run) sees
        the call waiting, nothing started; then the first caller's run gets to its tool."""
        if first.ident is not None:  # the first caller's own check
            return checked(*args, **kwargs)
        result = checked(*args, **kwargs)
        first.start()
        assert in_tool.wait(30)
        return result

    monkeypatch.setattr(approval_resume, "check_approvals", checked_then_first_starts)
    try:
        with pytest.raises(ApprovalAlreadyDecided) as lost:
            second.run(swarm, agent, approvals={waiting.id: second_decision})
    finally:
        finish_first()
    assert calls["n"] > 0  # the second caller did reach its settle (its decision was read)
    if finish_at is not None:
        assert calls["n"] > finish_at  # ... and the first finished inside it, where asked

    assert isinstance(got["first"], Response), got["first"]
    assert lost.value.decision is True and lost.value.call_id == "c1"  # told the first one
    assert ran == ["first"]  # the refund ran once, by the first caller
    stored = Session(cid, url=url)
    decisions = stored.store.records(cid, "approval")
    assert [v["decision"] for v in decisions.values()] == [True]
    answers = [m.content for m in stored.messages if m.type == "tool"]
    assert answers == ["Refunded order 7."]  # one answer for the call, never a denial beside it
    assert stored.pending == [] and stored.unfinished == []
