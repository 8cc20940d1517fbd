"""Every exception ``swarmgraph.graph`` raises, in one place, and the roots of all of ours.

Every error swarmgraph raises (the engine's here, the memory side's in
:mod:`swarmgraph.memory.errors`) derives from :class:`SwarmgraphError`, so one ``except``
catches ours, and keeps the builtin base code catches today (``TypeError``, ``ValueError``,
``ConnectionError``, ``RuntimeError``). Every warning derives from :class:`SwarmgraphWarning`
(a ``UserWarning``). Errors that stop a run derive from :class:`SwarmError`; errors the model
caused while a run goes on never reach the caller: the model gets them as ``Error:`` tool
messages instead.

Example:
    >>> from swarmgraph.memory.errors import StorageUnavailable
    >>> error = StorageUnavailable("sqlite:///x.db", "disk full")
    >>> isinstance(error, SwarmgraphError), isinstance(error, ConnectionError)
    (True, True)
    >>> issubclass(ToolSchemaError, SwarmgraphError) and issubclass(ToolSchemaError, TypeError)
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any


class SwarmgraphError(Exception):
    """The root of every error swarmgraph raises: ``except SwarmgraphError`` catches ours
    (each also keeps its builtin base: ``except ValueError`` still works).

    An error pickles (a process pool, a served graph's worker) as itself, its message and
    fields kept, whatever its ``__init__`` takes:

    >>> import pickle
    >>> error = HandoffLoopError(["Triage", "Sales", "Triage"], 3)
    >>> back = pickle.loads(pickle.dumps(error))
    >>> (back.trail, back.limit), str(back) == str(error)
    ((['Triage', 'Sales', 'Triage'], 3), True)
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own reduce calls cls(*self.args), and args holds the worded message,
        # not the fields __init__ takes; rebuild without __init__, then restore the fields.
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    """An error of ``cls`` with ``args`` and no ``__init__`` run (pickle then sets its fields)."""
    return cls.__new__(cls, *args)


if TYPE_CHECKING:  # the type checker reads the fields as a dataclass's
    from dataclasses import dataclass as error_fields
else:

    def error_fields(cls):
        """Declare an error's fields once, as a dataclass does (``__init__`` from them, then
        ``__post_init__`` words the message), but leave the class a plain exception to
        anything that serialises dataclasses by their fields: orjson does, so ``langgraph
        dev`` sent a served graph's error as its fields and the SDK client read ``Exception:
        None: None``. Identity equality and hashing and the exception's repr, as any
        exception."""
        made = dataclass(eq=False, repr=False)(cls)
        del made.__dataclass_fields__
        del made.__dataclass_params__
        return made


class SwarmgraphWarning(UserWarning):
    """The root of every warning swarmgraph emits (``warnings.simplefilter("error",
    SwarmgraphWarning)`` turns all of ours into errors)."""


class UnknownAgentWarning(SwarmgraphWarning):
    """The conversation names an active agent this swarm does not know (a compiled graph's
    state, a Session's stored conversation); another agent picks the conversation up."""


class SwarmError(SwarmgraphError, RuntimeError):
    """Base class for errors that stop a run.

    ``response`` holds what the run produced before it stopped (a ``Response``),
    so nothing the model or the tools already did is lost. An error with fields declares them
    with :func:`error_fields`.
    """

    response: Any = None
    #: What the failing step would have written to the state (the join's answers and merged
    #: context when branches conflict): the Response attached to the error includes it.
    unsaved: Any = None


@error_fields
class HandoffLoopError(SwarmError):
    """Agents kept handing the conversation to each other without anyone replying."""

    trail: list[str]
    limit: int

    def __post_init__(self) -> None:
        self.trail = list(self.trail)
        super().__init__(
            f"Handoff loop: {' -> '.join(self.trail)} ({self.limit} handoffs in a row without "
            "a reply). "
            "The agents keep transferring to each other; give one of them a way to answer, "
            "or pass max_turns to bound the run."
        )


@error_fields
class StepLimitError(SwarmError):
    """A run took LangGraph's whole step budget (``recursion_limit``) without a final answer.

    Without ``max_turns`` that takes 1,000 steps: a model that keeps calling tools (an unknown
    one, one that keeps failing, or one whose answer it never accepts) would otherwise end in
    LangGraph's ``GraphRecursionError`` and lose the run. ``calls`` counts the tools called
    by the replies since the last one that called none; ``response`` holds what the run
    produced, every tool call answered; the original error is the ``__cause__``.

    Example:
        >>> print(StepLimitError(1000, "Agent", {"lookup": 498}))  # doctest: +NORMALIZE_WHITESPACE
        The run took 1000 steps without a final answer: agent 'Agent' kept calling tools
        (lookup x 498). Bound a run with max_turns= or budget=Budget(max_tool_calls=...);
        .response holds what it produced.
    """

    limit: int
    agent: str
    calls: dict[str, int]

    def __post_init__(self) -> None:
        self.calls = dict(self.calls)
        tools = ", ".join(f"{name} x {n}" for name, n in self.calls.items()) or "none"
        super().__init__(
            f"The run took {self.limit} steps without a final answer: agent {self.agent!r} "
            "kept calling "
            f"tools ({tools}). Bound a run with max_turns= or "
            "budget=Budget(max_tool_calls=...); .response holds what it produced."
        )


class MissingModelError(SwarmgraphError, RuntimeError):
    """No model was given and the environment does not configure OpenAI."""


class ToolSchemaError(SwarmgraphError, TypeError):
    """A tool's signature cannot be described to the model (raised when the schema is built).

    Example:
        >>> from swarmgraph.graph.core.schema import function_to_json
        >>> class Pen: ...
        >>> def pick(pen: Pen): ...
        >>> try:  # doctest: +ELLIPSIS
        ...     function_to_json(pick)
        ... except ToolSchemaError as err:
        ...     print(err)
        tool 'pick': parameter 'pen': cannot describe annotation Pen as JSON schema ...
    """


class ToolArgumentError(SwarmgraphError, ValueError):
    """The model's arguments for a tool are unusable; ``str()`` is meant for the model to read.

    ``tool`` is the tool name and ``problems`` the individual complaints.

    Example:
        >>> from swarmgraph.graph.core.schema import tool_spec
        >>> def lookup_order(order_id: int): ...
        >>> try:
        ...     tool_spec(lookup_order).parse_arguments('{"order_id": "abc"}')
        ... except ToolArgumentError as err:
        ...     print(err.tool, err.problems)
        lookup_order ["argument 'order_id': Input should be a valid integer, \
unable to parse string as an integer (got 'abc')"]
    """

    def __init__(self, tool: str, problems: list[str]):
        self.tool = tool
        self.problems = problems
        super().__init__(f"{tool}: " + "; ".join(problems))


class ContextValidationError(SwarmgraphError, ValueError):
    """``context_variables`` do not fit the run's ``context_schema``: raised for a caller's
    input (``Swarm.run``, the compiled graph's input, a stored context) before any model call.
    A tool's invalid update never raises: the tool call is answered ``Error: ...`` instead.

    ``schema`` names the schema, ``problems`` lists what is wrong, one line each.

    Example:
        >>> print(ContextValidationError("Desk", ["'order_id' expects int, got 'seven' (str)"]))
        context_variables do not fit Desk: 'order_id' expects int, got 'seven' (str)
    """

    def __init__(self, schema: str, problems: list[str]) -> None:
        self.schema = schema
        self.problems = list(problems)
        super().__init__(f"context_variables do not fit {schema}: " + "; ".join(self.problems))
