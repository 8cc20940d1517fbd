"""Memory policies: what the model is shown, and the summary kept incrementally."""

from __future__ import annotations

import asyncio
import random

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
from swarmgraph.memory import (
    BufferMemory,
    Session,
    SummaryMemory,
    TokenTrimMemory,
    WindowMemory,
    open_context_store,
    open_history,
    parse_memory,
)
from swarmgraph.memory.backends import open_store
from swarmgraph.memory.turn_index import stored_turns


def tool_turn(i: int, words: int = 1) -> list:
    call = AIMessage("", tool_calls=[{"name": "look", "args": {"i": i}, "id": f"c{i}"}])
    return [
        HumanMessage(f"q{i} " + "w " * words),
        call,
        ToolMessage(f"r{i} " + "w " * words, tool_call_id=f"c{i}", name="look"),
        AIMessage(f"a{i}"),
    ]


def conversation(turns: int, words: int = 1) -> list:
    return [m for i in range(turns) for m in tool_turn(i, words)]


def assert_well_formed(shown: list) -> None:
    """No tool result without the AI call before it."""
    called: set[str] = set()
    for m in shown:
        if isinstance(m, AIMessage):
            called |= {c["id"] for c in m.tool_calls}
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in called, [x.type for x in shown]


def test_buffer_shows_everything():
    chat = conversation(3)
    assert BufferMemory().select(chat) == chat
    assert BufferMemory().load_limit is None


@pytest.mark.parametrize("k", range(0, 14))
def test_window_is_a_suffix_of_at_most_k_never_starting_on_a_tool_result(k):
    chat = conversation(3)
    shown = WindowMemory(k).select(chat)
    assert len(shown) <= k and shown == chat[len(chat) - len(shown) :]
    assert not shown or not isinstance(shown[0], ToolMessage)
    assert_well_formed(shown)
    assert WindowMemory(k).load_limit == k
    # Only a dropped orphan tool result makes it shorter than k.
    assert len(shown) == min(k, len(chat)) or isinstance(chat[-k], ToolMessage)


def test_token_trim_fits_the_budget_starts_on_a_human_and_keeps_tool_pairs():
    rng = random.Random(3)
    chat = [m for i in range(12) for m in tool_turn(i, rng.randint(1, 60))]
    for budget in range(5, 900, 13):
        shown = TokenTrimMemory(budget).select(chat)
        assert count_tokens_approximately(shown) <= budget
        assert shown == chat[len(chat) - len(shown) :]
        assert not shown or isinstance(shown[0], HumanMessage)
        assert_well_formed(shown)
    assert len(TokenTrimMemory(10_000).select(chat)) == len(chat)


def test_policy_errors_and_parsing():
    assert repr(parse_memory("buffer")) == "BufferMemory()"
    assert parse_memory("window:20").k == 20
    assert parse_memory(" tokens:1500 ").max_tokens == 1500
    model = ScriptedChatModel([])
    summary = parse_memory("summary:4", model=model)
    assert isinstance(summary, SummaryMemory) and summary.keep_last == 4
    assert parse_memory("summary", model=model).keep_last == 10
    for bad, message in [
        ("window", "needs a number"),
        ("window:x", "not a whole number"),
        ("window:-1", ">= 0"),
        ("tokens:0", ">= 1"),
        ("summary", "needs a model"),
        ("lru:3", "unknown memory policy"),
        ("buffer:3", "takes no argument"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_memory(bad)


def test_summary_is_incremental_and_sends_only_newly_evicted_messages():
    summariser = ScriptedChatModel(respond=lambda msgs: f"S{len(summariser.calls)}")
    policy = SummaryMemory(summariser, keep_last=4)
    chat = conversation(2)  # 8 messages
    shown = policy.select(chat)
    assert isinstance(shown[0], SystemMessage) and shown[0].content.endswith("S1")
    assert shown[1:] == chat[4:]
    first_request = summariser.calls[0][-1].content
    assert "q0" in first_request and "q1" not in first_request

    assert policy.select(chat) == shown and len(summariser.calls) == 1  # nothing new evicted
    chat += tool_turn(2)
    shown = policy.select(chat)
    second_request = summariser.calls[1][-1].content
    assert "Existing summary:\nS1" in second_request
    assert "q1" in second_request and "q0" not in second_request  # only the new evictions
    assert shown[1:] == chat[-4:] and policy.state.summarized == 8


def test_summary_keeps_a_tool_result_with_its_call():
    summariser = ScriptedChatModel(respond=lambda msgs: "S")
    chat = conversation(2)
    shown = SummaryMemory(summariser, keep_last=2).select(chat)  # would start on ToolMessage r1
    assert isinstance(shown[1], AIMessage) and shown[1].tool_calls
    assert_well_formed(shown[1:])


def test_session_stores_the_summary_and_extends_it_across_refreshes(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    summariser = ScriptedChatModel(respond=lambda msgs: f"summary v{len(summariser.calls)}")
    agent_model = ScriptedChatModel(respond=lambda msgs: "ok")
    swarm = Swarm(chat_model=agent_model)
    for i in range(6):  # every turn: a fresh Session, as after a refresh
        session = Session("c", url=url, memory=SummaryMemory(summariser, keep_last=4))
        session.run(swarm, Agent(), f"message {i}")
    meta = open_context_store(url).load("c").meta
    # 10 stored before the last run, 4 kept; runs 3, 4 and 5 each summarised the 2 messages
    # they pushed out of the window, extending the stored summary.
    assert {k: meta[k] for k in ("summary", "summarized")} == {
        "summary": "summary v3",
        "summarized": 6,
    }
    assert len(stored_turns(open_store(url), "c")) == 6  # and the index of the turns stored
    requests = [call[-1].content for call in summariser.calls]
    assert len(requests) == 3
    assert "Existing summary:\nsummary v2" in requests[2]
    assert all(r.count("User: message") + r.count("Agent: ok") == 2 for r in requests)
    last_shown = agent_model.calls[-1]
    assert isinstance(last_shown[1], SystemMessage)
    assert last_shown[1].content == "Summary of the earlier conversation: summary v3"
    assert [m.content for m in last_shown[2:]] == [
        "message 3",
        "ok",
        "message 4",
        "ok",
        "message 5",
    ]
    assert session.last_usage["summary_input_tokens"] > 0


def test_session_summary_async(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    summariser = ScriptedChatModel(respond=lambda msgs: "S")
    swarm = Swarm(chat_model=ScriptedChatModel(respond=lambda msgs: "ok"))

    async def go():
        for i in range(4):
            session = Session("c", url=url, memory=SummaryMemory(summariser, keep_last=2))
            await session.arun(swarm, Agent(), f"m{i}")

    asyncio.run(go())
    meta = open_context_store(url).load("c").meta
    assert {k: meta[k] for k in ("summary", "summarized")} == {"summary": "S", "summarized": 4}
    assert len(summariser.calls) == 2


def test_window_and_token_policies_through_a_session(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    open_history(url, "c").add_messages(conversation(10, words=30))
    seen = {}
    for spec in ("buffer", "window:6", "tokens:120"):
        model = ScriptedChatModel(respond=lambda msgs: "ok")
        session = Session("c", url=url, persist=("messages",), memory=spec)
        session.run(Swarm(chat_model=model), Agent(), "new")
        history = model.calls[0][1:-1]
        assert_well_formed(history)
        seen[spec] = (len(history), session.last_usage["input_tokens"])
        open_history(url, "c").clear()
        open_history(url, "c").add_messages(conversation(10, words=30))
    assert seen["buffer"][0] == 40
    assert seen["window:6"][0] == 5  # the 6th-last is an orphan tool result, dropped
    assert 0 < seen["tokens:120"][0] < 8
    assert seen["buffer"][1] > seen["tokens:120"][1]
    with pytest.raises(ValueError, match="not both"):
        Session("c", url=url, window=3, memory="buffer")
