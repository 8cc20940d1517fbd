"""``Swarm.run(budget=)`` as middleware (graph/features/budget.py's ``BudgetMiddleware``), and
the swarm's one extension hook it uses, ``before_handoff`` (graph/core/middleware.py).

What a budget does is checked in tests/test_control.py, test_parallel.py, test_guardrails.py,
test_native_members.py and test_tracing.py; here: how it attaches (only when asked for, as
middleware of the run, with the core naming no budget) and the handoff hook on its own, on
``Swarm.run`` and on the compiled graph."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from swarmgraph.graph.features.budget import BudgetMiddleware
from swarmgraph.graph.prepared_run import RunRequest

from swarmgraph import (
    Agent,
    Budget,
    BudgetExceeded,
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


class NoHandoffsTo(AgentMiddleware):
    """Refuses every handoff to the agent named ``name`` (the extension hook alone)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.target = name
        self.asked: list[tuple[str, list[str]]] = []

    def before_handoff(
        self, agent: Agent, targets: Sequence[Agent], state: Mapping[str, Any]
    ) -> str | None:
        self.asked.append((agent.name, [t.name for t in targets]))
        if any(t.name == self.target for t in targets):
            return f"{agent.name} may not hand off to {self.target}"
        return None


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


def test_the_handoff_hook_refuses_on_swarm_run_and_on_the_compiled_graph():
    triage, _ = two_agents()
    refuse = NoHandoffsTo("Sales")
    response = Swarm(chat_model=to_sales(), middleware=[refuse]).run(triage, USER)
    assert refuse.asked == [("Triage", ["Sales"])]
    assert response.agent.name == "Triage"  # nothing switched
    assert response.messages[-1]["content"] == "Error: Triage may not hand off to Sales"
    assert response.stopped == {
        "middleware": "NoHandoffsTo",
        "hook": "before_handoff",
        "reason": "Triage may not hand off to Sales",
    }

    graph = build_swarm_graph([triage], chat_model=to_sales(), middleware=[refuse]).compile()
    state = graph.invoke({"messages": [("user", "go")]})
    assert state["messages"][-1].content == "Error: Triage may not hand off to Sales"
    assert state.get("active_agent") in (None, "Triage")


def test_a_handoff_the_hook_lets_through_switches_as_usual():
    triage, _ = two_agents()
    watch = NoHandoffsTo("Nobody")
    response = Swarm(chat_model=to_sales()).run(
        Agent(name="Triage", handoffs=triage.handoffs, middleware=[watch]), USER
    )
    assert watch.asked == [("Triage", ["Sales"])]
    assert response.agent.name == "Sales" and response.messages[-1]["content"] == "Bees."
    assert response.stopped is None


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
