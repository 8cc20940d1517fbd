"""The builder's one extension point: a feature that needs nodes of its own in a swarm's graph.

Most features act inside an agent's step, through middleware (graph/core/middleware.py). One
kind cannot: a feature that runs work *between* steps, as nodes of the graph (a fan-out's
branch node, which runs each branch as a subgraph, and its join node, which waits for every
branch). Such a feature implements :class:`GraphExtension`, and the API layer hands the builder
a factory for it (``GraphSettings.extensions``): the builder calls each factory once per graph
it builds, with the :class:`GraphPlan` (the topology, the runtime the nodes share, the
settings, the graph's state schema, and a way to build this swarm's graph again: a subgraph's),
and a factory that has nothing to add returns ``None``. An extension then adds its nodes and
edges to that graph (:class:`GraphExtension`'s members say each).

A graph without an extension is built exactly as before: nothing is asked per step.
graph/features/fan_out_nodes.py is the one extension (the branch and join nodes of
``Parallel``; graph/options.py's ``fan_out_nodes`` loads it only for a topology that can fan out).

Example:
    >>> from langgraph.types import Command
    >>> from swarmgraph.graph import Agent
    >>> class Audit:  # a node after every step of Triage's, which then ends the run
    ...     def step(self, state, config):
    ...         return Command(goto="__end__")
    ...     async def astep(self, state, config):
    ...         return self.step(state, config)
    >>> class Audited:
    ...     output_schema = None
    ...     dynamic_ends = entry_ends = ()
    ...     def agent_ends(self, agent, name, ends):
    ...         ends["audit"] = "audited"
    ...     def nodes(self):
    ...         return [ExtraNode("audit", Audit(), {"__end__": "done"})]
    ...     def entry(self, state, config):
    ...         return None
    >>> from swarmgraph.graph.core.builder import GraphSettings, build_graph_and_runtime
    >>> from swarmgraph.graph.core.discovery import find_topology
    >>> from swarmgraph.graph.models import ModelResolver
    >>> settings = GraphSettings(extensions=(lambda plan: Audited(),))
    >>> builder, _ = build_graph_and_runtime(
    ...     find_topology([Agent(name="Triage")]), ModelResolver(), settings)
    >>> sorted(n for n in builder.compile().get_graph().nodes if not n.startswith("__"))
    ['Triage', 'audit', 'dynamic_handoff']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import StateGraph
    from langgraph.types import Send

    from .discovery import Topology
    from .runtime import GraphRuntime
    from .types import Agent

__all__ = ["ExtraNode", "GraphExtension", "GraphPlan", "MakeExtension"]


class ExtraNode(NamedTuple):
    """A node an extension adds: ``node`` has ``step(input, config)`` and ``astep`` and
    routes itself (``Command``) to ``destinations`` (node -> edge label, drawn);
    ``input_schema``: what it reads (a ``Send``'s payload, or the state with the extension's
    channels); ``defer``: it runs once every pending task of the step is done (a join)."""

    name: str
    node: Any
    destinations: dict[str, str]
    input_schema: type | None = None
    defer: bool = False


class GraphExtension(Protocol):
    """Nodes and edges a feature adds to one swarm graph (see the module docstring)."""

    @property
    def output_schema(self) -> type | None:
        """The graph's output schema, when the graph's state is the core's own (``None``:
        the state's): the state plus the channels its nodes keep, so a server streaming
        ``updates`` shows them."""
        ...

    @property
    def dynamic_ends(self) -> Sequence[str]:
        """Where the dynamic-handoff node may go besides agents and ``END``."""
        ...

    @property
    def entry_ends(self) -> Sequence[str]:
        """Where :meth:`entry` may send a resumed run."""
        ...

    def agent_ends(self, agent: Agent, name: str, ends: dict[str, str]) -> None:
        """Edit, in place, the destinations (node -> edge label) of ``agent``'s node ``name``, so
        the drawn graph shows where its step may send the run (``Command(goto=...)``)."""
        ...

    def nodes(self) -> Sequence[ExtraNode]:
        """The nodes to add (the builder adds them before the dynamic-handoff node)."""
        ...

    def entry(self, state: Mapping[str, Any], config: RunnableConfig) -> str | list[Send] | None:
        """Where a resumed run starts instead of its agent (``None``: as usual); asked only when
        ``GraphSettings.resumes`` is set."""
        ...


@dataclass(frozen=True)
class GraphPlan:
    """What an extension's factory gets, once per graph built: the ``topology``, the
    ``runtime`` its nodes share, the builder's ``settings`` (a ``GraphSettings``), the graph's
    ``state_schema`` (typed context and middleware fields merged in), and ``build``: this
    swarm's graph again with the given extensions instead (no fixed entry, never resuming: a
    subgraph, such as the graph one parallel branch runs)."""

    topology: Topology
    runtime: GraphRuntime
    settings: Any
    state_schema: type
    build: Callable[[Sequence[GraphExtension]], StateGraph]


#: A factory of an extension: ``None`` when the graph needs nothing of it.
MakeExtension = Callable[[GraphPlan], "GraphExtension | None"]
