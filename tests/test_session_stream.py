"""Streaming a ``Session`` turn (issue 30): ``Session.stream`` / ``Session.astream`` yield
Swarm's stream events as they happen, save the turn through ``Session.run``'s own save before
the last event (``{"response": ...}``), and keep ``run``'s exactly-once rules. A consumer that
stops early leaves the turn unsaved (memory/session_stream.py says so; these tests check it).

Each stored state is read back by a plain, new ``Session`` (a refresh), never from the object
that streamed."""

from __future__ import annotations

import asyncio
from contextlib import aclosing, closing
from typing import Any

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import (
    Agent,
    Budget,
    BudgetExceeded,
    Result,
    ScriptedChatModel,
    Swarm,
    scripted_tool_call,
)
from swarmgraph.memory import Session
from swarmgraph.memory.errors import ContextConflictWarning
from swarmgraph.memory.turn_index import stored_turns

from swarmgraph import effect, needs_approval

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")


def _stored(url: str, cid: str) -> tuple[list[tuple[str, Any]], dict, str | None]:
    """What a refresh sees: (type, content) of each message, the context, the active agent."""
    later = Session(cid, url=url)
    messages = [(m.type, m.content) for m in later.messages]
    return messages, later.context_variables, later.active_agent_name


def _handoff_desk() -> tuple[Agent, list[Any]]:
    """Triage notes the order and hands off to Refunds, which answers."""
    refunds = Agent(name="Refunds", instructions="Refund orders.")

    def transfer_to_refunds(order_id: int) -> Result:
        """Hand the customer to refunds."""
        return Result(value="handing off", agent=refunds, context_variables={"order": order_id})

    triage = Agent(name="Triage", functions=[transfer_to_refunds])
    script = [scripted_tool_call("transfer_to_refunds", {"order_id": 7}), "Refund filed for 7."]
    return triage, script


def test_events_come_before_the_save_and_are_the_ones_swarm_streams(url):
    cid = fresh_id("stream")
    triage, script = _handoff_desk()
    seen: list[tuple[dict, int]] = []  # each event, with how many messages were stored then
    swarm = Swarm(chat_model=ScriptedChatModel(script))
    for event in Session(cid, url=url).stream(swarm, triage, "refund order 7"):
        seen.append((event, len(Session(cid, url=url).messages)))
    *during, (last, stored_at_last) = seen
    assert len(during) > 6 and {n for _, n in during} == {0}  # streamed while nothing is stored
    assert set(last) == {"response"} and stored_at_last == 4  # the response: the turn is stored
    # the very events Swarm.run(stream=True) yields for the same script
    direct = Swarm(chat_model=ScriptedChatModel(script)).run(
        triage, [{"role": "user", "content": "refund order 7"}], stream=True
    )
    *swarm_events, swarm_last = list(direct)
    assert [event for event, _ in during] == swarm_events
    assert [e.get("sender") for e in swarm_events if e.get("role")] == ["Triage", "Refunds"]
    response = last["response"]
    assert response.messages == swarm_last["response"].messages
    assert (response.agent.name, response.context_variables) == ("Refunds", {"order": 7})


def test_a_streamed_turn_is_what_a_plain_session_reads_and_the_next_run_goes_on_from(url):
    cid = fresh_id("stream")
    triage, script = _handoff_desk()
    swarm = Swarm(chat_model=ScriptedChatModel(script))
    events = list(Session(cid, url=url).stream(swarm, triage, "refund order 7", turn_id="t1"))
    messages, context, agent = _stored(url, cid)
    assert [kind for kind, _ in messages] == ["human", "ai", "tool", "ai"]
    assert messages[-1] == ("ai", "Refund filed for 7.")
    assert (context, agent) == ({"order": 7}, "Refunds")
    assert stored_turns(Session(cid, url=url).store, cid) == ["t1"]
    # the next turn, a plain run, starts with the agent the streamed handoff left
    model = ScriptedChatModel(["Anything else?"])
    nxt = Session(cid, url=url).run(Swarm(chat_model=model), triage, "thanks")
    assert nxt.agent.name == "Refunds" and nxt.context_variables == {"order": 7}
    assert [m.content for m in model.calls[0] if m.type != "system"][:1] == ["refund order 7"]
    # a turn id already stored: only its stored response, and no model call
    again = ScriptedChatModel([])
    replayed = Session(cid, url=url).stream(Swarm(chat_model=again), triage, "x", turn_id="t1")
    replay = list(replayed)
    assert [set(e) for e in replay] == [{"response"}] and again.calls == []
    assert replay[0]["response"].messages == events[-1]["response"].messages


def test_an_approval_pending_in_a_streamed_turn_then_answered_in_another(url):
    ran: list[int] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        ran.append(order_id)
        return f"refunded {order_id}"

    agent = Agent(name="Refunds", functions=[refund])
    model = ScriptedChatModel([scripted_tool_call("refund", {"order_id": 7}, id="c1"), "Done."])
    swarm, cid = Swarm(chat_model=model), fresh_id("stream")
    first = list(Session(cid, url=url).stream(swarm, agent, "refund order 7"))
    [waiting] = first[-1]["response"].pending
    assert (waiting.id, waiting.tool, ran) == ("c1", "refund", [])
    assert [p.id for p in Session(cid, url=url).pending] == ["c1"]  # stored, seen by a refresh
    # a new message while a call waits: the same refusal as run's, raised before any model call
    with pytest.raises(Exception) as by_run:
        Session(cid, url=url).run(swarm, agent, "hello?")
    with pytest.raises(Exception) as by_stream:
        list(Session(cid, url=url).stream(swarm, agent, "hello?"))
    assert type(by_stream.value) is type(by_run.value)
    assert str(by_stream.value) == str(by_run.value)
    assert len(model.calls) == 1
    answer = list(Session(cid, url=url).stream(swarm, agent, approvals={"c1": True}))
    assert [e["content"] for e in answer if e.get("content")] == ["Done."]
    assert ran == [7] and Session(cid, url=url).pending == []
    messages, _, _ = _stored(url, cid)
    assert messages[-2:] == [("tool", "refunded 7"), ("ai", "Done.")]


class _Stop(Exception):
    """The consumer's own failure, raised inside its loop body."""


@pytest.mark.parametrize("how", ["break", "close", "exception", "keyboard", "ctrl-c in the run"])
def test_a_consumer_that_stops_early_leaves_the_turn_unsaved(url, how):
    cid = fresh_id("stream")
    triage, script = _handoff_desk()
    hello = Swarm(chat_model=ScriptedChatModel(["Hi."]))
    Session(cid, url=url).run(hello, triage, "hello", context_variables={"order": 1})
    before = _stored(url, cid)
    # stop on the second reply's opening delta: the handoff tool has run, the context changed;
    # or Ctrl-C arrives while the model writes that reply (inside the iterator's next())
    stop = (KeyboardInterrupt if how in ("keyboard", "ctrl-c in the run") else _Stop)("stop")
    model = ScriptedChatModel([script[0], stop] if how == "ctrl-c in the run" else script)
    events = Session(cid, url=url).stream(Swarm(chat_model=model), triage, "refund 7", turn_id="t")
    try:
        for event in events:
            if event.get("sender") == "Refunds":
                if how == "break":
                    break
                if how == "close":
                    events.close()
                    break
                raise stop
    except (_Stop, KeyboardInterrupt) as caught:
        assert caught is stop
    else:
        assert how in ("break", "close")
    events.close()  # a no-op if it was closed: the run stops here at the latest
    assert _stored(url, cid) == before  # no message, no context change, the agent as it was
    assert len(model.calls) == 2 and Session(cid, url=url).unfinished == []
    # the turn did not happen: the same turn id runs it, whole, once
    retry = ScriptedChatModel(script)
    done = list(
        Session(cid, url=url).stream(Swarm(chat_model=retry), triage, "refund 7", turn_id="t")
    )
    assert len(retry.calls) == 2 and done[-1]["response"].agent.name == "Refunds"
    messages, context, agent = _stored(url, cid)
    assert len(messages) == len(before[0]) + 4 and (context, agent) == ({"order": 7}, "Refunds")


def test_stopping_after_an_effect_ran_leaves_it_to_a_retry_that_never_runs_it_again(url):
    paid: list[tuple[int, str]] = []

    @effect
    def pay(order_id: int, idempotency_key: str) -> Result:
        """Pay out a refund for an order."""
        paid.append((order_id, idempotency_key))
        return Result(value=f"Paid order {order_id}.", context_variables={"paid": order_id})

    agent, cid = Agent(name="Cashier", functions=[pay]), fresh_id("stream")
    model = ScriptedChatModel([scripted_tool_call("pay", {"order_id": 7}, id="c1"), "x"])
    swarm = Swarm(chat_model=model)
    events = Session(cid, url=url).stream(swarm, agent, "refund 7", turn_id="t", tool_results=True)
    for event in events:
        if "tool_result" in event:  # the payment ran and is recorded: stop reading here
            assert event["tool_result"]["content"] == "Paid order 7."
            break
    events.close()
    assert len(paid) == 1 and len(model.calls) == 1
    assert Session(cid, url=url).messages == []  # no turn stored ...
    assert Session(cid, url=url).unfinished == ["t"]  # ... one in flight, as after a crash
    retry = ScriptedChatModel(["Paid, all done."])
    done = list(
        Session(cid, url=url).stream(Swarm(chat_model=retry), agent, "refund 7", turn_id="t")
    )
    assert len(paid) == 1 and len(retry.calls) == 1  # only the answer was asked again
    assert [e["content"] for e in done if e.get("content")] == ["Paid, ", "all ", "done."]
    messages, context, _ = _stored(url, cid)
    assert [kind for kind, _ in messages] == ["human", "ai", "tool", "ai"]
    assert context == {"paid": 7} and Session(cid, url=url).unfinished == []


def test_a_budget_stop_mid_stream_is_saved_as_run_saves_it_and_raised_from_the_iterator(url):
    paid: list[int] = []

    @effect
    def pay(order_id: int) -> str:
        """Pay out a refund for an order."""
        paid.append(order_id)
        return f"Paid order {order_id}."

    agent = Agent(name="Cashier", functions=[pay])
    script = [
        scripted_tool_call("pay", {"order_id": 7}, id="c7"),
        scripted_tool_call("pay", {"order_id": 8}, id="c8"),
        "never",
    ]
    one_call = Budget(max_tool_calls=1)  # a setting: nothing of a run is kept in it
    by_run, by_stream, ask = fresh_id("budget"), fresh_id("budget"), "refund 7 and 8"
    with pytest.raises(BudgetExceeded) as run_stop:
        swarm = Swarm(chat_model=ScriptedChatModel(script))
        Session(by_run, url=url).run(swarm, agent, ask, budget=one_call)
    seen: list[dict] = []
    with pytest.raises(BudgetExceeded) as stream_stop:
        swarm = Swarm(chat_model=ScriptedChatModel(script))
        for event in Session(by_stream, url=url).stream(swarm, agent, ask, budget=one_call):
            seen.append(event)
    assert paid == [7, 7]  # one payment per conversation: the budget refused the second
    assert seen and all("response" not in e for e in seen)  # the deltas, then the error
    assert str(stream_stop.value) == str(run_stop.value)
    assert stream_stop.value.response.messages == run_stop.value.response.messages
    assert _stored(url, by_stream) == _stored(url, by_run)  # kept as far as it got, as run keeps
    assert any(content == "Paid order 7." for _, content in _stored(url, by_stream)[0])


def test_a_turn_saved_while_the_stream_ran_is_kept_and_merged_as_run_merges(url):
    def note(context_variables: dict, value: str) -> Result:
        """Note a value."""
        return Result(value="ok", context_variables={"last": value})

    agent, cid = Agent(name="Desk", functions=[note]), fresh_id("stream")
    hello = Swarm(chat_model=ScriptedChatModel(["hi"]))
    Session(cid, url=url).run(hello, agent, "hello", context_variables={"a": 0})
    streamed = ScriptedChatModel([scripted_tool_call("note", {"value": "streamed"}), "noted"])
    other = ScriptedChatModel([scripted_tool_call("note", {"value": "other"}), "also"])
    with pytest.warns(ContextConflictWarning, match="another turn changed 'last'"):
        for event in Session(cid, url=url).stream(Swarm(chat_model=streamed), agent, "mine"):
            if event.get("content") == "noted":  # another writer saves a whole turn meanwhile
                Session(cid, url=url).run(Swarm(chat_model=other), agent, "theirs")
    response = event["response"]
    assert [c["key"] for c in response.context_conflicts] == ["last"]
    messages, context, _ = _stored(url, cid)
    humans = [content for kind, content in messages if kind == "human"]
    assert humans == ["hello", "theirs", "mine"]  # each turn whole, the streamed one saved last
    assert [content for kind, content in messages if kind == "ai" and content][-2:] == [
        "also",
        "noted",
    ]
    assert context == {"a": 0, "last": "streamed"}  # this turn's value kept, and reported


def test_astream_is_the_same_turn_from_async_code(url):
    triage, script = _handoff_desk()
    sync_cid, async_cid, stop_cid = fresh_id("stream"), fresh_id("astream"), fresh_id("astop")
    swarm = Swarm(chat_model=ScriptedChatModel(script))
    sync_events = list(Session(sync_cid, url=url).stream(swarm, triage, "refund order 7"))

    async def streamed() -> list[dict]:
        swarm = Swarm(chat_model=ScriptedChatModel(script))
        return [
            e async for e in Session(async_cid, url=url).astream(swarm, triage, "refund order 7")
        ]

    async def stopped(model: ScriptedChatModel) -> None:
        session = Session(stop_cid, url=url)
        async with aclosing(session.astream(Swarm(chat_model=model), triage, "refund")) as events:
            async for event in events:
                if event.get("sender") == "Refunds":
                    break

    async_events = asyncio.run(streamed())
    assert async_events[:-1] == sync_events[:-1]
    assert async_events[-1]["response"].messages == sync_events[-1]["response"].messages
    assert _stored(url, async_cid) == _stored(url, sync_cid)
    model = ScriptedChatModel(script)
    asyncio.run(stopped(model))
    assert len(model.calls) == 2 and _stored(url, stop_cid) == ([], {}, None)


def test_what_is_refused_names_the_next_step():
    session, swarm = (
        Session(fresh_id("stream"), url="memory://"),
        Swarm(chat_model=ScriptedChatModel()),
    )
    with pytest.raises(ValueError, match=r"iterate session\.stream\(swarm, agent, message"):
        session.run(swarm, Agent(), "hi", stream=True)
    with pytest.raises(ValueError, match=r"async: session\.astream"):
        asyncio.run(session.arun(swarm, Agent(), "hi", stream=True))
    with pytest.raises(TypeError, match="always stream: drop stream="):
        session.stream(swarm, Agent(), "hi", stream=True)
    with pytest.raises(TypeError, match="builds 'messages' itself"):
        next(session.stream(swarm, Agent(), "hi", messages=[]))


def test_a_fan_out_streams_its_branches_and_is_stored_as_run_stores_it(url):
    from test_parallel import desk_with, swarm_of, writer_tool

    def desk() -> tuple[Swarm, Agent]:
        """A fresh desk that asks Billing and Tech at once, and its scripted models."""
        billing = Agent(name="Billing", model="billing", functions=[writer_tool("invoice", "paid")])
        desk, models = desk_with([billing, Agent(name="Tech", model="tech")])
        models["billing"] = ScriptedChatModel([scripted_tool_call("write_invoice"), "Paid."])
        models["tech"] = ScriptedChatModel(["Router fine."])
        return swarm_of(models), desk

    by_run, by_stream = fresh_id("fan-out"), fresh_id("fan-out")
    ran = Session(by_run, url=url).run(*desk(), "invoice and router?")
    events = list(Session(by_stream, url=url).stream(*desk(), "invoice and router?"))
    branches = {e["branch"] for e in events if "branch" in e}
    assert branches == {"Billing", "Tech"}  # each branch's deltas, labelled
    assert events[-1]["response"].messages == ran.messages
    assert _stored(url, by_stream) == _stored(url, by_run)
    assert _stored(url, by_stream)[1] == {"invoice": "paid"}


@pytest.mark.parametrize("url", ["sqlite", "postgres"], indirect=True)
def test_long_term_facts_commit_with_the_streamed_turn_and_not_with_a_stopped_one(url):
    from pydantic import BaseModel
    from swarmgraph.memory import FactExtractor, LongTermMemory

    class UserFacts(BaseModel):
        home_city: str | None = None

    def streamed(text: str, stop: bool = False) -> None:
        """One streamed turn of a new conversation of the user's; ``stop``: at the first words."""
        extract = FactExtractor(UserFacts, rules={"home_city": r"live in (?P<value>[A-Z]\w+)"})
        session = Session(fresh_id("conv"), url=url, user_id=user, long_term=True, extract=extract)
        swarm = Swarm(chat_model=ScriptedChatModel(["Noted."]))
        with closing(session.stream(swarm, agent, text)) as events:
            for event in events:
                if stop and event.get("content"):
                    break

    user, agent = fresh_id("u"), Agent(name="Assistant")
    streamed("I live in Porto.", stop=True)
    assert LongTermMemory(url, user_id=user).history("home_city") == []
    streamed("I live in Lyon.")
    assert [f.value for f in LongTermMemory(url, user_id=user).history("home_city")] == ["Lyon"]
