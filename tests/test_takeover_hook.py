""" "Who takes over after the tools" is a generic middleware hook (``next_agent``, with the
``destinations`` a middleware declares; graph/core/handoffs.py's ``Takeover``), and routes
and the ``CALLER`` hand-back are middleware on it, installed by graph/options.py: the core
names neither (tests/test_control.py holds their behaviour)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from swarmgraph.graph.core.builder import build_graph_and_runtime
from swarmgraph.graph.core.discovery import find_topology
from swarmgraph.graph.core.handoffs import Destination, Takeover
from swarmgraph.graph.models import ModelResolver
from swarmgraph.graph.options import middleware_for_target, middleware_of, reachable_agents

from swarmgraph import (
    CALLER,
    Agent,
    Result,
    Route,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)

ANGRY = [{"role": "user", "content": "This is awful!"}]


def _desk() -> tuple[Agent, Agent]:
    humans = Agent(name="Humans")

    class EscalateOnAnger(AgentMiddleware):
        def __init__(self) -> None:
            super().__init__()
            self.destinations = [Destination(humans, "angry")]

        def next_agent(self, takeover: Takeover) -> Takeover | None:
            if takeover.target is None and takeover.context.get("mood") == "angry":
                return takeover.replace(target=humans, label="angry")
            return None

    def note_mood(mood: str, context_variables: dict) -> Result:
        """Note the customer's mood."""
        return Result(value="noted", context_variables={"mood": mood})

    return Agent(name="Desk", functions=[note_mood], middleware=[EscalateOnAnger()]), humans


def _script(mood: str) -> list[Any]:
    return [scripted_tool_call("note_mood", {"mood": mood}), "Answered."]


def test_a_middlewares_next_agent_hook_switches_agents_on_swarm_run():
    desk, humans = _desk()
    angry = Swarm(chat_model=ScriptedChatModel(_script("angry"))).run(desk, ANGRY)
    assert angry.agent is humans and angry.messages[-1]["sender"] == "Humans"
    switched = {"agent": "Desk", "kind": "route", "name": "angry", "to": "Humans"}
    assert switched in angry.trajectory  # labelled as the hook said, no model call between
    calm = Swarm(chat_model=ScriptedChatModel(_script("calm"))).run(desk, ANGRY)
    assert calm.agent is desk and calm.messages[-1]["sender"] == "Desk"


def test_a_middlewares_next_agent_hook_switches_agents_on_the_compiled_graph():
    desk, _ = _desk()
    app = build_swarm_graph([desk], chat_model=ScriptedChatModel(_script("angry"))).compile()
    state = app.invoke({"messages": [("user", "This is awful!")]})
    assert state["active_agent"] == "Humans"
    assert state["messages"][-1].name == "Humans"


def test_declared_destinations_are_nodes_and_labelled_edges_before_anything_runs():
    desk, humans = _desk()
    graph = build_swarm_graph([desk], chat_model=ScriptedChatModel([])).compile().get_graph()
    edges = {(e.source, e.target): e.data for e in graph.edges}
    assert "Humans" in graph.nodes and edges[("Desk", "Humans")] == "angry"
    assert Swarm().reachable_agents(desk) == [desk, humans]


def test_routes_and_hand_back_are_middleware_the_options_install():
    done = Agent(name="Done")
    route = Route(when=lambda ctx: True, to=done, name="finished")

    def lookup() -> str:
        """Look something up."""
        return "x"

    start = Agent(name="Start", routes=[route])
    routed = middleware_of(start)
    assert [type(m).__name__ for m in routed] == ["RoutesMiddleware"]
    assert [(d.agent, d.label) for d in routed[0].destinations] == [(done, "finished")]
    assert middleware_of(start)[0] is routed[0]  # one object: stacks are cached by it
    start.routes = [route, Route(when=lambda ctx: False, to=done)]
    assert len(middleware_of(start)[0].destinations) == 2  # changed routes: made anew
    assert [type(m).__name__ for m in middleware_for_target(CALLER)] == ["HandBackMiddleware"]
    assert middleware_for_target(done) == ()
    plain = Agent(functions=[lookup], handoffs=[done], can_return=True)
    assert middleware_of(plain) == ()  # a plain agent (its transfer_back is a core tool)
    assert reachable_agents([Agent(name="Start", routes=[route])])[1] is done


def test_the_core_imports_neither_routes_nor_hand_back():
    for name in ("node", "discovery", "runtime", "builder"):
        source = importlib.import_module(f"swarmgraph.graph.core.{name}").__file__
        assert source is not None
        text = Path(source).read_text(encoding="utf-8")
        assert "features.routes" not in text and "features.handback" not in text, name


def _sneaky() -> Any:
    """Give the conversation back, by a road no reading of the code can follow."""
    return vars(importlib.import_module("swarmgraph"))["CAL" + "LER"]


def test_any_caller_a_tool_returns_brings_its_hand_back():
    lonely = Agent(name="Lonely", functions=[_sneaky])
    model = ScriptedChatModel([scripted_tool_call("_sneaky"), "Staying."])
    response = Swarm(chat_model=model).run(lonely, [{"role": "user", "content": "hi"}])
    assert response.agent is lonely and response.messages[-1]["content"] == "Staying."
    assert response.messages[1]["content"].startswith("Error: nobody handed the conversation")


def test_a_caller_nothing_resolves_is_an_error_for_the_model_never_a_node():
    # A runtime built without the API's options: nothing brings the hand-back.
    lonely = Agent(name="Lonely", functions=[_sneaky])
    model = ScriptedChatModel([scripted_tool_call("_sneaky"), "Staying."])
    builder, _ = build_graph_and_runtime(find_topology([lonely]), ModelResolver(chat_model=model))
    state = builder.compile().invoke({"messages": [("user", "hi")]})
    told = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert told[0].startswith("Error: CALLER stands for the agent that handed")
    assert state.get("active_agent") in (None, "Lonely") and state["messages"][-1].name == "Lonely"
