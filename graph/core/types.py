"""Swarm's three config objects: ``Agent``, ``Result`` and ``Response``.

They keep OpenAI Swarm's field names and defaults so code written for Swarm runs
unchanged. An :class:`Agent` is passive configuration: the framework *reads*
``instructions``, ``model`` and ``functions`` from it on every model call and the
agent itself never holds run state, so one instance can serve any number of runs.

Example:
    >>> from swarmgraph.graph import Agent, Result
    >>> sales = Agent(name="Sales", instructions="Sell bees.")
    >>> triage = Agent(name="Triage", handoffs=[sales])
    >>> [f.__name__ for f in triage.tools]
    ['transfer_to_sales']
    >>> Result(value="done", context_variables={"order_id": 7}).context_variables
    {'order_id': 7}
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from .langchain_args import is_langchain_tool
from .middleware_tools import as_function

if TYPE_CHECKING:  # this module never imports LangChain (see is_compiled_graph)
    from langchain_core.messages import BaseMessage

AgentFunction = Callable[..., Any]

#: How many ``Agent`` objects a cache keyed by agent keeps before it starts over (a stack of
#: middleware, a bound model, a feature's per-agent object): a program that makes new Agent
#: objects per request (per-user instructions) must not grow these forever, and one with a
#: fixed set of agents never reaches it.
AGENTS_KEPT = 512
#: A value a tool returns to hand the conversation to several agents at once sets this to
#: ``True`` on its class (a feature's value, graph/core/runtime.py's ``MultiHandoff``): how
#: ``Result.agent`` and the tool runner tell one from any other return value.
MULTI_HANDOFF_ATTR = "__swarmgraph_multi_handoff__"


def is_compiled_graph(value: Any) -> bool:
    """True for a compiled LangGraph graph (or any graph-like runnable with a ``name``).

    Duck-typed, so this module never imports LangGraph; such a graph joins a swarm as a
    member (see :mod:`swarmgraph.graph.features.native`).

    Example:
        >>> is_compiled_graph(Agent()), is_compiled_graph("Triage")
        (False, False)
    """
    return (
        not isinstance(value, Agent)
        and not is_langchain_tool(value)  # a Runnable with a name too, but a tool, not an agent
        and callable(getattr(value, "invoke", None))
        and callable(getattr(value, "get_graph", None))
        and isinstance(getattr(value, "name", None), str)
    )


def _tool_suffix(name: str) -> str:
    """``"Refunds Team"`` -> ``"refunds_team"``: a legal OpenAI function name part."""
    slug = re.sub(r"[^0-9a-zA-Z_]+", "_", name).strip("_").lower()
    return slug or "agent"


class Agent(BaseModel):
    """A stateless agent configuration, with Swarm's fields and defaults.

    ``instructions`` is a string or a function ``(context_variables) -> str`` that
    the framework calls before every model call. ``functions`` are tools the
    model may call. ``handoffs`` (our extension) lists agents this one may transfer
    to; each gets a generated ``transfer_to_<name>`` tool, so the graph knows the
    destination before anything runs.

    Agents compare and hash by identity: two agents with equal fields are still two
    nodes, and handoff cycles (A -> B -> A) never recurse in ``==`` or ``repr``.

    Example:
        >>> a = Agent(name="A")
        >>> b = Agent(name="B", handoffs=[a])
        >>> a.handoffs.append(b)          # cycles are fine
        >>> b.tools[0].__name__, b.tools[0]() is a
        ('transfer_to_a', True)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "Agent"
    model: str = "gpt-4o"
    instructions: str | Callable[..., str] = "You are a helpful agent."
    functions: list[AgentFunction] = Field(default_factory=list)
    tool_choice: str | None = None
    parallel_tool_calls: bool = True
    # Agents, or compiled LangGraph graphs with a name (members run by graph/features/native.py).
    handoffs: list[Any] = Field(default_factory=list)
    # Control of a running swarm (see graph/features/routes.py, graph/features/handback.py,
    # graph/features/history_views.py).
    routes: list[Any] = Field(default_factory=list)  # Route objects, checked after tools ran
    can_return: bool = False  # adds a generated transfer_back tool that returns CALLER
    history: Callable[[list], list] | None = None  # the view of the conversation its model gets
    # Contracts on the way in and out (see graph/features/guardrails.py,
    # graph/features/preconditions.py).
    input_guardrails: list[Callable[..., Any]] = Field(default_factory=list)
    output_guardrails: list[Callable[..., Any]] = Field(default_factory=list)
    on_trip: Any = None  # an Agent that takes the conversation when a guardrail trips
    requires: list[str] | Callable[..., Any] | None = None  # keys, or context -> None | reason
    # remember / recall / forget / history tools on the user's long-term memory: installs
    # graph/features/memory_tools.py's middleware (graph/options.py), whose tools join the
    # agent's; a Session with long_term=... supplies the memory they work on.
    memory_tools: bool = False
    # LangChain 1.x AgentMiddleware this agent's steps call, inside the run's own
    # (graph/core/middleware.py; docs/middleware.md).
    middleware: list[Any] = Field(default_factory=list)

    @field_validator("functions", mode="before")
    @classmethod
    def _functions(cls, value: Any) -> Any:
        # A LangChain tool (``@tool``, any ``BaseTool``) is not callable: it becomes the function
        # that runs it (graph/core/middleware_tools.py), as a middleware's tools do.
        if isinstance(value, (list, tuple)) and any(map(is_langchain_tool, value)):
            return [as_function(f, owner="Agent.functions") for f in value]
        return value

    @field_validator("middleware")
    @classmethod
    def _middleware(cls, value: list[Any]) -> list[Any]:
        if value:
            check_middleware(value)
        return value

    @field_validator("routes")
    @classmethod
    def _routes(cls, value: list[Any]) -> list[Any]:
        for route in value:  # duck-typed: routes.Route builds on this module
            if not (callable(getattr(route, "when", None)) and hasattr(route, "to")):
                raise ValueError(f"routes takes Route objects, not {route!r}")
        return value

    @field_validator("input_guardrails", "output_guardrails", mode="before")
    @classmethod
    def _guardrails(cls, value: list[Any]) -> list[Any]:
        for guardrail in value:
            if not callable(guardrail):
                raise ValueError(
                    "guardrails are functions (context_variables, messages) -> None | reason, "
                    f"not {guardrail!r}"
                )
        return value

    @field_validator("on_trip")
    @classmethod
    def _fallback(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, Agent):
            raise ValueError(f"on_trip takes an Agent, not {value!r}")
        return value

    @field_validator("requires", mode="before")
    @classmethod
    def _requires(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if value is None or callable(value):
            return value
        if isinstance(value, (list, tuple)) and all(isinstance(k, str) for k in value):
            return list(value)
        raise ValueError(
            "requires takes context keys (['order_id']) or a function "
            f"(context_variables) -> None | reason, not {value!r}"
        )

    @field_validator("handoffs")
    @classmethod
    def _handoff_targets(cls, value: list[Any]) -> list[Any]:
        for target in value:
            if not isinstance(target, Agent) and not is_compiled_graph(target):
                raise ValueError(
                    f"handoffs takes Agents or compiled LangGraph graphs, not {target!r}"
                )
        return value

    # The generated ``transfer_to_<name>`` tool that hands off *to* this agent, kept on the
    # agent itself: a global cache keyed by the agent would keep every agent ever handed to
    # alive (the tool holds its target), so a service that builds agents per request grew.
    _transfer: Any = PrivateAttr(default=None)
    # What the API's options made for this agent, with what they were made from (graph/options.py
    # keeps a route's middleware here): it lives as long as the agent, as ``_transfer`` does.
    _options: Any = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr_args__(self):  # keep repr finite when handoffs form a cycle
        for key, value in super().__repr_args__():
            if key in _CONTRACTS and not value:  # unset contracts: the repr Swarm users know
                continue
            if key == "handoffs":
                yield key, [agent.name for agent in value]
            elif key == "functions":
                yield key, [getattr(f, "__name__", repr(f)) for f in value]
            elif key == "routes":
                yield key, [getattr(r, "label", repr(r)) for r in value]
            elif key == "on_trip":
                yield key, getattr(value, "name", value)
            else:
                yield key, value

    @property
    def tools(self) -> list[AgentFunction]:
        """``functions``, one generated ``transfer_to_<name>`` per ``handoffs`` entry, and
        ``transfer_back`` when ``can_return``. The tools a middleware brings (``memory_tools``'s
        ``remember``/``recall``/``forget``/``history`` among them) join these in the step
        (``GraphRuntime.tools_of``)."""
        if not self.handoffs and not self.can_return:
            return self.functions
        tools = [*self.functions, *map(transfer_tool, self.handoffs)]
        if self.can_return:
            tools.append(transfer_back)
        return tools


#: Agent fields left out of its repr while unset.
_CONTRACTS = frozenset({"input_guardrails", "output_guardrails", "on_trip", "requires"})

#: Returned by a tool (or as ``Result(agent=CALLER)``): hand the conversation back to the agent
#: that handed it to the current one. An Agent so that ``Result`` accepts it; never a node.
CALLER = Agent(name="CALLER", instructions="Stands for the agent that handed off to this one.")


def transfer_back() -> Agent:
    """Hand the conversation back to the agent that transferred it to you."""
    return CALLER


# Declared, so discovery reads no code: CALLER is never a node, the edges come from can_return.
transfer_back.__swarmgraph_target__ = CALLER  # type: ignore[attr-defined]


def transfer_tool(target: Any) -> AgentFunction:
    """Return the ``transfer_to_<name>`` tool that hands the conversation to ``target``.

    The same tool object comes back for the same agent (so its schema is built once), and
    it lives exactly as long as ``target``.

    Example:
        >>> refunds = Agent(name="Refunds")
        >>> tool = transfer_tool(refunds)
        >>> tool.__name__, tool.__doc__, transfer_tool(refunds) is tool
        ('transfer_to_refunds', 'Transfer the conversation to the Refunds agent.', True)
    """
    cached = getattr(target, _TRANSFER_ATTR, None)
    # A renamed agent gets a new tool (its name and doc come from the agent's name); a
    # copied agent (model_copy copies private attributes) must not hand off to the original.
    # Checked on every ``agent.tools``, several times a step: compare, build nothing.
    if (
        cached is not None
        and cached.__swarmgraph_target__ is target
        and cached.__swarmgraph_for__ == target.name
    ):
        return cached

    def transfer() -> Agent:
        return target

    transfer.__name__ = transfer.__qualname__ = f"transfer_to_{_tool_suffix(target.name)}"
    transfer.__doc__ = f"Transfer the conversation to the {target.name} agent."
    transfer.__swarmgraph_target__ = target  # type: ignore[attr-defined]
    transfer.__swarmgraph_for__ = target.name  # type: ignore[attr-defined]
    # An Agent's private slot, or an attribute on a compiled LangGraph member graph; an
    # object that takes no attributes is simply not cached.
    with contextlib.suppress(AttributeError, TypeError):
        setattr(target, _TRANSFER_ATTR, transfer)
    return transfer


_TRANSFER_ATTR = "_transfer"


class Response(BaseModel):
    """What ``Swarm.run`` returns: the new messages, the final agent, the context.

    ``messages`` holds only the messages this run added, as OpenAI-style dicts with
    ``sender`` on assistant turns, exactly as Swarm returns them. ``usage`` is our
    addition: ``{"model_calls", "input_tokens", "output_tokens"}`` summed over the
    run (the model's own counts where it reports them, an estimate otherwise), plus
    ``tool_calls``, ``handoffs`` and ``by_agent`` (the same counts per agent name; they sum to
    the totals). ``trajectory`` lists the run's steps in order (``{"agent", "kind": "model" |
    "tool" | "handoff" | "route" | "guardrail" | "precondition" | "context", "name", ...}``; a
    check says ``passed`` and, when it failed, ``reason``; ``context``: a LangGraph member's
    context that did not fit the ``context_schema`` was dropped). ``pending`` lists the tool
    calls waiting for a human's approval
    (:class:`~swarmgraph.graph.features.approvals.PendingApproval`);
    resume with ``Swarm.run(..., approvals={id: True | False | "reason"})``. ``branches`` lists the
    parallel branches the run fanned out to
    (:class:`~swarmgraph.graph.features.parallel.Parallel`), in
    the order the agents were given: each one's label, agent, status, answer and own messages
    (see :mod:`swarmgraph.graph.features.branches`); ``[]`` for a run that never fanned out.
    ``context_conflicts`` (set by ``Session``) lists the context keys another turn changed
    while this one ran and this turn stored over (see :mod:`swarmgraph.memory.context_merge`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: list = Field(default_factory=list)
    agent: Agent | None = None
    context_variables: dict = Field(default_factory=dict)
    usage: dict = Field(default_factory=dict)
    trajectory: list[dict] = Field(default_factory=list)
    pending: list = Field(default_factory=list)
    branches: list[dict] = Field(default_factory=list)
    context_conflicts: list[dict] = Field(default_factory=list)
    #: A middleware stopped the run (a hook jumped to the end): ``{"middleware", "hook",
    #: "reason"}``; None when the run ended as Swarm's do.
    stopped: dict | None = None
    # Set by Swarm (and by a Session for a resumed turn); read through langchain_messages.
    _langchain_messages: list[Any] | None = PrivateAttr(default=None)

    @property
    def langchain_messages(self) -> list[BaseMessage] | None:
        """The same new messages as ``messages``, as the engine's own LangChain objects
        (``None`` on a Response built by hand): what a ``Session`` stores, without a
        dict -> LangChain round trip. Read-only; treat the list as shared.

        Example:
            >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
            >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
            >>> response = swarm.run(Agent(), [{"role": "user", "content": "hi"}])
            >>> [(m.type, m.content) for m in response.langchain_messages]
            [('ai', 'Hello!')]
            >>> Response().langchain_messages is None
            True
        """
        return self._langchain_messages


class Result(BaseModel):
    """A tool's rich return value: text for the model, an optional handoff, context updates.

    Example:
        >>> def remember_order(order_id: int):
        ...     return Result(value=f"Noted {order_id}.", context_variables={"order_id": order_id})
        >>> remember_order(7).context_variables
        {'order_id': 7}
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    value: str = ""
    agent: Any = None  # an Agent, a compiled LangGraph graph with a name, or a MultiHandoff
    context_variables: dict = Field(default_factory=dict)

    @field_validator("agent")
    @classmethod
    def _handoff_target(cls, value: Any) -> Any:
        # A feature's handoff to several agents (MULTI_HANDOFF_ATTR on its class) goes through.
        several = getattr(type(value), MULTI_HANDOFF_ATTR, False)
        if (
            value is not None
            and not isinstance(value, Agent)
            and not is_compiled_graph(value)
            and not several
        ):
            raise ValueError(
                "Result.agent takes an Agent, a compiled LangGraph graph or a value that hands "
                f"off to several agents: {value!r}"
            )
        return value


def check_middleware(middleware: Sequence[Any]) -> list[Any]:
    """``middleware`` as a list, each one checked to be a LangChain ``AgentMiddleware`` whose
    ``tools`` a swarm step can run (graph/core/middleware_tools.py).

    Example:
        >>> check_middleware([print])
        Traceback (most recent call last):
        ...
        TypeError: middleware takes langchain.agents.middleware.AgentMiddleware objects ...
    """
    from langchain.agents.middleware import AgentMiddleware

    for m in middleware:
        if not isinstance(m, AgentMiddleware):
            raise TypeError(
                "middleware takes langchain.agents.middleware.AgentMiddleware objects (a class, "
                f"or one made by @before_model, @wrap_tool_call...), not {m!r}"
            )
    if any(getattr(m, "tools", None) for m in middleware):  # a tool the step cannot run fails now
        from .middleware_tools import middleware_tools

        middleware_tools(middleware)
    return list(middleware)
