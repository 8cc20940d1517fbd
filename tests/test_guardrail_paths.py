"""The guardrail checks are one body for ``run`` and ``arun`` (graph/features/guardrails.py
``_checks``):
the same guardrails, sync or async, book the same trajectory and trip the same way on both
paths, on the way into an agent and on its final answer."""

from __future__ import annotations

import asyncio

import pytest
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call

from swarmgraph import GuardrailTripped


def no_threats(context_variables, messages):
    """A sync input guardrail: the user's latest message is no threat."""
    said = [str(m.content) for m in messages if m.type == "human"]
    return "a threat" if said and "or else" in said[-1] else None


async def no_leaks(context_variables, messages):
    """An async output guardrail."""
    await asyncio.sleep(0)
    return "a leak" if "password" in str(messages[-1].content) else None


def desk(answer: str) -> tuple[Swarm, Agent]:
    refunds = Agent(
        name="Refunds",
        requires=["order_id"],
        input_guardrails=[no_threats],
        output_guardrails=[no_leaks],
    )

    def transfer_to_refunds():
        """Hand over to refunds."""
        return refunds

    triage = Agent(name="Triage", functions=[transfer_to_refunds])
    model = ScriptedChatModel([scripted_tool_call("transfer_to_refunds", id="t1"), answer])
    return Swarm(chat_model=model), triage


def checks(response) -> list[tuple]:
    return [
        (s["agent"], s["kind"], s["name"], s["passed"], s.get("when"))
        for s in response.trajectory
        if s["kind"] in ("guardrail", "precondition")
    ]


def both(answer: str, text: str):
    context = {"order_id": 7}
    swarm, triage = desk(answer)
    sync = swarm.run(triage, [{"role": "user", "content": text}], context_variables=context)
    swarm, triage = desk(answer)
    coro = swarm.arun(triage, [{"role": "user", "content": text}], context_variables=context)
    return sync, asyncio.run(coro)


def test_passing_checks_book_the_same_trajectory_on_both_paths():
    sync, awaited = both("Refunded.", "refund order 7")
    expected = [
        ("Refunds", "precondition", "requires", True, None),
        ("Refunds", "guardrail", "no_threats", True, "input"),
        ("Refunds", "guardrail", "no_leaks", True, "output"),
    ]
    assert checks(sync) == checks(awaited) == expected
    assert sync.agent.name == awaited.agent.name == "Refunds"


@pytest.mark.parametrize(
    "answer, text, kind, reason",
    [
        ("Refunded.", "refund order 7 or else", "input", "a threat"),
        ("Your password is hunter2.", "refund order 7", "output", "a leak"),
    ],
)
def test_a_trip_stops_both_paths_alike(answer, text, kind, reason):
    errors = []
    for path in ("run", "arun"):
        swarm, triage = desk(answer)
        messages = [{"role": "user", "content": text}]
        with pytest.raises(GuardrailTripped) as caught:
            if path == "run":
                swarm.run(triage, messages, context_variables={"order_id": 7})
            else:
                asyncio.run(swarm.arun(triage, messages, context_variables={"order_id": 7}))
        errors.append(caught.value)
    assert [(e.kind, e.reason, e.agent) for e in errors] == [(kind, reason, "Refunds")] * 2
    assert checks(errors[0].response) == checks(errors[1].response)
