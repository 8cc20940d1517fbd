"""Every feature that cuts through the engine's seams, in one turn: a ``Session`` with long-term
memory over a typed context with an additive reducer, a fan-out whose branches run an
``@effect`` tool (with its injected ``idempotency_key``) and a memory tool (with its injected
user), then the same turn retried and a second conversation of the same user. Each feature has
its own tests; this one fails when two of them stop fitting together (as a typed context and a
fan-out once did: the graph would not compile)."""

from __future__ import annotations

import operator
from typing import Annotated

from pydantic import BaseModel
from scale_helpers import fresh_id
from swarmgraph.memory import Session

from swarmgraph import (
    Agent,
    Parallel,
    Result,
    ScriptedChatModel,
    Swarm,
    effect,
    scripted_tool_call,
)


class Desk(BaseModel):
    visits: Annotated[int, operator.add] = 0
    refunded: Annotated[list[int], operator.add] = []


#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "postgres")


def test_a_turn_through_every_seam_runs_its_effect_once_and_merges_exactly(url):
    paid: list[tuple[int, str]] = []

    @effect
    def pay(order_id: int, idempotency_key: str) -> Result:
        """Pay out a refund for an order."""
        paid.append((order_id, idempotency_key))
        return Result(
            value=f"Paid order {order_id}.",
            context_variables={"visits": 1, "refunded": [order_id]},
        )

    def note_visit() -> Result:
        """Count this visit."""
        return Result(value="noted", context_variables={"visits": 1})

    billing = Agent(name="Billing", model="billing", functions=[pay], memory_tools=True)
    greeter = Agent(name="Greeter", model="greeter", functions=[note_visit])

    def ask_both() -> Parallel:
        """Ask billing and the greeter at once."""
        return Parallel(billing, greeter)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])

    def models() -> dict[str, ScriptedChatModel]:
        return {
            "desk": ScriptedChatModel([scripted_tool_call("ask_both"), "All done."]),
            "billing": ScriptedChatModel(
                [
                    scripted_tool_call("pay", {"order_id": 7}, id="pay-7"),
                    scripted_tool_call("remember", {"key": "dog_name", "value": "Rex"}),
                    "Refunded.",
                ]
            ),
            "greeter": ScriptedChatModel([scripted_tool_call("note_visit"), "Hello."]),
        }

    cid, user = fresh_id("seams"), fresh_id("user")
    session = Session(cid, url=url, user_id=user, long_term=True)
    swarm = Swarm(chat_model=models().__getitem__, context_schema=Desk)
    start = {"visits": 2, "refunded": [3]}
    first = session.run(swarm, desk, "refund order 7; my dog is Rex", start, turn_id="t-1")
    assert first.messages[-1]["content"] == "All done."
    # The reducers merged what each branch added: 2 + 1 + 1, and [3] + [7].
    assert first.context_variables == {"visits": 4, "refunded": [3, 7]}
    assert len(paid) == 1 and paid[0][0] == 7 and paid[0][1]  # one payment, with its key
    # The same turn again: replayed from storage, nothing runs, nothing is paid twice.
    again = Session(cid, url=url, user_id=user, long_term=True).run(
        Swarm(chat_model=models().__getitem__, context_schema=Desk),
        desk,
        "refund order 7; my dog is Rex",
        turn_id="t-1",
    )
    assert len(paid) == 1
    assert again.context_variables == first.context_variables
    assert again.messages[-1]["content"] == "All done."
    # The fact Billing remembered belongs to the user, in any conversation of theirs.
    other = Session(fresh_id("seams"), url=url, user_id=user, long_term=True)
    assert other.long_term is not None
    assert [(f.key, f.value) for f in other.long_term.facts()] == [("dog_name", "Rex")]
    stranger = Session(fresh_id("seams"), url=url, user_id=fresh_id("user"), long_term=True)
    assert stranger.long_term is not None and stranger.long_term.facts() == []
    stored = Session(cid, url=url, user_id=user, long_term=True)
    assert stored.context_variables == {"visits": 4, "refunded": [3, 7]}
    assert stored.unfinished == [] and stored.pending == []
