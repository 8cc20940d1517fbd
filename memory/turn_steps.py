"""A ``Session`` turn as two public steps, for a caller that runs the model itself (a durable
engine's activities: :mod:`swarmgraph.temporal.session_turn`, one load activity and one save).

* :meth:`TurnSteps.begin_turn` is everything ``Session.run`` does before the model call: the
  one read, earlier long-term outboxes applied, the turn id looked up (a stored turn comes
  back as :attr:`TurnPlan.stored`, and nothing is to be run), the memory policy's fold and
  arrangement, the stored agent and context with the caller's values over them.
* :meth:`TurnSteps.finish_turn` is everything after it: the extractor, the one conditional
  write (rebased key by key on a turn another writer saved meanwhile), the long-term outbox.

``Session.run`` is these two steps around ``swarm.run(**plan.run_kwargs)``: the same
generators (``Session._begin`` / ``Session._finish``), so there is one path, not two. A
finish retried on the same plan, or in another process on :meth:`TurnSteps.reopen_turn`'s,
finds its turn id stored and writes nothing.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> from swarmgraph.memory import Session
    >>> swarm, doc = Swarm(chat_model=ScriptedChatModel(["Hi!"])), Agent(name="Doc")
    >>> session = Session("doc-steps", url="memory://doc-steps")
    >>> plan = session.begin_turn(swarm, doc, "hey", turn_id="t1")
    >>> plan.stored is None, plan.start.name, [m.content for m in plan.run_kwargs["messages"]]
    (True, 'Doc', ['hey'])
    >>> response = swarm.run(**plan.run_kwargs)          # the caller runs the model
    >>> session.finish_turn(plan, response).messages[-1]["content"]
    'Hi!'
    >>> [m.content for m in session.messages]
    ['hey', 'Hi!']
    >>> again = session.begin_turn(swarm, doc, "hey", turn_id="t1")   # stored: run nothing
    >>> again.stored.messages[-1]["content"], again.run_kwargs
    ('Hi!', {})
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .effect_ledger import TurnState
from .policies import Folded
from .store import Snapshot
from .turn_driver import Step, run_steps

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from ..graph.core.errors import SwarmError
    from ..graph.core.types import Agent, Response
    from ..graph.swarm import Swarm
    from .long_term_turn import LongTermTurn
    from .turn_write import MessageInput

__all__ = ["TurnPlan", "TurnSteps"]


def _unfolded() -> Folded:
    return Folded([])  # (``Session._begin`` passes its own: this module stays off its path)


@dataclass
class TurnPlan(TurnState):
    """One turn between its two steps: what it loaded, what the run is given, what the save
    needs. Public: :attr:`stored`, :attr:`start`, :attr:`run_kwargs`, and ``turn_id``,
    ``new`` (the caller's messages, with their ids), ``given`` (the context the run gets),
    ``base`` (the context its changes are measured from), ``version`` (what the save
    expects), ``folded`` (the policy's window and the state it stores); the rest is the
    turn's own bookkeeping."""

    #: A stored turn's ``Response`` (its turn id was saved before): run nothing, save nothing.
    stored: Response | None = None
    #: The agent the run starts with (the stored one, or the one given).
    start: Agent | None = None
    #: What ``swarm.run`` is called with: ``agent``, ``messages``, ``context_variables`` and
    #: the turn's own (its effect ledger, long-term hooks) beside the caller's keywords.
    run_kwargs: dict[str, Any] = field(default_factory=dict)
    #: The agent and ``Swarm`` the turn was begun with (a stored agent name resolves among the
    #: agents reachable from the one; the other's settings shape what is stored).
    entry: Agent | None = None
    swarm: Swarm | None = None
    snapshot: Snapshot = field(default_factory=Snapshot)
    folded: Folded = field(default_factory=_unfolded)
    given: dict | None = field(default_factory=dict)  # the context the run is given
    agent: str | None = None  # the agent an open entry resumes with (None: the stored one)
    rank: int = 0
    memory: LongTermTurn | None = None  # its long-term recall, tools and staged writes
    resumes_fan_out: bool = False  # it picks up a fan-out that paused inside a branch


class TurnSteps:
    """``Session.begin_turn`` / ``finish_turn`` / ``reopen_turn`` (module docstring), and the
    parts of a turn only a replay or a stopped run enters."""

    if TYPE_CHECKING:  # Session's own, which these drive
        conversation_id: str
        persist: tuple[str, ...]
        store: Any
        last_sent: list[BaseMessage]
        _begin: Callable[..., Generator[Step, Any, TurnPlan]]
        _finish: Callable[..., Generator[Step, Any, Response]]
        _counted: Callable[[Snapshot], Snapshot]
        _agent_for: Callable[..., Agent]
        _record_usage: Callable[[Response], None]

    def begin_turn(
        self,
        swarm: Swarm,
        agent: Agent,
        message: MessageInput | None = None,
        context_variables: dict | None = None,
        *,
        turn_id: str | None = None,
        approvals: dict | None = None,
        **run_kwargs: Any,
    ) -> TurnPlan:
        """``Session.run``'s turn up to the model call (same arguments, same checks): run
        ``swarm.run(**plan.run_kwargs)`` (or anything that makes a ``Response``), then
        :meth:`finish_turn`; or, when ``plan.stored`` is set, the turn id was saved before and
        that is the turn's ``Response`` (nothing to run). Example: the module docstring."""
        begun = self._begin(
            swarm, agent, message, context_variables, turn_id, approvals, run_kwargs
        )
        return run_steps(begun)

    def finish_turn(self, plan: TurnPlan, response: Response) -> Response:
        """Save ``response`` as ``plan``'s turn, exactly as ``Session.run`` does after its run
        (and so with its errors: :class:`~swarmgraph.memory.ContextSerializationError` after
        the messages are saved...); returns the turn's whole ``Response``. Retried with the
        same turn id (this plan, or :meth:`reopen_turn`'s), it writes nothing."""
        if plan.stored is not None:
            raise ValueError(f"turn {plan.turn_id!r} was stored before: plan.stored is its turn")
        return run_steps(self._finish(plan, response))

    def reopen_turn(
        self,
        swarm: Swarm,
        agent: Agent,
        turn_id: str,
        new: Sequence[BaseMessage],
        *,
        version: int,
        base: dict | None,
        state: dict | None = None,
    ) -> TurnPlan | None:
        """A plan for :meth:`finish_turn` from what another process's :meth:`begin_turn` kept
        (``plan.turn_id``, ``plan.new``, ``plan.version``, ``plan.base``,
        ``plan.folded.state``): one read of the record; ``None`` when the turn id is stored
        already (a save retried after its worker died: nothing to write).

        Example:
            >>> from swarmgraph.graph import Agent, Response, Swarm
            >>> from swarmgraph.memory import Session
            >>> url, doc = "memory://doc-reopen", Agent(name="Doc")
            >>> began = Session("c", url=url).begin_turn(Swarm(), doc, "hi", turn_id="t")
            >>> kept = began.turn_id, began.new
            >>> other = Session("c", url=url)                    # another worker
            >>> plan = other.reopen_turn(Swarm(), doc, *kept, version=began.version, base={})
            >>> ran = Response(messages=[{"role": "assistant", "content": "hello"}], agent=doc)
            >>> [m["content"] for m in other.finish_turn(plan, ran).messages]
            ['hello']
            >>> other.reopen_turn(Swarm(), doc, *kept, version=began.version, base={}) is None
            True
        """
        from .ids import check_turn_id
        from .store import NO_MESSAGES
        from .turn_index import TURN, find_turn

        turn_id = check_turn_id(turn_id)
        wanted = [(TURN, turn_id)]
        latest = self._counted(
            self.store.load(self.conversation_id, window=NO_MESSAGES, records=wanted)
        )
        if find_turn(latest, turn_id) is not None:
            return None
        plan = TurnPlan(turn_id, list(new), base=dict(base or {}), latest=latest, version=version)
        plan.entry, plan.swarm, plan.folded = agent, swarm, Folded([], state)
        # the record the begin read: no rebase; else another turn saved in between, and the
        # conditional write on the begun version fails, rereads and rebases, as in-process
        plan.snapshot = latest if latest.version == version else Snapshot()
        return plan

    def _replay(self, stored: dict, turn: TurnPlan, agent: Agent, swarm: Swarm) -> Response:
        """The stored turn as a ``Response`` (:func:`.turn_recovery.replayed`), with the agent
        that held the conversation after it. No model call."""
        from .turn_recovery import replayed

        context = turn.snapshot.context if "context" in self.persist else None
        response = replayed(self.store, self.conversation_id, stored, context, swarm)
        response.agent = self._agent_for(agent, stored.get("agent"), stored.get("rank", 0), swarm)
        self.last_sent = []
        self._record_usage(response)
        return response

    def _keep(self, turn: TurnPlan, error: SwarmError) -> list[BaseMessage] | None:
        """What a run a :class:`SwarmError` stopped saves (``None``: nothing)."""
        if not self.persist:
            return None
        from .turn_recovery import kept_run

        return kept_run(turn, error)
