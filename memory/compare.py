"""Messages vs context, side by side and measured: one scenario under each ``persist`` choice.

Turn 1: "I'm Xiaoming, order 7 please refund". The Triage agent's tool writes ``name`` and
``order_id`` into ``context_variables`` through ``Result`` and hands off to Refunds.
Refresh: a new :class:`memory.Session` object (or a new process). Turn 2: "Did my refund go
through?": answering needs the earlier text (who is asking, which order) *and* the field (the
``refund_status`` tool reads ``context_variables["order_id"]``).

Every cell is measured from the run: "model saw earlier text" inspects what the chat model
was sent in turn 2, "tool saw field" records what the tool received, "tokens sent" sums the
approximate tokens of every model call in turn 2, "bytes stored" sums the stored rows of the
conversation in the database (and of the user's long-term facts). The third kind, long-term
memory, is the last column: "next conversation knew" says whether the customer's name was in
the prompt of a third turn in a *new* conversation of the same user ("Hello again, any news
on my refund?"). Only ``persist`` with ``"long_term"`` (:data:`WITH_LONG_TERM`, the demo's
table) carries anything across conversations: the name and order extracted from turn 1
(``extract_context`` rules) and recalled into the new conversation's system prompt.

Example:
    >>> import tempfile
    >>> rows = compare_persistence(tempfile.mkdtemp())
    >>> [(r["persist"], r["model_saw_earlier_text"], r["tool_saw_field"]) for r in rows]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('messages+context', True, True), ('messages', True, False),
     ('context', False, True), ('none', False, False)]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from pydantic import BaseModel

from ..graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from .session import Session

TURN_1 = "I'm Xiaoming, order 7 please refund"
TURN_2 = "Did my refund go through?"
TURN_3 = "Hello again, any news on my refund?"
PERSIST_CHOICES: tuple[tuple[str, ...], ...] = (
    ("messages", "context"),
    ("messages",),
    ("context",),
    (),
)
#: The four choices and the third kind beside them (``swarmgraph demo`` shows all five).
WITH_LONG_TERM: tuple[tuple[str, ...], ...] = (
    ("messages", "context", "long_term"),
    *PERSIST_CHOICES,
)
COLUMNS = (
    ("persist", "persist"),
    ("model_saw_earlier_text", "model saw earlier text"),
    ("tool_saw_field", "tool saw field"),
    ("agent_turn_2", "turn-2 agent"),
    ("tokens_sent", "tokens sent (turn 2)"),
    ("bytes_stored", "bytes stored"),
    ("next_conversation_knew", "next conversation knew"),
)


def persist_label(persist: Sequence[str]) -> str:
    """``("messages", "context")`` -> ``"messages+context"``; ``()`` -> ``"none"``."""
    return "+".join(persist) or "none"


def refund_agents(tool_log: list | None = None) -> tuple[Any, Any]:
    """The scenario's agents: Triage (remembers the customer, hands off) and Refunds.

    ``tool_log`` receives the ``context_variables`` each ``refund_status`` call was given.

    Example:
        >>> triage, refunds = refund_agents()
        >>> [f.__name__ for f in triage.tools], [f.__name__ for f in refunds.tools]
        (['remember_customer', 'transfer_to_refunds'], ['refund_status'])
    """
    log = tool_log if tool_log is not None else []

    def remember_customer(name: str, order_id: int) -> Result:
        """Remember who the customer is and which order they mean."""
        return Result(
            value=f"Remembered {name}, order {order_id}.",
            context_variables={"name": name, "order_id": order_id},
        )

    def refund_status(context_variables: dict) -> str:
        """Look up the refund of the customer's order."""
        log.append(dict(context_variables))
        order_id = context_variables.get("order_id")
        if order_id is None:
            return "No order_id in context_variables: cannot look up a refund."
        return f"Refund for order {order_id} was approved."

    refunds = Agent(
        name="Refunds",
        instructions="You are Refunds. Check refunds with refund_status.",
        functions=[refund_status],
    )
    triage = Agent(
        name="Triage",
        instructions="You are Triage. Remember the customer, then send refunds to Refunds.",
        functions=[remember_customer],
        handoffs=[refunds],
    )
    return triage, refunds


def _call(name: str, args: dict | None, n: int) -> Any:
    return scripted_tool_call(name, args or {}, id=f"call_{name}_{n}")


def refund_rules(messages: list[BaseMessage]) -> Any:
    """A rule-based stand-in for a chat model that behaves sensibly whatever it is shown.

    It reads the system prompt to know which agent it plays, and answers from the tool
    results and earlier text it was actually sent (so what it says depends on memory).
    """
    system = next((m.content for m in messages if isinstance(m, SystemMessage)), "")
    last = messages[-1]
    humans = [m.content for m in messages if isinstance(m, HumanMessage)]
    earlier = re.search(r"I'm (\w+)", " ".join(str(h) for h in humans[:-1] or [""]))
    if isinstance(last, ToolMessage):
        if last.name == "remember_customer":
            return _call("transfer_to_refunds", None, len(messages))
        if last.name == "transfer_to_refunds":
            if "refund" in str(humans[-1]).lower() and "?" in str(humans[-1]):
                return _call("refund_status", None, len(messages))
            return "Refunds here: your refund request is filed."
        who = f"{earlier.group(1)}, " if earlier else ""
        return f"{who}{last.content}"
    match = re.search(r"I'm (\w+).*?order (\d+)", str(last.content))
    if match:
        return _call("remember_customer", {"name": match[1], "order_id": int(match[2])}, 0)
    if "You are Refunds" in str(system):
        return _call("refund_status", None, len(messages))
    return _call("transfer_to_refunds", None, len(messages))


def stored_bytes(url: str, conversation_id: str) -> int:
    """Bytes of stored values for this conversation, read back from the store: every message's
    JSON, plus the context JSON, ``meta`` JSON and active-agent name of its context row, plus
    its records (the turn index: each turn's id and where its messages are).

    Example:
        >>> stored_bytes("memory://nothing-here", "c")
        0
    """
    from langchain_core.messages import message_to_dict
    from sqlalchemy import text

    from .backends import open_context_store, open_history, open_store
    from .urls import url_scheme

    if url_scheme(url) == "sqlite":
        from .backends.sqlite.engine import sync_engine
        from .urls import sqlite_path

        with sync_engine(sqlite_path(url)).connect() as conn:
            messages = conn.execute(
                text(
                    "SELECT coalesce(sum(length(CAST(message AS BLOB))), 0) "
                    "FROM message_store WHERE session_id = :c"
                ),
                {"c": conversation_id},
            ).scalar_one()
            context = conn.execute(
                text(
                    "SELECT coalesce(sum(length(CAST(context AS BLOB)) + length(CAST(meta AS BLOB))"
                    " + length(CAST(coalesce(active_agent, '') AS BLOB))), 0) "
                    "FROM swarm_context WHERE conversation_id = :c"
                ),
                {"c": conversation_id},
            ).scalar_one()
            records = conn.execute(
                text(
                    "SELECT coalesce(sum(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)))"
                    ", 0) FROM swarm_records WHERE conversation_id = :c"
                ),
                {"c": conversation_id},
            ).scalar_one()
        return int(messages) + int(context) + int(records) + _long_term_bytes(url, conversation_id)
    total = _long_term_bytes(url, conversation_id) + sum(
        len(json.dumps(message_to_dict(m)).encode())
        for m in open_history(url, conversation_id).get_messages()
    )
    record = open_context_store(url).load(conversation_id)
    if record.version or record.meta:
        total += len(json.dumps(record.context, separators=(",", ":")).encode())
        total += len(json.dumps(record.meta).encode()) + len((record.active_agent or "").encode())
    turns = open_store(url).records(conversation_id, "turn")
    total += sum(len(key.encode()) + len(_compact(value).encode()) for key, value in turns.items())
    return total


class Customer(BaseModel):
    """What long-term memory keeps of the customer (extracted from what they said)."""

    name: str | None = None
    order_id: int | None = None


CUSTOMER_RULES = {"name": r"I'm (\w+)", "order_id": r"order #?(\d+)"}


def _user_of(conversation_id: str) -> str:
    """The customer a scenario's conversation belongs to (one per run: fresh memory)."""
    return "customer-" + conversation_id.removesuffix("-next")


def _long_term_bytes(url: str, conversation_id: str) -> int:
    """Bytes of the scenario customer's long-term facts (current and history), if any."""
    from .long_term import LongTermMemory
    from .urls import url_scheme

    if url_scheme(url) not in ("memory", "sqlite", "postgresql"):
        return 0
    memory = LongTermMemory(url, user_id=_user_of(conversation_id))
    facts = memory.facts()
    history = [old for fact in facts for old in memory.history(fact.key)]
    return sum(len(json.dumps(f.to_record()).encode()) for f in [*facts, *history])


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def run_turn(url: str, conversation_id: str, persist: Sequence[str], message: str) -> dict:
    """Run one turn of the scenario in a fresh Session (the "refresh") and measure it."""
    from .fact_extract import FactExtractor

    tool_log: list[dict] = []
    triage, refunds = refund_agents(tool_log)
    model = ScriptedChatModel(respond=refund_rules)
    long_term: dict[str, Any] = {}
    if "long_term" in persist:
        long_term = {
            "user_id": _user_of(conversation_id),
            "extract": FactExtractor(Customer, rules=CUSTOMER_RULES),
        }
    session = Session(
        conversation_id, url=url, persist=persist, agents=[triage, refunds], **long_term
    )
    response = session.run(Swarm(chat_model=model), triage, message)
    earlier = [
        m
        for call in model.calls
        for m in call
        if isinstance(m, HumanMessage) and m.content != message
    ]
    return {
        "knew_name": any("Xiaoming" in str(m.content) for call in model.calls for m in call),
        "model_saw_earlier_text": any(TURN_1 in str(m.content) for m in earlier),
        "tool_saw_field": any("order_id" in ctx for ctx in tool_log),
        "tool_calls": len(tool_log),
        "agent": getattr(response.agent, "name", None),
        "tokens_sent": sum(count_tokens_approximately(call) for call in model.calls),
        "model_calls": len(model.calls),
        "reply": response.messages[-1]["content"] if response.messages else "",
    }


def _run_turn_in_process(url: str, cid: str, persist: Sequence[str], message: str) -> dict:
    args = [
        sys.executable,
        "-m",
        "swarmgraph.memory.compare",
        "--turn",
        url,
        cid,
        message,
        *persist,
    ]
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=root, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"turn in a new process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_persistence(
    url_or_dir: str | os.PathLike,
    *,
    choices: Sequence[Sequence[str]] = PERSIST_CHOICES,
    new_process: bool = False,
) -> list[dict]:
    """Run the scenario under each ``persist`` choice and return one measured row per choice.

    ``url_or_dir``: a directory (one SQLite file per choice, created there if missing) or a
    storage URL. Each run writes only new conversations (``xiaoming-<choice>-<run token>``)
    and never deletes anything, so pointing it at a store that holds other data is safe.
    ``new_process=True`` runs each turn in its own Python process, so nothing survives
    between turns except what was stored. ``choices``: :data:`PERSIST_CHOICES` (the two
    halves), or :data:`WITH_LONG_TERM` (the third kind too; its store must be ``memory://``,
    SQLite or Postgres). Each row also says where its conversation is
    stored (``url``, ``conversation_id``), so it can be opened again, as after a refresh.
    """
    run_token = uuid.uuid4().hex[:8]
    rows = []
    for persist in choices:
        label = persist_label(persist)
        if isinstance(url_or_dir, os.PathLike) or "://" not in str(url_or_dir):
            Path(url_or_dir).mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{Path(url_or_dir).resolve() / f'compare-{label}.db'}"
        else:
            url = str(url_or_dir)
        cid = f"xiaoming-{label}-{run_token}"
        turn = _run_turn_in_process if new_process else run_turn
        turn(url, cid, persist, TURN_1)
        second = turn(url, cid, persist, TURN_2)
        third = turn(url, f"{cid}-next", persist, TURN_3)  # a new conversation, same user
        rows.append(
            {
                "persist": label,
                "model_saw_earlier_text": second["model_saw_earlier_text"],
                "tool_saw_field": second["tool_saw_field"],
                "agent_turn_2": second["agent"],
                "tokens_sent": second["tokens_sent"],
                "model_calls_turn_2": second["model_calls"],
                "bytes_stored": stored_bytes(url, cid),
                "next_conversation_knew": third["knew_name"],
                "reply_turn_2": second["reply"],
                "url": url,
                "conversation_id": cid,
            }
        )
    return rows


def format_table(rows: Sequence[dict], columns: Sequence[tuple[str, str]] | None = None) -> str:
    """Rows as a plain-text table (numbers right-aligned, booleans as yes/no). Default
    columns: :data:`COLUMNS`, the long-term one only when a row keeps long-term memory.

    Example:
        >>> rows = [{"persist": "messages", "tool_saw_field": False, "tokens_sent": 700},
        ...         {"persist": "context", "tool_saw_field": True, "tokens_sent": 107}]
        >>> print(format_table(rows, [("persist", "persist"), ("tool_saw_field", "tool saw"),
        ...                           ("tokens_sent", "tokens")]))
        persist  | tool saw | tokens
        ---------+----------+-------
        messages | no       |    700
        context  | yes      |    107
    """

    if columns is None:
        long_term = any("long_term" in str(row.get("persist", "")) for row in rows)
        columns = COLUMNS if long_term else COLUMNS[:-1]

    def cell(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    def is_number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    header = [title for _, title in columns]
    body = [[cell(row.get(key, "")) for key, _ in columns] for row in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(columns))]
    right = [bool(rows) and all(is_number(row.get(key)) for row in rows) for key, _ in columns]

    def line(cells: list[str], align: bool) -> str:
        parts = [
            c.rjust(w) if align and r else c.ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return " | ".join(parts).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(header, False), rule, *(line(r, True) for r in body)])


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m swarmgraph.memory.compare [DIR]`` prints the table; ``--turn`` runs one
    turn (JSON)."""
    parser = argparse.ArgumentParser(
        prog="python -m swarmgraph.memory.compare", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--turn", nargs="+", metavar="ARG", help="URL CONVERSATION MESSAGE [HALF...]"
    )
    parser.add_argument("dir", nargs="?", default=".swarmgraph/compare")
    parser.add_argument("--new-process", action="store_true")
    parser.add_argument(
        "--long-term", action="store_true", help="add the row that keeps long-term memory"
    )
    args = parser.parse_args(argv)
    if args.turn:
        url, cid, message, *persist = args.turn
        print(json.dumps(run_turn(url, cid, tuple(persist), message)))
        return
    choices = WITH_LONG_TERM if args.long_term else PERSIST_CHOICES
    rows = compare_persistence(args.dir, new_process=args.new_process, choices=choices)
    print(format_table(rows))


if __name__ == "__main__":
    main()
