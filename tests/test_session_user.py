"""``Session(user_id=...)`` without ``long_term`` keeps no long-term memory, as a LangGraph
graph with a user id in its config but no store keeps none; it says so instead of silently
dropping what the caller may have expected to be remembered (issue 30)."""

from __future__ import annotations

import warnings

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import LongTermMemory, Session


def test_a_user_id_without_long_term_warns_at_the_callers_line_and_keeps_nothing():
    url = f"memory://{fresh_id('store')}"
    with pytest.warns(UserWarning, match=r"user_id='ming'\) keeps no long-term memory") as seen:
        session = Session("c1", url=url, user_id="ming")
    assert seen[0].filename == __file__  # points at the Session(...) call, not our code
    assert session.long_term is None and "long_term" not in session.persist
    model = ScriptedChatModel([scripted_tool_call("remember", {"key": "a", "value": "b"}), "ok"])
    response = session.run(Swarm(chat_model=model), Agent(memory_tools=True), "remember a=b")
    assert next(m["content"] for m in response.messages if m["role"] == "tool").startswith("Error:")
    assert LongTermMemory(url, user_id="ming").facts() == []


def test_no_warning_when_the_caller_says_what_they_mean():
    url = f"memory://{fresh_id('store')}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Session("c2", url=url, user_id="ming", long_term=False).long_term is None
        assert Session("c3", url=url, user_id="ming", long_term=True).long_term is not None
        assert Session("c4", url=url).long_term is None
