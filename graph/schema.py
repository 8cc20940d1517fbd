"""Tool schemas: what the model is told about a tool, and how its arguments are checked.

:func:`function_to_json` gives OpenAI Swarm's exact output for everything Swarm handles
(untyped parameter -> ``"string"``, parameters with defaults not required, the raw
docstring as description) and goes further: ``Optional``/``Union``, ``list[T]``,
``dict[str, T]``, ``tuple``, ``Literal`` and ``Enum`` -> ``enum``, ``Annotated``
descriptions and constraints, pydantic models, per-argument docstring descriptions
(Google, reST and NumPy style). ``context_variables`` never appears in a schema: the
framework injects it, the model cannot see or forge it.

:func:`tool_spec` is the engine's hot path: a cached :class:`ToolSpec` per function with
the schema, whether it wants ``context_variables``, whether it is async, and a prebuilt
pydantic validator behind :meth:`ToolSpec.parse_arguments`.

Choices, where Swarm gives no answer:

* ``Optional[T]`` / ``T | None`` -> ``{"anyOf": [<T>, {"type": "null"}]}`` (the form
  OpenAI's structured outputs use); required only when it has no default.
* An annotation we cannot map (a random class, a ``Callable``) raises
  :class:`ToolSchemaError` when the schema is built, never a silent ``"string"``.
  A bare ``Any``/``object`` annotation is ``{}`` (any JSON value); an *untyped*
  parameter stays Swarm's ``{"type": "string"}`` but accepts any JSON value.
* ``*args`` raises :class:`ToolSchemaError` (JSON arguments are keywords only), and so
  does a positional-only parameter. ``**kwargs`` is left out of the schema; extra
  arguments the model sends anyway are passed through to it unvalidated.
* Defaults are not reported in the schema, so Swarm-style functions keep Swarm's exact
  output; pydantic model fields keep the defaults pydantic reports.
* ``x: None`` maps to ``{"type": "null"}`` (Swarm says ``"string"`` there by accident:
  its table is keyed by ``type(None)``).
"""

from __future__ import annotations

import collections.abc
import copy
import datetime
import decimal
import enum
import functools
import inspect
import json
import pathlib
import re
import threading
import types
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic.json_schema import models_json_schema

from .errors import ToolArgumentError, ToolSchemaError

__all__ = ["ToolArgumentError", "ToolSchemaError", "ToolSpec", "function_to_json", "tool_spec"]

#: The parameter the framework injects run context into (hidden from the model).
CONTEXT_PARAM = "context_variables"

_NoneType = type(None)
# Swarm's own table; identical output for these keeps Swarm code byte-for-byte compatible.
_SWARM_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    _NoneType: "null",
}
# Types pydantic parses from JSON strings; the format hint tells the model what to send.
_STRING_FORMATS: dict[type, dict[str, str]] = {
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    pathlib.Path: {"type": "string", "format": "path"},
    decimal.Decimal: {"type": "number"},
}
_SEQUENCES = {list, collections.abc.Sequence, collections.abc.MutableSequence}
_SETS = {set, frozenset, collections.abc.Set, collections.abc.MutableSet}
_MAPPINGS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}
_UNIONS: set[Any] = {Union}
if hasattr(types, "UnionType"):  # X | Y, Python >= 3.10
    _UNIONS.add(types.UnionType)
_CONSTRAINTS = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("multiple_of", "multipleOf"),
    ("pattern", "pattern"),
)


# --------------------------------------------------------------------------- docstrings

_GOOGLE_HEADER = re.compile(r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*?\s+)?\*{0,2}(\w+)\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring_args(doc: str | None) -> dict[str, str]:
    """Per-argument descriptions from a Google, reST or NumPy style docstring.

    Example:
        >>> parse_docstring_args('''Find an order.
        ...
        ... Args:
        ...     order_id (int): The order number,
        ...         as printed on the receipt.
        ...     verbose: Say more.
        ...
        ... Returns:
        ...     The order.
        ... ''')
        {'order_id': 'The order number, as printed on the receipt.', 'verbose': 'Say more.'}
        >>> parse_docstring_args(":param str city: Where to look.\\n:type city: str")
        {'city': 'Where to look.'}
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        numpy = line.strip() in ("Parameters", "Other Parameters") and _is_rule(lines, i + 1)
        if _GOOGLE_HEADER.match(line) or numpy:
            i = _read_section(lines, i + (2 if numpy else 1), _indent(line), numpy, found)
            continue
        rest = _REST_PARAM.match(line.strip())
        if rest:
            parts = found.setdefault(rest.group(1), [rest.group(2).strip()])
            i += 1
            # continuation lines are indented under their ":param" line
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > _indent(line):
                parts.append(lines[i].strip())
                i += 1
            continue
        i += 1
    return {name: " ".join(p for p in parts if p) for name, parts in found.items() if any(parts)}


def _is_rule(lines: list[str], i: int) -> bool:
    return i < len(lines) and set(lines[i].strip()) == {"-"}


def _read_section(
    lines: list[str], i: int, base: int, numpy: bool, found: dict[str, list[str]]
) -> int:
    """Reads one Args/Parameters section into ``found``; returns the index after it."""
    entry_indent = base if numpy else None  # NumPy entries sit at the header's indent
    current: list[str] | None = None
    while i < len(lines):
        text = lines[i]
        stripped = text.strip()
        if not stripped:
            i += 1
            continue
        ind = _indent(text)
        if (numpy and _is_rule(lines, i + 1)) or (not numpy and ind <= base):
            break  # the next section starts
        if entry_indent is None:
            entry_indent = ind
        if ind < entry_indent:
            break
        if ind == entry_indent:
            entry = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(stripped)
            if not entry:
                break
            current = found.setdefault(entry.group(1), [])
            if not numpy:
                current.append(entry.group(2).strip())
        elif current is not None:
            current.append(stripped)
        i += 1
    return i


# --------------------------------------------------------------------------- annotations


class _Unmappable(Exception):
    """Internal: an annotation (possibly nested) has no JSON schema."""

    def __init__(self, annotation: Any):
        self.annotation = annotation


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise _Unmappable(value)


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds: list[str] = []
    for value in values:
        kind = _json_type(value)
        if kind not in kinds:
            kinds.append(kind)
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _apply_metadata(schema: dict[str, Any], metadata: tuple[Any, ...]) -> dict[str, Any]:
    """Fold ``Annotated`` extras (a description string, ``Field(...)``, constraints) in."""
    schema = dict(schema)
    description = None
    items: list[Any] = []
    for meta in metadata:
        if isinstance(meta, str):
            description = description or meta
        elif isinstance(meta, FieldInfo):
            description = description or meta.description
            if meta.examples:
                schema["examples"] = list(meta.examples)
            items.extend(meta.metadata)
        elif hasattr(meta, "documentation"):  # typing_extensions.Doc
            description = description or meta.documentation
        else:
            items.append(meta)
    kind = schema.get("type")
    for meta in items:
        for attr, key in _CONSTRAINTS:
            value = getattr(meta, attr, None)
            if value is not None:
                schema[key] = value
        for attr, suffix in (("min_length", "min"), ("max_length", "max")):
            value = getattr(meta, attr, None)
            if value is not None:
                noun = {"array": "Items", "object": "Properties"}.get(kind, "Length")
                schema[f"{suffix}{noun}"] = value
    if description:
        schema["description"] = description
    return schema


class _SchemaBuilder:
    """Maps one function's annotations to JSON schema, sharing one ``$defs`` for its models."""

    def __init__(self, annotations: list[Any]):
        models: list[type[BaseModel]] = []
        for annotation in annotations:
            _collect_models(annotation, models)
        self.defs: dict[str, Any] = {}
        self.refs: dict[type, str] = {}
        if models:
            key_map, top = models_json_schema(
                [(m, "validation") for m in models], ref_template="#/$defs/{model}"
            )
            self.defs = _strip_titles({"$defs": top.get("$defs", {})})["$defs"]
            for (model, _mode), ref in key_map.items():
                self.refs[model] = ref["$ref"].rsplit("/", 1)[-1]

    def schema(self, tp: Any) -> dict[str, Any]:
        if tp is inspect.Parameter.empty:
            return {"type": "string"}  # Swarm's default for untyped parameters
        if tp is None:
            tp = _NoneType
        if tp is Any or tp is object:
            return {}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _enum_schema([member.value for member in tp])
        if tp in _SWARM_TYPES:
            return {"type": _SWARM_TYPES[tp]}
        origin, args = get_origin(tp), get_args(tp)
        if origin is Annotated:
            return _apply_metadata(self.schema(args[0]), tuple(tp.__metadata__))
        if origin in _UNIONS:
            options = [a for a in args if a is not _NoneType]
            if len(options) == 1:  # Optional[T]
                return {"anyOf": [self.schema(options[0]), {"type": "null"}]}
            return {"anyOf": [self.schema(a) for a in args]}
        if origin is Literal or origin is typing_extensions.Literal:
            values = [a.value if isinstance(a, enum.Enum) else a for a in args]
            return _enum_schema(values)
        if origin in _SEQUENCES or origin in _SETS:
            schema: dict[str, Any] = {"type": "array"}
            item = self.schema(args[0]) if args else {}
            if item:
                schema["items"] = item
            if origin in _SETS:
                schema["uniqueItems"] = True
            return schema
        if tp in (tuple, set, frozenset):
            return {"type": "array", **({"uniqueItems": True} if tp is not tuple else {})}
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                item = self.schema(args[0])
                return {"type": "array", **({"items": item} if item else {})}
            if args == ((),):  # tuple[()]
                args = ()
            return {
                "type": "array",
                "prefixItems": [self.schema(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin in _MAPPINGS:
            if args and args[0] not in (str, Any):
                raise _Unmappable(tp)  # JSON object keys are strings
            schema = {"type": "object"}
            value = self.schema(args[1]) if args else {}
            if value:
                schema["additionalProperties"] = value
            return schema
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return copy.deepcopy(self.defs[self.refs[tp]])
        if isinstance(tp, type) and tp in _STRING_FORMATS:
            return dict(_STRING_FORMATS[tp])
        raise _Unmappable(tp)

    def used_defs(self, schemas: list[Any]) -> dict[str, Any]:
        """The ``$defs`` entries still referenced after inlining (recursive models)."""
        wanted: list[str] = []
        todo = list(schemas)
        while todo:
            node = todo.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith("#/$defs/"):
                    name = ref[len("#/$defs/") :]
                    if name not in wanted:
                        wanted.append(name)
                        todo.append(self.defs[name])
                todo.extend(node.values())
            elif isinstance(node, list):
                todo.extend(node)
        return {name: self.defs[name] for name in sorted(wanted)}


def _described(tp: Any) -> bool:
    """Whether an ``Annotated`` layer already carries a description."""
    if get_origin(tp) is not Annotated:
        return False
    return any(
        isinstance(m, str)
        or (isinstance(m, FieldInfo) and m.description)
        or hasattr(m, "documentation")
        for m in tp.__metadata__
    )


def _collect_models(tp: Any, out: list[type[BaseModel]]) -> None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp not in out:
            out.append(tp)
        return
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
        _collect_models(tp, out)
        return
    for arg in get_args(tp):
        _collect_models(arg, out)


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto ``title`` keywords (noise the model pays tokens for).

    Walks schema positions only, so a *property* named ``title`` survives.
    """
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    for key in ("properties", "$defs", "patternProperties"):
        if isinstance(out.get(key), dict):
            out[key] = {name: _strip_titles(sub) for name, sub in out[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _strip_titles(out[key])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [_strip_titles(sub) for sub in out[key]]
    return out


# --------------------------------------------------------------------------- signatures


def _unwrap_partial(func: Any) -> tuple[Any, set[str]]:
    """The callable under ``functools.partial`` layers, and the keyword names they bind."""
    bound: set[str] = set()
    while isinstance(func, functools.partial):
        bound.update(func.keywords)
        func = func.func
    return func, bound


def _tool_name(func: Any) -> str:
    base, _ = _unwrap_partial(func)
    name = getattr(base, "__name__", None)
    return name if isinstance(name, str) else type(base).__name__


def _tool_doc(func: Any) -> str:
    base, _ = _unwrap_partial(func)  # a partial's own __doc__ describes functools.partial
    return base.__doc__ or ""


def _signature(func: Any, name: str) -> inspect.Signature:
    try:
        return inspect.signature(func, eval_str=True)
    except (ValueError, TypeError) as err:
        if not callable(func):
            raise ToolSchemaError(f"tool {name!r}: {func!r} is not callable") from err
        raise ToolSchemaError(f"tool {name!r}: cannot read its signature: {err}") from err
    except Exception as err:  # a string annotation that does not evaluate
        raw = inspect.signature(func)
        base = inspect.unwrap(_unwrap_partial(func)[0])
        namespace = getattr(getattr(base, "__func__", base), "__globals__", {})
        for param in raw.parameters.values():
            if isinstance(param.annotation, str):
                try:
                    eval(param.annotation, namespace)
                except Exception:
                    raise ToolSchemaError(
                        f"tool {name!r}: parameter {param.name!r}: cannot resolve annotation "
                        f"{param.annotation!r} ({type(err).__name__}: {err}); define the type at "
                        "module level"
                    ) from err
        raise ToolSchemaError(f"tool {name!r}: cannot resolve annotations: {err}") from err


def _is_async(func: Any) -> bool:
    if inspect.iscoroutinefunction(func):  # also sees through partials and bound methods
        return True
    base, _ = _unwrap_partial(func)
    if not inspect.isfunction(base) and not inspect.ismethod(base):
        call = getattr(type(base), "__call__", None)  # noqa: B004 - want the method itself
        return inspect.iscoroutinefunction(call)
    return False


def _accepts_none(tp: Any) -> bool:
    if tp is Any or tp is object or tp is None or tp is _NoneType:
        return True
    origin = get_origin(tp)
    if origin is Annotated:
        return _accepts_none(get_args(tp)[0])
    if origin in _UNIONS:
        return any(_accepts_none(a) for a in get_args(tp))
    if origin is Literal:
        return None in get_args(tp)
    return False


def _where(loc: tuple[Any, ...]) -> str:
    text = str(loc[0])
    for part in loc[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """Everything the engine needs to offer and call one tool, built once per function.

    ``schema`` is :func:`function_to_json`'s output (shared: treat it as read-only),
    ``wants_context`` says the callable takes ``context_variables``, ``is_async`` says
    calling it gives a coroutine. ``parse_arguments`` turns the model's raw arguments
    into keyword arguments for the call.

    Example:
        >>> def refund(order_id: int, context_variables: dict) -> str:
        ...     return "ok"
        >>> spec = tool_spec(refund)
        >>> spec.name, spec.wants_context, spec.is_async
        ('refund', True, False)
        >>> spec.parse_arguments('{"order_id": "7", "context_variables": {"forged": 1}}')
        {'order_id': 7}
    """

    name: str
    schema: dict[str, Any]
    wants_context: bool
    is_async: bool
    #: Names the model may send, in signature order.
    arg_names: tuple[str, ...] = ()
    #: Names with no default, in signature order.
    required: tuple[str, ...] = ()
    #: The callable takes ``**kwargs``: extra arguments pass through unvalidated.
    accepts_extra: bool = False
    _adapter: TypeAdapter[Any] | None = field(default=None, repr=False, compare=False)
    _blocked: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def parse_arguments(self, raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
        """Decode, check and coerce the model's arguments; returns kwargs for the call.

        ``raw`` is the JSON string from a tool call, an already-decoded dict, or
        ``None``/``""`` for no arguments. A model-supplied ``context_variables`` is
        dropped (the engine injects the real one). Raises :class:`ToolArgumentError`.

        Example:
            >>> def book(seat: int, meal: str = "veg"): ...
            >>> tool_spec(book).parse_arguments({"seat": "12"})
            {'seat': 12}
            >>> try:
            ...     tool_spec(book).parse_arguments('{"meal": "fish", "row": 3}')
            ... except ToolArgumentError as err:
            ...     print(*err.problems, sep="\\n")
            missing required argument 'seat'
            unknown argument 'row' (accepted: seat, meal)
        """
        if raw is None:
            args: Any = {}
        elif isinstance(raw, (str, bytes, bytearray)):
            if not raw.strip():
                args = {}
            else:
                try:
                    args = json.loads(raw)
                except ValueError as err:
                    raise ToolArgumentError(
                        self.name, [f"arguments are not valid JSON: {err}"]
                    ) from None
                if args is None:  # "null" from some models means "no arguments"
                    args = {}
        else:
            args = raw
        if not isinstance(args, Mapping):
            kind = {
                list: "array",
                str: "string",
                bool: "boolean",
                int: "number",
                float: "number",
            }.get(type(args), type(args).__name__)
            raise ToolArgumentError(self.name, [f"arguments must be a JSON object, got {kind}"])
        if CONTEXT_PARAM in args or not isinstance(args, dict):
            args = {k: v for k, v in args.items() if k != CONTEXT_PARAM}
        if self._adapter is None:
            return self._check_names(args)
        if self.accepts_extra:
            if self._blocked.intersection(args):
                self._check_names(args)  # raises: naming the blocked ones
            extra = {k: v for k, v in args.items() if k not in self.arg_names}
            args = {k: v for k, v in args.items() if k in self.arg_names}
        try:
            kwargs = self._adapter.validate_python(args)
        except ValidationError as err:
            raise ToolArgumentError(self.name, self._describe(err)) from None
        if self.accepts_extra:
            kwargs.update(extra)
        return kwargs

    def _check_names(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The pydantic-free path for tools whose parameters are all untyped."""
        problems = [f"missing required argument {n!r}" for n in self.required if n not in args]
        if not self.accepts_extra or self._blocked.intersection(args):
            allowed = self.arg_names if not self.accepts_extra else None
            problems += [
                self._unknown(k)
                for k in args
                if (allowed is not None and k not in allowed) or k in self._blocked
            ]
        if problems:
            raise ToolArgumentError(self.name, problems)
        return dict(args)

    def _unknown(self, name: str) -> str:
        accepted = ", ".join(self.arg_names) or "none"
        return f"unknown argument {name!r} (accepted: {accepted})"

    def _describe(self, err: ValidationError) -> list[str]:
        problems = []
        for error in err.errors(include_url=False):
            loc = error["loc"]
            if error["type"] == "missing" and len(loc) == 1:
                problems.append(f"missing required argument {loc[0]!r}")
            elif error["type"] == "extra_forbidden" and len(loc) == 1:
                problems.append(self._unknown(str(loc[0])))
            else:
                got = "" if error["type"] == "missing" else f" (got {_short(error['input'])})"
                problems.append(f"argument {_where(loc)!r}: {error['msg']}{got}")
        return problems


def _build_spec(func: Any) -> ToolSpec:
    name = _tool_name(func)
    signature = _signature(func, name)
    _, bound = _unwrap_partial(func)
    params = [p for p in signature.parameters.values() if p.name not in bound]

    wants_context = False
    visible: list[inspect.Parameter] = []
    accepts_extra = False
    for param in params:
        if param.kind is param.VAR_POSITIONAL:
            raise ToolSchemaError(
                f"tool {name!r}: parameter '*{param.name}' cannot be filled from JSON "
                "arguments; give the tool named parameters"
            )
        if param.kind is param.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolSchemaError(
                f"tool {name!r}: parameter {param.name!r} is positional-only; tools are "
                "called with keyword arguments"
            )
        if param.name == CONTEXT_PARAM:
            wants_context = True
            continue
        visible.append(param)

    builder = _SchemaBuilder([p.annotation for p in visible])
    doc_args = parse_docstring_args(_tool_doc(func))
    properties: dict[str, Any] = {}
    for param in visible:
        try:
            prop = builder.schema(param.annotation)
        except _Unmappable as err:
            raise ToolSchemaError(
                f"tool {name!r}: parameter {param.name!r}: cannot describe annotation "
                f"{_type_name(err.annotation)} as JSON schema (supported: str, int, float, bool, "
                "list, dict, None, Optional/Union, list[T], dict[str, T], tuple, Literal, Enum, "
                "Annotated, pydantic BaseModel, datetime/date/time, UUID, Decimal, Path, Any)"
            ) from None
        # the docstring's words about this argument beat a model class's own docstring,
        # but not an explicit Annotated description
        if param.name in doc_args and not _described(param.annotation):
            prop["description"] = doc_args[param.name]
        properties[param.name] = prop
    required = [p.name for p in visible if p.default is inspect.Parameter.empty]
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    defs = builder.used_defs(list(properties.values()))
    if defs:
        parameters["$defs"] = defs
    schema = {
        "type": "function",
        "function": {"name": name, "description": _tool_doc(func), "parameters": parameters},
    }

    adapter = None
    if any(p.annotation is not inspect.Parameter.empty for p in visible):
        adapter = _arguments_adapter(name, visible, accepts_extra)
    return ToolSpec(
        name=name,
        schema=schema,
        wants_context=wants_context,
        is_async=_is_async(func),
        arg_names=tuple(p.name for p in visible),
        required=tuple(required),
        accepts_extra=accepts_extra,
        _adapter=adapter,
        _blocked=frozenset(bound | ({CONTEXT_PARAM} if wants_context else set())),
    )


def _arguments_adapter(
    name: str, visible: list[inspect.Parameter], accepts_extra: bool
) -> TypeAdapter[Any]:
    """One pydantic validator for the whole argument dict, built once per tool.

    A TypedDict (not a model) so any parameter name works (``json``, ``_x``,
    ``model_config``) and only the arguments the model sent come back: the function's
    own defaults fill the rest, exactly as a direct call would.
    """
    fields: dict[str, Any] = {}
    for param in visible:
        tp = Any if param.annotation is inspect.Parameter.empty else param.annotation
        if param.default is None and not _accepts_none(tp):
            tp = Union[tp, None]  # null means "the default" when the default is None  # noqa: UP007
        if param.default is not inspect.Parameter.empty:
            tp = typing_extensions.NotRequired[tp]
        fields[param.name] = tp
    arguments = typing_extensions.TypedDict(f"{name}_arguments", fields)  # type: ignore[operator]
    arguments.__pydantic_config__ = ConfigDict(  # type: ignore[attr-defined]
        extra="ignore" if accepts_extra else "forbid",
        coerce_numbers_to_str=True,  # the model sends 123 for a str order id; Swarm passed it on
    )
    try:
        return TypeAdapter(arguments)
    except Exception as err:
        raise ToolSchemaError(f"tool {name!r}: cannot build an argument validator: {err}") from err


# --------------------------------------------------------------------------- the cache

_functions: weakref.WeakKeyDictionary[Any, ToolSpec] = weakref.WeakKeyDictionary()
_methods: weakref.WeakKeyDictionary[Any, ToolSpec] = weakref.WeakKeyDictionary()
# Other callables (instances with __call__, classes, builtins): identity-keyed, holding the
# object alive so its id cannot be reused while cached; bounded so it cannot grow forever.
_others: OrderedDict[int, tuple[Any, ToolSpec]] = OrderedDict()
_OTHERS_MAX = 1024
# Plain functions by what their schema is made of (code, name, doc, defaults, annotations,
# module): a service that defines its tools inside a per-request factory makes a new function
# object with the same schema on every request; building the validator again costs ~1 ms.
_by_code: OrderedDict[tuple, tuple[Any, ToolSpec]] = OrderedDict()
_BY_CODE_MAX = 1024
_lock = threading.Lock()


def _code_key(func: Any) -> tuple | None:
    """The key under which same-schema functions share a spec, or None when it may not."""
    if type(func) is not types.FunctionType:
        return None
    attrs = func.__dict__
    if "__wrapped__" in attrs or "__signature__" in attrs:  # the signature is elsewhere
        return None
    return (func.__code__, func.__name__, func.__doc__, id(func.__globals__))


def _same_schema_inputs(func: Any, parts: tuple) -> bool:
    try:
        return (
            parts[0] is func.__globals__
            and parts[1] == func.__defaults__
            and parts[2] == func.__kwdefaults__
            and parts[3] == func.__annotations__
        )
    except Exception:  # a default whose == raises: build the spec instead
        return False


def tool_spec(func: Callable[..., Any]) -> ToolSpec:
    """The cached :class:`ToolSpec` for ``func`` (built on first use, then a dict lookup).

    Plain functions and partials are cached for their lifetime; bound methods share
    the spec of their underlying function (``obj.method`` is a new object on every
    access, but its schema does not depend on ``obj``).

    Example:
        >>> import functools
        >>> def greet(name: str, greeting: str = "Hi", context_variables=None):
        ...     return f"{greeting} {name}"
        >>> tool_spec(greet) is tool_spec(greet)
        True
        >>> spec = tool_spec(functools.partial(greet, greeting="Hello"))
        >>> spec.name, spec.arg_names, spec.wants_context
        ('greet', ('name',), True)
    """
    if isinstance(func, types.MethodType):
        cache, key = _methods, func.__func__
    elif isinstance(func, (types.FunctionType, functools.partial)):
        cache, key = _functions, func
    else:
        cache, key = None, func
    if cache is not None:
        try:
            return cache[key]
        except KeyError:
            pass
        except TypeError:  # not weak-referenceable: use the identity cache instead
            cache = None
    if cache is None:
        hit = _others.get(id(func))
        if hit is not None and hit[0] is func:
            return hit[1]
    code_key = _code_key(func) if cache is not None else None
    if code_key is not None:
        shared = _by_code.get(code_key)
        if shared is not None and _same_schema_inputs(func, shared[0]):
            with _lock:
                cache[key] = shared[1]  # type: ignore[index]
            return shared[1]
    spec = _build_spec(func)
    with _lock:
        if code_key is not None:
            parts = (func.__globals__, func.__defaults__, func.__kwdefaults__, func.__annotations__)
            _by_code[code_key] = (parts, spec)
            while len(_by_code) > _BY_CODE_MAX:
                _by_code.popitem(last=False)
        if cache is not None:
            cache[key] = spec
        else:
            _others[id(func)] = (func, spec)
            while len(_others) > _OTHERS_MAX:
                _others.popitem(last=False)
    return spec


def function_to_json(func: Callable[..., Any]) -> dict[str, Any]:
    """OpenAI Swarm's tool schema for ``func`` (a fresh copy the caller may change).

    Exactly Swarm's output for what Swarm handles, and a strict superset beyond it
    (see the module docstring). ``context_variables`` is never shown to the model.

    Example:
        >>> from typing import Literal, Optional
        >>> def get_weather(location, time="now"):
        ...     '''Get the current weather in a given location.'''
        >>> schema = function_to_json(get_weather)
        >>> schema["type"], schema["function"]["name"], schema["function"]["description"]
        ('function', 'get_weather', 'Get the current weather in a given location.')
        >>> schema["function"]["parameters"]
        {'type': 'object', 'properties': {'location': {'type': 'string'}, \
'time': {'type': 'string'}}, 'required': ['location']}
        >>> def set_unit(unit: Literal["C", "F"], days: Optional[int] = None, context_variables={}):
        ...     '''Set units.
        ...
        ...     Args:
        ...         unit: Temperature unit.
        ...     '''
        >>> props = function_to_json(set_unit)["function"]["parameters"]["properties"]
        >>> props["unit"]
        {'type': 'string', 'enum': ['C', 'F'], 'description': 'Temperature unit.'}
        >>> props["days"]
        {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}
        >>> list(props)  # no context_variables
        ['unit', 'days']
    """
    return copy.deepcopy(tool_spec(func).schema)
