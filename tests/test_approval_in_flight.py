"""A decision, or a look at what waits, read while another caller runs the approved call
(issue 40), pinned with threads and events, never by timing.

The first caller approves a waiting refund; its tool runs and holds there. Meanwhile the
ledger holds the call *started* and not done, which is also what a crash leaves: whether it
is in doubt depends on whether the turn that started it is still running, and that turn
finishes (the refund recorded done, the turn saved) at a moment pinned by these tests:

* the second caller checked its decision before the call started, so its run reads the call
  started and decides about "attempt 1" (``<call>#1``), not "may it run?"; the first caller
  finishes before each of the second's store calls inside its settle, or after it. Whatever
  the moment, the first decision stands: the second caller gets ``ApprovalAlreadyDecided``
  with it, the refund ran once, one decision is stored and the call has one answer.
  (tests/test_effect_faults.py races two forked processes for this under load; before the
  fix, about one run in five on a loaded machine let both win.)
* ``Session.pending`` read while the call finishes, before each of its ledger reads: the call
  is never listed in doubt (it was running, then done).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session, approval_resume
from swarmgraph.memory.effect_ledger import TurnLedger

from swarmgraph import ApprovalAlreadyDecided, Response, needs_approval

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")

#: When the first caller's turn finishes: before the n-th store call of the code under test
#: (it reads the decisions, the attempts started, the turn entries, the results, in an order
#: that is the fix's to choose), or after that code is over (``None``).
FINISH_AT = (0, 1, 2, 3, 4, None)


def _at(n: int | None) -> str:
    return "after" if n is None else f"before-call-{n}"


class FirstCaller:
    """A conversation waiting for approval of ``refund(7)``, and the caller who approves it:
    started by :meth:`start`, it holds inside the refund (recorded started, not done) until
    :meth:`finish` lets its turn run to the end."""

    def __init__(self, url: str) -> None:
        self.url, self.cid = url, fresh_id("in-flight")
        self.ran: list[str] = []
        self.in_tool, self.release = threading.Event(), threading.Event()
        self.got: Any = None

        @needs_approval
        def refund(order_id: int) -> str:
            """Refund an order."""
            self.ran.append(threading.current_thread().name)
            if threading.current_thread().name == "first":
                self.in_tool.set()  # the call is recorded started, not done: hold it here
                assert self.release.wait(30)
            return f"Refunded order {order_id}."

        def respond(messages: list) -> Any:  # stateless: either caller may ask it
            if messages[-1].type == "human":
                return scripted_tool_call("refund", {"order_id": 7}, id="c1")
            return "Done."

        self.agent = Agent(name="Refunds", functions=[refund])
        self.swarm = Swarm(chat_model=ScriptedChatModel(respond=respond))
        [self.waiting] = Session(self.cid, url=url).run(self.swarm, self.agent, "refund 7").pending
        self.thread = threading.Thread(target=self._run, name="first")

    def _run(self) -> None:
        try:
            session = Session(self.cid, url=self.url)
            self.got = session.run(self.swarm, self.agent, approvals={self.waiting.id: True})
        except BaseException as error:  # surfaced by the test
            self.got = error

    def start(self) -> None:
        """Run the approved call up to the middle of its tool."""
        self.thread.start()
        assert self.in_tool.wait(30)

    def holding(self) -> bool:
        return self.in_tool.is_set() and not self.release.is_set()

    def finish(self) -> None:
        """Let the tool return and the turn finish (nothing if it never started)."""
        if self.release.is_set():
            return
        self.release.set()
        if self.thread.ident is not None:
            self.thread.join(30)
            assert not self.thread.is_alive()


@pytest.fixture
def first(url: str) -> Iterator[FirstCaller]:
    caller = FirstCaller(url)
    yield caller
    caller.finish()  # never leave its thread waiting


def finish_inside(
    first: FirstCaller, store: Any, finish_at: int | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.local, dict[str, int]]:
    """Count the store calls made while the returned flag is on (on the thread that set it),
    and finish the first caller's turn right before call number ``finish_at``."""
    inside = threading.local()
    calls = {"n": 0}

    def counted(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if getattr(inside, "on", False):
                if calls["n"] == finish_at:
                    first.finish()
                calls["n"] += 1
            return method(*args, **kwargs)

        return call

    monkeypatch.setattr(store, "records", counted(store.records))
    monkeypatch.setattr(store, "save", counted(store.save))
    return inside, calls


@pytest.mark.parametrize("second_decision", [False, True], ids=["deny", "approve"])
@pytest.mark.parametrize("finish_at", FINISH_AT, ids=_at)
def test_a_decision_read_while_another_caller_runs_the_call_is_refused(
    first: FirstCaller,
    finish_at: int | None,
    second_decision: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    second = Session(first.cid, url=first.url)
    settling, calls = finish_inside(first, second.store, finish_at, monkeypatch)
    settle = TurnLedger.settle

    def settle_pinned(self: TurnLedger, *args: Any, **kwargs: Any) -> Any:
        # The first caller holds in its tool until released: a settle meanwhile is the
        # second caller's (run on whichever thread its step runs on).
        settling.on = first.holding()
        try:
            return settle(self, *args, **kwargs)
        finally:
            settling.on = False

    monkeypatch.setattr(TurnLedger, "settle", settle_pinned)
    checked = approval_resume.check_approvals

    def checked_then_first_starts(*args: Any, **kwargs: Any) -> Any:
        """The second caller checks its decision against what waits (before its run) while
        the call waits, nothing started; then the first caller's run gets to its tool."""
        result = checked(*args, **kwargs)
        if first.thread.ident is None:  # (not the first caller's own check)
            first.start()
        return result

    monkeypatch.setattr(approval_resume, "check_approvals", checked_then_first_starts)
    with pytest.raises(ApprovalAlreadyDecided) as lost:
        second.run(first.swarm, first.agent, approvals={first.waiting.id: second_decision})
    first.finish()
    assert calls["n"] > 0  # the second caller did reach its settle (its decision was read)
    if finish_at is not None:
        assert calls["n"] > finish_at  # ... and the first finished inside it, where asked

    assert isinstance(first.got, Response), first.got
    assert lost.value.decision is True and lost.value.call_id == "c1"  # told the first one
    assert first.ran == ["first"]  # the refund ran once, by the first caller
    stored = Session(first.cid, url=first.url)
    decisions = stored.store.records(first.cid, "approval")
    assert [v["decision"] for v in decisions.values()] == [True]
    answers = [m.content for m in stored.messages if m.type == "tool"]
    assert answers == ["Refunded order 7."]  # one answer for the call, never a denial beside it
    assert stored.pending == [] and stored.unfinished == []


@pytest.mark.parametrize("finish_at", FINISH_AT[:3], ids=_at)
def test_a_call_finishing_while_pending_is_read_is_never_listed_in_doubt(
    first: FirstCaller, finish_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    first.start()
    looking = Session(first.cid, url=first.url)
    reading, calls = finish_inside(first, looking.store, finish_at, monkeypatch)
    outcomes = approval_resume.tail_outcomes

    def read_pinned(*args: Any, **kwargs: Any) -> Any:
        reading.on = True
        try:
            return outcomes(*args, **kwargs)
        finally:
            reading.on = False

    monkeypatch.setattr(approval_resume, "tail_outcomes", read_pinned)
    pending = looking.pending
    assert calls["n"] > finish_at  # the call finished between the ledger reads, where asked
    assert isinstance(first.got, Response), first.got
    # The call was running, then done: it waits for nothing, least of all a decision in doubt.
    assert pending == []
