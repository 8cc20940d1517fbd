"""Typed ``context_variables`` as a middleware: :class:`ContextSchemaMiddleware`.

``Swarm(context_schema=Model)`` and ``build_swarm_graph(..., context_schema=Model)`` install
one as the first of the graph's run middleware (graph/options.py's ``context_middleware_of``),
so it wraps every agent's step and the user's own middleware runs inside it. The core names no
typed context: the middleware acts at its moments (graph/core/middleware.py):

- **the graph's state** (``state_schema``): it declares the ``context_variables`` channel as
  the schema types it, reduced key by key through the schema's reducers and validated
  (graph/features/context_schema.py's :func:`state_schema_for`); the builder merges it into
  the graph's state, as any middleware's fields;
- **a step starts** (``before_step``, the swarm's extension): it validates the context the step
  reads, unless it is the very dict last validated in this run, and puts the valid one (its
  defaults filled in) in the step's place; the core writes a context a hook replaced;
- **a tool wrote it** (``tool_context``, the swarm's extension the tool runner asks): a call's
  ``Result`` update goes in through the reducers, the result is validated, and a call whose
  write does not fit is answered ``Error: ...`` and undone (graph/core/tool_calls.py);
- **runs combine**: a fan-out's join reads the merge rules of the schema's reducers
  (:func:`context_merge_rules`, graph/features/branches.py).

A tool whose ``context_variables`` is annotated with the model gets an instance of it, as any
model-typed tool does (graph/core/tool_calls.py).

Example:
    >>> import operator
    >>> from typing import Annotated
    >>> from pydantic import BaseModel
    >>> class Desk(BaseModel):
    ...     order_id: int | None = None
    ...     visits: Annotated[int, operator.add] = 0
    >>> typed = ContextSchemaMiddleware(Desk)
    >>> typed.schema, sorted(typed.state_schema.__annotations__)
    (ContextSchema(Desk), ['context_variables'])
    >>> context_merge_rules([typed])
    {'visits': OnChange(rule=<built-in function add>)}
"""

# No ``from __future__ import annotations``: the doctests define schemas, and pydantic must see
# their annotations as objects (graph/features/context_schema.py says the same).
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware

from ..core.run_control import RunControl
from .context_schema import ContextSchema, state_schema_for

if TYPE_CHECKING:
    from ..core.runtime import StepStart

__all__ = ["ContextSchemaMiddleware", "context_merge_rules", "schema_in"]


class ContextSchemaMiddleware(AgentMiddleware):
    """The typed context's middleware for ``schema`` (a pydantic model or ``TypedDict``, or a
    :class:`~swarmgraph.graph.features.context_schema.ContextSchema`): see the module."""

    def __init__(self, schema: type | ContextSchema) -> None:
        super().__init__()
        self.schema = ContextSchema.of(schema)
        # Its one field, ``context_variables``, typed and reduced by the schema: the builder
        # merges it into the graph's state in place of the plain dict's declaration.
        self.state_schema = state_schema_for(self.schema, _EMPTY_STATE)

    @property
    def name(self) -> str:
        return f"ContextSchemaMiddleware[{self.schema.name}]"

    def __repr__(self) -> str:
        return f"ContextSchemaMiddleware({self.schema.name})"

    async def before_step(self, start: "StepStart") -> bool:
        """The context the step reads, validated (a clear ``ContextValidationError`` before any
        model call); one the state does not hold as it is (defaults filled, values coerced)
        becomes the step's, which the core writes. Never plans the step itself."""
        turn = start.turn
        given, control = turn.context, turn.control
        if self.schema.kept(control) is given:  # validated already in this run (entry, a tool)
            return False
        valid = self.schema.validate(given)
        if valid != given:
            turn.context = valid
        else:
            self.schema.keep(control, given)
        return False

    def tool_context(self, control: RunControl) -> "_ToolWrites":
        """What the tool runner applies each call's context change with, for ``control``'s
        run (graph/core/tool_calls.py's ``ContextWrites``)."""
        return _ToolWrites(self.schema, control)


class _ToolWrites:
    """A run's tool calls' context changes: updates through the reducers, the result
    validated; a context that passed is remembered as the run's valid one (the next step
    does not check it again)."""

    __slots__ = ("control", "schema")

    def __init__(self, schema: ContextSchema, control: RunControl) -> None:
        self.schema, self.control = schema, control

    def update(self, context: dict[str, Any], update: Mapping[str, Any]) -> None:
        self.schema.update(context, update)

    def validate(self, context: dict[str, Any]) -> dict[str, Any]:
        valid = self.schema.validate(context)
        # The runner keeps ``context`` (the values of ``valid`` written into it): the dict the
        # step writes to the state.
        self.schema.keep(self.control, context)
        return valid


#: A state with no field of its own: the middleware's state is its context channel alone.
_EMPTY_STATE: type = type("ContextState", (dict,), {"__annotations__": {}})


def schema_in(middleware: Sequence[Any]) -> ContextSchema | None:
    """The typed context of a graph whose run middleware is ``middleware``, or None (a plain
    dict).

    Example:
        >>> from typing_extensions import TypedDict
        >>> class Desk(TypedDict):
        ...     order_id: int
        >>> schema_in([ContextSchemaMiddleware(Desk)]), schema_in([])
        (ContextSchema(Desk), None)
    """
    for m in middleware:
        if isinstance(m, ContextSchemaMiddleware):
            return m.schema
    return None


def context_merge_rules(middleware: Sequence[Any]) -> dict[str, Callable[[Any, Any], Any]]:
    """How a fan-out's join combines context keys branches both wrote, besides
    ``Parallel(merge=)``: the typed context's reducers (an additive one takes each branch's
    change), ``{}`` for a plain dict."""
    schema = schema_in(middleware)
    return {} if schema is None else schema.merge_rules()
