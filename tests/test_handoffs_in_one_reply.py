"""Several handoffs in one reply: what runs is what the model is told (issue 30).

Swarm's rule (``parallel_handoffs="last"``, the default) runs every call and takes the last
agent; ``"first"`` takes the first and does not run a later tool it can see hands off. A
tool it cannot see hand off in advance runs, and its answer says so. Either way a tool's side
effect happens exactly when its answer tells the model that it ran; the differential tests
(tests/test_swarm_differential.py) hold the "last" rule against Swarm itself.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls

from swarmgraph import Agent, Parallel, Result, ScriptedChatModel, Swarm

#: An answer that starts so tells the model the call did not happen (or failed).
FAILED = "Error:"


def _desk():
    ran: list[str] = []
    a, b, c = Agent(name="A"), Agent(name="B"), Agent(name="C")
    box = SimpleNamespace(agent=c)  # an agent nothing can read from the code in advance

    def transfer_to_a(context_variables):
        ran.append("transfer_to_a")
        context_variables["a"] = True
        return a

    def transfer_to_b():
        ran.append("transfer_to_b")
        return Result(value="to B", agent=b, context_variables={"b": True})

    def route(context_variables):
        ran.append("route")
        context_variables["route"] = True
        return box.agent

    start = Agent(name="Start", functions=[transfer_to_a, transfer_to_b, route])
    return start, {"A": a, "B": b, "C": c}, ran


def _run(rule: str, order: list[str], *, use_async: bool):
    start, agents, ran = _desk()
    reply = scripted_tool_calls([(name, {}, f"c{i}") for i, name in enumerate(order)])
    swarm = Swarm(chat_model=ScriptedChatModel([reply, "Done."]), parallel_handoffs=rule)
    messages = [{"role": "user", "content": "help"}]
    response = asyncio.run(swarm.arun(start, messages)) if use_async else swarm.run(start, messages)
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    told = [order[int(i[1:])] for i, text in answers.items() if not text.startswith(FAILED)]
    return response, agents, ran, told, answers


ORDERS = [
    ["transfer_to_a", "transfer_to_b"],
    ["transfer_to_b", "transfer_to_a", "route"],
    ["route", "transfer_to_a"],
    ["transfer_to_a", "transfer_to_a"],
]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("rule", ["last", "first"])
@pytest.mark.parametrize("order", ORDERS, ids=lambda o: "+".join(o))
def test_a_side_effect_happens_exactly_when_the_model_is_told_the_tool_ran(order, rule, use_async):
    response, agents, ran, told, answers = _run(rule, order, use_async=use_async)
    assert ran == told  # the same tools, in the same order
    assert len(answers) == len(order)  # every call answered
    ctx = response.context_variables
    assert ctx.get("a", False) == ("transfer_to_a" in ran)
    assert ctx.get("b", False) == ("transfer_to_b" in ran)
    assert ctx.get("route", False) == ("route" in ran)
    names = {"transfer_to_a": "A", "transfer_to_b": "B", "route": "C"}
    expected = names[order[-1]] if rule == "last" else names[order[0]]
    assert response.agent is agents[expected]


def test_under_first_a_handoff_no_one_could_foresee_runs_and_says_it_was_not_taken():
    response, agents, ran, _, answers = _run("first", ["transfer_to_a", "route"], use_async=False)
    assert ran == ["transfer_to_a", "route"]
    assert answers["c1"] == (
        "route ran, but its handoff to C was not taken: this reply already transferred the "
        "conversation to A."
    )
    assert response.agent is agents["A"] and response.context_variables["route"] is True


def test_under_first_a_later_transfer_is_refused_before_it_runs():
    response, _, ran, _, answers = _run(
        "first", ["transfer_to_b", "transfer_to_a"], use_async=False
    )
    assert ran == ["transfer_to_b"]
    assert answers["c1"] == (
        "Error: transfer_to_a was not run: this reply already transferred the conversation to B."
    )
    assert "a" not in response.context_variables


@pytest.mark.parametrize("rule", ["last", "first"])
def test_a_fan_out_overtaken_by_a_later_handoff_says_it_was_not_started(rule):
    x, y, b = Agent(name="X", model="x"), Agent(name="Y", model="y"), Agent(name="B", model="b")
    started: list[str] = []

    def ask_both():
        return Parallel(x, y)

    def transfer_to_b():
        return b

    def answer(name: str):
        def reply(messages):
            started.append(name)
            return f"{name} here"

        return reply

    reply = scripted_tool_calls([("ask_both", {}, "c0"), ("transfer_to_b", {}, "c1")])
    models = {
        "s": ScriptedChatModel([reply, "Done."]),
        **{n: ScriptedChatModel([answer(n.upper())]) for n in "xyb"},
    }
    start = Agent(name="Start", model="s", functions=[ask_both, transfer_to_b])
    swarm = Swarm(chat_model=models.__getitem__, parallel_handoffs=rule)
    response = swarm.run(start, [{"role": "user", "content": "go"}])
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    if rule == "last":  # B takes over; no branch ever ran, and the fan-out call says so
        assert started == ["B"] and response.agent is b
        assert answers["c0"] == (
            "Error: the fan-out to X, Y was not started: a later call of this reply handed "
            "the conversation to B."
        )
    else:  # the fan-out runs; the transfer was never run
        assert sorted(started) == ["X", "Y"] and response.agent is start
        assert answers["c1"].startswith("Error: transfer_to_b was not run")
        assert answers["c0"] == '{"X": "X here", "Y": "Y here"}'
