"""Evals for the mixed swarm: Triage hands book questions to the create_agent graph, which
searches with its own tool and hands other questions back.

    pytest examples/langgraph_member/evals.py                          # offline rules
    SWARMGRAPH_EVALS=real pytest examples/langgraph_member/evals.py    # a real model
"""

import os

import pytest

from .._support import eval_swarm, tool_calls_for
from .agents import MODEL, build
from .offline import rules

swarm = eval_swarm(rules)


def member_model():
    if os.environ.get("SWARMGRAPH_EVALS") == "real":
        from swarmgraph.graph.models import (
            resolve_chat_model,  # OPENAI_API_KEY / OPENAI_BASE_URL
        )

        return resolve_chat_model(MODEL)
    from swarmgraph import ScriptedChatModel

    return ScriptedChatModel([], respond=rules)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("Do you have books about bees?", ["transfer_to_catalogue"]), ("When do you open?", [])],
)
def test_triage_routes_book_questions_to_the_graph(query, expected):
    triage, _ = build(member_model())
    assert tool_calls_for(swarm, triage, query) == expected


def test_the_graph_searches_and_its_work_joins_the_shared_history():
    triage, _ = build(member_model())
    response = swarm.run(triage, [{"role": "user", "content": "Any books on rain?"}])
    names = [c["function"]["name"] for m in response.messages for c in m.get("tool_calls") or []]
    assert names == ["transfer_to_catalogue", "search_catalogue"]
    assert response.agent.name == "catalogue"
    assert "Barnett" in response.messages[-1]["content"]


def test_the_graph_hands_back_to_triage_for_other_questions():
    triage, _ = build(member_model())
    history = [{"role": "user", "content": "Any books on bees?"}]
    first = swarm.run(triage, history)
    history += [*first.messages, {"role": "user", "content": "What are your opening hours?"}]
    second = swarm.run(first.agent, history)
    assert second.agent is triage
    assert [m.get("sender") for m in second.messages if m["role"] == "assistant"] == [
        "catalogue", "Triage"]  # fmt: skip
