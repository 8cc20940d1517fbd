"""Agents the Temporal tests' workers import by path (``tests/temporal_agents.py:triage``).

The model is an offline stand-in (``rule_model``), written for these tests only: its reply
is a function of the prompt alone (the agent's instructions and the last message), so every
worker process, and a second worker after a first one was killed, answers the same. Tools
count their runs in a side table (SQLite, ``SWARMGRAPH_TEMPORAL_TALLY``), the fault test's
witness of how often each one really ran.
"""

from __future__ import annotations

import datetime
import operator
import os
import sqlite3
import sys
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from swarmgraph import Agent, Parallel, Result, ScriptedChatModel, effect, needs_approval
from swarmgraph.temporal import idempotent


def tally(tool: str, key: str) -> None:
    """Record one run of ``tool`` for ``key`` (a plain table: a second run is a second row)."""
    path = os.environ.get("SWARMGRAPH_TEMPORAL_TALLY")
    if not path:
        return
    with sqlite3.connect(path, timeout=30) as db:
        db.execute("CREATE TABLE IF NOT EXISTS runs (tool TEXT, key TEXT)")
        db.execute("INSERT INTO runs VALUES (?, ?)", (tool, key))


#: The W3C ``traceparent`` each ``lookup_order`` call ran under, once a program loaded
#: OpenTelemetry's propagators (tests/test_temporal_tracing.py reads it).
TRACE_SEEN: list[str] = []


def lookup_order(order_id: int) -> str:
    """Look an order up."""
    tally("lookup_order", str(order_id))
    propagate = sys.modules.get("opentelemetry.propagate")
    if propagate is not None:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        TRACE_SEEN.append(carrier.get("traceparent", ""))
    return f"order {order_id}: shipped"


@effect
@idempotent
def slow_charge(order_id: int, idempotency_key: str) -> str:
    """Charge an order (slowly: the fault test kills the worker while it runs). Idempotent:
    a charge already made under this key is not made again (a real payment API's own check),
    so only a charge that completed is counted."""
    path = os.environ.get("SWARMGRAPH_TEMPORAL_TALLY")
    if path:
        with sqlite3.connect(path, timeout=30) as db:
            db.execute("CREATE TABLE IF NOT EXISTS starts (key TEXT)")
            db.execute("INSERT INTO starts VALUES (?)", (f"charge {idempotency_key}",))
    time.sleep(float(os.environ.get("SWARMGRAPH_TEMPORAL_CHARGE_S", "0")))
    if path:
        with sqlite3.connect(path, timeout=30) as db:
            db.execute("CREATE TABLE IF NOT EXISTS charges (key TEXT PRIMARY KEY, order_id INT)")
            db.execute("INSERT OR IGNORE INTO charges VALUES (?, ?)", (idempotency_key, order_id))
    tally("slow_charge", idempotency_key)
    return f"charged order {order_id}"


def slow_note(order_id: int) -> str:
    """Write a note on an order (slowly; not idempotent: a lost attempt is never re-run)."""
    path = os.environ.get("SWARMGRAPH_TEMPORAL_TALLY")
    if path:
        with sqlite3.connect(path, timeout=30) as db:
            db.execute("CREATE TABLE IF NOT EXISTS starts (key TEXT)")
            db.execute("INSERT INTO starts VALUES (?)", (f"note {order_id}",))
    time.sleep(float(os.environ.get("SWARMGRAPH_TEMPORAL_NOTE_S", "0")))
    tally("slow_note", str(order_id))
    return f"noted order {order_id}"


@needs_approval
def refund(order_id: int) -> str:
    """Refund an order (a human approves it first)."""
    tally("refund", str(order_id))
    return f"refunded order {order_id}"


def remember(context_variables: dict) -> str:
    """Note in the context that the customer was greeted."""
    context_variables["greeted"] = True
    if context_variables.get("odd"):  # a value JSON cannot hold
        context_variables["when"] = object()
    return "noted"


@idempotent
def check_stock(item: str) -> str:
    """Check the stock of an item (slowly: the fan-out tests see two branches at once, and
    kill a worker during them). A read: safe to run again."""
    path = os.environ.get("SWARMGRAPH_TEMPORAL_TALLY")
    began = time.time()
    if path:
        with sqlite3.connect(path, timeout=30) as db:
            db.execute("CREATE TABLE IF NOT EXISTS starts (key TEXT)")
            db.execute("INSERT INTO starts VALUES (?)", (f"stock {item}",))
    time.sleep(float(os.environ.get("SWARMGRAPH_TEMPORAL_STOCK_S", "0")))
    if path:
        with sqlite3.connect(path, timeout=30) as db:
            db.execute("CREATE TABLE IF NOT EXISTS stock (item TEXT, began REAL, ended REAL)")
            db.execute("INSERT INTO stock VALUES (?, ?, ?)", (item, began, time.time()))
    return f"{item}: 3 left"


billing = Agent(name="Billing", instructions="Billing: check invoices.", functions=[check_stock])
tech = Agent(name="Tech", instructions="Tech: check devices.", functions=[check_stock])


def ask_both() -> Parallel:
    """Ask Billing and Tech at once."""
    return Parallel(billing, tech, merge={"checked": operator.add})


def no_shouting(context_variables: dict, messages: list) -> str | None:
    """An input guardrail: a user message in capitals is refused."""
    said = [
        m
        for m in messages
        if isinstance(m, HumanMessage) or (isinstance(m, dict) and m.get("role") == "user")
    ]
    text = said[-1]["content"] if isinstance(said[-1], dict) else said[-1].content
    return "no shouting" if str(text).isupper() else None


#: Refunds takes the conversation only with an order id in the context (a precondition).
refunds = Agent(name="Refunds", instructions="Refunds: refund orders.", requires=["order_id"])


def transfer_to_refunds() -> Agent:
    """Hand the customer to Refunds."""
    return refunds


sales = Agent(
    name="Sales",
    instructions="Sales: answer orders.",
    functions=[
        lookup_order,
        slow_charge,
        slow_note,
        refund,
        remember,
        ask_both,
        transfer_to_refunds,
    ],
    input_guardrails=[no_shouting],
)


def transfer_to_sales() -> Agent:
    """Hand the customer to Sales."""
    return sales


triage = Agent(
    name="Triage", instructions="Triage: route the customer.", functions=[transfer_to_sales]
)


class Desk(BaseModel):
    """A typed context (``Swarm(context_schema=Desk)`` on the worker): a reducer, a date."""

    model_config = {"extra": "forbid"}
    order_id: int | None = None
    visits: Annotated[int, operator.add] = 0
    day: datetime.date | None = None


def count_visit() -> Result:
    """Count a visit (an update: the reducer adds it)."""
    return Result(value="counted", context_variables={"visits": 1})


def book_day(context_variables: Desk) -> str:
    """Book the customer's day (the tool gets the context as a Desk)."""
    context_variables.day = datetime.date(2024, 5, 1)
    return f"booked order {context_variables.order_id}"


def spoil(context_variables: dict) -> str:
    """Write what the schema refuses (the engine answers the call with the error)."""
    context_variables["visits"] = "many"
    return "spoilt"


typed_desk = Agent(
    name="Desk", instructions="Desk: typed context.", functions=[count_visit, book_day, spoil]
)


def _call(name: str, args: dict, number: int) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": f"call_{name}_{number}"}]
    )


def rule(messages: list[BaseMessage]) -> AIMessage:
    """The stand-in model's reply to a prompt: Triage hands off; Sales runs the tool the
    user's words name once, then answers with what the tool said."""
    system, last = str(messages[0].content), messages[-1]
    asked = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
    number, agent = len(messages), system.split(":")[0]
    if agent == "Triage":
        return _call("transfer_to_sales", {}, number)
    if agent == "Refunds":
        return AIMessage(content="Refunds: done")
    if isinstance(last, ToolMessage) and last.name not in ("transfer_to_sales", "ask_both"):
        return AIMessage(content=f"{agent}: {last.content}")
    if agent in ("Billing", "Tech"):  # a branch of the fan-out: one stock check
        return _call("check_stock", {"item": f"{agent.lower()} kit"}, number)
    if isinstance(last, ToolMessage) and last.name == "ask_both":  # after the join
        return AIMessage(content=f"Sales: both answered ({last.content})")
    for word, tool in (
        ("both", "ask_both"),
        ("lookup", "lookup_order"),
        ("charge", "slow_charge"),
        ("note", "slow_note"),
        ("refund", "refund"),
        ("greet", "remember"),
        ("money back", "transfer_to_refunds"),
    ):
        if word in asked:
            no_args = tool in ("remember", "ask_both", "transfer_to_refunds")
            return _call(tool, {} if no_args else {"order_id": 7}, number)
    return AIMessage(content="Sales: how can I help?")


class RuleModel(ScriptedChatModel):
    """``ScriptedChatModel`` that notes each call's start in the side table (the fault test
    kills a worker while calls wait out their ``latency``)."""

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        path = os.environ.get("SWARMGRAPH_TEMPORAL_TALLY")
        if path:
            with sqlite3.connect(path, timeout=30) as db:
                db.execute("CREATE TABLE IF NOT EXISTS starts (key TEXT)")
                db.execute("INSERT INTO starts VALUES (?)", (f"model {len(messages)}",))
        return await super()._agenerate(messages, *args, **kwargs)


def rule_model() -> ScriptedChatModel:
    """The offline stand-in: ``rule`` for every call, each one waiting
    ``$SWARMGRAPH_TEMPORAL_MODEL_S`` seconds first."""
    latency = float(os.environ.get("SWARMGRAPH_TEMPORAL_MODEL_S", "0"))
    return RuleModel([], respond=rule, latency=latency)
