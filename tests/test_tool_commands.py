"""A tool that returns LangGraph's ``Command(update=...)``, as a ``ToolNode`` tool does: the
update's ``ToolMessage`` answers the call, its ``context_variables`` update the context, its
other keys are written to the graph's state (a middleware's ``state_schema`` keys, a
``state_schema=`` of yours). What a step cannot apply is an error the model reads, and nothing
of that call is written (graph/core/tool_calls.py, ``to_result``)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    wrap_tool_call,
)
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from typing_extensions import NotRequired

from swarmgraph import (
    Agent,
    Parallel,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)

HI = [{"role": "user", "content": "I visited the shop"}]


class VisitState(AgentState):
    visits: NotRequired[int]


class Visits(AgentMiddleware):
    """Declares a ``visits`` key in the graph's state, and brings the tool that writes it."""

    state_schema = VisitState


def count_visit(times: int, call: Annotated[str, InjectedToolCallId]) -> Command:
    """Count the customer's visits."""
    return Command(
        update={
            "visits": times,
            "context_variables": {"last_visit": times},
            "messages": [ToolMessage(f"{times} visits", tool_call_id=call)],
        }
    )


def _agent(*functions: Any, middleware: list[Any] | None = None) -> Agent:
    return Agent(
        name="Shop",
        functions=list(functions or [count_visit]),
        middleware=[Visits()] if middleware is None else middleware,
    )


def _run_graph(agent: Agent, script: list[Any]) -> dict[str, Any]:
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel(script))
    return graph.compile(checkpointer=InMemorySaver()).invoke(
        {"messages": HI}, {"configurable": {"thread_id": "t"}}
    )


def _answers(state: dict[str, Any]) -> list[str]:
    return [m.content for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_commands_update_answers_the_call_and_writes_the_state(wrapped: bool) -> None:
    seen: list[str] = []

    @wrap_tool_call
    def watch(request, handler):  # type: ignore[no-untyped-def]
        answer = handler(request)
        seen.append(answer.content)  # what the hooks around read: the Command's answer
        return answer

    middleware = [Visits(), watch] if wrapped else [Visits()]
    state = _run_graph(
        _agent(middleware=middleware), [scripted_tool_call("count_visit", {"times": 3}), "Hi!"]
    )
    assert _answers(state) == ["3 visits"]
    assert state["visits"] == 3
    assert state["context_variables"] == {"last_visit": 3}
    assert seen == (["3 visits"] if wrapped else [])


def test_swarm_run_applies_the_answer_and_the_context() -> None:
    model = ScriptedChatModel([scripted_tool_call("count_visit", {"times": 2}), "Hi!"])
    response = Swarm(chat_model=model).run(_agent(), HI)
    assert response.messages[1]["content"] == "2 visits"
    assert response.context_variables == {"last_visit": 2}


def test_an_async_langchain_tool_may_return_a_command() -> None:
    @tool
    async def visit_later(times: int, call: Annotated[str, InjectedToolCallId]) -> Command:
        """Count a visit, later."""
        return Command(update={"visits": times, "messages": [ToolMessage("ok", tool_call_id=call)]})

    graph = build_swarm_graph(
        [_agent(visit_later)],
        chat_model=ScriptedChatModel([scripted_tool_call("visit_later", {"times": 5}), "."]),
    ).compile()
    state = asyncio.run(graph.ainvoke({"messages": HI}))
    assert _answers(state) == ["ok"] and state["visits"] == 5


def test_a_key_the_graph_has_no_channel_for_is_an_error_and_nothing_is_written() -> None:
    def tag(call: Annotated[str, InjectedToolCallId]) -> Command:
        """Tag the customer."""
        return Command(
            update={
                "tag": "vip",
                "context_variables": {"tagged": True},
                "messages": [ToolMessage("tagged", tool_call_id=call)],
            }
        )

    state = _run_graph(_agent(tag), [scripted_tool_call("tag"), "Hi!"])
    [answer] = _answers(state)
    assert answer.startswith(
        "Error: tag wrote state keys this swarm's graph has no channel for (tag)"
    )
    assert "tag" not in state and state.get("context_variables", {}) == {}


def test_a_key_written_twice_in_one_reply_keeps_the_first_write_and_tells_the_model() -> None:
    reply = scripted_tool_calls([("count_visit", {"times": 1}), ("count_visit", {"times": 2})])
    state = _run_graph(_agent(), [reply, "Hi!"])
    first, second = _answers(state)
    assert first == "1 visits"
    assert second.startswith("Error: count_visit wrote visits, which an earlier call of this reply")
    assert state["visits"] == 1 and state["context_variables"] == {"last_visit": 1}


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (lambda call: Command(update={"visits": 1}), "does not hold exactly one ToolMessage"),
        (
            lambda call: Command(update={"messages": [ToolMessage("x", tool_call_id="other")]}),
            "does not hold exactly one ToolMessage",
        ),
        (
            lambda call: Command(
                update={"active_agent": "Sales", "messages": [ToolMessage("x", tool_call_id=call)]}
            ),
            "writes active_agent without going there",
        ),
        (
            lambda call: Command(
                update={"handoff_trail": [], "messages": [ToolMessage("x", tool_call_id=call)]}
            ),
            "writes handoff_trail, which only the swarm's switch writes",
        ),
        (lambda call: Command(resume="yes"), "goes where a swarm step cannot follow"),
        (lambda call: Command(goto=["Shop", "Shop"]), "goes where a swarm step cannot follow"),
        (
            lambda call: Command(goto="Shop", graph="some_graph"),
            "goes where a swarm step cannot follow",
        ),
    ],
)
def test_a_command_a_step_cannot_apply_is_an_error_the_model_reads(command: Any, says: str) -> None:
    def odd(call: Annotated[str, InjectedToolCallId]) -> Command:
        """Do something odd."""
        return command(call)

    state = _run_graph(_agent(odd), [scripted_tool_call("odd"), "Hi!"])
    [answer] = _answers(state)
    assert answer.startswith("Error: odd returned a LangGraph Command") and says in answer
    assert "visits" not in state and state.get("active_agent") in (None, "Shop")


def test_a_state_write_inside_a_parallel_branch_is_refused_and_said() -> None:
    # A branch's join carries its messages and context back, not other state keys: the write
    # would be lost without a word, so the call is answered with why.
    def specialist(name: str) -> Agent:
        return Agent(name=name, model=name, functions=[count_visit], middleware=[Visits()])

    def note(call: Annotated[str, InjectedToolCallId]) -> Command:
        """Note the visit."""
        return Command(update={"messages": [ToolMessage("noted", tool_call_id=call)]})

    billing, support = specialist("Billing"), specialist("Support")
    support.functions.append(note)
    triage = Agent(name="Triage", model="triage", handoffs=[billing, support])
    both = scripted_tool_calls([("transfer_to_billing", {}), ("transfer_to_support", {})])
    models = {
        "triage": ScriptedChatModel([both, "Both answered."]),
        "Billing": ScriptedChatModel([scripted_tool_call("count_visit", {"times": 1}), "B."]),
        "Support": ScriptedChatModel(
            [
                scripted_tool_calls([("count_visit", {"times": 2}), ("note", {})]),
                "S.",
            ]
        ),
    }
    response = Swarm(chat_model=models.__getitem__, parallel_handoffs="all").run(triage, HI)
    for branch in response.branches:
        answer = branch["messages"][1].get("content")
        assert answer.startswith(
            f"Error: count_visit wrote state keys (visits) inside parallel branch "
            f"'{branch['branch']}', whose join does not carry them back"
        )
    # a Command that writes no state key answers its call in a branch as anywhere
    [support_branch] = [b for b in response.branches if b["branch"] == "Support"]
    assert support_branch["messages"][2].get("content") == "noted"
    assert response.context_variables == {}


class Tally(AgentMiddleware):
    """A ``wrap_tool_call`` that answers with a ``Command``, as LangChain's hooks may: the
    tool's answer, and a count of calls in the graph's state."""

    state_schema = VisitState

    def wrap_tool_call(self, request, handler):  # type: ignore[no-untyped-def]
        answer = handler(request)
        return Command(update={"messages": [answer], "visits": 1})


def test_a_hooks_command_is_applied_as_a_tools_the_tools_result_kept() -> None:
    # Before, str() of the hook's Command reached the model and its update was lost.
    sales = Agent(name="Sales", model="sales")

    def remember_and_transfer(order_id: int) -> Result:
        """Remember the order and hand the customer to sales."""
        return Result(value="to sales", context_variables={"order_id": order_id}, agent=sales)

    shop = Agent(name="Shop", model="shop", functions=[remember_and_transfer], middleware=[Tally()])

    def models() -> Any:
        return {
            "shop": ScriptedChatModel(
                [scripted_tool_call("remember_and_transfer", {"order_id": 7})]
            ),
            "sales": ScriptedChatModel(["Sales here."]),
        }.__getitem__

    graph = build_swarm_graph([shop, sales], chat_model=models())
    app = graph.compile(checkpointer=InMemorySaver())
    state = app.invoke({"messages": HI}, {"configurable": {"thread_id": "t"}})
    assert _answers(state) == ["to sales"]  # the hook's ToolMessage: the tool's own text
    assert state["visits"] == 1  # the hook's key
    assert state["context_variables"] == {"order_id": 7}  # the tool's Result stands
    assert state["active_agent"] == "Sales" and state["messages"][-1].content == "Sales here."
    response = Swarm(chat_model=models()).run(shop, HI)
    assert response.messages[1]["content"] == "to sales" and response.agent.name == "Sales"


def test_a_hook_that_answers_alone_with_a_command_hands_off_and_the_tool_never_runs() -> None:
    ran: list[str] = []

    def refund(order_id: int) -> str:
        """Refund an order."""
        ran.append("refund")
        return "refunded"

    @wrap_tool_call
    def to_a_human(request, handler):  # type: ignore[no-untyped-def]
        answer = ToolMessage("A human takes refunds.", tool_call_id=request.tool_call["id"])
        return Command(goto="Desk", update={"messages": [answer]})

    desk = Agent(name="Desk", model="desk")
    shop = Agent(name="Shop", model="shop", functions=[refund], middleware=[to_a_human])
    models = {
        "shop": ScriptedChatModel([scripted_tool_call("refund", {"order_id": 7})]),
        "desk": ScriptedChatModel(["Desk here."]),
    }
    state = (
        build_swarm_graph([shop, desk], chat_model=models.__getitem__)
        .compile()
        .invoke({"messages": HI})
    )
    assert _answers(state) == ["A human takes refunds."] and ran == []
    assert state["active_agent"] == "Desk" and state["messages"][-1].content == "Desk here."


def test_a_hooks_command_the_step_cannot_apply_is_an_error_the_model_reads() -> None:
    @wrap_tool_call
    def resumes(request, handler):  # type: ignore[no-untyped-def]
        handler(request)
        return Command(resume="yes")

    state = _run_graph(
        _agent(count_visit, middleware=[Visits(), resumes]),
        [scripted_tool_call("count_visit", {"times": 2}), "Hi!"],
    )
    [answer] = _answers(state)
    assert answer.startswith("Error: count_visit returned a LangGraph Command that goes where")
    assert "visits" not in state


class NoteState(AgentState):
    notes: NotRequired[list]


class Noter(AgentMiddleware):
    """Writes a state key from a hook (no tool involved)."""

    state_schema = NoteState

    def before_model(self, state, runtime):  # type: ignore[no-untyped-def]
        return {"notes": [*(state.get("notes") or []), "seen"]}


def test_state_keys_a_branchs_hooks_write_are_said_to_be_dropped_at_the_join() -> None:
    # The join carries a branch's messages and context back, not a middleware's other keys:
    # before, they were dropped without a word.
    import warnings

    from swarmgraph.graph.features.errors import BranchStateWarning

    def fan_out(noting: bool) -> dict[str, Any]:
        billing = Agent(name="Billing", model="billing", middleware=[Noter()] * noting)
        tech = Agent(name="Tech", model="tech")

        def split() -> Parallel:
            """Ask both."""
            return Parallel(billing, tech)

        triage = Agent(name="Triage", model="triage", functions=[split])
        models = {
            "triage": ScriptedChatModel([scripted_tool_call("split"), "All done."]),
            "billing": ScriptedChatModel(["B ok."]),
            "tech": ScriptedChatModel(["T ok."]),
        }
        graph = build_swarm_graph([triage, billing, tech], chat_model=models.__getitem__)
        return graph.compile().invoke({"messages": HI})

    with pytest.warns(BranchStateWarning, match=r"\(Billing: notes\)"):
        state = fan_out(noting=True)
    assert "notes" not in state and state["messages"][-1].content == "All done."
    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchStateWarning)
        fan_out(noting=False)  # a fan-out whose branches write no such key says nothing
