"""Tool schemas: what the model is told about a tool, and how its arguments are checked.

:func:`function_to_json` gives OpenAI Swarm's exact output for everything Swarm handles
(untyped parameter -> ``"string"``, parameters with defaults not required, the raw
docstring as description). Everything else comes from one pydantic pass: the tool's
parameters become one ``TypedDict`` whose ``TypeAdapter`` both validates the model's
arguments and writes the JSON schema, so the two cannot disagree (a ``Field(max_length=2)``
on an ``Optional[list[str]]`` limits the list in the schema exactly where the validator
does). Per-argument descriptions come from the docstring (Google, reST or NumPy style, read
by docstring-parser).
``context_variables`` never appears in a schema: the framework injects it, the model
cannot see or forge it. The same holds for every name in :data:`INJECTED`, the one table of
parameters the framework fills: the ones features register (graph/core/injected.py), each
with how its value is made; and for the parameters LangGraph's ``ToolNode`` fills by their
annotation (``RunnableConfig``, ``ToolRuntime``, ``InjectedToolCallId``, ``InjectedState``,
``InjectedStore``: graph/core/langchain_args.py), which a swarm step fills the same way.

:func:`tool_spec` is the engine's hot path: a cached :class:`ToolSpec` per function with
the schema, whether it wants ``context_variables``, whether it is async, and the pydantic
validator behind :meth:`ToolSpec.parse_arguments`.

Choices, where Swarm gives no answer:

* The validator only checks: a tool gets the JSON values the model sent, as in Swarm
  (``"blue"`` for an ``Enum`` parameter, ``"5"`` for an ``int`` one, a dict for a pydantic
  model). Arguments that cannot fit (``"abc"`` for an ``int``) are refused with an error the
  model reads. A tool that wants its arguments converted decorates itself with
  ``@pydantic.validate_call``, whose signature this module reads through.

* An annotation pydantic cannot validate or describe (a random class, a ``Callable``)
  raises :class:`ToolSchemaError` when the schema is built, never a silent ``"string"``.
  A bare ``Any``/``object`` annotation is ``{}`` (any JSON value); an *untyped*
  parameter stays Swarm's ``{"type": "string"}`` but accepts any JSON value.
* ``*args`` raises :class:`ToolSchemaError` (JSON arguments are keywords only), and so
  does a positional-only parameter. ``**kwargs`` is left out of the schema; extra
  arguments the model sends anyway are passed through to it unvalidated.
* Defaults are not reported in the schema, so Swarm-style functions keep Swarm's exact
  output; pydantic model fields keep the defaults pydantic reports. ``null`` for a
  parameter whose default is ``None`` means "the default", whatever its type says.
* pydantic's auto ``title`` keywords are dropped (tokens the model pays for), and models
  and enums are inlined; only a recursive model keeps a ``$defs`` entry.
* ``x: None`` maps to ``{"type": "null"}`` (Swarm says ``"string"`` there by accident:
  its table is keyed by ``type(None)``).
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions
from docstring_parser import Docstring, DocstringStyle, ParseError
from docstring_parser import parse as parse_docstring
from docstring_parser.google import DEFAULT_SECTIONS, GoogleParser, Section, SectionType
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from .errors import ToolArgumentError, ToolSchemaError
from .injected import CONTEXT_PARAM, INJECTED, param_for
from .langchain_args import JSON_SCHEMA, Filled, filled_by_step, is_langchain_tool

__all__ = [
    "ToolArgumentError",
    "ToolSchemaError",
    "ToolSpec",
    "function_to_json",
    "parse_docstring_args",
    "tool_spec",
]

# The parameters the framework fills (``context_variables``, and those features register):
# graph/core/injected.py, a light module the package's __init__ imports.
_NoneType = type(None)
_UNIONS: set[Any] = {Union, types.UnionType}
# Swarm's answer for a parameter without an annotation (its type table's fallback).
_UNTYPED = {"type": "string"}
# pydantic says these about bare containers; Swarm says only the type.
_NOISE: tuple[tuple[str, Any], ...] = (("items", {}), ("additionalProperties", True))
# Keywords whose values are JSON data, not schemas: copied as they are.
_VALUES = frozenset({"default", "examples", "enum", "const"})
# Google-style section titles docstring-parser does not list, read as parameters too.
_KEYWORD_SECTIONS = ("Keyword Args", "Keyword Arguments")


# --------------------------------------------------------------------------- annotations


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


def _field_type(tp: Any) -> Any:
    """``tp`` as pydantic should see it: ``Annotated`` text (a plain string or
    ``typing_extensions.Doc``) becomes ``Field(description=...)``, which pydantic reads."""
    if get_origin(tp) is not Annotated:
        return tp
    metadata = []
    for meta in tp.__metadata__:
        if isinstance(meta, str):
            meta = Field(description=meta)
        elif hasattr(meta, "documentation") and not isinstance(meta, FieldInfo):
            meta = Field(description=meta.documentation)
        metadata.append(meta)
    return Annotated.__class_getitem__((get_args(tp)[0], *metadata))


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


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


# --------------------------------------------------------------------------- JSON schema tidy


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def _enum_type(values: list[Any]) -> str | list[str] | None:
    kinds: list[str] = []
    for value in values:
        if value is None:
            kind = "null"
        else:
            kind = next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), "")
            if not kind:
                return None
        if kind not in kinds:
            kinds.append(kind)
    return kinds[0] if len(kinds) == 1 else kinds


class _Tidy:
    """Makes pydantic's JSON schema read like a hand-written one: refs to models and enums
    inlined (a recursive model keeps its ``$defs`` entry), auto titles dropped, no
    ``items: {}`` / ``additionalProperties: true`` noise, and ``enum`` always with a type."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.kept: dict[str, Any] = {}

    def __call__(self, node: Any, expanding: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self(item, expanding) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if name in expanding:  # a model inside itself: the one place a ref must stay
                if name not in self.kept:
                    self.kept[name] = None  # claimed before expanding, so recursion ends
                    self.kept[name] = self(self.defs[name], (name,))
                return {"$ref": ref, **self(siblings, expanding)}
            body = self(self.defs[name], (*expanding, name))
            return {**body, **self(siblings, expanding)}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                out[key] = {name: self(sub, expanding) for name, sub in value.items()}
            elif key in _VALUES:  # data, not schema: a default may hold a "title" key
                out[key] = value
            else:
                out[key] = self(value, expanding)
        for key, noise in _NOISE:
            if out.get(key) == noise:
                del out[key]
        if "enum" in out and "type" not in out:
            kind = _enum_type(out["enum"])
            if kind is not None:
                out["type"] = kind
        if "type" in out:  # the type first, as people write schemas
            out = {"type": out.pop("type"), **out}
        return out


# --------------------------------------------------------------------------- docstrings

# docstring-parser's Google parser, which also reads a "Keyword Args:" section as parameters.
_GOOGLE = GoogleParser(
    [*DEFAULT_SECTIONS, *(Section(t, "param", SectionType.MULTIPLE) for t in _KEYWORD_SECTIONS)]
)
_READERS: tuple[Callable[[str], Docstring], ...] = (
    _GOOGLE.parse,
    functools.partial(parse_docstring, style=DocstringStyle.REST),
    functools.partial(parse_docstring, style=DocstringStyle.NUMPYDOC),
)


def parse_docstring_args(doc: str | None) -> dict[str, str]:
    """Per-argument descriptions from a Google, reST or NumPy style docstring (read by
    docstring-parser; each description on one line). A docstring it cannot read describes
    no argument: the tool still gets its schema.

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
    readings = []
    for read in _READERS:
        try:
            readings.append(read(doc).params)
        except ParseError:  # not this style
            continue
        except (IndexError, ValueError, KeyError):  # docstring-parser trips on some odd text:
            continue  # a docstring never costs a tool its schema
    # the style that finds the most parameters (as docstring-parser's own auto style picks)
    params = max(readings, key=len, default=[])
    return {
        p.arg_name.lstrip("*"): " ".join(p.description.split()) for p in params if p.description
    }


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
        if is_langchain_tool(func):  # ``agent.functions.append(tool)`` skips Agent's check
            raise ToolSchemaError(
                f"LangChain tool {func.name!r} joined an agent's functions after the Agent was "
                "made: give it to Agent(functions=[...]), which turns it into a function the step "
                "runs (a list changed later is not read again)"
            ) from err
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


def _visible_parameters(
    name: str, signature: inspect.Signature, bound: set[str]
) -> tuple[list[inspect.Parameter], list[inspect.Parameter], dict[str, Filled], bool]:
    """The parameters the model fills, the injected ones (:data:`INJECTED`: the
    ``context_variables`` parameter among them, if wanted) the tool declares, those LangChain's
    annotations say the step fills (graph/core/langchain_args.py), and whether ``**kwargs``
    takes extras."""
    visible: list[inspect.Parameter] = []
    injected: list[inspect.Parameter] = []
    filled: dict[str, Filled] = {}
    accepts_extra = False
    for param in signature.parameters.values():
        if param.name in bound:
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise ToolSchemaError(
                f"tool {name!r}: parameter '*{param.name}' cannot be filled from JSON "
                "arguments; give the tool named parameters"
            )
        if param.kind is param.VAR_KEYWORD:
            accepts_extra = True
        elif param.kind is param.POSITIONAL_ONLY:
            raise ToolSchemaError(
                f"tool {name!r}: parameter {param.name!r} is positional-only; tools are "
                "called with keyword arguments"
            )
        elif param.name in INJECTED:
            param_for(param.name)  # its feature registers it (loaded on first use)
            injected.append(param)
        elif (by_step := filled_by_step(param.annotation)) is not None:  # LangChain's rules
            if by_step.kind == "unfilled":
                raise ToolSchemaError(
                    f"tool {name!r}: parameter {param.name!r} is an InjectedToolArg, which "
                    "LangChain leaves to the tool's caller, and nothing in a swarm step fills "
                    "it: name it context_variables for the run's context, or annotate it "
                    "ToolRuntime, InjectedToolCallId, InjectedState or InjectedStore"
                )
            filled[param.name] = by_step
        else:
            visible.append(param)
    return visible, injected, filled, accepts_extra


# --------------------------------------------------------------------------- the one pydantic pass


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
        tp = Any if param.annotation is inspect.Parameter.empty else _field_type(param.annotation)
        if param.default is not inspect.Parameter.empty:
            tp = typing_extensions.NotRequired[tp]
        fields[param.name] = tp
    # A TypedDict made at run time (its name is the tool's), which type checkers cannot follow.
    arguments = typing_extensions.TypedDict(f"{name}_arguments", fields)  # type: ignore[misc]
    arguments.__pydantic_config__ = ConfigDict(  # type: ignore[attr-defined]
        extra="ignore" if accepts_extra else "forbid",
        coerce_numbers_to_str=True,  # the model sends 123 for a str order id; Swarm passes it on
    )
    return TypeAdapter(arguments)


def _unmappable(name: str, visible: list[inspect.Parameter], err: Exception) -> ToolSchemaError:
    """The error for a tool pydantic cannot handle, naming the parameter that caused it."""
    for param in visible:
        if param.annotation is inspect.Parameter.empty:
            continue
        try:
            TypeAdapter(_field_type(param.annotation)).json_schema()
        except Exception:
            return ToolSchemaError(
                f"tool {name!r}: parameter {param.name!r}: cannot describe annotation "
                f"{_type_name(param.annotation)} as JSON schema and validate it (use JSON "
                "types, containers of them, Literal, Enum, Annotated, pydantic models, "
                "datetime/UUID/Decimal/Path, or Any)"
            )
    return ToolSchemaError(f"tool {name!r}: cannot build an argument validator: {err}")


def _parameters_schema(
    adapter: TypeAdapter[Any] | None, visible: list[inspect.Parameter], doc_args: dict[str, str]
) -> dict[str, Any]:
    generated = adapter.json_schema() if adapter is not None else {}
    tidy = _Tidy(generated.get("$defs", {}))
    from_pydantic = generated.get("properties", {})
    properties: dict[str, Any] = {}
    for param in visible:
        if param.annotation is inspect.Parameter.empty:
            prop = dict(_UNTYPED)
        else:
            prop = tidy(from_pydantic[param.name])
        # the docstring's words about this argument beat a model class's own docstring,
        # but not an explicit Annotated description
        if param.name in doc_args and not _described(param.annotation):
            prop["description"] = doc_args[param.name]
        properties[param.name] = prop
    required = [p.name for p in visible if p.default is inspect.Parameter.empty]
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if tidy.kept:
        parameters["$defs"] = dict(sorted(tidy.kept.items()))
    return parameters


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """Everything the engine needs to offer and call one tool, built once per function.

    ``schema`` is :func:`function_to_json`'s output (shared: treat it as read-only),
    ``wants_context`` says the callable takes ``context_variables``, ``injected`` names every
    parameter of :data:`INJECTED` it takes, ``is_async`` says calling it gives a coroutine.
    ``parse_arguments`` turns the model's raw arguments into keyword arguments for the call.

    Example:
        >>> def refund(order_id: int, context_variables: dict) -> str:
        ...     return "ok"
        >>> spec = tool_spec(refund)
        >>> spec.name, spec.wants_context, spec.is_async
        ('refund', True, False)
        >>> spec.parse_arguments('{"order_id": 7, "context_variables": {"forged": 1}}')
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
    #: The injected parameters it declares (names of :data:`INJECTED`), in signature order.
    injected: tuple[str, ...] = ()
    #: Those of them with a default: left to it when the run has no value.
    injected_optional: frozenset[str] = frozenset()
    _adapter: TypeAdapter[Any] | None = field(default=None, repr=False, compare=False)
    _blocked: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    #: Parameters whose default is None although their type rejects it: null means default.
    _null_is_default: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    #: The pydantic model ``context_variables`` is annotated with: the tool gets an instance.
    context_model: Any = field(default=None, repr=False, compare=False)
    #: The parameters LangChain's annotations say the step fills (``RunnableConfig``,
    #: ``ToolRuntime``, ``InjectedToolCallId``, ``InjectedState``, ``InjectedStore``: see
    #: graph/core/langchain_args.py), hidden from the model, by name.
    filled: Mapping[str, Filled] = field(default_factory=dict, repr=False, compare=False)

    def parse_arguments(self, raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
        """Decode and check the model's arguments; returns kwargs for the call.

        ``raw`` is the JSON string from a tool call, an already-decoded dict, or
        ``None``/``""`` for no arguments. A model-supplied ``context_variables`` (or any
        other name of :data:`INJECTED`, or of :attr:`filled`) is dropped: the engine injects
        the real one. Raises
        :class:`ToolArgumentError` for arguments the annotations cannot accept. The values
        come back as the model sent them, only checked (see the module docstring).

        Example:
            >>> def book(seat: int, meal: str = "veg"): ...
            >>> tool_spec(book).parse_arguments({"seat": "12"})
            {'seat': '12'}
            >>> try:
            ...     tool_spec(book).parse_arguments('{"meal": "fish", "row": 3}')
            ... except ToolArgumentError as err:
            ...     print(*err.problems, sep="\\n")
            missing required argument 'seat'
            unknown argument 'row' (accepted: seat, meal)
        """
        if not raw and self._adapter is None and not self.required:
            return {}  # no arguments for untyped parameters (a transfer): nothing to check
        args = self._decode(raw)
        filled = self.filled
        if not isinstance(args, dict) or not INJECTED.keys().isdisjoint(args) or filled:
            args = {k: v for k, v in args.items() if k not in INJECTED and k not in filled}
        if self._adapter is None:
            return _fresh(self._check_names(args))
        checked = args
        if self.accepts_extra:  # extras pass through to **kwargs unchecked
            if self._blocked.intersection(args):
                self._check_names(args)  # raises: naming the blocked ones
            checked = {k: v for k, v in args.items() if k in self.arg_names}
        nulls = [k for k in self._null_is_default if k in checked and checked[k] is None]
        if nulls:  # checked as absent, passed as the None the function's default is
            checked = {k: v for k, v in checked.items() if k not in nulls}
        try:  # a check only: what pydantic converts the values to is not passed on
            self._adapter.validate_python(checked)
        except ValidationError as err:
            raise ToolArgumentError(self.name, self._describe(err)) from None
        return _fresh(args)

    def _decode(self, raw: str | bytes | Mapping[str, Any] | None) -> Mapping[str, Any]:
        if raw is None:
            return {}
        args: Any = raw
        if isinstance(raw, (str, bytes, bytearray)):
            if not raw.strip():
                return {}
            try:
                args = json.loads(raw)
            except ValueError as err:
                raise ToolArgumentError(
                    self.name, [f"arguments are not valid JSON: {err}"]
                ) from None
            if args is None:  # "null" from some models means "no arguments"
                return {}
        if not isinstance(args, Mapping):
            kind = {
                list: "array",
                str: "string",
                bool: "boolean",
                int: "number",
                float: "number",
            }.get(type(args), type(args).__name__)
            raise ToolArgumentError(self.name, [f"arguments must be a JSON object, got {kind}"])
        return args

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


def _fresh(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as a new dict whose containers are copies: a tool that changes a list
    it was given must not change the reply it came from (Swarm's ``json.loads`` gives each
    call fresh values too)."""
    return {k: copy.deepcopy(v) if isinstance(v, (dict, list)) else v for k, v in args.items()}


def _where(loc: tuple[Any, ...]) -> str:
    text = str(loc[0])
    for part in loc[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _build_spec(func: Any) -> ToolSpec:
    name = _tool_name(func)
    signature = _signature(func, name)
    _, bound = _unwrap_partial(func)
    visible, injected, filled, accepts_extra = _visible_parameters(name, signature, bound)
    injected_names = tuple(p.name for p in injected)
    context_param = next((p for p in injected if p.name == CONTEXT_PARAM), None)

    adapter = None
    given = getattr(func, JSON_SCHEMA, None)
    if given is not None:  # a LangChain tool's JSON schema (an MCP tool's): told as it is, and
        # its arguments are checked for the names it requires (LangChain checks no more)
        parameters = {"type": "object", "properties": {}, "required": [], **given}
        visible = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY)
            for n in given.get("properties", {})
        ]
        accepts_extra = given.get("additionalProperties") is not False
    elif any(p.annotation is not inspect.Parameter.empty for p in visible):
        try:
            adapter = _arguments_adapter(name, visible, accepts_extra)
            parameters = _parameters_schema(adapter, visible, parse_docstring_args(_tool_doc(func)))
        except Exception as err:
            raise _unmappable(name, visible, err) from err
    else:  # Swarm's own case: no pydantic at all
        parameters = _parameters_schema(None, visible, parse_docstring_args(_tool_doc(func)))
    schema = {
        "type": "function",
        "function": {"name": name, "description": _tool_doc(func), "parameters": parameters},
    }
    return ToolSpec(
        name=name,
        schema=schema,
        wants_context=CONTEXT_PARAM in injected_names,
        is_async=_is_async(func),
        arg_names=tuple(p.name for p in visible),
        required=tuple(parameters["required"]),
        accepts_extra=accepts_extra,
        injected=injected_names,
        injected_optional=frozenset(
            p.name for p in injected if p.default is not inspect.Parameter.empty
        ),
        _adapter=adapter,
        _blocked=frozenset(bound | set(injected_names) | set(filled)),
        _null_is_default=frozenset(
            p.name
            for p in visible
            if p.default is None
            and p.annotation is not inspect.Parameter.empty
            and not _accepts_none(p.annotation)
        ),
        context_model=typed_annotation(context_param.annotation) if context_param else None,
        filled=filled,
    )


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
        >>> from typing import Annotated, Literal, Optional
        >>> from pydantic import Field
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
        >>> def tag(tags: Annotated[Optional[list[str]], Field(max_length=2)] = None): ...
        >>> function_to_json(tag)["function"]["parameters"]["properties"]["tags"]["anyOf"][0]
        {'type': 'array', 'items': {'type': 'string'}, 'maxItems': 2}
    """
    return copy.deepcopy(tool_spec(func).schema)


def typed_annotation(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a tool's ``context_variables`` annotation names, if any
    (``Desk``, ``Desk | None``): such a tool gets an instance instead of the dict."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (types.UnionType, Union):
        args = get_args(annotation)
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return models[0] if len(models) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None
