"""Typed ``context_variables``: ``Swarm(context_schema=Model)`` / ``build_swarm_graph(...,
context_schema=Model)``.

The schema is a pydantic model or a ``TypedDict``. A key may carry a reducer the LangGraph
way, ``visits: Annotated[int, operator.add]``: its reducer is the merge rule for that key.
Without a schema nothing here runs and ``context_variables`` is Swarm's plain dict.

How it attaches: the core names no typed context. ``Swarm`` and ``build_swarm_graph`` install
a :class:`~swarmgraph.graph.features.context_middleware.ContextSchemaMiddleware` for
``context_schema=`` (graph/options.py's ``context_middleware_of``), which holds one
:class:`ContextSchema`: its ``state_schema`` declares the graph's ``context_variables``
(:func:`state_schema_for`), its ``before_step`` validates the context a step reads, its
``tool_context`` has the tool runner validate each tool's change, and a fan-out's join merges
by :meth:`ContextSchema.merge_rules`.

The rules, where the issue leaves them open:

- **The context stays a dict** (tools, instructions and ``Response.context_variables`` read it
  as in Swarm), holding the schema's validated values: a pydantic model's defaults are filled
  in, ``"7"`` for an ``int`` becomes ``7`` (pydantic's lax mode; ``ConfigDict(strict=True)``
  refuses it), a nested model stays a model instance.
- **Validated on entry** (``Swarm.run``'s ``context_variables``, the compiled graph's input, a
  ``Session``'s stored context) with a clear :class:`ContextValidationError` before any model
  call, and **after every tool call** that could change it: a wrong type, an unknown key or a
  deleted required key is answered ``Error: ...`` to that tool call, and the context keeps its
  last valid values. A key the schema does not name is unknown unless the model says
  ``extra="allow"`` (pydantic's default, ``"ignore"``, would drop a misspelt key silently).
- **Two ways a tool changes it.** ``Result(context_variables={"visits": 1})`` is an *update*,
  LangGraph's semantics: a key with a reducer becomes ``reducer(current, 1)``, a key without
  one is replaced. Writing the live dict in place (``context_variables["visits"] = 5``, Swarm's
  way) sets the value itself: no reducer runs. Deleting a key in place resets it to its default
  (a pydantic default), removes it (a ``TypedDict`` key that is not required), or is refused (a
  required key). A tool whose ``context_variables`` parameter is annotated with a pydantic model
  gets an instance of it; the fields it assigns are written back as in-place writes.
- **The compiled graph's channel** reduces what a caller or another node writes (the input, a
  ``Command(update=...)``, ``update_state``) key by key through the reducers, and validates the
  result: LangGraph's semantics. Our agent nodes apply the reducers as the tools run and write
  the result whole.

Example:
    >>> import operator
    >>> from typing import Annotated
    >>> from pydantic import BaseModel
    >>> class Desk(BaseModel):
    ...     order_id: int | None = None
    ...     visits: Annotated[int, operator.add] = 0
    >>> schema = ContextSchema.of(Desk)
    >>> context = schema.validate({"order_id": "7"})
    >>> context
    {'order_id': 7, 'visits': 0}
    >>> schema.update(context, {"visits": 1}); schema.update(context, {"visits": 2}); context
    {'order_id': 7, 'visits': 3}
    >>> print(*schema.problems({"order_id": "seven", "colour": "red"}), sep="\\n")
    unknown key 'colour' (the schema Desk has: order_id, visits)
    'order_id' expects int | None, got 'seven' (str)
"""

# No ``from __future__ import annotations``: the doctests define schemas, and pydantic and
# ``get_type_hints`` must see their annotations as objects.
import inspect
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, get_args, get_origin, get_type_hints

import typing_extensions
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from typing_extensions import NotRequired, Required, TypedDict, is_typeddict

from ..core.errors import ContextValidationError
from ..core.run_control import RunControl, RunState
from ..core.schema import typed_annotation  # noqa: F401  (where it lived before)
from .context_changes import merge_rules_of
from .errors import ContextSchemaWarning

__all__ = [
    "ContextSchema",
    "ContextSchemaWarning",
    "ContextValidationError",
    "context_reducers",
    "state_schema_for",
]

Reducer = Callable[[Any, Any], Any]
_MISSING: Any = object()
_ANNOTATED: Any = Annotated  # Annotated[(tp, *metadata)] built at run time


def _unwrap_required(tp: Any) -> Any:
    """``NotRequired[X]`` / ``Required[X]`` -> ``X`` (``get_type_hints`` keeps them)."""
    while get_origin(tp) in (NotRequired, Required, typing_extensions.NotRequired):
        tp = get_args(tp)[0]
    return tp


def _is_reducer(meta: Any) -> bool:
    """LangGraph's rule: the last ``Annotated`` item, when it is a two-argument callable."""
    if not callable(meta) or isinstance(meta, type):
        return False
    try:
        params = inspect.signature(meta).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: operator.add has one
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) == 2


def _split_reducer(tp: Any) -> tuple[Any, Reducer | None]:
    """``Annotated[int, operator.add]`` -> ``(int, operator.add)``; other metadata stays."""
    if get_origin(tp) is not Annotated:
        return tp, None
    base, *metadata = get_args(tp)
    if not metadata or not _is_reducer(metadata[-1]):
        return tp, None
    reducer = metadata[-1]
    rest = metadata[:-1]
    return (_ANNOTATED[(base, *rest)] if rest else base), reducer


def _type_name(tp: Any) -> str:
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if isinstance(tp, type) and not get_args(tp):
        return tp.__qualname__
    return repr(tp).replace("typing.", "").replace("typing_extensions.", "")


def _fields_of(instance: BaseModel) -> dict[str, Any]:
    """A model instance's fields (and extras) as a new dict: ``dict(instance)`` walks pydantic's
    ``__iter__`` generator, twice the cost of the validation itself."""
    extra = instance.__pydantic_extra__
    return {**instance.__dict__, **extra} if extra else dict(instance.__dict__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class ValidContext(RunState):
    """The typed context's state for one run: the context dict last validated."""

    context: dict[str, Any] | None = None


class ContextSchema:
    """A ``context_schema`` (pydantic model or ``TypedDict``) read once: its fields, which are
    required, each key's reducer, and the validator. Get one with :meth:`of` (cached per
    schema); the graph's :class:`~swarmgraph.graph.features.context_middleware.
    ContextSchemaMiddleware` holds one (graph/options.py's ``context_middleware_of``).

    Example:
        >>> from typing_extensions import NotRequired, TypedDict
        >>> class Desk(TypedDict):
        ...     customer: str
        ...     order_id: NotRequired[int]
        >>> schema = ContextSchema.of(Desk)
        >>> schema.validate({"customer": "Ming", "order_id": "7"})
        {'customer': 'Ming', 'order_id': 7}
        >>> schema.problems({})
        ["'customer' is required (str) but missing"]
    """

    _cache: ClassVar[weakref.WeakKeyDictionary[type, "ContextSchema"]] = weakref.WeakKeyDictionary()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, schema: type) -> None:
        self.schema = schema
        self.name = schema.__name__
        self.model: type[BaseModel] | None = None
        self.adapter: TypeAdapter[Any] | None = None
        #: key -> its annotation (without the reducer), in the schema's order
        self.fields: dict[str, Any] = {}
        #: key -> reducer, for the keys that carry one
        self.reducers: dict[str, Reducer] = {}
        self.descriptions: dict[str, str] = {}
        self._field_adapters: dict[str, TypeAdapter[Any]] = {}
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            self.model = schema
            for key, info in schema.model_fields.items():
                reducer = next((m for m in reversed(info.metadata) if _is_reducer(m)), None)
                if reducer is not None:
                    self.reducers[key] = reducer
                self.fields[key] = info.annotation
                if info.description:
                    self.descriptions[key] = info.description
            self.required = frozenset(k for k, f in schema.model_fields.items() if f.is_required())
            self.open = schema.model_config.get("extra") == "allow"
        elif is_typeddict(schema):
            hints = get_type_hints(schema, include_extras=True)
            for key, tp in hints.items():
                base, reducer = _split_reducer(_unwrap_required(tp))
                self.fields[key] = base
                if reducer is not None:
                    self.reducers[key] = reducer
            self.required = frozenset(schema.__required_keys__)  # type: ignore[attr-defined]
            self.open = False
            self.adapter = TypeAdapter(schema)
        else:
            raise TypeError(
                f"context_schema takes a pydantic model or a TypedDict, not {schema!r} "
                "(LangGraph's run-time context, StateGraph(context_schema=...), is "
                "build_swarm_graph(runtime_schema=...))"
            )

    @classmethod
    def of(cls, schema: "type | ContextSchema") -> "ContextSchema":
        """The schema read once (cached per schema class)."""
        if isinstance(schema, ContextSchema):
            return schema
        found = cls._cache.get(schema) if isinstance(schema, type) else None
        if found is None:
            found = cls(schema)
            with cls._lock:
                found = cls._cache.setdefault(schema, found)
        return found

    def __repr__(self) -> str:
        return f"ContextSchema({self.name})"

    # -- the run's last valid context (:class:`ValidContext`) ----------------------
    @staticmethod
    def kept(control: RunControl) -> dict[str, Any] | None:
        """The context dict last validated in ``control``'s run: a node reading that very
        object skips validating it again."""
        state = control.state_of(ValidContext)
        return None if state is None else state.context

    @staticmethod
    def keep(control: RunControl, context: dict[str, Any]) -> None:
        """Remember ``context`` as valid for ``control``'s run (on entry, after a tool
        update)."""
        control.own(ValidContext).context = context

    # -- validation ---------------------------------------------------------------
    def problems(self, data: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``data`` as a whole context, one line per problem (``[]``: valid).

        Example:
            >>> from pydantic import BaseModel
            >>> class Desk(BaseModel):
            ...     order_id: int
            >>> ContextSchema.of(Desk).problems({"order_id": [7]})
            ["'order_id' expects int, got [7] (list)"]
        """
        try:
            self.validate(data)
        except ContextValidationError as err:
            return list(err.problems)
        return []

    def validate(self, data: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
        """``data`` validated as a whole context: a new dict of the schema's values (defaults
        filled, values coerced as pydantic does). Raises :class:`ContextValidationError`."""
        if isinstance(data, BaseModel):
            data = _fields_of(data)
        elif not isinstance(data, Mapping):
            raise ContextValidationError(
                self.name, [f"context_variables must be a dict, got {type(data).__name__}"]
            )
        unknown = [] if self.open else [k for k in data if k not in self.fields]
        problems = [
            f"unknown key {k!r} (the schema {self.name} has: {', '.join(self.fields) or 'none'})"
            for k in unknown
        ]
        try:
            if self.model is not None:
                validated = _fields_of(self.model.model_validate(data))
            else:
                assert self.adapter is not None
                known = data if not unknown else {k: v for k, v in data.items() if k not in unknown}
                validated = self.adapter.validate_python(known)
        except ValidationError as err:
            problems += self._describe(err)
        if problems:
            raise ContextValidationError(self.name, problems)
        return validated

    def _describe(self, err: ValidationError) -> list[str]:
        problems = []
        for error in err.errors(include_url=False):
            loc = error["loc"]
            if not loc:  # a model validator's own complaint
                problems.append(error["msg"])
                continue
            key = str(loc[0])
            where = key + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
            expected = _type_name(self.fields[key]) if key in self.fields else None
            if error["type"] == "missing":
                kind = f" ({expected})" if expected and len(loc) == 1 else ""
                problems.append(f"{where!r} is required{kind} but missing")
                continue
            got = error["input"]
            text = f"{where!r} expects {expected}" if len(loc) == 1 and expected else repr(where)
            detail = "" if len(loc) == 1 and expected else f": {error['msg']}"
            problems.append(f"{text}, got {_short(got)} ({type(got).__name__}){detail}")
        return problems

    # -- updates ------------------------------------------------------------------
    def update(self, context: dict[str, Any], update: Mapping[str, Any]) -> None:
        """Apply ``update`` to ``context`` in place, LangGraph's way: a key with a reducer
        becomes ``reducer(current, value)`` (the value itself when the key is unset), any
        other key is replaced. Not validated (see :meth:`validate`); a reducer that raises on
        the value raises :class:`ContextValidationError`."""
        reducers = self.reducers
        for key, value in update.items():
            reducer = reducers.get(key)
            current = context.get(key, _MISSING) if reducer is not None else _MISSING
            if current is _MISSING:
                context[key] = value
                continue
            try:
                context[key] = reducer(current, value)  # type: ignore[misc]
            except Exception as exc:  # an update the reducer cannot take is a bad update
                name = getattr(reducer, "__name__", type(reducer).__name__)
                raise ContextValidationError(
                    self.name,
                    [
                        f"{key!r}: its reducer {name} refused {_short(value)} "
                        f"({type(value).__name__}): {type(exc).__name__}: {exc}"
                    ],
                ) from exc

    def merge(self, left: Any, right: Any) -> dict[str, Any]:
        """The state channel's reducer: ``right`` (the graph's input, a node's or a caller's
        write) applied to ``left`` by :meth:`update`, then validated (raises
        :class:`ContextValidationError`: a caller's bad input fails before any model call).

        Example:
            >>> from typing import Annotated
            >>> import operator
            >>> from typing_extensions import TypedDict
            >>> class Desk(TypedDict, total=False):
            ...     visits: Annotated[int, operator.add]
            >>> ContextSchema.of(Desk).merge({"visits": 2}, {"visits": 1})
            {'visits': 3}
        """
        merged = dict(left) if isinstance(left, Mapping) else dict(left or {})
        if right is not None:
            self.update(merged, _fields_of(right) if isinstance(right, BaseModel) else right)
        return self.validate(merged)

    # -- stored as JSON ---------------------------------------------------------------
    def dump(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """``context`` as JSON-ready values (nested models as dicts, dates as ISO text...):
        what a store keeps. A context that no longer validates is returned as it is.

        Example:
            >>> import datetime
            >>> from pydantic import BaseModel
            >>> class Trip(BaseModel):
            ...     day: datetime.date | None = None
            >>> ContextSchema.of(Trip).dump({"day": datetime.date(2024, 5, 1)})
            {'day': '2024-05-01'}
        """
        try:
            if self.model is not None:
                return self.model.model_validate(context).model_dump(mode="json")
            assert self.adapter is not None
            return self.adapter.dump_python(self.adapter.validate_python(context), mode="json")
        except ValidationError:
            return dict(context)

    def restore(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        """A context stored earlier (maybe under an older schema) as today's schema reads it.

        A key the schema no longer has (removed, renamed) is dropped, and a value that no
        longer fits (its type changed) is reset to its default, or removed when the key is not
        required; each with a :class:`ContextSchemaWarning` naming the keys. A required key
        that is missing or no longer fits stays as stored: validating the context (with what
        the caller passes this turn) then raises a clear :class:`ContextValidationError`.

        Example:
            >>> import warnings
            >>> from pydantic import BaseModel
            >>> class Desk(BaseModel):
            ...     order_id: int | None = None
            >>> with warnings.catch_warnings(record=True) as caught:
            ...     warnings.simplefilter("always")
            ...     ContextSchema.of(Desk).restore({"order_id": "seven", "order": 7})
            {}
            >>> print(*str(caught[0].message).split("; "), sep="\\n")
            the stored context does not fit Desk: dropped 'order' (no longer in the schema)
            reset 'order_id' ('seven' no longer fits int | None)
        """
        if not self.problems(stored):
            return dict(stored)
        restored = dict(stored)
        dropped = [] if self.open else [k for k in restored if k not in self.fields]
        for key in dropped:
            del restored[key]
        reset = []
        for key, value in list(restored.items()):
            if key in self.fields and not self._fits(key, value) and key not in self.required:
                del restored[key]  # validation fills its default, if it has one
                reset.append(
                    f"{key!r} ({_short(value)} no longer fits {_type_name(self.fields[key])})"
                )
        notes = [f"dropped {k!r} (no longer in the schema)" for k in dropped] + [
            f"reset {note}" for note in reset
        ]
        if notes:
            warnings.warn(
                f"the stored context does not fit {self.name}: " + "; ".join(notes),
                ContextSchemaWarning,
                stacklevel=2,
            )
        return restored

    def _fits(self, key: str, value: Any) -> bool:
        """Whether ``value`` alone fits ``key`` (its type and constraints)."""
        adapter = self._field_adapters.get(key)
        if adapter is None:
            tp = self.fields[key]
            metadata = self.model.model_fields[key].metadata if self.model is not None else ()
            if metadata:  # a pydantic field's constraints (Field(gt=0)...) ride on its metadata
                tp = _ANNOTATED[(tp, *metadata)]
            adapter = self._field_adapters[key] = TypeAdapter(tp)
        try:
            adapter.validate_python(value)
        except ValidationError:
            return False
        return True

    # -- what the middleware asks of it ---------------------------------------------
    def merge_rules(self) -> dict[str, Reducer]:
        """How a join combines a key several runs wrote (graph/features/context_changes.py's
        :func:`~swarmgraph.graph.features.context_changes.merge_rules_of` of the reducers: an
        additive one takes each run's change).

        Example:
            >>> import operator
            >>> from typing import Annotated
            >>> from pydantic import BaseModel
            >>> class Desk(BaseModel):
            ...     visits: Annotated[int, operator.add] = 0
            >>> ContextSchema.of(Desk).merge_rules()
            {'visits': OnChange(rule=<built-in function add>)}
        """
        return merge_rules_of(self.reducers)

    # -- the graph's state --------------------------------------------------------
    def typed_dict(self) -> type:
        """The context's fields as a ``TypedDict`` (every key optional): what the graph's
        state declares for ``context_variables``, so LangGraph's JSON schema (Studio,
        ``get_input_jsonschema()``) lists them, while the channel still starts as ``{}``."""
        fields = {
            key: Annotated[tp, Field(description=self.descriptions[key])]
            if key in self.descriptions
            else tp
            for key, tp in self.fields.items()
        }
        typed = TypedDict(self.name, fields, total=False)  # type: ignore[misc]
        typed.__doc__ = self.schema.__doc__
        return typed


def context_reducers(schema: "type | ContextSchema") -> dict[str, Reducer]:
    """Each key's reducer in ``schema`` (keys without one are absent: for them the last write
    wins): the merge rules for anything that combines two writers' updates of one context
    (parallel branches, concurrent turns).

    Example (a ``TypedDict`` schema reads the same way as a pydantic one):
        >>> import operator
        >>> from typing import Annotated
        >>> from typing_extensions import TypedDict  # pydantic's TypedDict before Python 3.12
        >>> class Cart(TypedDict, total=False):
        ...     user: str
        ...     items: Annotated[list[str], operator.add]
        >>> context_reducers(Cart) == {"items": operator.add}
        True
    """
    return dict(ContextSchema.of(schema).reducers)


_states: weakref.WeakKeyDictionary[type, dict[type, type]] = weakref.WeakKeyDictionary()
_channel_reducers: weakref.WeakKeyDictionary[type, Reducer] = weakref.WeakKeyDictionary()


def state_schema_for(schema: "type | ContextSchema", base: type) -> type:
    """``base`` (a ``TypedDict`` state such as ``SwarmState``) with ``context_variables``
    declared as the typed context and reduced by :meth:`ContextSchema.merge`. One class per
    (schema, base), so a graph rebuilt for the same schema gets the same state class.

    Example:
        >>> from pydantic import BaseModel
        >>> from swarmgraph.graph.core.state import SwarmState
        >>> class Desk(BaseModel):
        ...     order_id: int | None = None
        >>> state = state_schema_for(Desk, SwarmState)
        >>> state.__name__, sorted(state.__annotations__) == sorted(SwarmState.__annotations__)
        ('SwarmState[Desk]', True)
    """
    typed = ContextSchema.of(schema)
    per_base = _states.setdefault(typed.schema, {})
    found = per_base.get(base)
    if found is not None:
        return found
    hints = get_type_hints(base, include_extras=True)
    hints["context_variables"] = NotRequired[Annotated[typed.typed_dict(), _reducer_for(typed)]]
    state = TypedDict(f"{base.__name__}[{typed.name}]", hints)  # type: ignore[misc]
    state.__doc__ = base.__doc__
    return per_base.setdefault(base, state)


def _reducer_for(schema: ContextSchema) -> Reducer:
    # One reducer per schema: the graph's state and a fan-out's ParallelState declare the same
    # channel, and LangGraph refuses two declarations whose reducers are different objects.
    found = _channel_reducers.get(schema.schema)
    if found is None:

        def merge_typed_context(left: Any, right: Any) -> dict[str, Any]:
            return schema.merge(left, right)

        found = _channel_reducers.setdefault(schema.schema, merge_typed_context)
    return found
