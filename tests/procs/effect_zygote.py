"""A fork server for the effect fault tests: it imports swarmgraph once, then forks one child
per command, so each kill -9 trial costs a fork, not an interpreter start.

``effect_zygote.py`` reads JSON commands on stdin, one per line, and answers each with one
JSON line on stdout: ``{"codes": [exit status of each child]}`` (``-9``: killed by SIGKILL).
The parent opens no store and no connection: every child starts with none.

Commands:

* ``{"do": "pay", "url", "cid", "turn", "order", "kill", "payments"}``: one Session turn in
  which the model asks to pay a refund for ``order`` through an ``@effect`` tool that inserts
  into the SQLite ``payments`` table; the child SIGKILLs itself at ``kill``:
  ``before`` (inside the tool, before the payment), ``inside`` (after the payment was
  committed, before the tool returned), ``after`` (the tool returned, its result not yet
  recorded), ``commit`` (the result recorded, the model writing its answer, the turn not yet
  committed) or ``committed`` (the turn committed, before the child could say so).
* ``{"do": "fan", "url", "cid", "turn", "order", "kill", "payments"}``: one Session turn in which
  a desk fans out to three branches ``A``, ``B``, ``C`` (``Parallel``), each paying order
  ``10 * order + i`` through its ``@effect`` tool (call ids ``pay-A``...); every run of a tool
  is counted in the ``runs`` table first. ``B`` waits until ``A`` and ``C`` are recorded done,
  then the child SIGKILLs itself at ``kill``: ``before``, ``inside``, ``after`` (as above, in
  ``B``), ``early`` (in ``B``'s tool at once, the other branches wherever they are),
  ``commit`` (joined, the desk's model writing its answer) or ``committed``; ``<point>/arun``:
  the same under ``Session.arun`` (async tools, the branches as asyncio tasks).
* ``{"do": "race", "url", "cid", "call", "decisions": [d1, d2], "payments", "out"}``: two
  children answer the pending approval ``call`` at the same moment, each with its decision;
  each writes what happened to ``out``-<i>.json. Each child gets ready (its agent, model and
  session made) and waits at a ``multiprocessing.Barrier`` with the parent: all three leave
  it together (children once spun on the clock until a start time 0.3 s ahead, taking both
  CPUs from the other tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import sqlite3
import sys
import threading
import traceback
from multiprocessing.synchronize import Barrier
from threading import BrokenBarrierError
from typing import Any

from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.effect_ledger import TurnLedger

from swarmgraph import ApprovalAlreadyDecided, Parallel, effect, needs_approval


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def record_payment(payments: str, order: int, key: str) -> None:
    conn = sqlite3.connect(payments, timeout=60, isolation_level=None)
    try:
        conn.execute("INSERT INTO payments (order_id, key) VALUES (?, ?)", (order, key))
    finally:
        conn.close()


def pay_tool(payments: str, kill: str | None):
    @effect
    def pay(order_id: int, idempotency_key: str) -> Result:
        """Pay out a refund for an order."""
        if kill == "before":
            die()
        record_payment(payments, order_id, idempotency_key)
        if kill == "inside":
            die()
        return Result(value=f"Paid order {order_id}.", context_variables={"paid": order_id})

    return pay


#: The branches of the ``fan`` command, in order; ``B`` is the one killed inside.
LABELS = ("A", "B", "C")


def fan_order(order: int, label: str) -> int:
    """The order a branch pays: ``10 * order`` plus its place (1, 2, 3)."""
    return 10 * order + LABELS.index(label) + 1


def count_run(payments: str, order: int, key: str) -> None:
    conn = sqlite3.connect(payments, timeout=60, isolation_level=None)
    try:
        conn.execute("INSERT INTO runs (order_id, key) VALUES (?, ?)", (order, key))
    finally:
        conn.close()


def fan_desk(
    payments: str, kill: str | None = None, done: Any = None, *, asynchronous: bool = False
) -> tuple[Agent, Swarm]:
    """The desk of the ``fan`` command and a swarm of offline scripted models: the desk fans
    out to A, B, C; each branch pays its order, then answers. ``done``: label -> Event, set
    once that branch's call is recorded done (B waits for A's and C's before it dies).
    ``asynchronous``: async tools (under ``arun`` B must not block the loop while it waits)."""

    def start(label: str, order_id: int, key: str) -> bool:
        """Count the run; whether B waits for A and C before going on."""
        count_run(payments, order_id, key)
        if label == "B" and kill == "early":
            die()
        return label == "B" and kill in ("before", "inside", "after")

    def finish(label: str, order_id: int, key: str) -> str:
        if label == "B" and kill == "before":
            die()
        record_payment(payments, order_id, key)
        if label == "B" and kill == "inside":
            die()
        return f"Paid order {order_id}."

    def pay_tool(label: str):
        @effect
        def pay(order_id: int, idempotency_key: str) -> str:
            """Pay out a refund for an order."""
            if start(label, order_id, idempotency_key):
                for other in ("A", "C"):
                    done[other].wait(60)
            return finish(label, order_id, idempotency_key)

        @effect
        async def apay(order_id: int, idempotency_key: str) -> str:
            """Pay out a refund for an order."""
            if start(label, order_id, idempotency_key):
                for other in ("A", "C"):
                    await asyncio.to_thread(done[other].wait, 60)
            return finish(label, order_id, idempotency_key)

        apay.__name__ = "pay"
        return apay if asynchronous else pay

    branches = [Agent(name=label, model=label, functions=[pay_tool(label)]) for label in LABELS]

    def ask_all() -> Parallel:
        """Ask every desk at once."""
        return Parallel(*branches)

    desk = Agent(name="Desk", model="desk", functions=[ask_all])

    def model(name: str) -> ScriptedChatModel:
        def answer(messages: list) -> Any:
            last = messages[-1]
            if name == "desk":
                if last.type == "human":
                    return scripted_tool_call("ask_all", id="fan-1")
                if kill == "commit":
                    die()
                return "All paid."
            if getattr(last, "name", None) != "pay":
                asked = next(m for m in messages if m.type == "human")
                order = int(str(asked.content).split()[-1])
                return scripted_tool_call(
                    "pay", {"order_id": fan_order(order, name)}, id=f"pay-{name}"
                )
            return f"{name} paid."

        return ScriptedChatModel(respond=answer)

    return desk, Swarm(chat_model=model)


def fan(command: dict[str, Any]) -> None:
    kill, _, driver = command["kill"].partition("/")  # "before/arun": under Session.arun
    done = {label: threading.Event() for label in LABELS}
    recorded = TurnLedger.after

    def after(self: TurnLedger, call: Any, outcome: Any) -> None:
        if call.call_id == "pay-B" and kill == "after":
            die()  # B's tool returned; die before its result is recorded
        recorded(self, call, outcome)
        done[call.call_id[len("pay-") :]].set()

    TurnLedger.after = after  # type: ignore[method-assign]
    desk, swarm = fan_desk(command["payments"], kill, done, asynchronous=driver == "arun")
    session = Session(command["cid"], url=command["url"])
    asked = f"refund order {command['order']}"
    if driver == "arun":
        asyncio.run(session.arun(swarm, desk, asked, turn_id=command["turn"]))
    else:
        session.run(swarm, desk, asked, turn_id=command["turn"])
    if kill == "committed":
        die()


def refund_tool(payments: str):
    @needs_approval
    def refund(order_id: int, idempotency_key: str) -> str:
        """Refund an order."""
        record_payment(payments, order_id, idempotency_key)
        return f"Refunded order {order_id}."

    return refund


def pay(command: dict[str, Any]) -> None:
    kill = command["kill"]
    if kill == "after":  # the tool returned; die before its result is recorded
        recorded = TurnLedger.after

        def after(self: TurnLedger, call: Any, outcome: Any) -> None:
            die()
            recorded(self, call, outcome)

        TurnLedger.after = after  # type: ignore[method-assign]

    def answer(messages: list) -> Any:
        if messages[-1].type == "human":
            return scripted_tool_call("pay", {"order_id": command["order"]}, id="call_0")
        if kill == "commit":
            die()
        return "Paid."

    agent = Agent(name="Cashier", functions=[pay_tool(command["payments"], kill)])
    swarm = Swarm(chat_model=ScriptedChatModel(respond=answer))
    session = Session(command["cid"], url=command["url"])
    session.run(swarm, agent, f"refund order {command['order']}", turn_id=command["turn"])
    if kill == "committed":
        die()


def race(command: dict[str, Any], index: int, gate: Barrier) -> None:
    agent = Agent(name="Refunds", functions=[refund_tool(command["payments"])])
    swarm = Swarm(chat_model=ScriptedChatModel(["Done."]))
    session = Session(command["cid"], url=command["url"])
    decision = command["decisions"][index]
    gate.wait()  # both children leave the line together
    outcome: dict[str, Any] = {"decision": decision}
    try:
        response = session.run(swarm, agent, approvals={command["call"]: decision})
        outcome["won"] = True
        outcome["answer"] = response.messages[0]["content"] if response.messages else None
    except ApprovalAlreadyDecided as lost:
        outcome["won"] = False
        outcome["first"] = lost.decision
    with open(f"{command['out']}-{index}.json", "w") as out:
        json.dump(outcome, out)


def child(command: dict[str, Any], index: int, gate: Barrier | None) -> None:
    try:
        if command["do"] == "pay":
            pay(command)
        elif command["do"] == "fan":
            fan(command)
        else:
            assert gate is not None
            race(command, index, gate)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)
    os._exit(0)


def main() -> None:
    for line in sys.stdin:
        command = json.loads(line)
        children = 2 if command["do"] == "race" else 1
        gate = multiprocessing.Barrier(children + 1) if children > 1 else None
        pids = []
        for index in range(children):
            pid = os.fork()
            if pid == 0:
                child(command, index, gate)
            pids.append(pid)
        if gate is not None:
            # (a child that died before it arrived breaks the barrier: the other one then
            # fails, and the test reads both exit codes)
            with contextlib.suppress(BrokenBarrierError):
                gate.wait(timeout=60)
        codes = []
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            codes.append(-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
        print(json.dumps({"codes": codes}), flush=True)


if __name__ == "__main__":
    main()
