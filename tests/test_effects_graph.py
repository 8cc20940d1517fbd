"""Effect tools in the compiled graph: a checkpointer keeps the thread, LangGraph's store keeps
the effect ledger (graph/features/effect_store.py). A process that dies inside a tool leaves the
thread
at the checkpoint before that step; resuming it from a fresh process re-runs the step, which
finds its reply in flight (no second model call), and the call in doubt (``interrupt()`` with
``in_doubt: True``) instead of running it again."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.types import Command
from swarmgraph.graph import (
    Agent,
    Result,
    ScriptedChatModel,
    build_swarm_graph,
    needs_approval,
    scripted_tool_call,
)

from swarmgraph import effect


class Crash(BaseException):
    """Where a kill -9 would stop the process."""


def _payments(path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS payments (order_id INT, key TEXT)")
    return conn


def _agent(db_path, crash: list[str]) -> Agent:
    @effect
    def pay(order_id: int, idempotency_key: str) -> Result:
        """Pay out a refund."""
        with _payments(db_path) as conn:
            conn.execute("INSERT INTO payments VALUES (?, ?)", (order_id, idempotency_key))
        if crash and crash[0] == "after":
            crash.pop()
            raise Crash("killed after paying")
        return Result(value=f"Paid order {order_id}.", context_variables={"paid": order_id})

    return Agent(name="Cashier", functions=[pay])


def _paid(db_path) -> list[tuple]:
    with _payments(db_path) as conn:
        return conn.execute("SELECT order_id, key FROM payments").fetchall()


class Process:
    """One process's view of the app: its own model, saver and store objects over the same
    files (``shared``: the in-memory ones, standing for a server that outlives the worker)."""

    def __init__(self, tmp_path, kind: str, shared: dict) -> None:
        self.tmp_path, self.kind, self.shared = tmp_path, kind, shared
        self.stack = ExitStack()

    def app(self, replies: list, crash: list[str]):
        model = ScriptedChatModel(replies)
        if self.kind == "sqlite":
            saver = self.stack.enter_context(
                SqliteSaver.from_conn_string(str(self.tmp_path / "threads.db"))
            )
            store = self.stack.enter_context(
                SqliteStore.from_conn_string(str(self.tmp_path / "store.db"))
            )
            store.setup()
        else:
            saver = self.shared.setdefault("saver", InMemorySaver())
            store = self.shared.setdefault("store", InMemoryStore())
        builder = build_swarm_graph([_agent(self.tmp_path / "pay.db", crash)], chat_model=model)
        return builder.compile(checkpointer=saver, store=store), model

    def close(self) -> None:
        self.stack.close()


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_a_crash_inside_the_tool_resumes_in_doubt_without_a_second_model_call(tmp_path, kind):
    shared: dict = {}
    config = {"configurable": {"thread_id": "order-7"}}
    first = Process(tmp_path, kind, shared)
    app, _ = first.app([scripted_tool_call("pay", {"order_id": 7}, id="c1"), "x"], ["after"])
    with pytest.raises(Crash):
        app.invoke({"messages": [("user", "refund order 7")]}, config)
    first.close()
    assert len(_paid(tmp_path / "pay.db")) == 1

    later = Process(tmp_path, kind, shared)  # a fresh process resumes the thread
    app, model = later.app(["Refund sent."], [])
    out = app.invoke(None, config)
    [question] = out["__interrupt__"]
    assert question.value == [
        {"id": "c1", "agent": "Cashier", "tool": "pay", "arguments": {"order_id": 7},
         "in_doubt": True}
    ]  # fmt: skip
    assert model.calls == [] and len(_paid(tmp_path / "pay.db")) == 1
    out = app.invoke(Command(resume="Paid order 7 (seen at the provider)."), config)
    assert [m.content for m in out["messages"]][-2:] == [
        "Paid order 7 (seen at the provider).",
        "Refund sent.",
    ]
    assert len(model.calls) == 1 and len(_paid(tmp_path / "pay.db")) == 1
    later.close()


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_a_crash_after_the_tool_finished_resumes_with_its_result(tmp_path, kind):
    shared: dict = {}
    config = {"configurable": {"thread_id": "order-8"}}
    first = Process(tmp_path, kind, shared)
    replies = [scripted_tool_call("pay", {"order_id": 8}, id="c1"), Crash("killed")]
    app, _ = first.app(replies, [])
    with pytest.raises(Crash):
        app.invoke({"messages": [("user", "refund order 8")]}, config)
    first.close()

    later = Process(tmp_path, kind, shared)
    app, model = later.app(["Refund sent."], [])
    out = app.invoke(None, config)
    assert "__interrupt__" not in out
    assert [m.content for m in out["messages"]][-2:] == ["Paid order 8.", "Refund sent."]
    assert out["context_variables"] == {"paid": 8}
    assert len(model.calls) == 1 and len(_paid(tmp_path / "pay.db")) == 1
    later.close()


def test_approving_a_call_in_doubt_runs_it_again_once_and_a_replayed_answer_is_not_reused(
    tmp_path,
):
    """The approval LangGraph replays when the step runs again must not answer the question
    about the crashed call: that question is asked in a step of its own."""
    log: list[int] = []
    crash = ["after"]

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        if crash:
            crash.pop()
            raise Crash("killed mid-refund")
        return f"Refunded order {order_id}."

    config = {"configurable": {"thread_id": "t"}}
    saver, store = InMemorySaver(), InMemoryStore()

    def app(replies):
        agent = Agent(name="Refunds", functions=[refund])
        model = ScriptedChatModel(replies)
        builder = build_swarm_graph([agent], chat_model=model)
        return builder.compile(checkpointer=saver, store=store), model

    first, _ = app([scripted_tool_call("refund", {"order_id": 7}, id="c1")])
    assert first.invoke({"messages": [("user", "refund 7")]}, config)["__interrupt__"]
    with pytest.raises(Crash):
        first.invoke(Command(resume=True), config)  # approved, then killed while refunding
    assert log == [7]
    later, model = app(["Refunded."])
    [question] = later.invoke(None, config)["__interrupt__"]
    assert question.value[0]["in_doubt"] is True and log == [7]  # not re-run on the old "yes"
    assert model.calls == []
    out = later.invoke(Command(resume=True), config)  # "it did not happen: run it again"
    assert log == [7, 7] and out["messages"][-1].content == "Refunded."
