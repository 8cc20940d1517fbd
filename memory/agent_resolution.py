"""Which agent a stored conversation resumes with: the stored active agent's name (and its
rank among agents sharing that name) resolved against the agent passed to ``Session.run``,
the Session's ``agents=`` and every agent reachable from the given one by handoff.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> sales = Agent(name="Sales")
    >>> triage = Agent(name="Triage", handoffs=[sales])
    >>> known = KnownAgents([], "c1")
    >>> swarm = Swarm(chat_model=ScriptedChatModel([]))
    >>> known.resolve(triage, "Sales", 0, swarm) is sales, known.rank(triage, sales, swarm)
    (True, 0)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .errors import UnknownAgentError, UnknownAgentWarning

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from ..graph.core.types import Agent
    from ..graph.swarm import Swarm
    from .store import Snapshot


class Resuming(Protocol):
    """What :meth:`KnownAgents.resolve` reads of the turn about to run (Session's turn)."""

    carried: list[BaseMessage]  # a retried turn's run so far (empty for a new turn)
    snapshot: Snapshot  # what the turn loaded: its ``messages`` end the stored conversation


class KnownAgents:
    """The agents a Session knows besides discovery (``agents=``, one per name), and the
    resolution of a stored name against them."""

    def __init__(self, agents: Sequence[Agent] | None, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.by_name: dict[str, Agent] = {}
        for agent in agents or ():
            known = self.by_name.setdefault(agent.name, agent)
            if known is not agent:
                raise ValueError(f"two different agents are named {agent.name!r} in agents=")

    def namesakes(self, given: Agent, name: str, swarm: Swarm) -> list[Agent]:
        """The agents called ``name`` a conversation may resume with, in one fixed order:
        the agent passed to :meth:`run`, then ``agents=``, then every agent reachable from
        the given one (discovery's order: ``Swarm.reachable_agents``, cached per start agent,
        so a steady-state turn discovers nothing). Two distinct agents may share a name, so a
        turn stores its active agent's place in this list (its rank) beside the name."""
        reachable = getattr(swarm, "reachable_agents", None)
        if reachable is None:  # a Swarm-like object of the caller's own
            from ..graph.options import reachable_agents

            found_all = reachable_agents([given])
        else:
            found_all = reachable(given)
        found: list[Agent] = []
        seen: set[int] = set()  # by identity: two distinct agents may be equal field by field
        for candidate in (given, *self.by_name.values(), *found_all):
            if getattr(candidate, "name", None) == name and id(candidate) not in seen:
                seen.add(id(candidate))
                found.append(candidate)
        return found

    def rank(self, given: Agent, agent: Agent | None, swarm: Swarm) -> int:
        """Where ``agent`` stands among the agents named as it is (see :meth:`namesakes`)."""
        if agent is None or agent is given:
            return 0
        if self.by_name.get(agent.name) is agent and getattr(given, "name", None) != agent.name:
            return 0  # first of its name in _namesakes' order, no discovery needed
        for place, known in enumerate(self.namesakes(given, agent.name, swarm)):
            if known is agent:
                return place
        return 0

    def resolve(
        self,
        given: Agent,
        stored_name: str | None,
        rank: int,
        swarm: Swarm,
        turn: Resuming | None = None,
    ) -> Agent:
        """The agent a stored name (and rank) stands for; the given agent, with an
        :class:`UnknownAgentWarning`, when none is known by that name.

        ``turn``: the turn about to run (``None``: a replay, nothing runs). When the messages
        it goes on from (a retried turn's run so far, else the stored conversation) end on
        calls with no answer (in doubt after a crash, waiting for approval), the agent that
        made them is needed to settle them, so an unknown one raises
        :class:`UnknownAgentError` instead: the given agent would ask its model past them
        and leave them unanswered.

        Example:
            >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
            >>> from langchain_core.messages import AIMessage
            >>> from types import SimpleNamespace
            >>> from swarmgraph.memory.store import Snapshot
            >>> asked = AIMessage("", tool_calls=[{"name": "pay", "args": {}, "id": "p1"}])
            >>> turn = SimpleNamespace(carried=[], snapshot=Snapshot(messages=[asked]))
            >>> swarm = Swarm(chat_model=ScriptedChatModel([]))
            >>> known = KnownAgents([], "c1")
            >>> try:
            ...     known.resolve(Agent(name="Front"), "Gone", 0, swarm, turn)
            ... except UnknownAgentError as error:
            ...     print(error.agent, error.calls)
            Gone ["pay (call 'p1')"]
        """
        if not stored_name:
            return given
        if rank == 0:  # the usual case, no discovery: the given agent or agents=
            if getattr(given, "name", None) == stored_name:
                return given
            if stored_name in self.by_name:
                return self.by_name[stored_name]
        namesakes = self.namesakes(given, stored_name, swarm)
        if namesakes:
            return namesakes[min(rank, len(namesakes) - 1)]
        from ..graph.features.approvals import open_calls  # only a conversation nobody can resume

        found = None if turn is None else open_calls(turn.carried or turn.snapshot.messages)
        if found is not None:  # going on with ``given`` would leave these unanswered
            calls = [f"{c['name']} (call {c.get('id')!r})" for c in found[1]]
            raise UnknownAgentError(self.conversation_id, stored_name, given.name, calls)
        warnings.warn(
            f"conversation {self.conversation_id!r} was last held by agent {stored_name!r}, "
            f"which is neither agents= nor reachable from {given.name!r}; continuing with "
            f"{given.name!r}",
            UnknownAgentWarning,
            stacklevel=7,  # the caller of Session.run: run, run_steps, _turn, _prepare, _agent_for
        )
        return given
