"""What a run's ``context_variables`` must keep to when something types them: :class:`ContextRules`.

In Swarm the context is a plain dict, and so it is here unless the API hands the builder an
object with these methods (``Swarm(context_schema=Model)`` and ``build_swarm_graph(...,
context_schema=Model)`` hand it graph/features/context_schema.py's ``ContextSchema``, through
graph/options.py's ``context_rules_of``). The core only calls them, at four moments:

- **the graph's state**: :meth:`ContextRules.state_schema` declares the ``context_variables``
  channel of a state class (the graph's, and a fan-out join's), with its reducer;
- **a step starts**: the node validates the context it reads (:meth:`ContextRules.validate`),
  unless it is the very dict last validated in this run (:meth:`ContextRules.kept`), and
  remembers it (:meth:`ContextRules.keep`);
- **a tool wrote it**: the tool runner applies a ``Result`` update (:meth:`ContextRules.update`)
  and validates the result; one that does not fit is answered ``Error: ...`` to that call and
  undone (graph/core/tool_calls.py);
- **runs combine**: a fan-out's join merges the keys branches both wrote by
  :meth:`ContextRules.merge_rules`.

None of them runs for a plain dict context: a plain run pays nothing.

Example (a minimal rule set: every value an ``int``, no reducers):
    >>> from swarmgraph.graph.core.errors import ContextValidationError
    >>> class Ints:
    ...     model = None
    ...     def validate(self, data):
    ...         bad = [f"{k!r} expects int" for k, v in data.items() if not isinstance(v, int)]
    ...         if bad:
    ...             raise ContextValidationError("Ints", bad)
    ...         return dict(data)
    ...     def update(self, context, update): context.update(update)
    ...     def instance(self, context): raise TypeError("no model")
    ...     def kept(self, control): return None
    ...     def keep(self, control, context): pass
    ...     def merge_rules(self): return {}
    ...     def state_schema(self, base): return base
    >>> rules: ContextRules = Ints()
    >>> rules.validate({"visits": 1})
    {'visits': 1}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .run_control import RunControl

__all__ = ["ContextRules"]


class ContextRules(Protocol):
    """The rules a typed ``context_variables`` follows (see the module): how it is validated,
    updated, remembered per run, merged, and declared in the graph's state."""

    #: The pydantic model the context is an instance of, if it is one (a tool whose
    #: ``context_variables`` is annotated with it gets :meth:`instance`), else None.
    model: type[BaseModel] | None

    def validate(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` as a valid context (a new dict), or raise
        :class:`~swarmgraph.graph.core.errors.ContextValidationError` naming each problem."""
        ...

    def update(self, context: dict[str, Any], update: Mapping[str, Any]) -> None:
        """Apply a tool's ``Result(context_variables=update)`` to ``context`` in place (its
        reducers, by key); not validated here."""
        ...

    def instance(self, context: Mapping[str, Any]) -> BaseModel:
        """``context`` (valid) as an instance of :attr:`model`."""
        ...

    def kept(self, control: RunControl) -> dict[str, Any] | None:
        """The context dict last validated in ``control``'s run (not validated again)."""
        ...

    def keep(self, control: RunControl, context: dict[str, Any]) -> None:
        """Remember ``context`` as valid for ``control``'s run."""
        ...

    def merge_rules(self) -> dict[str, Callable[[Any, Any], Any]]:
        """How a join combines a key several runs wrote, by key (keys absent: the last wins)."""
        ...

    def state_schema(self, base: type) -> type:
        """``base`` (a ``TypedDict`` state) with ``context_variables`` declared by these rules."""
        ...
