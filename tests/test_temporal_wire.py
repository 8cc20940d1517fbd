"""What crosses Temporal's boundary (swarmgraph/temporal/wire.py, roster.py, client.py's
``agent_ref``), without a server: each value comes back as the engine made it, or the
reason it cannot travel is said before anything runs."""

from __future__ import annotations

import asyncio
import operator

import pytest
import temporal_agents as agents

from swarmgraph import CALLER, Agent, Budget, Parallel, Result
from swarmgraph.temporal import TemporalInputError, agent_ref
from swarmgraph.temporal.roster import Roster
from swarmgraph.temporal.wire import budget_in, budget_out, decode_result, encode_result

ROSTER = Roster.load("temporal_agents:triage")


def travel(value: object) -> object:
    return decode_result(encode_result(value), ROSTER.agent)


def test_a_handoff_result_and_caller_come_back_as_the_same_agents() -> None:
    assert travel(agents.sales) is agents.sales
    assert travel(CALLER) is CALLER
    back = travel(Result(value="ok", agent=agents.sales, context_variables={"n": 1}))
    assert isinstance(back, Result)
    assert (back.value, back.agent, back.context_variables) == ("ok", agents.sales, {"n": 1})


def test_json_comes_back_as_json_and_anything_else_as_its_text() -> None:
    assert travel({"a": [1, 2]}) == {"a": [1, 2]}
    assert travel(7) == 7
    thing = object()
    assert travel(thing) == str(thing)


def test_a_fan_out_comes_back_with_its_agents_tasks_merge_rules_and_join() -> None:
    back = travel(Parallel(agents.billing, agents.tech, merge={"n": operator.add}))
    assert isinstance(back, Parallel)
    assert back.targets == (agents.billing, agents.tech) and back.merge == {"n": operator.add}
    tasks = travel(Parallel({agents.billing: "a", agents.tech: "b"}, join=agents.sales))
    assert isinstance(tasks, Parallel)
    assert tasks.tasks == ("a", "b") and tasks.join is agents.sales


def test_a_merge_rule_that_is_not_importable_is_refused() -> None:
    with pytest.raises(TemporalInputError, match="module-level function"):
        encode_result(Parallel(agents.billing, merge={"n": lambda old, new: old + new}))


def test_an_agent_nobody_can_reach_is_a_clear_error() -> None:
    with pytest.raises(TemporalInputError, match="'Stranger' is not reachable"):
        travel(Agent(name="Stranger"))


def test_a_budget_travels_with_its_per_agent_limits() -> None:
    budget = Budget(max_tool_calls=3, per_agent={"Sales": Budget(max_model_calls=1)})
    assert budget_in(budget_out(budget)) == budget
    assert budget_in(None) is None


def test_an_agent_is_named_by_its_import_path() -> None:
    assert agent_ref(agents.triage) == "temporal_agents:triage"
    assert agent_ref("app.py:triage") == "app.py:triage"
    with pytest.raises(TemporalInputError, match="not a module-level name"):
        agent_ref(Agent(name="Nowhere"))


def test_every_reachable_tool_is_found_by_agent_and_name() -> None:
    assert ROSTER.tool("Sales", "refund") is agents.refund
    assert ROSTER.tool("Billing", "check_stock") is agents.check_stock
    with pytest.raises(TemporalInputError, match="not among the tools"):
        ROSTER.tool("Sales", "nope")


def test_the_model_activity_sends_names_as_the_in_process_step_does() -> None:
    """A model that sends ``name`` to OpenAI (ChatOpenAI) gets API-safe names and no
    assistant names, on Temporal as in-process (graph/core/node.py)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from temporalio.testing import ActivityEnvironment

    from swarmgraph import ScriptedChatModel, Swarm
    from swarmgraph.temporal.activities import SwarmActivities
    from swarmgraph.temporal.wire import messages_out

    class ChatOpenAI(ScriptedChatModel):  # the name the engine keys the rule on
        pass

    model = ChatOpenAI(["hi"])
    activities = SwarmActivities(Swarm(chat_model=model))
    prompt = [HumanMessage("hola", name="Spanish Agent"), AIMessage("ok", name="Triage")]
    call = {"model": "gpt-4o", "prompt": messages_out(prompt), "kwargs": {}}
    reply = asyncio.run(ActivityEnvironment().run(activities.model_call, call))
    assert reply["data"]["content"] == "hi"
    sent = model.calls[0]
    assert [m.name for m in sent] == ["Spanish_Agent", None]
