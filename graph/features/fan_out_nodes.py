"""A fan-out's branch and join nodes, added to a swarm's graph through the builder's extension.

A tool that returns :class:`~swarmgraph.graph.features.parallel.Parallel` (or, under
``parallel_handoffs="all"``, a reply that calls several transfer tools) sends the run to
several agents at once. That needs two nodes of the graph's own (graph/features/branches.py):
``parallel_branch``, which runs each branch as a subgraph, and ``parallel_join``, which waits
for every branch. They attach as a :class:`~swarmgraph.graph.core.graph_extension.GraphExtension`:
graph/options.py's ``fan_out_nodes`` hands the builder :func:`fan_out_nodes`, which for a topology
with an agent that can fan out

- sets the runtime's step after handoffs (``runtime.after_handoffs``, a
  :class:`~.branches.FanOut`, which the agent's step calls once its tools handed off) and the
  subgraph a branch runs (this swarm's graph again, with the branch and join nodes only if an
  agent a branch can reach fans out too);
- draws each fanning agent's step going to the branch node (and not to the agents only its
  fan-out tools name), and each agent a branch may run going to the join;
- adds the two nodes, the join reading the state with the fan-out's channels
  (:class:`~.branches.ParallelState`, typed like the state's context);
- has a ``Swarm`` run that resumes a fan-out paused for approval start at its branches
  (``Swarm.run(..., branches=)``).

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
    >>> from swarmgraph.graph.features.parallel import Parallel
    >>> billing, tech = Agent(name="Billing"), Agent(name="Tech")
    >>> def ask_both():
    ...     return Parallel(billing, tech)
    >>> desk = Agent(name="Desk", functions=[ask_both])
    >>> app = build_swarm_graph([desk], chat_model=ScriptedChatModel([])).compile()
    >>> sorted(n for n in app.get_graph().nodes if n.startswith("parallel"))
    ['parallel_branch', 'parallel_join']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.types import Send

from ..core.discovery import Topology, function_targets
from ..core.graph_extension import ExtraNode, GraphPlan
from ..core.run_control import current_control
from ..core.types import Agent
from .branches import BRANCH_NODE, JOIN_NODE, BranchNode, FanOut, FanOutRun, JoinNode, ParallelState
from .parallel import fans_out

if TYPE_CHECKING:
    from ..core.runtime import GraphRuntime

__all__ = ["FanOutNodes", "fan_out_nodes", "fanning_agents"]

#: Each agent that can fan out: (the nodes its branches may run, the nodes only its fan-out
#: tools name: drawn through the branch and join nodes, not as handoffs).
Fanning = dict[Agent, tuple[set[str], set[str]]]


def fan_out_nodes(plan: GraphPlan) -> FanOutNodes | None:
    """The branch and join nodes of ``plan``'s graph, or ``None`` when no agent of it can fan
    out; sets the runtime's fan-out step (see the module docstring)."""
    topology, runtime = plan.topology, plan.runtime
    fanning = fanning_agents(topology, plan.settings.parallel_handoffs)
    if not fanning:
        return None
    # What the join reads: the state plus a fan-out's channels (typed like the state).
    parallel_state: type = ParallelState
    if runtime.middleware:  # a typed context's channel (graph/features/context_middleware.py)
        from .context_middleware import schema_in
        from .context_schema import state_schema_for

        schema = schema_in(runtime.middleware)
        if schema is not None:
            parallel_state = state_schema_for(schema, ParallelState)
    # A branch's own graph fans out again only if an agent a branch can reach does.
    nested = _reachable(topology, fanning)

    def branch_graph() -> Any:
        inner = [FanOutNodes(topology, runtime, fan_out, nested, parallel_state)] if nested else []
        return plan.build(inner).compile()  # no checkpointer of its own: a subgraph uses the run's

    fan_out = FanOut(runtime, branch_graph, plan.settings.parallel_handoffs, nested=bool(nested))
    runtime.after_handoffs = fan_out
    return FanOutNodes(topology, runtime, fan_out, fanning, parallel_state)


class FanOutNodes:
    """The branch and join nodes of one graph (the main one, or a branch's own), and the
    edges into them: a :class:`~swarmgraph.graph.core.graph_extension.GraphExtension`."""

    dynamic_ends = (BRANCH_NODE,)  # an unforeseen agent may fan out too
    entry_ends = (BRANCH_NODE, JOIN_NODE)  # a paused fan-out goes on (Swarm.run(branches=))

    def __init__(
        self,
        topology: Topology,
        runtime: GraphRuntime,
        fan_out: FanOut,
        fanning: Fanning,
        parallel_state: type,
    ) -> None:
        self.runtime, self.fan_out, self.fanning = runtime, fan_out, fanning
        self._nodes = topology.nodes
        self.output_schema = parallel_state
        nodes = topology.nodes
        targets = {agent: [nodes[t] for t in topology.targets[id(agent)]] for agent in nodes}
        #: the agents a fan-out may run: their answer may go to the join
        self.branched = {t for runs, _ in fanning.values() for t in runs}
        # An agent only a fan-out runs never answers the run itself: its answer goes to the join.
        declared = [nodes[to] for a in nodes for to, _ in topology.declared_of(a)]
        self.entered = {runtime.default_node, *declared}
        for agent in nodes:
            only = fanning[agent][1] if agent in fanning else set()
            self.entered.update(t for t in targets[agent] if t not in only)
        self._names = list(topology.agents)

    def agent_ends(self, agent: Agent, name: str, ends: dict[str, str]) -> None:
        """The picture of a fan-out (destinations only draw): the agent -> "fan out" -> the
        branch node -> "branch" -> each agent it may run -> "answered" -> the join -> "joined"
        -> back."""
        if agent in self.fanning:
            for target in self.fanning[agent][1]:
                ends.pop(target, None)
            ends[BRANCH_NODE] = "fan out"
        if name in self.branched:
            ends[JOIN_NODE] = "answered"
            if name not in self.entered:
                ends.pop(END, None)

    def nodes(self) -> Sequence[ExtraNode]:
        """The branch node (it reads its ``Send``'s ``BranchTask``) and the join (deferred:
        it runs once every branch is done)."""
        runs = {t: "branch" for t in self._names if t in self.branched} or {JOIN_NODE: "answered"}
        joins = {self._nodes[a]: "joined" for a in self.fanning}
        return [
            ExtraNode(BRANCH_NODE, BranchNode(self.runtime, self.fan_out), runs),
            ExtraNode(
                JOIN_NODE,
                JoinNode(self.runtime, self.fan_out),
                {**joins, END: "stopped"},
                self.output_schema,
                defer=True,
            ),
        ]

    def entry(self, state: Mapping[str, Any], config: RunnableConfig) -> str | list[Send] | None:
        """A fan-out paused for approval goes on at its branches (or its join, when every
        branch had answered); ``None``: the run starts as usual."""
        fanned = current_control(config).state_of(FanOutRun)
        if fanned is None or fanned.resume is None:
            return None
        sends, fanned.resume = fanned.resume, None
        return sends or JOIN_NODE


def fanning_agents(topology: Topology, mode: str) -> Fanning:
    """The agents that can fan out, each with (the nodes its branches may run, the nodes only
    its fan-out tools name). ``mode`` is ``parallel_handoffs``: ``"all"`` also fans out an
    agent with several handoffs."""
    fanning: Fanning = {}
    for agent in topology.nodes:
        every = {topology.nodes[t] for t in topology.targets[id(agent)]}
        tests = [fans_out(func) for func in agent.tools]
        if any(tests):
            named: set[str] = set()
            plain: set[str] = set()
            for func, fans in zip(agent.tools, tests, strict=True):
                found = {topology.nodes[t] for t in function_targets(func) if t in topology.nodes}
                (named if fans else plain).update(found)
            only = named - plain - {topology.nodes[to] for to, _ in topology.declared_of(agent)}
            fanning[agent] = (named, only)
        elif mode == "all" and len(every) > 1:  # several transfer calls in one reply
            fanning[agent] = (every, set())
    return fanning


def _reachable(topology: Topology, fanning: Fanning) -> Fanning:
    """The fanning agents a branch can reach (from any agent a fan-out may run)."""
    queue = [topology.agents[n] for runs, _ in fanning.values() for n in runs]
    seen: set[int] = set()
    while queue:
        agent = queue.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        queue.extend(topology.targets[id(agent)])
        queue.extend(to for to, _ in topology.declared_of(agent))
        queue.extend(topology.agents[n] for n in fanning.get(agent, (set(), set()))[0])
    return {agent: ends for agent, ends in fanning.items() if id(agent) in seen}
