"""A typed context's reducers are the join's merge rules: an additive reducer merges what each
branch *added* (``visits`` at 3, two branches that each add 1: 5, not the 11 a fold over the
branches' final values gives); any other reducer (``max``) is folded over the values; a key
with no reducer that two branches wrote differently stays a ``ContextConflict``."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel
from swarmgraph.graph.features.context_changes import OnChange
from swarmgraph.graph.features.parallel import merge_contexts, rule_by_reference, rule_reference

from swarmgraph import (
    Agent,
    ContextConflict,
    Parallel,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)


def highest(a: int, b: int) -> int:
    """A reducer that is not additive (LangGraph wants a signature: the builtin max has none)."""
    return max(a, b)


class Desk(BaseModel):
    visits: Annotated[int, operator.add] = 0
    tags: Annotated[list[str], operator.add] = []
    best: Annotated[int, highest] = 0
    plan: str = "free"


def fan_out(writes: dict[str, dict[str, Any]]) -> tuple[Agent, dict[str, ScriptedChatModel]]:
    """A desk that fans out to one branch per entry of ``writes``; each branch's tool returns
    its entry as a ``Result`` update (through the reducers), then the branch answers."""
    models: dict[str, ScriptedChatModel] = {}
    branches = []
    for name, update in writes.items():

        def record(update: dict[str, Any] = update) -> Result:
            """Record what this specialist found."""
            return Result(value="noted", context_variables=dict(update))

        branches.append(Agent(name=name, model=name, functions=[record]))
        models[name] = ScriptedChatModel([scripted_tool_call("record"), f"{name} done."])

    def ask_all() -> Parallel:
        """Ask every specialist at once."""
        return Parallel(*branches)

    desk = Agent(name="Desk", model="desk", functions=[ask_all])
    models["desk"] = ScriptedChatModel([scripted_tool_call("ask_all"), "Summed up."])
    return desk, models


TWO_VISITS = {
    "Billing": {"visits": 1, "tags": ["billing"], "best": 7},
    "Tech": {"visits": 1, "tags": ["tech"], "best": 9},
}
START = {"visits": 3, "tags": ["desk"], "best": 8}


def test_additive_reducers_merge_what_each_branch_added_and_max_folds_the_values():
    desk, models = fan_out(TWO_VISITS)
    swarm = Swarm(chat_model=models.__getitem__, context_schema=Desk)
    response = swarm.run(agent=desk, messages=[{"role": "user", "content": "go"}],
                         context_variables=START)  # fmt: skip
    # Each branch ended with visits 4 (3 + its own 1); the join counts the 3 once.
    assert [b["context_variables"]["visits"] for b in response.branches] == [4, 4]
    assert response.context_variables["visits"] == 5
    assert response.context_variables["tags"] == ["desk", "billing", "tech"]  # the given order
    assert response.context_variables["best"] == 9
    assert response.messages[-1]["content"] == "Summed up."


def test_the_async_run_and_the_compiled_graph_join_the_same_way():
    desk, models = fan_out(TWO_VISITS)
    swarm = Swarm(chat_model=models.__getitem__, context_schema=Desk)
    go = [{"role": "user", "content": "go"}]
    response = asyncio.run(swarm.arun(agent=desk, messages=go, context_variables=START))
    assert response.context_variables["visits"] == 5
    desk, models = fan_out(TWO_VISITS)
    app = build_swarm_graph([desk], chat_model=models.__getitem__, context_schema=Desk).compile(
        checkpointer=InMemorySaver()
    )
    out = app.invoke(
        {"messages": [{"role": "user", "content": "go"}], "context_variables": START},
        {"configurable": {"thread_id": "t1"}},
    )
    assert out["context_variables"]["visits"] == 5
    assert out["context_variables"]["tags"] == ["desk", "billing", "tech"]


def test_one_writer_takes_its_value_and_a_key_without_a_reducer_still_conflicts():
    desk, models = fan_out({"Billing": {"visits": 2}, "Tech": {}})
    swarm = Swarm(chat_model=models.__getitem__, context_schema=Desk)
    one = swarm.run(agent=desk, messages=[{"role": "user", "content": "go"}],
                    context_variables=START)  # fmt: skip
    assert one.context_variables["visits"] == 5
    desk, models = fan_out({"Billing": {"plan": "gold"}, "Tech": {"plan": "pro"}})
    swarm = Swarm(chat_model=models.__getitem__, context_schema=Desk)
    with pytest.raises(ContextConflict) as caught:
        swarm.run(agent=desk, messages=[{"role": "user", "content": "go"}])
    assert caught.value.key == "plan"
    assert caught.value.values == {"Billing": "gold", "Tech": "pro"}


def test_on_change_rules_for_a_plain_context_and_what_they_refuse():
    add = OnChange(operator.add)
    merged = merge_contexts(
        {"n": 10, "log": ["a"]},
        [("X", {"n": 15, "log": ["a", "x"]}), ("Y", {"n": 17, "log": ["a", "y"]})],
        {"n": add, "log": add},
    )
    assert merged.context == {"n": 22, "log": ["a", "x", "y"]} and not merged.conflicts
    # A branch that rewrote the list instead of appending: nothing to add up, a conflict.
    edited = merge_contexts(
        {"log": ["a"]}, [("X", {"log": ["b"]}), ("Y", {"log": ["a", "y"]})], {"log": add}
    )
    assert edited.context == {"log": ["a"]}  # the value at the fan-out is kept
    assert "did something else" in edited.conflicts["log"]["rule error"]
    # Another process joining a fan-out finds the rule by name, still merging by change.
    reference = rule_reference(add)
    assert reference is not None
    assert rule_by_reference(reference) == add
    assert rule_reference(OnChange(lambda a, b: a + b)) is None
