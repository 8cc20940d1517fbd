"""Bad input to a run is a clear error before any model call, and a conversation whose active
agent the graph does not know is said out loud, not picked up silently."""

from __future__ import annotations

import warnings

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from swarmgraph.graph.core.errors import UnknownAgentWarning

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call

USER = [{"role": "user", "content": "hi"}]


def _swarm() -> tuple[Swarm, ScriptedChatModel]:
    model = ScriptedChatModel(["ok"])
    return Swarm(chat_model=model), model


BAD = [
    ({"context_variables": ["Ming"]}, TypeError, r"context_variables must be a dict \(or what"),
    ({"max_turns": "3"}, TypeError, r"max_turns must be a number .* got str"),
    ({"messages": [*USER, {"role": "user", "content": 5}]}, ValueError, r"message 1 \(user\)"),
]


@pytest.mark.parametrize(("kwargs", "error", "said"), BAD)
def test_swarm_run_refuses_bad_input_before_the_model_is_asked(kwargs, error, said):
    swarm, model = _swarm()
    with pytest.raises(error, match=said):
        swarm.run(**{"agent": Agent(name="A"), "messages": USER, **kwargs})
    assert model.calls == []


def test_a_graphs_context_input_must_be_a_dict():
    model = ScriptedChatModel(["ok"])
    app = build_swarm_graph([Agent(name="A")], chat_model=model).compile()
    with pytest.raises(TypeError, match=r"context_variables must be a dict \(or .* got list"):
        app.invoke({"messages": [("user", "hi")], "context_variables": [1]})
    assert model.calls == []


def test_an_active_agent_the_graph_does_not_know_is_said_and_the_default_picks_up():
    app = build_swarm_graph(
        [Agent(name="Front"), Agent(name="Back")], chat_model=ScriptedChatModel(["ok"])
    ).compile()
    with pytest.warns(UnknownAgentWarning, match=r"'Frnot' is no agent of this graph.*'Front'"):
        out = app.invoke({"messages": [("user", "hi")], "active_agent": "Frnot"})
    assert out["messages"][-1].name == "Front"


def test_an_agent_a_tool_made_in_another_process_is_said_when_the_thread_goes_on():
    """One graph's tool hands off to an Agent it builds on the fly (the dynamic node); a
    second graph on the same checkpointer (another process: it never saw that agent) goes on
    with the thread: its default agent answers, and the warning says whose turn it took."""

    def make_specialist():
        """Hand the conversation to a specialist made now."""
        return Agent(name="Specialist", model="specialist")

    front = Agent(name="Front", model="front", functions=[make_specialist])
    models = {
        "front": ScriptedChatModel([scripted_tool_call("make_specialist"), "front again"]),
        "specialist": ScriptedChatModel(["specialist here", "specialist again"]),
    }
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "t1"}}
    first = build_swarm_graph([front], chat_model=models.__getitem__).compile(checkpointer=saver)
    out = first.invoke({"messages": [("user", "hi")]}, config)
    assert out["active_agent"].startswith("Specialist") and out["messages"][-1].name == "Specialist"
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownAgentWarning)  # the same graph knows it: silent
        again = first.invoke({"messages": [("user", "and now?")]}, config)
    assert again["messages"][-1].name == "Specialist"
    other = build_swarm_graph([front], chat_model=models.__getitem__).compile(checkpointer=saver)
    with pytest.warns(UnknownAgentWarning, match=r"'Specialist.*' is no agent of this graph"):
        later = other.invoke({"messages": [("user", "still there?")]}, config)
    assert later["messages"][-1].name == "Front"
