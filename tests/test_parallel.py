"""Parallel handoffs: a tool returns Parallel(a, b); the branches run at once, the join answers
the call in the order the agents were given, merges their context, and the agent that fanned
out speaks next. Sync, async, streamed, on the compiled graph (with a checkpointer for
approvals), and every way a branch can end: answered, raised, over budget, waiting."""

from __future__ import annotations

import asyncio
import json
import operator
import random
import sqlite3
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from swarmgraph.graph import BranchFailed
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from swarmgraph.graph.features.errors import DELETED
from swarmgraph.graph.features.parallel import merge_contexts

from swarmgraph import (
    Agent,
    Budget,
    BudgetExceeded,
    ContextConflict,
    Parallel,
    Result,
    ScriptedChatModel,
    Swarm,
    SwarmError,
    build_swarm_graph,
    needs_approval,
    scripted_tool_call,
)
from swarmgraph.history import last

USER = [{"role": "user", "content": "invoice 7, my router, my plan?"}]
NAMES = ["Billing", "Tech", "Plans", "Legal"]


def desk_with(
    specialists: list[Agent], **parallel: Any
) -> tuple[Agent, dict[str, ScriptedChatModel]]:
    """A desk agent whose tool asks every specialist at once; its model fans out, then sums up."""

    def ask_specialists() -> Parallel:
        """Ask every specialist at once."""
        return Parallel(*specialists, **parallel)

    desk = Agent(name="Desk", model="desk", functions=[ask_specialists])
    models = {"desk": ScriptedChatModel([scripted_tool_call("ask_specialists"), "Summed up."])}
    return desk, models


def specialists(names: list[str], latency: dict[str, float] | None = None):
    agents = [Agent(name=n, model=n.lower()) for n in names]
    models = {
        n.lower(): ScriptedChatModel([f"{n} says ok."], latency=(latency or {}).get(n, 0.0))
        for n in names
    }
    return agents, models


def swarm_of(models: dict[str, ScriptedChatModel], **kwargs: Any) -> Swarm:
    return Swarm(chat_model=models.__getitem__, **kwargs)


def joined(response: Any) -> dict[str, str]:
    """The answer of the fan-out call, read as the JSON object it is."""
    answer = next(m for m in response.messages if m["role"] == "tool")
    return json.loads(answer["content"])


# -- the join ---------------------------------------------------------------------------------
def test_fan_out_answers_the_call_in_the_given_order_and_the_desk_speaks_next():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert [m["role"] for m in response.messages] == ["assistant", "tool", "assistant"]
    assert response.messages[1]["content"] == (
        '{"Billing": "Billing says ok.", "Tech": "Tech says ok."}'
    )
    assert response.messages[-1] == {**response.messages[-1], "sender": "Desk"}
    assert response.agent is desk and response.messages[-1]["content"] == "Summed up."
    # the desk's model read the joined answer; each branch read the conversation, the
    # fan-out call answered as a handoff to it
    assert desk_models["desk"].calls[1][-1].content == response.messages[1]["content"]
    seen = models["billing"].calls[0]
    assert [m.type for m in seen] == ["system", "human", "ai", "tool"]
    assert seen[-1].content == '{"assistant": "Billing"}'
    assert [b["branch"] for b in response.branches] == ["Billing", "Tech"]
    assert all(b["status"] == "answered" for b in response.branches)


def _random_latencies(rng: random.Random) -> dict[str, float]:
    return {name: rng.uniform(0.0, 0.012) for name in NAMES}


def _completion_order(response: Any) -> tuple[str, ...]:
    ends = [
        (step["end"], step["branch"]) for step in response.trajectory if step["kind"] == "branch"
    ]
    return tuple(label for _, label in sorted(ends))


def test_join_is_identical_over_100_async_runs_whatever_order_the_branches_finish():
    rng = random.Random(20)

    async def runs() -> tuple[set[str], set[tuple[str, ...]]]:
        answers, orders = set(), set()
        for _ in range(100):
            agents, models = specialists(NAMES, latency=_random_latencies(rng))
            desk, desk_models = desk_with(agents)
            response = await swarm_of({**models, **desk_models}).arun(desk, USER)
            answers.add(response.messages[1]["content"])
            orders.add(_completion_order(response))
        return answers, orders

    answers, orders = asyncio.run(runs())
    assert answers == {json.dumps({n: f"{n} says ok." for n in NAMES})}
    assert len(orders) > 1  # the branches really did finish in different orders


def test_join_is_identical_over_sync_runs_whatever_order_the_branches_finish():
    rng = random.Random(21)
    answers, orders = set(), set()
    for _ in range(20):
        agents, models = specialists(NAMES, latency=_random_latencies(rng))
        desk, desk_models = desk_with(agents)
        response = swarm_of({**models, **desk_models}).run(desk, USER)
        answers.add(response.messages[1]["content"])
        orders.add(_completion_order(response))
    assert answers == {json.dumps({n: f"{n} says ok." for n in NAMES})}
    assert len(orders) > 1


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_branches_run_at_the_same_time(mode):
    agents, models = specialists(NAMES, latency=dict.fromkeys(NAMES, 0.3))
    desk, desk_models = desk_with(agents)
    swarm = swarm_of({**models, **desk_models})
    response = swarm.run(desk, USER) if mode == "run" else asyncio.run(swarm.arun(desk, USER))
    spans = [(s["start"], s["end"]) for s in response.trajectory if s["kind"] == "branch"]
    assert len(spans) == 4
    # one moment at which every branch was running (a sequential run has none)
    assert max(start for start, _ in spans) < min(end for _, end in spans)


def test_trajectory_and_usage_say_which_branch_did_what():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    kinds = [(s["kind"], s.get("branch")) for s in response.trajectory]
    assert kinds[:3] == [("model", None), ("tool", None), ("fan_out", None)]
    assert kinds[-2:] == [("join", None), ("model", None)]
    assert {s["branch"] for s in response.trajectory if s["kind"] == "model" and "branch" in s} == {
        "Billing",
        "Tech",
    }
    usage = response.usage
    assert usage["by_agent"]["Billing"]["model_calls"] == 1
    assert usage["by_agent"]["Desk"]["handoffs"] == 2  # one per branch
    for count in ("model_calls", "input_tokens", "output_tokens", "tool_calls", "handoffs"):
        assert usage[count] == sum(agent[count] for agent in usage["by_agent"].values())


# -- what a branch sees ---------------------------------------------------------------------
def test_task_gives_each_branch_only_its_task():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(
        [],
    )  # replaced below
    billing, tech = agents

    def ask() -> Parallel:
        """Ask both."""
        return Parallel({billing: "check invoice 7", tech: "check the router"})

    desk = Agent(name="Desk", model="desk", functions=[ask])
    desk_models = {"desk": ScriptedChatModel([scripted_tool_call("ask"), "ok"])}
    swarm_of({**models, **desk_models}).run(desk, USER)
    assert [(m.type, m.content) for m in models["billing"].calls[0]][1:] == [
        ("human", "check invoice 7")
    ]
    assert models["tech"].calls[0][-1].content == "check the router"

    one_task, one_models = desk_with(agents, task="summarise the account")
    for model in models.values():
        model.reset()
    swarm_of({**models, **one_models}).run(one_task, USER)
    assert [m.content for m in models["tech"].calls[0][1:]] == ["summarise the account"]


def test_a_branch_reads_through_its_agents_history_view():
    billing = Agent(name="Billing", model="billing", history=last(1))
    tech = Agent(name="Tech", model="tech")
    desk, desk_models = desk_with([billing, tech])
    models = {"billing": ScriptedChatModel(["b"]), "tech": ScriptedChatModel(["t"])}
    swarm_of({**models, **desk_models}).run(desk, USER)
    assert len(models["billing"].calls[0]) < len(models["tech"].calls[0])


def test_result_value_is_the_handoff_each_branch_reads_and_its_context_reaches_every_branch():
    billing, tech = Agent(name="Billing", model="billing"), Agent(name="Tech", model="tech")
    seen: list[Any] = []

    def check(context_variables: dict) -> str:
        """Read the case."""
        seen.append(dict(context_variables))
        return "checked"

    billing.functions = [check]

    def ask() -> Result:
        """Ask both."""
        return Result(value="case 12 opened", agent=Parallel(billing, tech),
                      context_variables={"case": 12})  # fmt: skip

    desk = Agent(name="Desk", model="desk", functions=[ask])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask"), "ok"]),
        "billing": ScriptedChatModel([scripted_tool_call("check"), "billing ok"]),
        "tech": ScriptedChatModel(["tech ok"]),
    }
    response = swarm_of(models).run(desk, USER)
    assert models["tech"].calls[0][-1].content == "case 12 opened"
    assert seen == [{"case": 12}]
    assert response.context_variables == {"case": 12}
    assert joined(response) == {"Billing": "billing ok", "Tech": "tech ok"}


def test_join_hands_the_turn_to_another_agent():
    agents, models = specialists(["Billing", "Tech"])
    writer = Agent(name="Writer", model="writer")
    desk, desk_models = desk_with(agents, join=writer)
    desk_models["desk"] = ScriptedChatModel([scripted_tool_call("ask_specialists")])
    models["writer"] = ScriptedChatModel(["Dear customer..."])
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert response.agent is writer
    assert response.messages[-1]["sender"] == "Writer"
    assert models["writer"].calls[0][-1].type == "tool"  # it read the joined answers
    assert [s["kind"] for s in response.trajectory][-3:] == ["join", "handoff", "model"]


def test_a_branch_may_run_its_own_tools_and_hand_off_inside_it():
    expert = Agent(name="Expert", model="expert")

    def lookup(invoice: int) -> str:
        """Look an invoice up."""
        return f"invoice {invoice}: paid"

    billing = Agent(name="Billing", model="billing", functions=[lookup], handoffs=[expert])
    tech = Agent(name="Tech", model="tech")
    desk, desk_models = desk_with([billing, tech])
    models = {
        "billing": ScriptedChatModel(
            [scripted_tool_call("lookup", {"invoice": 7}), scripted_tool_call("transfer_to_expert")]
        ),
        "expert": ScriptedChatModel(["The expert confirms: paid."]),
        "tech": ScriptedChatModel(["fine"]),
    }
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert joined(response) == {"Billing": "The expert confirms: paid.", "Tech": "fine"}
    billing_branch = response.branches[0]
    assert billing_branch["active_agent"] == "Expert"
    assert [m["role"] for m in billing_branch["messages"]] == [
        "assistant", "tool", "assistant", "tool", "assistant"
    ]  # fmt: skip
    # none of it is in the main conversation: it gets the one joined answer
    assert len(response.messages) == 3


def test_duplicate_agents_get_numbered_labels():
    billing = Agent(name="Billing", model="billing")
    desk, desk_models = desk_with([billing, billing])
    # One agent twice: its model is shared by both branches, so it answers by rule (a list
    # of replies would go to whichever branch asked first: ScriptSharedError).
    models = {"billing": ScriptedChatModel(respond=lambda messages: "checked")}
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert set(joined(response)) == {"Billing", "Billing#2"}
    assert list(joined(response)) == ["Billing", "Billing#2"]


def test_nested_fan_out_labels_its_branches_with_their_path():
    inner = [Agent(name="Left", model="left"), Agent(name="Right", model="right")]

    def split() -> Parallel:
        """Split the work."""
        return Parallel(*inner)

    middle = Agent(name="Middle", model="middle", functions=[split])
    desk, desk_models = desk_with([middle])
    models = {
        "middle": ScriptedChatModel([scripted_tool_call("split"), "middle done"]),
        "left": ScriptedChatModel(["l"]),
        "right": ScriptedChatModel(["r"]),
    }
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert joined(response) == {"Middle": "middle done"}
    assert [b["branch"] for b in response.branches] == ["Middle", "Middle/Left", "Middle/Right"]
    steps = [s for s in response.trajectory if s.get("branch") == "Middle/Left"]
    assert steps and all(s["agent"] == "Left" for s in steps)


def test_a_langgraph_member_runs_as_a_branch():
    from langchain.agents import create_agent

    research = create_agent(ScriptedChatModel(["Bees see UV."]), tools=[], name="research")
    tech = Agent(name="Tech", model="tech")
    desk, desk_models = desk_with([research, tech])
    response = swarm_of({"tech": ScriptedChatModel(["fine"]), **desk_models}).run(desk, USER)
    assert joined(response) == {"research": "Bees see UV.", "Tech": "fine"}


# -- model-initiated fan-out ---------------------------------------------------------------
def _two_transfers() -> tuple[Agent, dict[str, ScriptedChatModel]]:
    sales, refunds = Agent(name="Sales", model="sales"), Agent(name="Refunds", model="refunds")
    triage = Agent(name="Triage", model="triage", handoffs=[sales, refunds])
    both = scripted_tool_calls([("transfer_to_sales", {}), ("transfer_to_refunds", {})])
    models = {
        "triage": ScriptedChatModel([both, "Both teams answered."]),
        "sales": ScriptedChatModel(["Bees are $5."]),
        "refunds": ScriptedChatModel(["Refund sent."]),
    }
    return triage, models


def test_parallel_handoffs_all_answers_each_transfer_with_its_own_branch():
    triage, models = _two_transfers()
    response = swarm_of(models, parallel_handoffs="all").run(triage, USER)
    assert [m["content"] for m in response.messages[1:3]] == ["Bees are $5.", "Refund sent."]
    assert response.agent is triage and response.messages[-1]["content"] == "Both teams answered."


def test_parallel_handoffs_last_is_the_default_and_keeps_swarms_behaviour():
    triage, models = _two_transfers()
    response = swarm_of(models).run(triage, USER)
    assert response.agent.name == "Refunds"  # Swarm: every transfer runs, the last wins
    assert [m["content"] for m in response.messages[1:3]] == [
        '{"assistant": "Sales"}',
        '{"assistant": "Refunds"}',
    ]
    assert response.branches == []
    first = swarm_of(_two_transfers()[1], parallel_handoffs="first").run(triage, USER)
    assert first.agent.name == "Sales"
    assert first.messages[2]["content"].startswith("Error: transfer_to_refunds was not run")
    app, _ = swarm_of(_two_transfers()[1]).graph_for(triage)
    assert "parallel_branch" not in app.get_graph().nodes  # no fan-out, no extra nodes
    with pytest.raises(ValueError, match="parallel_handoffs must be 'last', 'first' or 'all'"):
        Swarm(parallel_handoffs="some")


# -- context merge ---------------------------------------------------------------------------
def writer_tool(key: str, value: Any):
    def write(context_variables: dict) -> str:
        """Write a context key."""
        if value is DELETED:
            context_variables.pop(key, None)
        else:
            context_variables[key] = value
        return "written"

    write.__name__ = f"write_{key}"
    return write


def branch_writing(name: str, writes: dict[str, Any]) -> tuple[Agent, ScriptedChatModel]:
    agent = Agent(
        name=name, model=name.lower(), functions=[writer_tool(k, v) for k, v in writes.items()]
    )
    calls = [scripted_tool_call(f"write_{k}") for k in writes]
    return agent, ScriptedChatModel([*calls, f"{name} done"])


def run_writers(writes: dict[str, dict[str, Any]], base: dict, **parallel: Any):
    agents, models = [], {}
    for name, keys in writes.items():
        agent, model = branch_writing(name, keys)
        agents.append(agent)
        models[name.lower()] = model
    desk, desk_models = desk_with(agents, **parallel)
    return swarm_of({**models, **desk_models}).run(desk, USER, context_variables=base)


def test_every_conflicting_write_is_reported_and_none_is_dropped():
    writes = {
        "Billing": {"total": 5, "owner": "billing", "note": "a"},
        "Tech": {"total": 7, "owner": "tech", "router": "ok"},
        "Plans": {"total": 9, "note": "a"},
    }
    with pytest.raises(ContextConflict) as caught:
        run_writers(writes, {"total": 1})
    error = caught.value
    assert error.conflicts == {
        "total": {"Billing": 5, "Tech": 7, "Plans": 9},
        "owner": {"Billing": "billing", "Tech": "tech"},
    }
    assert (error.key, error.values) == ("total", {"Billing": 5, "Tech": 7, "Plans": 9})
    response = error.response
    # every call answered; what did not conflict is merged; conflicting keys keep the fan-out's
    assert joined(response) == {n: f"{n} done" for n in writes}
    assert response.context_variables == {"total": 1, "note": "a", "router": "ok"}
    assert [b["status"] for b in response.branches] == ["answered"] * 3
    assert "total" in str(error) and "owner" in str(error)


def test_a_key_deleted_by_one_branch_and_changed_by_another_is_a_conflict():
    with pytest.raises(ContextConflict) as caught:
        run_writers({"Billing": {"plan": DELETED}, "Tech": {"plan": "pro"}}, {"plan": "basic"},
                    merge={"plan": operator.add})  # fmt: skip
    assert caught.value.conflicts == {"plan": {"Billing": DELETED, "Tech": "pro"}}
    both = run_writers({"Billing": {"plan": DELETED}, "Tech": {"plan": DELETED}}, {"plan": "basic"})
    assert both.context_variables == {}


def test_a_merge_rule_folds_the_branches_onto_the_value_at_the_fan_out():
    response = run_writers(
        {"Billing": {"total": 5}, "Tech": {"total": 7}, "Plans": {"seen": ["plans"]}},
        {"total": 10, "seen": ["desk"]},
        merge={"total": operator.add, "seen": operator.add},
    )
    assert response.context_variables == {"total": 22, "seen": ["desk", "plans"]}
    same = run_writers({"Billing": {"tier": "gold"}, "Tech": {"tier": "gold"}}, {})
    assert same.context_variables == {"tier": "gold"}  # equal writes agree


def test_a_merge_rule_that_raises_is_reported_as_a_conflict():
    def broken(old: Any, new: Any) -> Any:
        raise TypeError("cannot add")

    with pytest.raises(ContextConflict) as caught:
        run_writers({"Billing": {"n": 1}, "Tech": {"n": 2}}, {}, merge={"n": broken})
    assert caught.value.values["rule error"] == "TypeError: cannot add"


values = st.one_of(st.integers(0, 3), st.just(DELETED))


@settings(max_examples=200, deadline=None)
@given(
    base=st.dictionaries(st.sampled_from("abcd"), st.integers(0, 3), max_size=4),
    branches=st.lists(
        st.dictionaries(st.sampled_from("abcde"), values, max_size=5), min_size=1, max_size=4
    ),
)
def test_merge_reports_exactly_the_keys_whose_writes_disagree(base, branches):
    contexts = []
    for number, writes in enumerate(branches):
        context = dict(base)
        for key, value in writes.items():
            if value is DELETED:
                context.pop(key, None)
            else:
                context[key] = value
        contexts.append((f"B{number}", context))
    merged = merge_contexts(base, contexts)
    # the oracle: a branch wrote a key if its value differs from the base's (or it is gone)
    for key in set(base).union(*(c for _, c in contexts)):
        wrote = {
            label: context.get(key, DELETED)
            for label, context in contexts
            if context.get(key, DELETED) != base.get(key, DELETED)
        }
        if len(set(map(repr, wrote.values()))) > 1:
            assert merged.conflicts[key] == wrote
            assert merged.context.get(key, DELETED) == base.get(key, DELETED)
        else:
            assert key not in merged.conflicts
            expected = next(iter(wrote.values())) if wrote else base.get(key, DELETED)
            assert merged.context.get(key, DELETED) == expected


# -- a branch that fails, trips a budget or waits ---------------------------------------------
def test_a_branch_that_raises_ends_the_run_at_the_join_with_every_output():
    agents, models = specialists(["Billing", "Tech", "Plans"])
    models["tech"] = ScriptedChatModel([ConnectionError("model down")])
    desk, desk_models = desk_with(agents)
    with pytest.raises(BranchFailed, match=r"'Tech'.*ConnectionError: model down") as caught:
        swarm_of({**models, **desk_models}).run(desk, USER)
    error = caught.value
    assert isinstance(error.__cause__, ConnectionError) and error.branch == "Tech"
    response = error.response
    assert joined(response) == {
        "Billing": "Billing says ok.",
        "Tech": "Error: the branch raised ConnectionError: model down",
        "Plans": "Plans says ok.",
    }
    assert [(b["branch"], b["status"]) for b in response.branches] == [
        ("Billing", "answered"), ("Tech", "failed"), ("Plans", "answered")
    ]  # fmt: skip
    assert response.branches[0]["messages"][-1]["content"] == "Billing says ok."


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_a_budget_is_shared_by_the_branches_and_never_overshot(mode):
    agents, models = specialists(NAMES, latency=dict.fromkeys(NAMES, 0.05))
    desk, desk_models = desk_with(agents)
    swarm = swarm_of({**models, **desk_models})
    budget = Budget(max_model_calls=3)  # the desk's call, then two of the four branches
    with pytest.raises(BudgetExceeded) as caught:
        if mode == "run":
            swarm.run(desk, USER, budget=budget)
        else:
            asyncio.run(swarm.arun(desk, USER, budget=budget))
    calls = sum(len(model.calls) for model in {**models, **desk_models}.values())
    assert calls == 3  # four branches checked at once: exactly two were admitted
    response = caught.value.response
    assert response.usage["model_calls"] == 3
    statuses = sorted(b["status"] for b in response.branches)
    assert statuses == ["answered", "answered", "stopped", "stopped"]
    answers = joined(response)
    assert sum(a.startswith("Error: Budget exceeded") for a in answers.values()) == 2


def test_a_fan_out_past_max_handoffs_does_not_start():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    with pytest.raises(BudgetExceeded, match="max_handoffs=1") as caught:
        swarm_of({**models, **desk_models}).run(desk, USER, budget=Budget(max_handoffs=1))
    assert caught.value.response.messages[1]["content"].startswith("Error: Budget exceeded")
    assert not models["billing"].calls and caught.value.response.branches == []


@needs_approval
def refund(order_id: int) -> str:
    """Refund an order."""
    return f"Refunded {order_id}."


def approval_desk() -> tuple[Agent, dict[str, ScriptedChatModel]]:
    billing = Agent(name="Billing", model="billing", functions=[refund])
    tech = Agent(name="Tech", model="tech")
    desk, desk_models = desk_with([billing, tech])
    models = {
        **desk_models,
        "billing": ScriptedChatModel(
            [scripted_tool_call("refund", {"order_id": 7}, id="refund-7"), "Refunded."]
        ),
        "tech": ScriptedChatModel(["Router fine."]),
    }
    return desk, models


def test_an_approval_inside_a_branch_pauses_the_run_and_resumes_with_its_branches():
    desk, models = approval_desk()
    swarm = swarm_of(models)
    paused = swarm.run(desk, USER)
    assert [p.id for p in paused.pending] == ["refund-7"] and paused.pending[0].agent == "Billing"
    assert [(b["branch"], b["status"]) for b in paused.branches] == [
        ("Billing", "waiting"), ("Tech", "answered")
    ]  # fmt: skip
    history = USER + paused.messages
    with pytest.raises(ValueError, match=r"branches=response\.branches"):
        swarm.run(desk, history, approvals={"refund-7": True})
    done = swarm.run(desk, history, approvals={"refund-7": True}, branches=paused.branches)
    assert joined(done) == {"Billing": "Refunded.", "Tech": "Router fine."}
    assert done.messages[-1]["content"] == "Summed up."
    assert len(models["tech"].calls) == 1  # the branch that had answered did not run again
    billing = done.branches[0]["messages"]
    assert [m["role"] for m in billing] == ["assistant", "tool", "assistant"]
    assert billing[1]["content"] == "Refunded 7."


def test_branches_entries_that_cannot_resume_are_refused_before_anything_runs():
    """An entry of ``branches=`` without what resuming needs is a SwarmError naming the entry
    and the keys, not a KeyError from inside the run; the keys a run can fill in itself (error,
    task, context, trail) may be left out."""
    desk, models = approval_desk()
    swarm = swarm_of(models)
    paused = swarm.run(desk, USER)
    history = USER + paused.messages
    broken = [dict(paused.branches[0]), {"branch": "Tech", "status": "answered"}]
    with pytest.raises(SwarmError, match=r"branches=\[1\]: .*missing: agent, answer, plan"):
        swarm.run(desk, history, approvals={"refund-7": True}, branches=broken)
    assert len(models["tech"].calls) == 1 and len(models["billing"].calls) == 1  # nothing ran
    optional = ("error", "task", "context_variables", "handoff_trail")
    trimmed = [{k: v for k, v in b.items() if k not in optional} for b in paused.branches]
    done = swarm.run(desk, history, approvals={"refund-7": True}, branches=trimmed)
    assert joined(done) == {"Billing": "Refunded.", "Tech": "Router fine."}
    assert [b["status"] for b in done.branches] == ["answered", "answered"]


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_an_approval_inside_a_branch_interrupts_the_compiled_graph(saver, tmp_path):
    desk, models = approval_desk()
    if saver == "memory":
        checkpointer: Any = InMemorySaver()
    else:
        checkpointer = SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False))
    app = build_swarm_graph([desk], chat_model=models.__getitem__).compile(
        checkpointer=checkpointer
    )
    config = {"configurable": {"thread_id": "t1"}}
    out = app.invoke({"messages": [("user", "refund 7 and check my router")]}, config)
    [interrupt] = out["__interrupt__"]
    assert interrupt.value[0]["id"] == "refund-7"
    out = app.invoke(Command(resume=True), config)
    assert json.loads(out["messages"][2].content) == {
        "Billing": "Refunded.",
        "Tech": "Router fine.",
    }
    assert out["messages"][-1].content == "Summed up."
    assert len(models["tech"].calls) == 1


# -- streams and the compiled graph ---------------------------------------------------------
def _stream_checks(events: list[dict]) -> None:
    response = events[-1]["response"]
    branch = [e for e in events if "branch" in e]
    assert {e["branch"] for e in branch} == {"Billing", "Tech"}
    assert all(e["sender"] == e["branch"] for e in branch)
    text = {label: "".join(e["content"] or "" for e in branch if e["branch"] == label)
            for label in ("Billing", "Tech")}  # fmt: skip
    assert text == {"Billing": "Billing says ok.", "Tech": "Tech says ok."}
    # delimiters pair up, and one pair wraps all the branch deltas
    delims = [e["delim"] for e in events if "delim" in e]
    assert delims == ["start", "end"] * (len(delims) // 2)
    first, last_branch = events.index(branch[0]), events.index(branch[-1])
    assert not any("delim" in e for e in events[first:last_branch])
    assert joined(response) == {"Billing": "Billing says ok.", "Tech": "Tech says ok."}


def test_stream_tags_each_branch_delta_with_sender_and_branch():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    _stream_checks(list(swarm_of({**models, **desk_models}).run(desk, USER, stream=True)))


def test_async_stream_tags_each_branch_delta_with_sender_and_branch():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)

    async def collect() -> list[dict]:
        stream = await swarm_of({**models, **desk_models}).arun(desk, USER, stream=True)
        return [event async for event in stream]

    _stream_checks(asyncio.run(collect()))


def test_the_compiled_graph_draws_the_fan_out_and_streams_each_branch():
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    app = build_swarm_graph([desk], chat_model={**models, **desk_models}.__getitem__).compile()
    drawn = app.get_graph()
    edges = {(e.source, e.target): e.data for e in drawn.edges}
    assert edges[("Desk", "parallel_branch")] == "fan out"
    assert edges[("parallel_branch", "Billing")] == "branch"
    assert edges[("Tech", "parallel_join")] == "answered"
    assert edges[("parallel_join", "Desk")] == "joined"
    assert ("Desk", "Billing") not in edges  # a branch is not a handoff
    updates = list(app.stream({"messages": [("user", "hi")]}, stream_mode="updates"))
    branches = [u["parallel_branch"] for u in updates if "parallel_branch" in u]
    assert sorted(b["parallel_results"][0]["label"] for b in branches) == ["Billing", "Tech"]
    assert [n for u in updates for n in u][-2:] == ["parallel_join", "Desk"]


def test_a_tool_that_hides_parallel_gets_an_error_the_model_can_read():
    agents, models = specialists(["Billing"])

    def make() -> Any:
        return Parallel(*agents)

    def ask() -> Any:
        """Ask billing."""
        return make()

    desk = Agent(name="Desk", model="desk", functions=[ask])
    desk_models = {"desk": ScriptedChatModel([scripted_tool_call("ask"), "I'll answer myself."])}
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    assert response.messages[1]["content"].startswith("Error: Desk cannot fan out")
    assert response.messages[-1]["content"] == "I'll answer myself."


def test_parallel_checks_what_it_is_given():
    with pytest.raises(ValueError, match="at least one agent"):
        Parallel()
    with pytest.raises(TypeError, match="Agents or named compiled graphs"):
        Parallel("Billing")
    with pytest.raises(TypeError, match="user message"):
        Parallel(Agent(), task=7)
    with pytest.raises(TypeError, match="maps context keys to functions"):
        Parallel(Agent(), merge={"total": 1})


def test_an_entry_check_refuses_a_branch_before_its_agent_runs():
    # the seam issue 21's preconditions and input guardrails use: every way into an agent
    agents, models = specialists(["Billing", "Tech"])
    desk, desk_models = desk_with(agents)
    swarm = swarm_of({**models, **desk_models})
    _, runtime = swarm.graph_for(desk)
    seen: list[str] = []

    def entry_check(agent, state, control):
        seen.append(agent.name)
        return "Tech needs a ticket number" if agent.name == "Tech" else None

    runtime.entry_check = entry_check
    response = swarm.run(desk, USER)
    assert sorted(seen) == ["Billing", "Tech"]
    assert joined(response) == {
        "Billing": "Billing says ok.",
        "Tech": "Error: Tech needs a ticket number",
    }
    assert not models["tech"].calls  # refused: its model never ran
    assert [b["status"] for b in response.branches] == ["answered", "refused"]
    assert response.messages[-1]["content"] == "Summed up."  # the run went on


def test_a_call_held_for_approval_in_the_fanning_reply_is_answered_not_left_open():
    agents, models = specialists(["Billing"])

    def ask() -> Parallel:
        """Ask billing."""
        return Parallel(*agents)

    desk = Agent(name="Desk", model="desk", functions=[ask, refund])
    both = scripted_tool_calls([("refund", {"order_id": 7}, "r1"), ("ask", {}, "a1")])
    desk_models = {"desk": ScriptedChatModel([both, "Asked billing; ask me to refund again."])}
    response = swarm_of({**models, **desk_models}).run(desk, USER)
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    assert answers["a1"] == '{"Billing": "Billing says ok."}'
    assert answers["r1"].startswith("Error: not run: refund waits for approval")
    assert response.pending == [] and response.messages[-1]["sender"] == "Desk"
