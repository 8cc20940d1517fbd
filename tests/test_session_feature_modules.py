"""A steady ``Session`` turn of a program that uses no feature enters none of the feature
modules of memory/ (long-term memory, approvals, fan-out, typed context, recovery of a
stopped or retried turn); a turn that uses one enters its module."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from swarmgraph import Agent, ScriptedChatModel, Session, Swarm, needs_approval

MEMORY = Path(__file__).resolve().parents[1] / "memory"
FEATURES = {
    "long_term_session.py",
    "long_term_turn.py",
    "approval_resume.py",
    "approvals.py",
    "fan_out_resume.py",
    "turn_context.py",
    "turn_recovery.py",
    "conversation.py",
}


def entered(run: Callable[[], Any]) -> set[str]:
    """The memory/ modules (file names) whose functions ``run`` calls."""
    seen: set[str] = set()

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(str(MEMORY)):
            seen.add(Path(frame.f_code.co_filename).name)

    sys.setprofile(profiler)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def handoff_program() -> tuple[Swarm, Agent]:
    sales = Agent(name="Sales", instructions="Sell bees.")

    def transfer_to_sales():
        """Hand the customer to sales."""
        return sales

    def rule(messages):
        if isinstance(messages[-1], HumanMessage):
            call = {"name": "transfer_to_sales", "args": {}, "id": None}
            return AIMessage(content="", tool_calls=[call])
        return "Bees are $5."

    triage = Agent(name="Triage", functions=[transfer_to_sales])
    return Swarm(chat_model=ScriptedChatModel([], respond=rule)), triage


def test_a_steady_turn_without_features_enters_no_feature_module(tmp_path):
    swarm, triage = handoff_program()
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    for i in range(2):  # warm-up: the first turn compiles
        Session(f"warm-{i}", url=url).run(swarm, triage, "I want bees")
    modules = entered(lambda: Session("measured", url=url).run(swarm, triage, "I want bees"))
    assert "session.py" in modules and "turn_write.py" in modules  # the profiler sees memory/
    assert not modules & FEATURES, modules & FEATURES
    # The second turn of the same conversation resumes with Sales, who answers: still none.
    later = entered(lambda: Session("measured", url=url).run(swarm, triage, "and honey?"))
    assert not later & FEATURES, later & FEATURES


def test_each_feature_enters_its_module_when_a_turn_uses_it(tmp_path):
    swarm, triage = handoff_program()
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    Session("warm", url=url).run(swarm, triage, "I want bees")
    with_memory = entered(
        lambda: Session("ltm", url=url, user_id="ming", long_term=True).run(
            swarm, triage, "I want bees"
        )
    )
    assert {"long_term_session.py", "long_term_turn.py"} <= with_memory

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    desk = Agent(name="Desk", functions=[refund])
    call = {"name": "refund", "args": {"order_id": 7}, "id": "call-7"}
    model = ScriptedChatModel([AIMessage(content="", tool_calls=[call]), "Refunded."])
    session = Session("approve", url=url)
    session.run(Swarm(chat_model=model), desk, "refund 7")
    assert [p.id for p in session.pending] == ["call-7"]
    resumed = entered(
        lambda: Session("approve", url=url).run(
            Swarm(chat_model=model), desk, approvals={"call-7": True}
        )
    )
    assert "approval_resume.py" in resumed
    assert Session("approve", url=url).messages[-1].content == "Refunded."
