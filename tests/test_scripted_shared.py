"""One ``ScriptedChatModel`` whose replies are a list, shared by concurrent parallel branches,
handed each branch whichever reply came next (issue 40: another branch's script, or a
``ContextConflict``, in 2 of 5 runs). It now refuses, every time, with an error that names the
branches and says what to do; a model per agent, a ``respond=`` rule, and one model used by
branches of different fan-outs one after the other all still work."""

from __future__ import annotations

import pytest
from swarmgraph.graph.chat_models.scripted import ScriptSharedError
from swarmgraph.graph.features.errors import BranchFailed

from swarmgraph import Agent, Parallel, ScriptedChatModel, Swarm, scripted_tool_call


def _desk() -> Agent:
    billing = Agent(name="Billing", model="billing")
    tech = Agent(name="Tech", model="tech")

    def ask_both() -> Parallel:
        """Ask billing and tech at once."""
        return Parallel(billing, tech)

    return Agent(name="Desk", model="desk", functions=[ask_both])


ASK = [{"role": "user", "content": "invoice 7 and my router?"}]


@pytest.mark.parametrize("run", range(6))
def test_one_scripted_model_shared_by_concurrent_branches_is_refused_every_time(run):
    shared = ScriptedChatModel(
        [scripted_tool_call("ask_both"), "Invoice 7 is paid.", "The router is fine.", "Both."]
    )
    with pytest.raises(BranchFailed) as failed:
        Swarm(chat_model=shared).run(_desk(), ASK)
    cause = failed.value.__cause__
    assert isinstance(cause, ScriptSharedError)
    assert "'Billing' and 'Tech'" in str(cause)  # named in order, whichever asked second
    assert "one model per agent" in str(cause) and "respond=" in str(cause)


def test_a_model_per_agent_and_a_respond_rule_may_serve_branches():
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both"), "Both checked."]),
        "billing": ScriptedChatModel(["Invoice 7 is paid."]),
        "tech": ScriptedChatModel(["The router is fine."]),
    }
    response = Swarm(chat_model=models.__getitem__).run(_desk(), ASK)
    assert response.messages[-1]["content"] == "Both checked."

    def rule(messages):  # a function of what each branch sends: safe to share
        last = messages[-1]
        if last.type == "human":
            return scripted_tool_call("ask_both")
        joined = last.type == "tool" and '"Billing":' in str(last.content)  # the join's answer
        return "Both checked." if joined else "fine"

    shared = ScriptedChatModel(respond=rule)
    response = Swarm(chat_model=shared).run(_desk(), ASK)
    assert response.messages[1]["content"] == '{"Billing": "fine", "Tech": "fine"}'


def test_one_scripted_model_for_branches_of_fan_outs_one_after_the_other():
    billing = Agent(name="Billing", model="branch")
    tech = Agent(name="Tech", model="branch")

    def ask_billing() -> Parallel:
        """Ask billing."""
        return Parallel(billing)

    def ask_tech() -> Parallel:
        """Ask tech."""
        return Parallel(tech)

    desk = Agent(name="Desk", model="desk", functions=[ask_billing, ask_tech])
    desk_model = ScriptedChatModel(
        [scripted_tool_call("ask_billing"), scripted_tool_call("ask_tech"), "Done."]
    )
    branch_model = ScriptedChatModel(["Invoice 7 is paid.", "The router is fine."])
    models = {"desk": desk_model, "branch": branch_model}
    response = Swarm(chat_model=models.__getitem__).run(desk, ASK)
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers == ['{"Billing": "Invoice 7 is paid."}', '{"Tech": "The router is fine."}']
