"""Two concurrent turns that change a context key from the same stored value conflict, whether
they write the same value or different ones: a ``ContextConflictWarning`` and an entry in
``response.context_conflicts`` either way (issue 40: two turns that each counted one and both
wrote ``counter = 11`` over 10 lost an increment, and an equal write must not hide it; the
join of one turn's parallel branches still treats equal writes as agreeing)."""

from __future__ import annotations

import warnings

import pytest
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.memory.errors import ContextConflictWarning

from swarmgraph import Agent, Result, ScriptedChatModel, Session, Swarm, scripted_tool_call


def _overlapping_turns(url: str, outer_value: str, inner_value: str) -> tuple[Session, object]:
    """An outer turn whose model call lets a whole inner turn run and save first; each sets
    ``plan`` through a tool, from the same stored value."""

    def set_plan(plan: str) -> Result:
        """Set the plan."""
        return Result(value="ok", context_variables={"plan": plan})

    agent = Agent(name="Plans", functions=[set_plan])
    cid = fresh_id("agree")
    Session(cid, url=url).run(
        Swarm(chat_model=ScriptedChatModel(["hi"])), agent, "hi", context_variables={"plan": "free"}
    )
    inner = Session(cid, url=url)

    def reply(messages):
        if messages[-1].type == "human":  # another turn runs, whole, inside this one
            inner_model = ScriptedChatModel(
                [scripted_tool_call("set_plan", {"plan": inner_value}), "in"]
            )
            inner.run(Swarm(chat_model=inner_model), agent, "in")
            return scripted_tool_call("set_plan", {"plan": outer_value})
        return "out"

    outer = Session(cid, url=url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = outer.run(Swarm(chat_model=ScriptedChatModel(respond=reply)), agent, "out")
    conflict_warnings = [w for w in caught if issubclass(w.category, ContextConflictWarning)]
    return Session(cid, url=url), (response, conflict_warnings)


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_the_same_value_written_by_two_concurrent_turns_is_reported(backend_url):
    stored, (response, warned) = _overlapping_turns(backend_url, "pro", "pro")
    assert len(warned) == 1 and "'plan'" in str(warned[0].message)
    assert response.context_conflicts == [
        {"key": "plan", "base": "free", "stored": "pro", "ours": "pro", "kept": "pro"}
    ]
    assert stored.context_variables["plan"] == "pro"


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_different_values_are_still_a_conflict(backend_url):
    stored, (response, warned) = _overlapping_turns(backend_url, "pro", "gold")
    assert [str(w.message) for w in warned] and "'plan'" in str(warned[0].message)
    assert response.context_conflicts == [
        {"key": "plan", "base": "free", "stored": "gold", "ours": "pro", "kept": "pro"}
    ]
    assert stored.context_variables["plan"] == "pro"
