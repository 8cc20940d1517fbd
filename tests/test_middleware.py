"""LangChain 1.x AgentMiddleware on a swarm agent (graph/core/middleware.py): LangChain's built-ins
and decorators, each on ``Swarm.run`` and on the compiled graph, each checked by what it does
(a test here fails when the middleware is ignored)."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
    after_agent,
    before_agent,
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.decisions import BaseDecisionModel, ClassifierResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls
from typing_extensions import NotRequired

from swarmgraph import (
    Agent,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    function_to_json,
    scripted_tool_call,
)

HI = [{"role": "user", "content": "hi"}]


def _both(agent: Agent, model: ScriptedChatModel, messages=HI, **swarm: Any):
    """The same agent run by ``Swarm.run`` and by the compiled graph (fresh models, same
    script): ``(response, final graph state)``."""
    script = list(model.responses)  # type: ignore[attr-defined]
    response = Swarm(chat_model=ScriptedChatModel(script), **swarm).run(agent, messages)
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel(script), **swarm).compile()
    state = graph.invoke({"messages": messages})
    return response, state


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def tool(self, order: int) -> str:
        self.calls += 1
        return f"refunded {order}"


def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded {order}"


# -- the call limits ------------------------------------------------------------------------
def test_model_call_limit_ends_the_run_on_both_paths():
    script = [scripted_tool_call("refund", {"order": 1}), "Done."]
    agent = Agent(functions=[refund], middleware=[ModelCallLimitMiddleware(run_limit=1)])
    response, state = _both(agent, ScriptedChatModel(script))
    assert "limit" in response.messages[-1]["content"].lower()
    assert response.messages[-1]["sender"] == "Agent"
    assert response.stopped is not None and response.stopped["hook"] == "before_model"
    assert "Done." not in [m["content"] for m in response.messages]
    assert "limit" in state["messages"][-1].content.lower()
    # ignored, the model would have answered
    plain = Swarm(chat_model=ScriptedChatModel(script)).run(Agent(functions=[refund]), HI)
    assert plain.messages[-1]["content"] == "Done." and plain.stopped is None


def test_model_call_limit_counts_a_thread_across_invocations_and_a_run_per_invocation():
    agent = Agent(middleware=[ModelCallLimitMiddleware(thread_limit=2, run_limit=1)])
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel(["one", "two", "three"]))
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    said = [
        app.invoke({"messages": [("user", str(i))]}, config)["messages"][-1].content
        for i in range(3)
    ]
    assert said[:2] == ["one", "two"]  # the run limit starts afresh in each invocation
    assert "thread limit (2/2)" in said[2]  # the thread limit is checkpointed


def test_model_call_limit_async():
    agent = Agent(middleware=[ModelCallLimitMiddleware(run_limit=1)])
    script = [scripted_tool_call("refund", {"order": 1}), "Done."]
    agent = Agent(functions=[refund], middleware=[ModelCallLimitMiddleware(run_limit=1)])
    response = asyncio.run(Swarm(chat_model=ScriptedChatModel(script)).arun(agent, HI))
    assert "limit" in response.messages[-1]["content"].lower()


def test_tool_call_limit_refuses_the_call_past_the_limit_and_the_run_goes_on():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    script = [scripted_tool_calls([("refund", {"order": 1}), ("refund", {"order": 2})]), "Done."]
    limit = ToolCallLimitMiddleware(tool_name="refund", run_limit=1, exit_behavior="continue")
    agent = Agent(functions=[refund], middleware=[limit])
    response = Swarm(chat_model=ScriptedChatModel(script)).run(agent, HI)
    first, second = (c["id"] for c in response.messages[0]["tool_calls"])
    answers = {m["tool_call_id"]: m["content"] for m in response.messages if m["role"] == "tool"}
    assert answers[first] == "refunded 1" and "limit" in answers[second].lower()
    assert counter.calls == 1 and response.messages[-1]["content"] == "Done."
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel(script)).compile()
    state = graph.invoke({"messages": HI})
    assert counter.calls == 2  # one more call, on the graph
    tools = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(tools) == 2 and sorted(t.tool_call_id for t in tools) == sorted(
        c["id"] for c in state["messages"][1].tool_calls
    )


def test_tool_call_limit_end_stops_the_run_with_every_call_answered():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    script = [scripted_tool_calls([("refund", {"order": 1}), ("refund", {"order": 2})]), "Done."]
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[refund], middleware=[limit]), HI
    )
    assert counter.calls == 0
    assert sum(m["role"] == "tool" for m in response.messages) == 2
    assert response.stopped is not None and response.stopped["hook"] == "after_model"


# -- input and output checks -------------------------------------------------------------------
def test_pii_middleware_redacts_what_the_model_reads_on_both_paths():
    messages = [{"role": "user", "content": "mail me at ming@example.com"}]
    pii = PIIMiddleware("email", strategy="redact", apply_to_input=True)
    for run in ("swarm", "graph"):
        model = ScriptedChatModel(["Sure."])
        agent = Agent(middleware=[pii])
        if run == "swarm":
            Swarm(chat_model=model).run(agent, messages)
        else:
            build_swarm_graph([agent], chat_model=model).compile().invoke({"messages": messages})
        seen = model.calls[0][-1].content
        assert "ming@example.com" not in seen and "REDACTED" in seen.upper(), run


# -- retries ----------------------------------------------------------------------------------
def test_model_retry_calls_the_model_again_after_an_error():
    script = [RuntimeError("overloaded"), "Hello."]
    retry = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    response, state = _both(Agent(middleware=[retry]), ScriptedChatModel(script))
    assert response.messages[-1]["content"] == "Hello."
    assert state["messages"][-1].content == "Hello."
    with pytest.raises(Exception, match="overloaded"):  # without it the error stops the run
        Swarm(chat_model=ScriptedChatModel(script)).run(Agent(), HI)


def test_tool_retry_runs_a_failing_tool_again():
    tries: list[int] = []

    def flaky(order: int) -> str:
        tries.append(order)
        if len(tries) % 2:
            raise ConnectionError("try again")
        return f"refunded {order}"

    script = [scripted_tool_call("flaky", {"order": 3}), "Done."]
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    response, state = _both(Agent(functions=[flaky], middleware=[retry]), ScriptedChatModel(script))
    assert response.messages[1]["content"] == "refunded 3"
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == ["refunded 3"]
    assert len(tries) == 4
    plain = Swarm(chat_model=ScriptedChatModel(script)).run(Agent(functions=[flaky]), HI)
    assert plain.messages[1]["content"].startswith("Error: flaky raised ConnectionError")


def test_a_tool_that_still_fails_after_retries_is_answered_with_the_error():
    def broken() -> str:
        raise ValueError("no")

    script = [scripted_tool_call("broken"), "Done."]
    retry = ToolRetryMiddleware(max_retries=1, initial_delay=0, jitter=False, on_failure="error")
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[broken], middleware=[retry]), HI
    )
    assert response.messages[1]["content"].startswith("Error: broken raised ValueError: no")
    assert response.messages[-1]["content"] == "Done."


# -- history ------------------------------------------------------------------------------------
def test_summarization_replaces_old_messages_with_a_summary():
    history = []
    for i in range(6):
        history += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    history.append({"role": "user", "content": "last question"})
    summarizer = ScriptedChatModel(["SUMMARY: six questions"])
    summary = SummarizationMiddleware(
        model=summarizer, trigger=("messages", 8), keep=("messages", 3)
    )
    model = ScriptedChatModel(["Final."])
    response = Swarm(chat_model=model).run(Agent(middleware=[summary]), history)
    sent = model.calls[0]
    assert any("SUMMARY: six questions" in str(m.content) for m in sent)
    assert len(sent) < len(history)  # the old turns are not sent again
    assert [m["content"] for m in response.messages] == ["Final."]
    model = ScriptedChatModel(["Final."])
    graph = build_swarm_graph([Agent(middleware=[summary])], chat_model=model).compile()
    summarizer.responses.append("SUMMARY: six questions")  # type: ignore[attr-defined]
    state = graph.invoke({"messages": history})
    assert len(state["messages"]) < len(history)
    assert state["messages"][-1].content == "Final."


# -- human in the loop -------------------------------------------------------------------------
def test_human_in_the_loop_interrupts_the_compiled_graph_and_resumes_without_asking_again():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 7}), "Refunded."])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"refund": True})
    graph = build_swarm_graph([Agent(functions=[refund], middleware=[hitl])], chat_model=model)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    paused = app.invoke({"messages": HI}, config)
    (question,) = paused["__interrupt__"]
    assert question.value["action_requests"][0]["name"] == "refund"
    assert counter.calls == 0
    done = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert counter.calls == 1 and done["messages"][-1].content == "Refunded."
    assert len(model.calls) == 2  # the model was not asked again on resume


def test_human_in_the_loop_reject_answers_the_call_without_running_it():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 7}), "Not refunded."])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"refund": True})
    graph = build_swarm_graph([Agent(functions=[refund], middleware=[hitl])], chat_model=model)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "reject"}}
    app.invoke({"messages": HI}, config)
    done = app.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "too much"}]}), config
    )
    assert counter.calls == 0
    tool = next(m for m in done["messages"] if isinstance(m, ToolMessage))
    assert "too much" in tool.content
    assert done["messages"][-1].content == "Not refunded."


def test_human_in_the_loop_edit_may_send_the_call_to_another_tool():
    # The reviewer's edit names another of the agent's tools: LangChain looks it up in
    # request.runtime.tools (before, our request's runtime had none) and the step runs it.
    ran: list[tuple[Any, ...]] = []

    def refund(order: int) -> str:
        """Refund an order."""
        ran.append(("refund", order))
        return f"refunded {order}"

    def store_credit(order: int, amount: int) -> str:
        """Give store credit for an order."""
        ran.append(("store_credit", order, amount))
        return f"credit {amount} for {order}"

    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 7}), "Done."])
    decisions = {"allowed_decisions": ["approve", "edit", "reject"]}
    hitl = HumanInTheLoopMiddleware(interrupt_on={"refund": decisions})
    agent = Agent(functions=[refund, store_credit], middleware=[hitl])
    app = build_swarm_graph([agent], chat_model=model).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "edit"}}
    app.invoke({"messages": HI}, config)
    edit = {"name": "store_credit", "args": {"order": 7, "amount": 20}}
    done = app.invoke(
        Command(resume={"decisions": [{"type": "edit", "edited_action": edit}]}), config
    )
    assert ran == [("store_credit", 7, 20)]
    answer = next(m for m in done["messages"] if isinstance(m, ToolMessage))
    assert answer.name == "store_credit" and "credit 20 for 7" in answer.content
    assert done["messages"][-1].content == "Done."


# -- decorators, state and the run's own middleware ---------------------------------------------
def test_dynamic_prompt_replaces_the_system_prompt_the_model_reads():
    @dynamic_prompt
    def terse(request) -> str:
        return f"Be terse. ({len(request.messages)} messages)"

    model = ScriptedChatModel(["Ok."])
    Swarm(chat_model=model).run(Agent(instructions="Be verbose.", middleware=[terse]), HI)
    assert model.calls[0][0] == SystemMessage("Be terse. (1 messages)")


def test_wrap_tool_call_can_answer_without_running_the_tool():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    @wrap_tool_call
    def deny(request, handler):
        return ToolMessage(content="denied by policy", tool_call_id=request.tool_call["id"])

    script = [scripted_tool_call("refund", {"order": 1}), "Ok."]
    response, state = _both(Agent(functions=[refund], middleware=[deny]), ScriptedChatModel(script))
    assert counter.calls == 0
    assert response.messages[1]["content"] == "denied by policy"
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["denied by policy"]


def test_a_wrapped_calls_answer_is_booked_once_without_the_tools_raw_value():
    """The answer a hook gives back as the handler made it is booked once, without the
    tool's raw return value (here an Agent: a handoff), so a checkpointer saves the state;
    the message the hook holds keeps its artifact."""
    seen: list[ToolMessage] = []
    sales = Agent(name="Sales")

    def transfer_to_sales():
        return sales

    @wrap_tool_call
    def keep(request, handler):
        answer = handler(request)
        assert answer.artifact is sales  # the hooks read the raw value (tracing does)
        seen.append(answer)
        return answer

    script = [scripted_tool_call("transfer_to_sales", {}), "Sales here."]
    agent = Agent(functions=[transfer_to_sales], middleware=[keep])
    app = build_swarm_graph([agent, sales], chat_model=ScriptedChatModel(script)).compile(
        checkpointer=InMemorySaver()
    )
    state = app.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}})
    booked = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in booked] == ['{"assistant": "Sales"}']
    assert booked[0].artifact is None and booked[0].tool_call_id == seen[0].tool_call_id
    assert seen[0].artifact is sales  # the hook's own message is not changed under it
    assert state["active_agent"] == "Sales"


def test_an_answer_a_hook_edits_in_place_is_what_the_model_reads():
    """A ``wrap_tool_call`` that changes the handler's message itself (``answer.content =``)
    and returns it: the model reads the edited text, as LangChain's ToolNode would keep it."""

    @wrap_tool_call
    def redact(request, handler):
        answer = handler(request)
        answer.content = answer.content.replace("7", "#")
        return answer

    script = [scripted_tool_call("refund", {"order": 7}), "Ok."]
    response, state = _both(
        Agent(functions=[refund], middleware=[redact]), ScriptedChatModel(script)
    )
    assert response.messages[1]["content"] == "refunded #"
    answers = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["refunded #"]


def test_wrap_tool_call_edited_arguments_are_checked_like_the_models():
    @wrap_tool_call
    def garble(request, handler):
        return handler(request.override(tool_call={**request.tool_call, "args": {"order": "x"}}))

    script = [scripted_tool_call("refund", {"order": 1}), "Ok."]
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[refund], middleware=[garble]), HI
    )
    assert response.messages[1]["content"].startswith("Error:")


class VisitState(AgentState):
    visits: NotRequired[list[str]]


class Visits(AgentMiddleware):
    """Records each agent's entering and leaving in its own state field."""

    state_schema = VisitState

    def before_agent(self, state, runtime):
        return {"visits": [*state.get("visits", []), "in"]}

    def after_agent(self, state, runtime):
        return {"visits": [*state.get("visits", []), "out"]}


def test_a_middlewares_state_schema_joins_the_graph_state_and_before_after_agent_follow_handoffs():
    sales = Agent(name="Sales", middleware=[Visits()])

    def to_sales():
        return sales

    triage = Agent(name="Triage", functions=[to_sales], middleware=[Visits()])
    model = ScriptedChatModel([scripted_tool_call("to_sales"), "Sales here."])
    state = build_swarm_graph([triage], chat_model=model).compile().invoke({"messages": HI})
    # Triage enters and leaves (handoff), Sales enters and leaves (the run ends on it)
    assert state["visits"] == ["in", "out", "in", "out"]
    assert state["messages"][-1].content == "Sales here."


def test_swarm_level_middleware_runs_for_every_agent_and_before_agent_once_per_run():
    seen: list[str] = []

    @before_model
    def note(state, runtime):
        seen.append(f"model:{len(state['messages'])}")

    @before_agent
    def start(state, runtime):
        seen.append("start")

    @after_agent
    def end(state, runtime):
        seen.append("end")

    sales = Agent(name="Sales")

    def to_sales():
        return sales

    model = ScriptedChatModel([scripted_tool_call("to_sales"), "Sales here."])
    Swarm(chat_model=model, middleware=[note, start, end]).run(
        Agent(name="Triage", functions=[to_sales]), HI
    )
    assert seen == ["start", "model:1", "model:3", "end"]


def test_after_agent_reads_the_conversation_its_agent_leaves_with_the_last_reply_in_it():
    """As in ``create_agent``, ``after_agent`` reads the state with the agent's last reply (and,
    on a handoff, the transfer's answer), also on a stack with no other hook (it once saw the
    conversation as it stood before the reply)."""
    seen: list[list[tuple[str, Any]]] = []

    @after_agent
    def last(state, runtime):
        seen.append([(m.type, m.content) for m in state["messages"][-2:]])

    _both(Agent(middleware=[last]), ScriptedChatModel(["Done."]))  # Swarm.run, then the graph
    assert seen == [[("human", "hi"), ("ai", "Done.")]] * 2
    seen.clear()
    Swarm(chat_model=ScriptedChatModel(["Done."]), middleware=[last]).run(Agent(), HI)
    assert seen == [[("human", "hi"), ("ai", "Done.")]]
    seen.clear()
    sales = Agent(name="Sales")

    def to_sales():
        return sales

    model = ScriptedChatModel([scripted_tool_call("to_sales"), "Sales here."])
    Swarm(chat_model=model).run(Agent(name="Triage", functions=[to_sales], middleware=[last]), HI)
    assert seen == [[("ai", ""), ("tool", '{"assistant": "Sales"}')]]


def test_middleware_must_be_agent_middleware():
    with pytest.raises(TypeError, match="AgentMiddleware"):
        Agent(middleware=[lambda state, runtime: None])
    with pytest.raises(TypeError, match="AgentMiddleware"):
        Swarm(middleware=[object()])


def test_a_before_model_hook_that_adds_a_message_is_seen_by_the_model_and_kept():
    @before_model
    def remind(state, runtime):
        if not any(m.content == "Reminder" for m in state["messages"]):
            return {"messages": [HumanMessage("Reminder")]}
        return None

    model = ScriptedChatModel(["Ok."])
    response = Swarm(chat_model=model).run(Agent(middleware=[remind]), HI)
    assert [m.content for m in model.calls[0][1:]] == ["hi", "Reminder"]
    assert [m["content"] for m in response.messages] == ["Reminder", "Ok."]
    assert isinstance(model.calls[0][0], SystemMessage)
    assert not isinstance(response.messages[-1], AIMessage)


def test_human_in_the_loop_under_swarm_run_stops_and_says_why():
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 7}), "Refunded."])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"refund": True})
    response = Swarm(chat_model=model).run(Agent(functions=[refund], middleware=[hitl]), HI)
    assert counter.calls == 0 and len(model.calls) == 1
    assert response.stopped is not None
    assert response.stopped["middleware"] == "HumanInTheLoopMiddleware"
    assert "refund" in response.stopped["reason"]
    assert response.messages[0]["tool_calls"][0]["function"]["name"] == "refund"
    # every call is answered, so the history can be sent to a model again
    assert response.messages[-1]["role"] == "tool"
    assert "not run" in response.messages[-1]["content"]


# -- the rate limit docs/internals.md walks (graph/features/rate_limit.py)
# --------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_refuses_the_third_call_in_the_window_and_admits_after_it():
    from swarmgraph.graph.features.rate_limit import RateLimitMiddleware

    clock = Clock()
    counter = Counter()

    def refund(order: int) -> str:
        return counter.tool(order)

    limit = RateLimitMiddleware(max_calls=2, window=10.0, clock=clock)
    agent = Agent(name="Billing", functions=[refund], middleware=[limit])
    calls = [scripted_tool_call("refund", {"order": n}) for n in (1, 2, 3)]
    response = Swarm(chat_model=ScriptedChatModel([*calls, "Done."])).run(agent, HI)
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers[:2] == ["refunded 1", "refunded 2"] and "rate limit" in answers[2]
    assert counter.calls == 2 and response.messages[-1]["content"] == "Done."
    clock.now = 10.5  # the window has passed: the same agent may call again, on the graph too
    graph = build_swarm_graph([agent], chat_model=ScriptedChatModel([calls[0], "Done."]))
    state = graph.compile().invoke({"messages": HI})
    assert counter.calls == 3 and state["messages"][2].content == "refunded 1"


def test_rate_limit_is_per_agent_and_can_stop_the_run():
    from swarmgraph.graph.features.rate_limit import RateLimitMiddleware

    clock = Clock()
    limit = RateLimitMiddleware(max_calls=1, window=10.0, clock=clock, exit_behavior="end")
    script = [scripted_tool_calls([("refund", {"order": 1}), ("refund", {"order": 2})]), "Done."]
    agent = Agent(name="Billing", functions=[refund], middleware=[limit])
    response = Swarm(chat_model=ScriptedChatModel(script)).run(agent, HI)
    assert response.stopped is not None and "rate limit" in response.stopped["reason"]
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers == [answers[0]] * 2 and answers[0].startswith("Error: rate limit")
    one = [scripted_tool_call("refund", {"order": 1}), "Done."]
    other = Agent(name="Sales", functions=[refund], middleware=[limit])  # its own count
    assert Swarm(chat_model=ScriptedChatModel(one)).run(other, HI).messages[1]["content"] == (
        "refunded 1"
    )
    again = Swarm(chat_model=ScriptedChatModel(one)).run(other, HI)
    assert again.stopped is not None  # Sales' second call in the window: over its limit
    # the batch that stopped Billing's run ran nothing, so it was not counted either
    assert Swarm(chat_model=ScriptedChatModel(one)).run(agent, HI).messages[1]["content"] == (
        "refunded 1"
    )


# -- more built-ins: what docs/middleware.md lists as working ---------------------------------
def test_model_fallback_answers_with_the_fallback_model_and_the_agents_tools():
    from langchain.agents.middleware import ModelFallbackMiddleware

    fallback = ScriptedChatModel([scripted_tool_call("refund", {"order": 2}), "Fallback done."])
    middleware = ModelFallbackMiddleware(fallback)
    script = [RuntimeError("primary down"), RuntimeError("primary down")]
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[refund], middleware=[middleware]), HI
    )
    assert [m["content"] for m in response.messages][1:] == ["refunded 2", "Fallback done."]
    assert fallback.bound_tools[-1][0]["function"]["name"] == "refund"  # bound on the fallback


def test_context_editing_clears_old_tool_results_from_what_the_model_reads():
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

    edit = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=1, keep=0)])
    model = ScriptedChatModel([scripted_tool_call("refund", {"order": 1}), "Done."])
    Swarm(chat_model=model).run(Agent(functions=[refund], middleware=[edit]), HI)
    second = model.calls[1]
    answer = next(m for m in second if isinstance(m, ToolMessage))
    assert answer.content != "refunded 1"  # cleared before the model read it again


def test_tool_error_middleware_words_the_answer_of_a_failing_tool():
    from langchain.agents.middleware import ToolErrorMiddleware

    def broken() -> str:
        raise ValueError("no stock")

    middleware = ToolErrorMiddleware(on_error=lambda error, request: f"sorry: {error}")
    response, state = _both(
        Agent(functions=[broken], middleware=[middleware]),
        ScriptedChatModel([scripted_tool_call("broken"), "Ok."]),
    )
    assert response.messages[1]["content"] == "sorry: no stock"
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == [
        "sorry: no stock"
    ]


def test_llm_tool_emulator_answers_calls_without_running_the_tool():
    from langchain.agents.middleware import LLMToolEmulator

    counter = Counter()

    def refund(order: int) -> str:
        """Refund an order."""
        return counter.tool(order)

    emulator = LLMToolEmulator(model=ScriptedChatModel(["emulated: refunded 1"]))
    script = [scripted_tool_call("refund", {"order": 1}), "Done."]
    response = Swarm(chat_model=ScriptedChatModel(script)).run(
        Agent(functions=[refund], middleware=[emulator]), HI
    )
    assert counter.calls == 0 and response.messages[1]["content"] == "emulated: refunded 1"


def weather(city: str) -> str:
    """Weather in a city."""
    return f"sunny in {city}"


def _bound(model: ScriptedChatModel) -> list[list[str]]:
    """The tool names bound at each of ``model``'s calls."""
    return [[t["function"]["name"] for t in tools or []] for tools in model.bound_tools]


def test_a_wrap_model_call_that_picks_tools_by_name_binds_only_those():
    # LangChain's pattern for dynamic tools: request.tools are BaseTools, filtered by .name.
    # Before, they were OpenAI dicts here, and `t.name` raised AttributeError.
    @wrap_model_call
    def only_weather(request, handler):
        return handler(request.override(tools=[t for t in request.tools if t.name == "weather"]))

    agent = Agent(functions=[refund, weather], middleware=[only_weather])
    script = [scripted_tool_call("weather", {"city": "Oslo"}), "Sunny."]
    for run in ("swarm", "graph"):
        model = ScriptedChatModel(script)
        if run == "swarm":
            answered = Swarm(chat_model=model).run(agent, HI).messages[1]["content"]
        else:
            state = build_swarm_graph([agent], chat_model=model).compile().invoke({"messages": HI})
            answered = state["messages"][2].content
        assert answered == "sunny in Oslo"
        assert _bound(model) == [["weather"], ["weather"]], run
        # what is bound is the schema the model is told without the hook
        assert model.bound_tools[0] == [function_to_json(weather)]


def test_a_wrap_tool_call_that_renames_the_call_runs_the_tool_it_names():
    # HumanInTheLoopMiddleware's edit may name another tool (request.override(tool_call=...,
    # tool=...)); before, the step ran the call's first tool with the new arguments.
    counter = Counter()

    def refund_order(order: int) -> str:
        """Refund an order."""
        return counter.tool(order)

    @wrap_tool_call
    def to_weather(request, handler):
        call = {
            **request.tool_call,
            "name": request.tool_call["args"]["to"],
            "args": {"city": "Oslo"},
        }
        return handler(request.override(tool_call=call))

    agent = Agent(functions=[refund_order, weather], middleware=[to_weather])
    cases = [
        ("weather", "sunny in Oslo", "weather"),  # the answer names the tool that ran
        ("nope", "Error: Tool nope not found.", "refund_order"),  # nothing ran: the model's call
    ]
    for to, expected, named in cases:
        script = [scripted_tool_call("refund_order", {"order": 1, "to": to}), "Done."]
        response = Swarm(chat_model=ScriptedChatModel(script)).run(agent, HI)
        assert (response.messages[1]["content"], response.messages[1]["tool_name"]) == (
            expected,
            named,
        )
    assert counter.calls == 0


def test_llm_tool_selector_binds_only_the_tools_its_model_picks():
    from langchain.agents.middleware import LLMToolSelectorMiddleware

    pick = scripted_tool_call("ToolSelectionResponse", {"tools": ["weather"]})
    selector = ScriptedChatModel([pick, pick])  # asked before each model call
    main = ScriptedChatModel([scripted_tool_call("weather", {"city": "Oslo"}), "Sunny."])
    middleware = LLMToolSelectorMiddleware(model=selector, max_tools=1)
    response = Swarm(chat_model=main).run(
        Agent(functions=[refund, weather], middleware=[middleware]), HI
    )
    assert response.messages[1]["content"] == "sunny in Oslo"
    assert _bound(main) == [["weather"], ["weather"]]
    # what the selector chose from: every tool of the agent, by name and description
    offered = selector.bound_tools[0][0]["function"]["parameters"]["properties"]["tools"]
    assert [c["const"] for c in offered["items"]["anyOf"]] == ["refund", "weather"]


def test_todo_list_middleware_keeps_its_todos_in_the_graph_state():
    from langchain.agents.middleware import TodoListMiddleware

    todos = [{"content": "call Ming", "status": "pending"}]
    script = [scripted_tool_call("write_todos", {"todos": todos}), "Planned."]
    agent = Agent(name="Planner", middleware=[TodoListMiddleware()])
    response, state = _both(agent, ScriptedChatModel(script))
    assert state["todos"] == todos  # its tool's Command(update=...) wrote them
    for answer in (response.messages[1]["content"], state["messages"][2].content):
        assert answer == f"Updated todo list to {todos}"
    model = ScriptedChatModel(script)
    build_swarm_graph([agent], chat_model=model).compile().invoke({"messages": HI})
    assert "write_todos" in str(model.calls[0][0].content)  # its wrap_model_call's prompt


class ScriptedDecisions(BaseDecisionModel):
    """An offline stand-in for a decision model (LangChain's ``BaseDecisionModel``): it gives
    the answers it was handed, in order, and keeps the questions it was asked."""

    model: str = "scripted"
    answers: list[dict[str, Any]]
    asked: list[Any] = Field(default_factory=list)

    @property
    def _provider(self) -> str:
        return "scripted"

    def _classify(self, state: Any, questions: dict[str, Any]) -> ClassifierResponse:
        (question,) = questions
        self.asked.append(state)
        return ClassifierResponse(model=self.model, answers={question: self.answers.pop(0)})


def test_model_router_answers_with_the_model_its_classifier_picks():
    from langchain.agents.middleware import ModelChoice, ModelRouterMiddleware

    pick = {"type": "choice", "choice": "deep", "probabilities": {"quick": 0.2, "deep": 0.8}}
    for run in ("swarm", "graph"):
        quick, deep = ScriptedChatModel(["quick answer"]), ScriptedChatModel(["deep answer"])
        with warnings.catch_warnings():  # LangChain's beta warning, once per process
            warnings.simplefilter("ignore")
            router = ModelRouterMiddleware(
                choices={
                    "quick": ModelChoice(model=quick, criteria="simple questions"),
                    "deep": ModelChoice(model=deep, criteria="hard questions"),
                },
                instructions="Pick the model.",
                classifier=ScriptedDecisions(answers=[{**pick, "confidence": 0.8}]),
            )
        agent = Agent(middleware=[router])
        own = ScriptedChatModel(["the agent's own model"])
        if run == "swarm":
            answer = Swarm(chat_model=own).run(agent, HI).messages[-1]["content"]
        else:
            graph = build_swarm_graph([agent], chat_model=own).compile()
            state = graph.invoke({"messages": HI})
            answer = state["messages"][-1].content
            assert state["model_route"].choice == "deep"  # its state_schema key, kept
        assert answer == "deep answer" and quick.calls == [] and own.calls == [], run


def test_auto_mode_blocks_a_call_its_classifier_finds_risky_without_running_it():
    from langchain.agents.middleware import AutoModeMiddleware

    counter = Counter()

    @tool
    def delete_order(order: int) -> str:
        """Delete an order for good."""
        return counter.tool(order)

    risky = ScriptedDecisions(answers=[{"type": "noul", "noul": 0.9}])
    agent = Agent(
        functions=[delete_order],
        middleware=[AutoModeMiddleware(tools=[delete_order], classifier=risky)],
    )
    script = [scripted_tool_call("delete_order", {"order": 7}), "Not done."]
    response = Swarm(chat_model=ScriptedChatModel(script)).run(agent, HI)
    assert counter.calls == 0
    assert "was blocked because it was classified as risky" in response.messages[1]["content"]
    assert risky.asked[0]["tool_description"] == "Delete an order for good."  # request.tool's


def test_model_refusal_hands_a_refusal_to_the_fallback_model():
    from langchain.agents.middleware import ModelFallbackMiddleware, ModelRefusalMiddleware
    from langchain_core.exceptions import ModelRefusalError

    refusal = AIMessage(content=[{"type": "refusal", "refusal": "I cannot help with that."}])
    fallback = ScriptedChatModel(["Here is how."])
    agent = Agent(middleware=[ModelFallbackMiddleware(fallback), ModelRefusalMiddleware()])
    response = Swarm(chat_model=ScriptedChatModel([refusal])).run(agent, HI)
    assert [m["content"] for m in response.messages] == ["Here is how."]
    alone = Agent(
        middleware=[ModelRefusalMiddleware()]
    )  # a refusal is an error, as in create_agent
    with pytest.raises(ModelRefusalError, match="I cannot help with that"):
        Swarm(chat_model=ScriptedChatModel([refusal])).run(alone, HI)


def test_shell_tool_runs_each_command_in_the_session_its_before_agent_opened():
    from langchain.agents.middleware import ShellToolMiddleware

    script = [
        scripted_tool_call("shell", {"command": "ANSWER=$((6 * 7))"}),
        scripted_tool_call("shell", {"command": "echo $ANSWER"}),
        "It is 42.",
    ]
    response, state = _both(Agent(middleware=[ShellToolMiddleware()]), ScriptedChatModel(script))
    # one session for the run (the first call ran where its before_agent hook had opened one)
    # and its tool's ToolMessage is the answer the model reads, as from a ToolNode
    assert [m["content"] for m in response.messages if m["role"] == "tool"][1] == "42\n"
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)][1] == "42\n"


def test_file_search_tools_find_files_and_lines_under_their_root(tmp_path):
    from langchain.agents.middleware import FilesystemFileSearchMiddleware

    (tmp_path / "orders.py").write_text("REFUND_LIMIT = 100\n")
    (tmp_path / "notes.txt").write_text("nothing here\n")
    script = [
        scripted_tool_call("glob_search", {"pattern": "*.py"}),
        scripted_tool_call("grep_search", {"pattern": "REFUND_LIMIT"}),
        "Found it.",
    ]
    agent = Agent(middleware=[FilesystemFileSearchMiddleware(root_path=str(tmp_path))])
    response, state = _both(agent, ScriptedChatModel(script))
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers == ["/orders.py", "/orders.py"]
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == answers


# -- calls a decision let through: through wrap_tool_call too ------------------------------------
def test_a_call_approved_on_resume_runs_through_wrap_tool_call():
    """A call held for approval runs in a later step that asks no model (its ``before_step``
    decides it): the agent's ``wrap_tool_call`` hooks see it as they see any call."""
    from langchain.agents.middleware import wrap_tool_call

    from swarmgraph import needs_approval

    seen: list[str] = []

    @wrap_tool_call
    def watch(request, handler):
        seen.append(request.tool_call["name"])
        return handler(request)

    @needs_approval
    def refund(order_id: int) -> str:
        return f"refunded {order_id}"

    model = ScriptedChatModel([scripted_tool_call("refund", {"order_id": 7}, id="r1"), "Done."])
    agent = Agent(name="Desk", functions=[refund], middleware=[watch])
    swarm = Swarm(chat_model=model)
    first = swarm.run(agent, [{"role": "user", "content": "refund 7"}])
    assert [p.id for p in first.pending] == ["r1"] and seen == []
    history = [{"role": "user", "content": "refund 7"}, *first.messages]
    second = swarm.run(agent, history, approvals={"r1": True})
    assert second.messages[0]["content"] == "refunded 7"
    assert seen == ["refund"]


def test_a_runs_own_middleware_stack_is_found_per_agent_and_joins_the_agents_own():
    # RunMiddleware keeps each agent's stack: asked again for the same agent (every step
    # asks), it gives the same stack without asking ``of`` again; another agent gets its own,
    # and an agent's own middleware still joins (inside the run's).
    from swarmgraph.graph.core.middleware import RunMiddleware

    class Watch(AgentMiddleware):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.tag = name

        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    asked: list[str] = []
    made: dict[str, tuple[Watch]] = {}

    def of(agent: Agent) -> tuple[Watch]:
        asked.append(agent.name)
        return made.setdefault(agent.name, (Watch(agent.name),))

    run = RunMiddleware(of)
    a, b = Agent(name="A"), Agent(name="B")
    first = run.stack_for(a, [], [])
    assert first is not None and run.stack_for(a, [], []) is first
    assert [m.tag for m in first.before_model] == ["A"]
    other = run.stack_for(b, [], [])
    assert other is not None and other is not first
    assert [m.tag for m in other.before_model] == ["B"]
    assert asked == ["A", "B"]  # once per agent, however often its steps ask

    own = Watch("own")
    joined = run.stack_for(a, [], [own])
    assert joined is not None and [m.tag for m in joined.before_model] == ["A", "own"]
    assert run.stack_for(a, [], []) is first  # the agent alone still finds its own stack

    nothing = RunMiddleware(lambda agent: ())
    assert nothing.stack_for(a, [], []) is None and nothing.stack_for(a, [], []) is None
