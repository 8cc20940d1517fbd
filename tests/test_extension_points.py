"""The core's two generic extension points, used by a feature of a test's own: a member kind
(graph/core/members.py: something that is not an ``Agent`` stands for one) and a builder
extension (graph/core/graph_extension.py: nodes of a feature's own). The built-in users are
LangGraph members (graph/features/native.py) and the fan-out's branch and join nodes
(graph/features/fan_out_nodes.py); these tests show the points work for anyone."""

from __future__ import annotations

import sys
import textwrap

from langchain_core.messages import AIMessage
from langgraph.graph import END
from langgraph.types import Command
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core.builder import GraphSettings, build_graph_and_runtime
from swarmgraph.graph.core.discovery import find_topology
from swarmgraph.graph.core.graph_extension import ExtraNode
from swarmgraph.graph.core.members import as_member, load_kind_on, members_in, register_member_kind
from swarmgraph.graph.models import ModelResolver


class Remote:
    """A member of a made-up kind: it answers with a fixed line, no model of ours."""

    def __init__(self, name: str, line: str) -> None:
        self.name, self.line = name, line
        self.agent = Agent(name=name)


class RemoteNode:
    traced = False

    def __init__(self, runtime, agent, name):
        self.runtime, self.agent, self.name = runtime, agent, name

    def step(self, state, config):
        line = REMOTES[self.agent.name].line
        return {"messages": [AIMessage(line, name=self.agent.name)]}

    async def astep(self, state, config):
        return self.step(state, config)


REMOTES: dict[str, Remote] = {}


class RemoteKind:
    def as_member(self, value):
        return value.agent if isinstance(value, Remote) else None

    def members_in(self, value):
        return [value.agent] if isinstance(value, Remote) else []

    def owns(self, agent):
        return agent.name in REMOTES and REMOTES[agent.name].agent is agent

    def node(self, runtime, agent, name):
        return RemoteNode(runtime, agent, name)


def test_a_registered_member_kind_takes_a_handoff_and_runs_in_its_own_node():
    """A transfer function returns a value of the kind: discovery finds it in the tool's code,
    the builder gives it the kind's node, and that node answers the run."""
    oracle = Remote("Oracle", "The answer is 42.")
    REMOTES["Oracle"] = oracle
    unregister = register_member_kind(RemoteKind())
    try:

        def ask_oracle():
            """Hand the question to the oracle."""
            return oracle

        desk = Agent(name="Desk", functions=[ask_oracle])
        model = ScriptedChatModel([scripted_tool_call("ask_oracle")])
        response = Swarm(chat_model=model).run(desk, [{"role": "user", "content": "Meaning?"}])
        assert response.agent.name == "Oracle"
        assert response.messages[-1]["content"] == "The answer is 42."
        assert [a.name for a in Swarm().reachable_agents(desk)] == ["Desk", "Oracle"]
    finally:
        unregister()
        REMOTES.clear()
    assert members_in(oracle) == []  # unregistered: no longer a member


def test_a_kind_offered_by_the_api_layer_is_loaded_the_first_time_a_value_needs_it(tmp_path):
    """``load_kind_on``: the kind's module is imported (and registers itself) only once a value
    passes the test, so a program that never uses the kind never loads it."""
    module = "swarmgraph_test_lazy_kind"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(
            """
            from swarmgraph.graph.core.members import register_member_kind
            from swarmgraph.graph.core.types import Agent

            class Kind:
                def as_member(self, value):
                    ours = isinstance(value, str) and value[:1] == "%"
                    return Agent(name=value[1:]) if ours else None
                def members_in(self, value):
                    found = self.as_member(value)
                    return [] if found is None else [found]
                def owns(self, agent):
                    return False
                def node(self, runtime, agent, name):
                    raise AssertionError("owns no agent")

            UNREGISTER = register_member_kind(Kind())
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        load_kind_on(lambda value: isinstance(value, str) and value[:1] == "%", module)
        assert members_in("plain") == [] and module not in sys.modules
        assert as_member("%Sales").name == "Sales"
        assert module in sys.modules
    finally:
        sys.path.remove(str(tmp_path))
        loaded = sys.modules.pop(module, None)
        if loaded is not None:
            loaded.UNREGISTER()


class Audit:
    """A node of the extension's own: it answers and ends the run."""

    def step(self, state, config):
        return Command(goto=END, update={"messages": [AIMessage("Audited.", name="audit")]})

    async def astep(self, state, config):
        return self.step(state, config)


class Audited:
    """An extension that sends every resumed run to its audit node first."""

    output_schema = None
    dynamic_ends = ()
    entry_ends = ("audit",)

    def __init__(self, plan):
        self.plan = plan

    def agent_ends(self, agent, name, ends):
        ends["audit"] = "audit"

    def nodes(self):
        return [ExtraNode("audit", Audit(), {END: "done"})]

    def entry(self, state, config):
        return "audit"


def test_a_builder_extension_adds_its_node_edges_and_entry():
    model = ScriptedChatModel(["Hello from Triage."])
    topology = find_topology([Agent(name="Triage")])
    resolver = ModelResolver(chat_model=model)
    plain, _ = build_graph_and_runtime(topology, resolver, GraphSettings(resumes=True))
    settings = GraphSettings(extensions=(Audited,), resumes=True)
    builder, _ = build_graph_and_runtime(topology, resolver, settings)
    drawn = builder.compile().get_graph()
    assert ("Triage", "audit") in {(e.source, e.target) for e in drawn.edges}
    assert "audit" not in plain.compile().get_graph().nodes  # no extension: no node
    out = builder.compile().invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "Audited." and model.calls == []


def test_a_factory_with_nothing_to_add_leaves_the_graph_as_it_was():
    topology = find_topology([Agent(name="Triage")])
    settings = GraphSettings(extensions=(lambda plan: None,))
    builder, _ = build_graph_and_runtime(topology, ModelResolver(), settings)
    plain, _ = build_graph_and_runtime(topology, ModelResolver(), GraphSettings())
    assert builder.compile().get_graph().to_json() == plain.compile().get_graph().to_json()
