"""The swarm's own moments, which LangChain's middleware lacks: the **handoff** (a
``before_handoff`` hook reads a :class:`Handoff` and answers ``None``, a refusal, or a
:class:`HandTo`; :func:`handoff_verdict` asks a stack's hooks in order) and the **takeover**
(who takes over after a step's tools: a ``next_agent`` hook reads and changes a
:class:`Takeover`; a middleware that may switch so lists its :class:`Destination` s).

They are extensions on LangChain's ``AgentMiddleware`` objects, as docs/middleware.md says ("The
handoff moment", "Who takes over"); graph/core/middleware.py calls LangChain's own hooks, and
the core calls these where the agent switches (``GraphRuntime.hand_off``) and after the tools
(``HookedStep._chosen``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from .drivers import SYNC, AsyncDriver, Driver
from .hook_context import hook_control

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from .types import Agent

__all__ = ["Destination", "HandTo", "Handoff", "Takeover", "Verdict", "Way", "handoff_verdict"]


#: How the conversation comes into an agent, as :attr:`Handoff.way` says.
Way = Literal["handoff", "route", "jump", "branch", "fan_out", "join"]


@dataclass(frozen=True)
class HandTo:
    """Where a hook sends the conversation: ``agent``. A ``before_handoff`` hook returns one
    to redirect a switch; a ``before_model``/``after_model`` hook returns ``{"jump_to":
    HandTo(agent)}`` to hand the conversation over from its step. ``note`` travels to the
    next :class:`Handoff`'s hooks (``Handoff.note``): why, in the hook's own terms.

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> HandTo(Agent(name="Humans"), note="a threat").agent.name
        'Humans'
    """

    agent: Agent
    note: Any = None


@dataclass(frozen=True)
class Handoff:
    """The active agent about to switch from ``source`` to ``target``: what a
    ``before_handoff`` hook reads (docs/middleware.md, "The handoff moment").

    ``state``: ``messages`` and ``context_variables`` as ``target`` would take them (the
    transfer call's answer included). ``way``: ``"handoff"`` (a transfer tool, a ``CALLER``
    return, a LangGraph member's handoff tool), ``"route"`` (``route`` is its label),
    ``"jump"`` (a hook's ``HandTo``), ``"branch"`` (a parallel branch starting: not a switch of
    the run's active agent; a refusal refuses that branch only, and a ``HandTo`` is refused
    too, a branch has no fallback), ``"fan_out"`` (``source`` hands the conversation to
    ``branches``, every branch's agent, at once: asked once on ``source``'s stack, ``target``
    is ``source``, which takes the conversation back at the join; a refusal refuses every
    branch, a ``HandTo`` too), ``"join"`` (a fan-out's join hands the conversation to
    ``Parallel(join=)``'s agent). A hook a way does not concern lets
    it through (guardrails check ``"fan_out"`` and ``"join"`` nowhere: each branch is checked
    as it starts). ``note``: the ``HandTo.note`` that sent the conversation here (``None`` for
    a model's or a route's choice); ``redirects``: how many hooks redirected this switch
    before (a chain of fallbacks).

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> desk, a, b = Agent(name="Desk"), Agent(name="A"), Agent(name="B")
        >>> fan = Handoff(desk, desk, {"messages": []}, "fan_out", branches=(a, b))
        >>> fan.way, [agent.name for agent in fan.branches]
        ('fan_out', ['A', 'B'])
    """

    source: Agent
    target: Agent
    state: Mapping[str, Any]
    way: Way = "handoff"
    route: str | None = None
    note: Any = None
    redirects: int = 0
    branches: tuple[Agent, ...] = ()


#: A ``before_handoff`` hook's answer: go on (``None``), refused (the reason), or elsewhere.
Verdict = str | HandTo | None


async def handoff_verdict(
    hooks: Sequence[Any], handoff: Handoff, io: Driver, control: object | None = None
) -> Verdict:
    """Ask each ``before_handoff`` hook of ``hooks`` (:attr:`MiddlewareStack.handoff`), in
    order, about ``handoff``, up to the first that does not let it through: its verdict, or
    ``None`` (every hook let it through). Under the async driver a middleware's
    ``abefore_handoff`` is awaited where it has one; under the sync driver its
    ``before_handoff`` is called (an async-only one runs to its end in place, as an async tool
    does on ``run``). ``control``: the
    run's ``RunControl``, what the hooks read with ``hook_context.step_control()``.

    Example:
        >>> from swarmgraph.graph.core.drivers import SYNC, drive
        >>> from swarmgraph.graph.core.types import Agent
        >>> class Closed:
        ...     def before_handoff(self, handoff):
        ...         return f"{handoff.target.name} is closed"
        >>> move = Handoff(Agent(name="Triage"), Agent(name="Refunds"), {"messages": []})
        >>> drive(handoff_verdict([Closed()], move, SYNC))
        'Refunds is closed'
    """
    awaited = isinstance(io, AsyncDriver)
    for m in hooks:
        sync: Callable[..., Any] | None = getattr(m, "before_handoff", None)
        asynchronous: Callable[..., Any] | None = getattr(m, "abefore_handoff", None)
        with hook_control(control):
            if asynchronous is not None and (awaited or sync is None):
                if awaited:
                    verdict = await asynchronous(handoff)
                else:  # async only, on run: to its end here, as an async tool runs on run
                    verdict = await SYNC.call_tool(partial(asynchronous, handoff), {})
            elif sync is not None:
                verdict = sync(handoff)
            else:
                continue
        if verdict is not None:
            return cast("Verdict", verdict)
    return None


class Destination(NamedTuple):
    """An agent a middleware may hand the conversation to, and the label of its drawn edge.

    A middleware that switches agents through :meth:`Takeover`'s hook (``next_agent``) lists
    them in its ``destinations`` attribute, as langgraph-swarm's handoff tools carry their
    destination in their metadata: discovery (graph/core/discovery.py) walks them, so each one
    is a node of the graph before anything runs, and the builder draws the edge."""

    agent: Agent
    label: str


@dataclass(frozen=True)
class Takeover:
    """Who takes over after a step's tools ran: what the step hands each middleware's
    ``next_agent`` hook (our one extension of LangChain's hooks, for the moment a swarm has and
    ``create_agent`` lacks), and what the hook hands back, changed with :meth:`replace`.

    ``agent``: whose step it is; ``target``: who takes over so far (a tool's handoff, which may
    be a placeholder such as ``CALLER`` for a hook to resolve, or None: nobody handed off);
    ``label``: the drawn edge's label when the switch is not a tool's handoff (a route's name);
    ``call_id``: the tool call that handed off; ``answer``: a new text for that call's answer
    (``answer_if``: only where the answer still reads so). ``context``: the run's
    ``context_variables`` after the tools; ``history`` and ``added``: the conversation before
    this step, and what this step added; ``find``: an agent of this run by name.

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> me = Agent(name="Refunds")
        >>> now = Takeover(me, None, {}, [], [], lambda name: None)
        >>> now.replace(target=Agent(name="Triage"), label="done").label
        'done'
    """

    agent: Agent
    target: Agent | None
    context: dict[str, Any]
    history: Sequence[BaseMessage]
    added: Sequence[BaseMessage]
    find: Callable[[str], Agent | None]
    label: str | None = None
    call_id: str | None = None
    answer: str | None = None
    answer_if: str | None = None

    def replace(self, **changes: Any) -> Takeover:
        """This takeover with ``changes`` (its fields by name)."""
        return replace(self, **changes)
