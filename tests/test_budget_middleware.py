"""``Swarm.run(budget=)`` as middleware (graph/features/budget.py's ``BudgetMiddleware``), and
the swarm's one extension hook it uses, ``before_handoff`` (graph/core/middleware.py).

What a budget does is checked in tests/test_control.py, test_parallel.py, test_guardrails.py,
test_native_members.py and test_tracing.py; here: how it attaches (only when asked for, as
middleware of the run, with the core naming no budget) and how it meets the one handoff hook
(``before_handoff(handoff)``): asked last, about a switch that happens, a fan-out once with
every branch (on ``Swarm.run`` and on the compiled graph). The hook on its own:
tests/test_handoff_hook.py."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from swarmgraph.graph.core.handoffs import Handoff, HandTo
from swarmgraph.graph.features.budget import BudgetMiddleware
from swarmgraph.graph.prepared_run import RunRequest

from swarmgraph import (
    Agent,
    Budget,
    BudgetExceeded,
    Parallel,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)

ROOT = Path(__file__).resolve().parents[1]
USER = [{"role": "user", "content": "go"}]


def two_agents() -> tuple[Agent, Agent]:
    sales = Agent(name="Sales")
    return Agent(name="Triage", handoffs=[sales]), sales


def to_sales() -> ScriptedChatModel:
    return ScriptedChatModel([scripted_tool_call("transfer_to_sales", id="t1"), "Bees."])


class Door(AgentMiddleware):
    """A ``before_handoff`` hook (graph/core/handoffs.py's ``Handoff``) that records what it
    is asked and answers with the next of ``verdicts`` (then lets everything through)."""

    def __init__(self, *verdicts: Any) -> None:
        super().__init__()
        self.verdicts = list(verdicts)
        self.seen: list[Handoff] = []

    def before_handoff(self, handoff: Handoff) -> Any:
        self.seen.append(handoff)
        return self.verdicts.pop(0) if self.verdicts else None


def test_a_plain_run_gets_no_run_middleware_and_a_budget_gets_one_per_agent():
    triage, sales = two_agents()
    swarm = Swarm(chat_model=to_sales())
    plain = swarm._start(RunRequest(triage, USER)).control
    assert plain.middleware is None  # the step asks nothing more of a plain run
    budgeted = swarm._start(RunRequest(triage, USER, budget=Budget(max_handoffs=1))).control
    assert budgeted.middleware is not None
    (mine,) = budgeted.middleware.of(triage)
    assert isinstance(mine, BudgetMiddleware) and mine.agent is triage
    assert budgeted.middleware.of(triage)[0] is mine  # one per agent, for the whole run
    assert budgeted.middleware.of(sales)[0] is not mine


def test_a_budget_stop_at_a_model_call_says_which_middleware_stopped_the_run():
    triage, _ = two_agents()
    model = to_sales()
    with pytest.raises(BudgetExceeded) as caught:
        Swarm(chat_model=model).run(triage, USER, budget=Budget(max_model_calls=1))
    stopped = caught.value.response.stopped
    assert stopped is not None
    assert (stopped["middleware"], stopped["hook"]) == ("BudgetMiddleware", "before_model")
    assert len(model.calls) == 1 and caught.value.response.agent.name == "Sales"


def test_a_budget_refusing_a_handoff_is_the_before_handoff_hook():
    triage, _ = two_agents()
    with pytest.raises(BudgetExceeded) as caught:
        Swarm(chat_model=to_sales()).run(triage, USER, budget=Budget(max_handoffs=0))
    response = caught.value.response
    assert response.stopped is not None and response.stopped["hook"] == "before_handoff"
    assert response.messages[-1]["content"] == f"Error: {caught.value}"
    assert response.agent.name == "Triage"


def test_max_tokens_counts_the_instructions_the_model_would_be_sent():
    """The estimate is of the prompt as sent: a long system prompt passes the limit before
    the first call, where the one-word conversation alone would not."""
    model = ScriptedChatModel(["hi"])
    wordy = Agent(name="Wordy", instructions=lambda context_variables: "Be brief. " * 100)
    with pytest.raises(BudgetExceeded, match="max_tokens=100"):
        Swarm(chat_model=model).run(wordy, USER, budget=Budget(max_tokens=100))
    assert model.calls == []
    response = Swarm(chat_model=ScriptedChatModel(["hi"])).run(
        Agent(name="Terse", instructions="Be brief."), USER, budget=Budget(max_tokens=100)
    )
    assert response.messages[-1]["content"] == "hi"


def test_without_running_tools_a_budget_leaves_the_calls_to_the_caller():
    """``execute_tools=False``: the caller runs the calls, so none is refused."""

    def look() -> str:
        """Look."""
        return "x"

    worker = Agent(name="Worker", functions=[look])
    model = ScriptedChatModel([scripted_tool_calls([("look", {}, "c1"), ("look", {}, "c2")])])
    response = Swarm(chat_model=model).run(
        worker, USER, execute_tools=False, budget=Budget(max_tool_calls=1)
    )
    assert [c["id"] for c in response.messages[-1]["tool_calls"]] == ["c1", "c2"]
    assert response.usage["tool_calls"] == 0


def test_calls_another_middleware_answered_are_not_counted_by_the_budget():
    class AnswersC1(AgentMiddleware):
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            reply = state["messages"][-1]
            if any(c["id"] == "c1" for c in reply.tool_calls):
                return {"messages": [ToolMessage("answered by a hook", tool_call_id="c1")]}
            return None

    ran: list[int] = []

    def note(n: int) -> str:
        """Note a number."""
        ran.append(n)
        return f"noted {n}"

    worker = Agent(name="Worker", functions=[note], middleware=[AnswersC1()])
    calls = scripted_tool_calls([("note", {"n": 1}, "c1"), ("note", {"n": 2}, "c2")])
    model = ScriptedChatModel([calls, "done"])
    response = Swarm(chat_model=model).run(worker, USER, budget=Budget(max_tool_calls=1))
    assert ran == [2] and response.messages[-1]["content"] == "done"


def test_the_budget_is_asked_last_and_only_about_a_switch_that_happens():
    """Sales's own hook refuses the first transfer: the budget (one handoff) is not spent on
    it, and the second transfer goes through. Asked before the door, it would have held its
    one handoff for a switch that never happened."""
    door = Door("Sales opens at nine")
    sales = Agent(name="Sales", model="sales", middleware=[door])
    triage = Agent(name="Triage", model="triage", handoffs=[sales])
    models = {
        "triage": ScriptedChatModel(
            [
                scripted_tool_call("transfer_to_sales", id="t1"),
                scripted_tool_call("transfer_to_sales", id="t2"),
            ]
        ),
        "sales": ScriptedChatModel(["Bees."]),
    }
    swarm = Swarm(chat_model=lambda name: models[name])
    response = swarm.run(triage, USER, budget=Budget(max_handoffs=1))
    assert [h.target.name for h in door.seen] == ["Sales", "Sales"]
    first = next(m for m in response.messages if m.get("tool_call_id") == "t1")
    assert first["content"] == "Error: Sales opens at nine"
    assert response.agent is sales and response.messages[-1]["content"] == "Bees."
    assert response.usage["handoffs"] == 1


def redirected(max_handoffs: int) -> Any:
    """Triage hands off to Sales, whose hook sends the conversation to Humans instead."""
    humans = Agent(name="Humans", model="humans")
    sales = Agent(name="Sales", model="sales", middleware=[Door(HandTo(humans))])
    triage = Agent(name="Triage", model="triage", handoffs=[sales])
    models = {
        "triage": ScriptedChatModel([scripted_tool_call("transfer_to_sales", id="t1")]),
        "humans": ScriptedChatModel(["A human here."]),
    }
    swarm = Swarm(chat_model=lambda name: models[name])
    return swarm.run(triage, USER, budget=Budget(max_handoffs=max_handoffs))


def test_a_redirected_switch_counts_once_against_the_agent_handing_off():
    response = redirected(1)
    assert response.agent.name == "Humans" and response.messages[-1]["content"] == "A human here."
    assert response.usage["by_agent"]["Triage"]["handoffs"] == 1
    with pytest.raises(BudgetExceeded, match="max_handoffs=0") as caught:
        redirected(0)
    assert caught.value.response.agent.name == "Triage"


def fan_out_desk(door: Door) -> tuple[Agent, Agent, dict[str, ScriptedChatModel]]:
    billing = Agent(name="Billing", model="billing")
    tech = Agent(name="Tech", model="tech")
    lead = Agent(name="Lead", model="lead", middleware=[door])

    def ask_both() -> Parallel:
        """Ask billing and tech, then the lead sums up."""
        return Parallel(billing, tech, join=lead)

    desk = Agent(name="Desk", model="desk", functions=[ask_both], middleware=[door])
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both", id="f1")]),
        "billing": ScriptedChatModel(["Billed."]),
        "tech": ScriptedChatModel(["Fixed."]),
        "lead": ScriptedChatModel(["Summed up."]),
    }
    return desk, lead, models


def test_a_fan_out_is_one_handoff_per_branch_asked_once_of_the_agent_fanning_out():
    """The fan-out's ``Handoff`` (``way="fan_out"``) carries every branch's agent; the join
    into ``Parallel(join=)``'s agent is a switch too (``way="join"``)."""
    door = Door()
    desk, lead, models = fan_out_desk(door)
    swarm = Swarm(chat_model=lambda name: models[name])
    response = swarm.run(desk, USER, budget=Budget(max_handoffs=3))
    assert response.agent is lead and response.messages[-1]["content"] == "Summed up."
    ways = [(h.way, h.source.name, h.target.name, [b.name for b in h.branches]) for h in door.seen]
    assert ways == [
        ("fan_out", "Desk", "Desk", ["Billing", "Tech"]),
        ("join", "Desk", "Lead", []),
    ]
    assert response.usage["handoffs"] == 3
    # two branches and the join: one handoff short, the join is refused and the run stops
    door2 = Door()
    desk, _, models = fan_out_desk(door2)
    with pytest.raises(BudgetExceeded, match="max_handoffs=2") as caught:
        Swarm(chat_model=lambda name: models[name]).run(desk, USER, budget=Budget(max_handoffs=2))
    assert caught.value.response.agent is desk and models["lead"].calls == []
    assert [b["status"] for b in caught.value.response.branches] == ["answered", "answered"]


def test_a_fan_out_refused_by_a_hook_starts_no_branch_on_the_compiled_graph_too():
    door = Door("no fan-outs today")
    desk, _, models = fan_out_desk(door)
    models["desk"] = ScriptedChatModel([scripted_tool_call("ask_both", id="f1"), "Alone then."])
    response = Swarm(chat_model=lambda name: models[name]).run(desk, USER)
    answer = next(m for m in response.messages if m.get("tool_call_id") == "f1")
    assert answer["content"] == "Error: no fan-outs today" and response.branches == []
    assert models["billing"].calls == [] and response.messages[-1]["content"] == "Alone then."

    door = Door("no fan-outs today")
    desk, _, models = fan_out_desk(door)
    models["desk"] = ScriptedChatModel([scripted_tool_call("ask_both", id="f1"), "Alone then."])
    app = build_swarm_graph([desk], chat_model=lambda name: models[name]).compile()
    state = app.invoke({"messages": [("user", "go")]})
    answer = next(m for m in state["messages"] if getattr(m, "tool_call_id", None) == "f1")
    assert answer.content == "Error: no fan-outs today" and models["billing"].calls == []
    assert [h.way for h in door.seen] == ["fan_out"]


def test_the_core_names_no_budget():
    """graph/core/ asks no budget by name: the feature attaches as middleware (its names may
    appear in the core's comments and docstrings, never in its code)."""
    feature_names = {"Budget", "Ledger", "budget", "tool_allowance", "BudgetMiddleware"}
    found = []
    for path in sorted((ROOT / "graph" / "core").glob("*.py")):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        found += [
            f"{path.name}:{t.start[0]} {t.string}"
            for t in tokens
            if t.type == tokenize.NAME and t.string in feature_names
        ]
    assert found == []
