"""Our own tools under Swarm's argument rule: they get the JSON the model sent (issue 30), so
each one converts what it needs itself (tests/test_swarm_differential.py holds the rule)."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from swarmgraph.graph.core.tool_calls import execute_tool_calls
from swarmgraph.graph.features.memory_tools import remember
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.long_term_turn import AgentMemory, LongTermTurn


def test_remember_stores_a_number_the_model_sent_for_a_text_value():
    turn = LongTermTurn(LongTermMemory("memory://arguments-as-sent", user_id="u"), "c", "t")
    tools = AgentMemory(turn, "Triage")
    reply = AIMessage(
        "", tool_calls=[{"name": "remember", "args": {"key": "age", "value": 42}, "id": "c1"}]
    )
    out = execute_tool_calls(reply, [remember], {}, inputs={"long_term": tools})
    assert out.messages[0].content == "Remembered age: 42."
    assert tools.recall("age") == '- age: "42"'
