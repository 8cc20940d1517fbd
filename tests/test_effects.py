"""Tools that run exactly once (issue 22): ``@effect`` and ``@needs_approval`` tools are recorded
before and after they run, so a retry, a resume or a replay never runs one twice, and a call
whose process died while it ran comes back in doubt for a human, never run again silently.

The crashes here are an exception no ``except Exception`` catches (``Crash``), raised where a
killed process would stop: it leaves storage exactly as a kill would (the process-level kill -9
matrix is tests/test_effect_faults.py).
"""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from pydantic import BaseModel
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core.schema import function_to_json
from swarmgraph.graph.features.parallel import Parallel
from swarmgraph.memory import Session
from swarmgraph.memory.turn_index import stored_turns

from swarmgraph import ApprovalAlreadyDecided, effect, needs_approval

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")


class Crash(BaseException):
    """Where a kill -9 would stop the process: nothing after it runs."""


class Payments:
    """A payment provider: every call of ``pay`` is logged (``attempts``), a payment is made
    unless ``crash`` says to die before or after it."""

    def __init__(self) -> None:
        self.paid: list[tuple[int, str]] = []
        self.attempts = 0
        self.crash: str | None = None  # "before" / "after": die there, once

    def tool(self):
        payments = self

        @effect
        def pay(order_id: int, idempotency_key: str) -> Result:
            """Pay out a refund for an order."""
            payments.attempts += 1
            if payments.crash == "before":
                payments.crash = None
                raise Crash("killed before paying")
            payments.paid.append((order_id, idempotency_key))
            if payments.crash == "after":
                payments.crash = None
                raise Crash("killed after paying")
            return Result(value=f"Paid order {order_id}.", context_variables={"paid": order_id})

        return pay


def _swarm(*replies) -> tuple[Swarm, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    return Swarm(chat_model=model), model


def _pay_call(order_id: int = 7, call_id: str = "call_0"):
    return scripted_tool_call("pay", {"order_id": order_id}, id=call_id)


def test_idempotency_key_is_injected_and_hidden_from_the_model():
    payments = Payments()
    schema = function_to_json(payments.tool())["function"]["parameters"]
    assert list(schema["properties"]) == ["order_id"] and schema["required"] == ["order_id"]
    swarm, _ = _swarm(
        scripted_tool_call("pay", {"order_id": 7, "idempotency_key": "forged"}, id="c1"), "ok"
    )
    swarm.run(Agent(functions=[payments.tool()]), [{"role": "user", "content": "pay"}])
    [(order, key)] = payments.paid
    assert order == 7 and key != "forged" and len(key) == 32


def test_an_effect_runs_once_per_turn_and_its_key_is_stable_per_conversation_and_call(url):
    payments = Payments()
    agent = Agent(name="Cashier", functions=[payments.tool()])
    session = Session(fresh_id("pay"), url=url)
    swarm, _ = _swarm(_pay_call(), "Paid.")
    response = session.run(swarm, agent, "refund order 7", turn_id="t-1")
    assert [m["content"] for m in response.messages][1:] == ["Paid order 7.", "Paid."]
    again, model = _swarm(_pay_call(), "Paid again?")
    assert session.run(again, agent, "refund order 7", turn_id="t-1").messages[-1]["content"] == (
        "Paid."
    )
    assert model.calls == [] and len(payments.paid) == 1  # the stored turn, no run
    # The same call id in a later turn is another call (another assistant message): its own key.
    swarm, _ = _swarm(_pay_call(8), "Paid 8.")
    session.run(swarm, agent, "and order 8")
    assert [o for o, _ in payments.paid] == [7, 8]
    assert payments.paid[0][1] != payments.paid[1][1]


def test_a_crash_inside_the_tool_leaves_it_in_doubt_and_a_retry_never_runs_it_silently(url):
    payments = Payments()
    agent = Agent(name="Cashier", functions=[payments.tool()])
    cid = fresh_id("crash")
    payments.crash = "after"  # paid, then the process died before anything was recorded done
    with pytest.raises(Crash):
        Session(cid, url=url).run(_swarm(_pay_call(), "Paid.")[0], agent, "refund 7", turn_id="t")
    assert Session(cid, url=url).messages == []  # no turn stored ...
    assert Session(cid, url=url).unfinished == ["t"]  # ... but one in flight
    retry, model = _swarm("never called")
    response = Session(cid, url=url).run(retry, agent, "refund 7", turn_id="t")
    assert model.calls == []  # resumed from the call in flight: no new model reply
    [doubt] = response.pending
    assert (doubt.tool, doubt.arguments, doubt.in_doubt) == ("pay", {"order_id": 7}, True)
    assert payments.attempts == 1  # not run again
    later = Session(cid, url=url)
    assert later.pending == [doubt] and later.unfinished == []
    # A human checks the provider: it was paid. Their answer is the tool's result.
    finish, _ = _swarm("Refund done.")
    done = later.run(finish, agent, approvals={doubt.id: "Paid order 7 (checked by hand)."})
    assert [m["content"] for m in done.messages] == [
        "Paid order 7 (checked by hand).",
        "Refund done.",
    ]
    assert payments.attempts == 1 and len(payments.paid) == 1
    assert Session(cid, url=url).pending == []


def test_a_crash_before_the_payment_approved_again_runs_it_once_more(url):
    payments = Payments()
    agent = Agent(name="Cashier", functions=[payments.tool()])
    cid = fresh_id("crash")
    payments.crash = "before"
    with pytest.raises(Crash):
        Session(cid, url=url).run(_swarm(_pay_call(), "x")[0], agent, "refund 7", turn_id="t")
    [doubt] = Session(cid, url=url).run(_swarm()[0], agent, turn_id="t").pending
    assert doubt.in_doubt and payments.paid == []
    keys = []
    done = Session(cid, url=url).run(_swarm("Paid now.")[0], agent, approvals={doubt.id: True})
    assert done.messages[0]["content"] == "Paid order 7." and len(payments.paid) == 1
    keys.append(payments.paid[0][1])
    assert Session(cid, url=url).context_variables == {"paid": 7}
    # Denying instead answers the model with an error (another conversation, same story).
    cid2 = fresh_id("crash")
    payments.crash = "before"
    with pytest.raises(Crash):
        Session(cid2, url=url).run(_swarm(_pay_call(), "x")[0], agent, "refund 7", turn_id="t")
    [doubt] = Session(cid2, url=url).run(_swarm()[0], agent, turn_id="t").pending
    denied = Session(cid2, url=url).run(_swarm("Not paid.")[0], agent, approvals={doubt.id: False})
    assert denied.messages[0]["content"].startswith("Error: denied")
    assert len(payments.paid) == 1


def test_a_crash_after_the_result_was_recorded_resumes_with_it(url):
    payments = Payments()
    agent = Agent(name="Cashier", functions=[payments.tool()])
    cid = fresh_id("crash")
    swarm, _ = _swarm(_pay_call(), Crash("killed while the model wrote its answer"))
    with pytest.raises(Crash):
        Session(cid, url=url).run(swarm, agent, "refund 7", turn_id="t")
    retry, model = _swarm("Paid, all done.")
    response = Session(cid, url=url).run(retry, agent, "refund 7", turn_id="t")
    assert response.pending == [] and len(model.calls) == 1  # only the answer was asked again
    assert [m["content"] for m in response.messages][1:] == ["Paid order 7.", "Paid, all done."]
    assert payments.attempts == 1
    stored = Session(cid, url=url)
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai"]
    assert stored.context_variables == {"paid": 7} and stored_turns(stored.store, cid) == ["t"]


def test_one_decision_per_approval_whoever_answers_and_whatever_the_turn_id(url):
    log: list[int] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        return f"Refunded order {order_id}."

    agent = Agent(name="Refunds", functions=[refund])
    cid = fresh_id("approve")
    ask, _ = _swarm(scripted_tool_call("refund", {"order_id": 7}, id="c1"))
    [waiting] = Session(cid, url=url).run(ask, agent, "refund 7").pending
    first, second = Session(cid, url=url), Session(cid, url=url)

    def racing_reply(messages):
        # The second person answers while the first one's turn runs (after its decision).
        with pytest.raises(ApprovalAlreadyDecided) as lost:
            second.run(_swarm("x")[0], agent, approvals={waiting.id: False}, turn_id="t-b")
        assert lost.value.decision is True and lost.value.call_id == "c1"
        return "Refund sent."

    winner = first.run(
        Swarm(chat_model=ScriptedChatModel(respond=racing_reply)),
        agent,
        approvals={waiting.id: True},
        turn_id="t-a",
    )
    assert winner.messages[0]["content"] == "Refunded order 7." and log == [7]
    # Later, from another process and turn id: the same error, with the first decision.
    with pytest.raises(ApprovalAlreadyDecided) as late:
        Session(cid, url=url).run(_swarm("x")[0], agent, approvals={waiting.id: True})
    assert late.value.decision is True and log == [7]
    contents = [m.content for m in Session(cid, url=url).messages]
    assert "Error: denied by the user." not in contents


def test_a_budget_stop_keeps_what_ran_and_the_retry_returns_it(url):
    from swarmgraph.graph import Budget, BudgetExceeded

    payments = Payments()
    agent = Agent(name="Cashier", functions=[payments.tool()])
    cid = fresh_id("budget")
    swarm, _ = _swarm(_pay_call(), _pay_call(8, "call_1"), "never")
    with pytest.raises(BudgetExceeded) as stop:
        Session(cid, url=url).run(swarm, agent, "refund 7 and 8", budget=Budget(max_tool_calls=1))
    assert stop.value.response is not None and len(payments.paid) == 1
    stored = Session(cid, url=url)
    contents = [m.content for m in stored.messages]
    assert "Paid order 7." in contents  # what ran is stored ...
    assert stored.context_variables == {"paid": 7}
    assert stored.pending == []  # ... every call answered (the refused one with its error)
    assert any(str(c).startswith("Error: Budget exceeded") for c in contents)


def test_turn_ids_are_never_forgotten(url):
    agent = Agent(name="Clerk")
    cid = fresh_id("many")
    session = Session(cid, url=url)
    for i in range(40):
        session.run(_swarm(f"answer {i}")[0], agent, f"question {i}", turn_id=f"t-{i}")
    again, model = _swarm("a second answer")
    replay = Session(cid, url=url).run(again, agent, "question 0", turn_id="t-0")
    assert model.calls == [] and replay.messages[-1]["content"] == "answer 0"
    assert len(Session(cid, url=url).messages) == 80


def test_concurrent_turns_report_a_conflict_and_a_merge_rule_keeps_counters_exact(url):
    import itertools
    import operator

    stamps = itertools.count()

    def visit(context_variables: dict) -> Result:
        """Count a visit."""
        return Result(value="ok", context_variables={"visits": context_variables["visits"] + 1,
                                                     "last": next(stamps)})  # fmt: skip

    agent = Agent(name="Counter", functions=[visit])
    for merge, expected in [(None, 2), ({"visits": operator.add}, 3)]:
        cid = fresh_id("visits")
        Session(cid, url=url).run(_swarm("hi")[0], agent, "hi", context_variables={"visits": 1})
        inner = Session(cid, url=url, merge=merge)

        def reply(messages, inner=inner):
            if messages[-1].type == "human":  # another turn runs, whole, inside this one
                inner.run(_swarm(scripted_tool_call("visit"), "in")[0], agent, "in")
                return scripted_tool_call("visit")
            return "out"

        outer = Session(cid, url=url, merge=merge)
        swarm = Swarm(chat_model=ScriptedChatModel(respond=reply))
        # Both turns wrote visits=2 from 1: without a rule that loses an increment, so it is
        # reported like any conflict (issue 40); a rule counts both. Each wrote its own
        # "last", a conflict either way.
        with pytest.warns(UserWarning, match="another turn changed") as caught:
            response = outer.run(swarm, agent, "out")
        keys = [c["key"] for c in response.context_conflicts]
        assert keys == (["visits", "last"] if merge is None else ["last"])
        assert any("'visits'" in str(w.message) for w in caught) == (merge is None)
        assert Session(cid, url=url).context_variables["visits"] == expected


def test_an_effect_inside_a_parallel_branch_is_recorded_and_leaves_the_turn_whole(url):
    payments = Payments()
    billing = Agent(name="Billing", model="billing", functions=[payments.tool()])
    tech = Agent(name="Tech", model="tech")

    def ask_both():
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both"), "Both done."]),
        "billing": ScriptedChatModel([_pay_call(), "Refunded."]),
        "tech": ScriptedChatModel(["Router fine."]),
    }
    cid = fresh_id("branch")
    session = Session(cid, url=url)
    response = session.run(Swarm(chat_model=models.__getitem__), desk, "refund 7, router?")
    assert response.messages[-1]["content"] == "Both done." and len(payments.paid) == 1
    assert [b["status"] for b in response.branches] == ["answered", "answered"]
    stored = Session(cid, url=url)
    assert stored.unfinished == [] and stored.pending == []
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai"]  # the join only
    assert len(stored.store.records(cid, "effect.done")) == 1


class Visits(BaseModel):
    visits: Annotated[int, operator.add] = 0
    last: str | None = None


def test_a_typed_contexts_additive_reducer_merges_concurrent_turns(url):
    """``Annotated[int, operator.add]`` is the key's merge rule too: the other turn's visit
    and this turn's are both counted, with no ``merge=`` given."""

    def visit() -> Result:
        """Count a visit."""
        return Result(value="ok", context_variables={"visits": 1})

    agent = Agent(name="Counter", functions=[visit])
    cid = fresh_id("typed")
    inner = Session(cid, url=url)

    def reply(messages):
        if messages[-1].type == "human":  # another turn runs, whole, inside this one
            swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("visit"), "in"]),
                          context_schema=Visits)  # fmt: skip
            inner.run(swarm, agent, "in")
            return scripted_tool_call("visit")
        return "out"

    swarm = Swarm(chat_model=ScriptedChatModel(respond=reply), context_schema=Visits)
    response = Session(cid, url=url).run(swarm, agent, "out")
    assert response.context_conflicts == []
    assert Session(cid, url=url).context_variables["visits"] == 2


def test_a_replayed_result_brings_back_what_the_tool_wrote_into_the_context_in_place(url):
    runs: list[int] = []

    @effect
    def pay(order_id: int, context_variables: dict) -> str:
        """Pay out a refund."""
        runs.append(order_id)
        context_variables["paid"] = order_id  # Swarm's tools may write the live dict
        return "paid"

    agent = Agent(name="Cashier", functions=[pay])
    cid = fresh_id("inplace")
    swarm, _ = _swarm(_pay_call(), Crash("killed while the model wrote its answer"))
    with pytest.raises(Crash):
        Session(cid, url=url).run(swarm, agent, "refund 7", turn_id="t")
    Session(cid, url=url).run(_swarm("Done.")[0], agent, turn_id="t")
    assert runs == [7] and Session(cid, url=url).context_variables == {"paid": 7}
