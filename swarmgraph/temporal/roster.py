"""The agents a worker can run, by import path, and the tools they reach.

A run names its start agent by import path (``"app.agents:triage"`` or
``"path/to/app.py:triage"``): the workflow and every activity, on whichever worker, import it
there and find the agents it can hand off to (handoff discovery, graph/core/discovery.py). A tool is
named by its agent and its own name; a handoff's target by its agent's name. So every agent and
tool of a run must be importable by the workers, and reachable from the start agent.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "desk.py").write_text(
    ...     "from swarmgraph import Agent\\n"
    ...     "def lookup(order_id: int) -> str:\\n    return 'found'\\n"
    ...     "sales = Agent(name='Sales', functions=[lookup])\\n"
    ...     "triage = Agent(name='Triage', handoffs=[sales])\\n")
    >>> roster = Roster.load(f"{folder}/desk.py:triage")
    >>> sorted(roster.agents), roster.tool("Sales", "lookup")(order_id=1)
    (['Sales', 'Triage'], 'found')
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..graph.core.schema import tool_spec
from ..graph.core.types import Agent
from ..graph.options import reachable_agents
from .errors import TemporalInputError

__all__ = ["Roster"]

_LOCK = threading.Lock()
_LOADED: dict[str, Roster] = {}


@dataclass
class Roster:
    """The start agent ``start`` of import path ``ref``, every agent it reaches by name, and
    each agent's tools by name (``tools[(agent, tool)]``)."""

    ref: str
    start: Agent
    agents: dict[str, Agent] = field(default_factory=dict)
    tools: dict[tuple[str, str], Callable[..., Any]] = field(default_factory=dict)
    #: ``id(func) -> (agent, tool)``: how the workflow names the function the engine calls.
    names: dict[int, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, ref: str) -> Roster:
        """The roster of ``ref`` (imported once per process)."""
        with _LOCK:
            found = _LOADED.get(ref)
        if found is not None:
            return found
        from ..app.loading import AgentSpecError, load_agent

        try:
            start = load_agent(ref)
        except AgentSpecError as exc:
            raise TemporalInputError(f"this worker cannot import agent {ref!r}: {exc}") from None
        except Exception as exc:  # the module itself failed to import
            raise TemporalInputError(
                f"this worker cannot import agent {ref!r}: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(start, Agent):
            raise TemporalInputError(f"{ref!r} names a {type(start).__name__}, not an Agent")
        roster = cls(ref, start)
        for agent in reachable_agents([start]):
            roster.agents.setdefault(agent.name, agent)
            for func in agent.tools:
                name = tool_spec(func).name
                roster.tools.setdefault((agent.name, name), func)
                roster.names.setdefault(id(func), (agent.name, name))
        with _LOCK:
            return _LOADED.setdefault(ref, roster)

    def refuse_uncarried(self) -> None:
        """:class:`TemporalInputError` when an agent of the roster uses a feature a Temporal
        run does not carry (docs/temporal.md): its run must fail before anything ran, not
        halfway. The memory tools (``memory_tools=True``) stage their writes in a Session's
        outbox, which no activity carries.

        Example:
            >>> roster = Roster("app:a", Agent(name="A"), {"A": Agent(name="A", memory_tools=True)})
            >>> roster.refuse_uncarried()
            Traceback (most recent call last):
            ...
            swarmgraph.temporal.errors.TemporalInputError: agent 'A' has memory_tools=True: ...
        """
        for name, agent in self.agents.items():
            if agent.memory_tools:
                raise TemporalInputError(
                    f"agent {name!r} has memory_tools=True: the memory tools are not carried "
                    "on Temporal (their writes are staged in a Session's outbox, which no "
                    "activity carries); give it long-term recall with session_options="
                    "{'long_term': True} instead, or run it in-process"
                )

    def agent(self, name: str) -> Agent:
        """The agent called ``name``, or :class:`TemporalInputError`."""
        found = self.agents.get(name)
        if found is None:
            raise TemporalInputError(
                f"agent {name!r} is not reachable from {self.ref!r}: on Temporal a tool hands off "
                "only to agents handoff discovery finds from the start agent"
            )
        return found

    def tool(self, agent: str, name: str) -> Callable[..., Any]:
        """Tool ``name`` of agent ``agent``, or :class:`TemporalInputError`."""
        found = self.tools.get((agent, name))
        if found is None:
            raise TemporalInputError(
                f"tool {name!r} of agent {agent!r} is not among the tools this worker imports "
                f"from {self.ref!r}"
            )
        return found
