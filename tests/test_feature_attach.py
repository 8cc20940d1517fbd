"""Features attach only when a program uses them, and always when it does.

The core decides once per run whether approvals and effects are needed at all (a tool of the
run is marked ``@needs_approval`` / ``@effect`` or takes an ``idempotency_key``); these tests
hold it to the cases where that decision could go stale: an agent given a marked tool after
its first run, and an unforeseen agent (built by a tool at run time) with a marked tool.
"""

from __future__ import annotations

from swarmgraph import Agent, Budget, ScriptedChatModel, Swarm, needs_approval, scripted_tool_call


def _lookup(order_id: int) -> str:
    """Look an order up."""
    return f"order {order_id}"


def _refund_tool(log: list[int]):
    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        log.append(order_id)
        return f"refunded {order_id}"

    return refund


def test_a_marked_tool_added_after_the_first_run_still_waits_for_approval():
    refunded: list[int] = []
    agent = Agent(name="Refunds", functions=[_lookup])
    model = ScriptedChatModel(["hi", scripted_tool_call("refund", {"order_id": 7}, id="c1"), "ok"])
    swarm = Swarm(chat_model=model)
    swarm.run(agent, [{"role": "user", "content": "hello"}])  # no marked tool yet
    agent.functions.append(_refund_tool(refunded))
    stopped = swarm.run(agent, [{"role": "user", "content": "refund 7"}])
    assert [p.tool for p in stopped.pending] == ["refund"]
    assert refunded == []  # it did not run without a decision


def test_an_unforeseen_agent_with_a_marked_tool_waits_for_approval():
    refunded: list[int] = []

    def transfer_to_refunds():
        """Hand over to refunds."""
        return Agent(name="Refunds", functions=[_refund_tool(refunded)])  # built per call

    triage = Agent(name="Triage", functions=[transfer_to_refunds])
    model = ScriptedChatModel(
        [
            scripted_tool_call("transfer_to_refunds", id="t1"),
            scripted_tool_call("refund", {"order_id": 9}, id="c1"),
            "done",
        ]
    )
    stopped = Swarm(chat_model=model).run(triage, [{"role": "user", "content": "refund 9"}])
    assert stopped.agent.name == "Refunds"
    assert [p.tool for p in stopped.pending] == ["refund"]
    assert refunded == []


def test_usage_and_trajectory_are_counted_without_a_budget_and_checked_with_one():
    sales = Agent(name="Sales")

    def transfer_to_sales():
        """Hand over to sales."""
        return sales

    triage = Agent(name="Triage", functions=[transfer_to_sales])

    def run(**kwargs):
        model = ScriptedChatModel([scripted_tool_call("transfer_to_sales", id="t1"), "Bees."])
        return Swarm(chat_model=model).run(triage, [{"role": "user", "content": "bees"}], **kwargs)

    plain = run()
    assert plain.usage["model_calls"] == 2 and plain.usage["handoffs"] == 1
    assert [step["kind"] for step in plain.trajectory] == ["model", "tool", "handoff", "model"]
    budgeted = run(budget=Budget(max_handoffs=5))
    assert budgeted.usage == plain.usage and budgeted.trajectory == plain.trajectory
