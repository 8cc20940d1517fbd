"""OneToOne: two agents alternating on one shared conversation, as a two-node LangGraph graph.

The pattern comes from the swarms framework. The task opens the conversation as role
``"User"``; then, ``max_loops`` times, the sender takes a turn and the receiver takes a
turn, so the history reads ``User, S, R, S, R, ...``. Each turn reads the conversation
role-aware (:func:`~swarmgraph.graph.onetoone.views.messages_for`): the agent's own turns are
``assistant``
turns, the peer's are ``user`` turns ``"Peer: ..."``, and the newest turn is its task.

In the graph the sender and the receiver are nodes named after the agents; the
receiver -> sender edge is taken while ``loop < max_loops``, then the graph ends.

A side is a :class:`graph.Agent` (run through a :class:`graph.Swarm`, so its tools,
handoffs and instructions work as usual) or any object with ``agent_name`` (or
``name``) and ``run(task=..., messages=...)``, so agents from other frameworks pair too.

Example (duck-typed agents, so no model is needed; each echoes the task it was handed):
    >>> class Echo:
    ...     def __init__(self, name):
    ...         self.agent_name = name
    ...     def run(self, task, messages):
    ...         return f"{self.agent_name} heard: {task}"
    >>> history = one_to_one(Echo("Writer"), Echo("Editor"), "Tagline?", max_loops=2)
    >>> [m["role"] for m in history]
    ['User', 'Writer', 'Editor', 'Writer', 'Editor']
    >>> history[2]["content"]  # the editor answers the writer's turn, labelled with its name
    'Editor heard: Writer: Writer heard: Tagline?'
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, TypedDict

from langgraph.graph import END, START, StateGraph

from ..core.types import Agent
from .formats import OutputType, format_history, validate_output_type
from .views import agent_answer, messages_for, split_last_turn

EMPTY_INPUT_MESSAGE = "Sender, receiver, and task cannot be empty."

# Roles the views give a meaning of their own; an agent named like this would read
# the task (or the system rows) as its own turns.
_RESERVED_ROLES = frozenset({"user", "human", "system"})


class OneToOneState(TypedDict, total=False):
    """State of the exchange graph.

    ``conversation`` is appended to by each node (the reducer is list concatenation);
    ``loop`` counts finished sender+receiver exchanges; ``max_loops`` is how many to run
    (1 when absent).
    """

    conversation: Annotated[list[dict[str, str]], operator.add]
    loop: int
    max_loops: int


def side_name(side: Any) -> str:
    """The name a side speaks under: ``agent_name``, else ``name`` (a :class:`graph.Agent`).

    Example:
        >>> side_name(Agent(name="Writer"))
        'Writer'
    """
    name = getattr(side, "agent_name", None)
    if name is None:
        name = getattr(side, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"{type(side).__name__} has no usable name: a OneToOne side needs a non-empty "
            "string `agent_name` (or `name`); it is the role its turns are recorded under."
        )
    return name


def _check_side(side: Any, which: str) -> str:
    name = side_name(side)
    if name.lower() in _RESERVED_ROLES:
        raise ValueError(
            f"The {which} is named {name!r}, which the conversation uses for the task or "
            "for system rows; give the agent another name."
        )
    if not isinstance(side, Agent) and not callable(getattr(side, "run", None)):
        raise TypeError(
            f"The {which} {name!r} is neither a graph.Agent nor an object with a "
            "run(task=..., messages=...) method."
        )
    return name


def _check_pair(sender: Any, receiver: Any) -> tuple[str, str]:
    if not sender or not receiver:
        raise ValueError(EMPTY_INPUT_MESSAGE)
    sender_name = _check_side(sender, "sender")
    receiver_name = _check_side(receiver, "receiver")
    if sender_name == receiver_name:
        raise ValueError(
            f"Sender and receiver are both named {sender_name!r}; names are the roles in the "
            "shared conversation, so they must differ."
        )
    return sender_name, receiver_name


def _node_names(sender_name: str, receiver_name: str) -> tuple[str, str]:
    """Node names for the two sides: the agent names, made legal for LangGraph.

    LangGraph forbids ``|`` and ``:`` in node names and a node sharing a state key's name.
    """
    taken = set(OneToOneState.__annotations__) | {START, END}
    names: list[str] = []
    for raw in (sender_name, receiver_name):
        node = raw.replace("|", "_").replace(":", "_")
        while node in taken:
            node += "_"
        taken.add(node)
        names.append(node)
    return names[0], names[1]


class _Node(Protocol):
    """A node of the exchange graph (LangGraph calls it with its state by name)."""

    def __call__(self, state: OneToOneState) -> dict: ...


def _turn(side: Any, name: str, swarm_for: Callable[[], Any]) -> _Node:
    """A graph node: ``side`` reads the conversation as ``name`` and appends its answer."""

    def take_turn(state: OneToOneState) -> dict:
        prior, task = split_last_turn(messages_for(name, state.get("conversation", [])))
        if isinstance(side, Agent):
            output = swarm_for().run(
                agent=side, messages=[*prior, {"role": "user", "content": task}]
            )
        else:
            output = side.run(task=task, messages=prior)
        # An unusable answer is recorded as "" (the views skip it) so the history
        # keeps one entry per turn; the peer then gets the "no new messages" task.
        answer = agent_answer(output, "", name=name)
        if hasattr(side, "short_memory"):
            # A swarms Agent returns its whole transcript; its answer is in short_memory.
            answer = agent_answer(side, answer)
        return {"conversation": [{"role": name, "content": answer}]}

    take_turn.__name__ = name
    return take_turn


def build_one_to_one_graph(sender: Any, receiver: Any, *, swarm: Any = None) -> StateGraph:
    """The exchange as an *uncompiled* ``StateGraph``: compile it with your checkpointer.

    Nodes are named after the agents (``|`` and ``:`` become ``_``). Input state:
    ``{"conversation": [{"role": "User", "content": task}], "loop": 0, "max_loops": n}``.
    ``swarm`` runs :class:`graph.Agent` sides; ``None`` creates one ``Swarm()`` on first use.
    ``conversation`` has an append reducer, so on a checkpointed thread input entries add to
    what is saved: use a new ``thread_id`` per task (or invoke with only a larger
    ``max_loops`` to continue the same exchange).

    Example:
        >>> class Echo:
        ...     def __init__(self, name):
        ...         self.agent_name = name
        ...     def run(self, task, messages):
        ...         return task.upper()
        >>> app = build_one_to_one_graph(Echo("Writer"), Echo("Editor")).compile()
        >>> state = app.invoke({"conversation": [{"role": "User", "content": "hi"}],
        ...                     "loop": 0, "max_loops": 1})
        >>> [(m["role"], m["content"]) for m in state["conversation"]]
        [('User', 'hi'), ('Writer', 'HI'), ('Editor', 'WRITER: HI')]
        >>> mermaid = app.get_graph().draw_mermaid()  # the loop edge is dotted (conditional)
        >>> "Writer --> Editor;" in mermaid, "Editor -.-> Writer;" in mermaid
        (True, True)
    """
    sender_name, receiver_name = _check_pair(sender, receiver)
    sender_node, receiver_node = _node_names(sender_name, receiver_name)

    engine: list[Any] = [swarm]

    def swarm_for() -> Any:
        if engine[0] is None:
            from ..swarm import Swarm  # the engine is only needed for graph.Agent sides

            engine[0] = Swarm()
        return engine[0]

    def next_after_receiver(state: OneToOneState) -> str:
        return sender_node if state.get("loop", 0) < state.get("max_loops", 1) else END

    receiver_turn = _turn(receiver, receiver_name, swarm_for)

    def receiver_then_count(state: OneToOneState) -> dict:
        return {**receiver_turn(state), "loop": state.get("loop", 0) + 1}

    builder = StateGraph(OneToOneState)
    builder.add_node(sender_node, _turn(sender, sender_name, swarm_for))
    builder.add_node(receiver_node, receiver_then_count)
    builder.add_edge(START, sender_node)
    builder.add_edge(sender_node, receiver_node)
    builder.add_conditional_edges(receiver_node, next_after_receiver, [sender_node, END])
    return builder


def _check_max_loops(max_loops: Any) -> int:
    if isinstance(max_loops, bool) or not isinstance(max_loops, int) or max_loops < 1:
        raise ValueError(f"max_loops must be an integer >= 1, got {max_loops!r}.")
    return max_loops


def one_to_one(
    sender: Any,
    receiver: Any,
    task: str,
    max_loops: int = 1,
    output_type: OutputType = "dict",
    *,
    swarm: Any = None,
) -> Any:
    """Run ``max_loops`` sender/receiver exchanges on a fresh conversation; return the history.

    The history is ``[User, S, R, S, R, ...]`` (``1 + 2 * max_loops`` entries, each
    ``{"role": <agent name or "User">, "content": str}``), rendered by
    :func:`~swarmgraph.graph.onetoone.formats.format_history` as ``output_type``. Everything is
    checked before
    any agent runs.

    Raises:
        ValueError: ``"Sender, receiver, and task cannot be empty."`` for a missing side
            or an empty (or blank) task; same or reserved agent names; ``max_loops`` < 1;
            an unknown ``output_type``.
        TypeError: ``task`` is not a string, or a side cannot be run.

    Example:
        >>> class Echo:
        ...     def __init__(self, name):
        ...         self.agent_name = name
        ...     def run(self, task, messages):
        ...         return f"{self.agent_name} got: {task}"
        >>> print(one_to_one(Echo("Analyst"), Echo("Skeptic"), "Assess it.", output_type="str"))
        User: Assess it.
        <BLANKLINE>
        Analyst: Analyst got: Assess it.
        <BLANKLINE>
        Skeptic: Skeptic got: Analyst: Analyst got: Assess it.
        >>> one_to_one(Echo("A"), Echo("B"), "")
        Traceback (most recent call last):
        ...
        ValueError: Sender, receiver, and task cannot be empty.
    """
    if not sender or not receiver or task is None or task == "":
        raise ValueError(EMPTY_INPUT_MESSAGE)
    if not isinstance(task, str):
        raise TypeError(f"task must be a string, got {type(task).__name__}.")
    if not task.strip():
        raise ValueError(EMPTY_INPUT_MESSAGE)
    max_loops = _check_max_loops(max_loops)
    validate_output_type(output_type)
    app = build_one_to_one_graph(sender, receiver, swarm=swarm).compile()
    state = app.invoke(
        {"conversation": [{"role": "User", "content": task}], "loop": 0, "max_loops": max_loops},
        # Two steps per exchange; LangGraph's default limit (25) would stop at 12 loops.
        config={"recursion_limit": 2 * max_loops + 5},
    )
    return format_history(state["conversation"], output_type)


@dataclass(eq=False)
class OneToOne:
    """A reusable sender/receiver pair; each :meth:`run` starts a new conversation.

    Example (a side can be any object with a name and ``run``; here a namespace of a lambda):
        >>> from types import SimpleNamespace
        >>> def noting(name):
        ...     return lambda task, messages: f"{name}: noted ({len(messages)} earlier turns)"
        >>> writer = SimpleNamespace(name="Writer", run=noting("Writer"))
        >>> editor = SimpleNamespace(name="Editor", run=noting("Editor"))
        >>> pair = OneToOne(writer, editor, name="Tagline-Pair", output_type="list")
        >>> for line in pair.run("one"):
        ...     print(line)
        User: one
        Writer: Writer: noted (0 earlier turns)
        Editor: Editor: noted (1 earlier turns)
        >>> len(pair.run("two", max_loops=2))
        5
    """

    sender: Any
    receiver: Any
    name: str = "OneToOne"
    description: str = "A one-to-one communication pattern between two agents"
    output_type: OutputType = "dict"
    swarm: Any = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _check_pair(self.sender, self.receiver)  # fail at construction, not on the first run
        validate_output_type(self.output_type)

    def run(self, task: str, max_loops: int = 1) -> Any:
        """Run the pair on ``task`` (a new conversation); see :func:`one_to_one`."""
        return one_to_one(
            self.sender,
            self.receiver,
            task,
            max_loops=max_loops,
            output_type=self.output_type,
            swarm=self.swarm,
        )

    def graph(self) -> StateGraph:
        """The uncompiled exchange graph for this pair (see :func:`build_one_to_one_graph`)."""
        return build_one_to_one_graph(self.sender, self.receiver, swarm=self.swarm)
