"""Tool schemas: Swarm's exact output where Swarm has one, and the extensions beyond it."""

from __future__ import annotations
import __future__

import asyncio
import collections.abc
import datetime
import enum
import functools
import gc
import inspect
import json
import typing
import uuid
import weakref
from typing import Annotated, Any, Literal

import pytest
import typing_extensions
from pydantic import BaseModel, Field, validate_call
from swarmgraph.graph.core.schema import (
    ToolArgumentError,
    ToolSchemaError,
    ToolSpec,
    function_to_json,
    tool_spec,
)

# The test module itself uses postponed annotations, so every annotated tool below also
# proves that string annotations are resolved. Types used in them live at module level.


def swarm_function_to_json(func) -> dict:
    """OpenAI Swarm's reference implementation (swarm/util.py), the oracle."""
    type_map = {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        list: "array",
        dict: "object",
        type(None): "null",
    }
    signature = inspect.signature(func)
    parameters = {}
    for param in signature.parameters.values():
        param_type = type_map.get(param.annotation, "string")
        parameters[param.name] = {"type": param_type}
    required = [
        param.name for param in signature.parameters.values() if param.default == inspect._empty
    ]
    return {
        "type": "function",
        "function": {
            "name": func.__name__,
            "description": func.__doc__ or "",
            "parameters": {"type": "object", "properties": parameters, "required": required},
        },
    }


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal, and every dict has its keys in the same order."""
    assert ours == theirs
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for key in ours:
            assert_same(ours[key], theirs[key])
    elif isinstance(ours, list):
        for a, b in zip(ours, theirs, strict=True):
            assert_same(a, b)


def props(func) -> dict:
    return function_to_json(func)["function"]["parameters"]["properties"]


def params(func) -> dict:
    return function_to_json(func)["function"]["parameters"]


# --------------------------------------------------------------------------- Swarm parity


def basic_function(arg1, arg2):
    return arg1 + arg2


def complex_function(arg1: int, arg2: str, arg3: float = 3.14, arg4: bool = False):
    """This is a complex function with a docstring."""


def get_weather(location, time="now"):
    """Get the current weather in a given location. Location MUST be a city."""


def send_email(recipient, subject, body):
    """Send an email.

    Multi-line docstrings are passed through untouched.
    """


def containers(items: list, mapping: dict, nothing: type(None), flag: bool = True):
    """Containers, the way Swarm's type table spells them."""


def keyword_only(a, *, b: int, c: str = "x"):
    """Keyword-only parameters."""


def escalate_to_agent(reason=None):
    return f"Escalating to agent: {reason}" if reason else "Escalating to agent"


def no_params():
    """Takes nothing."""


class Shop:
    def restock(self, sku: str, amount: int = 1):
        """Restock an item."""


SWARM_CASES = [
    basic_function,
    complex_function,
    get_weather,
    send_email,
    containers,
    keyword_only,
    escalate_to_agent,
    no_params,
    Shop().restock,
    lambda x, y=2: x,
]


@pytest.mark.parametrize("func", SWARM_CASES, ids=lambda f: f.__name__)
def test_matches_swarm_exactly_for_what_swarm_handles(func):
    oracle_func = func
    if not isinstance(func, functools.partial):
        # the oracle reads raw annotations; ours resolves the postponed strings first
        oracle_func = _with_resolved_annotations(func)
    assert_same(function_to_json(func), swarm_function_to_json(oracle_func))


def _with_resolved_annotations(func):
    """A twin of ``func`` whose ``__annotations__`` are real types, for the oracle."""
    target = func.__func__ if inspect.ismethod(func) else func
    hints = typing.get_type_hints(target, include_extras=True)
    hints.pop("return", None)
    clone = functools.wraps(target)(lambda *a, **k: None)
    sig = inspect.signature(func)
    clone.__signature__ = sig.replace(
        parameters=[
            p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
        ]
    )
    return clone


def test_oracle_sees_real_types():
    """Guard the parity test: the oracle must map complex_function's ints, not fall back."""
    out = swarm_function_to_json(_with_resolved_annotations(complex_function))
    assert out["function"]["parameters"]["properties"]["arg1"] == {"type": "integer"}
    assert out["function"]["parameters"]["required"] == ["arg1", "arg2"]


def test_per_argument_descriptions_are_the_only_addition_for_swarm_types():
    def lookup(order_id: int, verbose: bool = False):
        """Look an order up.

        Args:
            order_id: The order number.
        """

    ours = function_to_json(lookup)
    theirs = swarm_function_to_json(_with_resolved_annotations(lookup))
    assert ours["function"]["description"] == lookup.__doc__  # raw docstring, like Swarm
    assert ours["function"]["parameters"]["properties"]["order_id"].pop("description") == (
        "The order number."
    )
    assert_same(ours, theirs)


def test_function_to_json_returns_a_fresh_copy():
    first = function_to_json(get_weather)
    first["function"]["name"] = "changed"
    first["function"]["parameters"]["required"].append("time")
    assert function_to_json(get_weather)["function"]["name"] == "get_weather"
    assert tool_spec(get_weather).schema["function"]["parameters"]["required"] == ["location"]


def test_none_annotation_is_null_not_swarms_accidental_string():
    def f(x: None): ...

    assert props(f) == {"x": {"type": "null"}}


# --------------------------------------------------------------------------- context_variables


def ctx_plain(a, context_variables):
    """Plain."""


def ctx_default(a: int, context_variables=None): ...


def ctx_annotated(context_variables: dict, a: str = "x"): ...


def ctx_keyword_only(a, *, context_variables: dict | None = None): ...


@pytest.mark.parametrize("func", [ctx_plain, ctx_default, ctx_annotated, ctx_keyword_only])
def test_context_variables_never_in_schema(func):
    p = params(func)
    assert "context_variables" not in p["properties"]
    assert "context_variables" not in p["required"]
    assert list(p["properties"]) == ["a"]
    assert tool_spec(func).wants_context is True
    assert "context_variables" not in tool_spec(func).arg_names


def test_wants_context_false_without_the_parameter():
    assert tool_spec(get_weather).wants_context is False

    # **kwargs could receive it, but only a named parameter asks for injection (like Swarm)
    def open_ended(a, **kwargs): ...

    assert tool_spec(open_ended).wants_context is False


# --------------------------------------------------------------------------- extensions


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class LineItem(BaseModel):
    sku: str
    qty: int = 1


class Order(BaseModel):
    """A customer order."""

    order_id: int
    title: str = Field(description="What the customer calls it")
    items: list[LineItem] = []


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class Opaque:
    pass


def test_optional_is_anyof_with_null_and_required_only_without_default():
    def f(a: typing.Optional[int], b: int | None = None, c: str | None = "x"): ...  # noqa: UP045

    p = params(f)
    null_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert p["properties"]["a"] == null_int
    assert p["properties"]["b"] == null_int
    assert p["properties"]["c"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert p["required"] == ["a"]


def test_union_is_anyof():
    def f(a: typing.Union[int, str], b: int | list[str] | None): ...  # noqa: UP007

    p = props(f)
    assert p["a"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert p["b"] == {
        "anyOf": [
            {"type": "integer"},
            {"type": "array", "items": {"type": "string"}},
            {"type": "null"},
        ]
    }


def test_containers():
    def f(
        a: list[int],
        b: typing.List[str],  # noqa: UP006
        c: collections.abc.Sequence[float],
        d: dict[str, int],
        e: typing.Dict,  # noqa: UP006
        f: tuple[int, str],
        g: tuple[float, ...],
        h: tuple,
        i: set[str],
        j: list[Any],
        k: dict[str, list[bool]],
    ): ...

    p = props(f)
    assert p["a"] == {"type": "array", "items": {"type": "integer"}}
    assert p["b"] == {"type": "array", "items": {"type": "string"}}
    assert p["c"] == {"type": "array", "items": {"type": "number"}}
    assert p["d"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["e"] == {"type": "object"}
    assert p["f"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert p["g"] == {"type": "array", "items": {"type": "number"}}
    assert p["h"] == {"type": "array"}
    assert p["i"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert p["j"] == {"type": "array"}
    assert p["k"] == {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "boolean"}},
    }


def test_literal_and_enum_become_enums_with_a_type():
    def f(
        a: Literal["fast", "slow"],
        b: Literal[1, 2, 3],
        c: Literal["x", 1, None],
        d: Colour,
        e: Priority = Priority.LOW,
    ): ...

    p = props(f)
    assert p["a"] == {"type": "string", "enum": ["fast", "slow"]}
    assert p["b"] == {"type": "integer", "enum": [1, 2, 3]}
    assert p["c"] == {"type": ["string", "integer", "null"], "enum": ["x", 1, None]}
    assert p["d"] == {"type": "string", "enum": ["red", "blue"]}
    assert p["e"] == {"type": "integer", "enum": [1, 2]}


def test_other_string_formats():
    def f(when: datetime.datetime, day: datetime.date, ref: uuid.UUID, anything: Any): ...

    p = props(f)
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["day"] == {"type": "string", "format": "date"}
    assert p["ref"] == {"type": "string", "format": "uuid"}
    assert p["anything"] == {}


def test_annotated_descriptions_and_constraints():
    def f(
        city: Annotated[str, "The city to search"],
        count: Annotated[int, Field(description="How many", ge=1, le=10)] = 3,
        tags: Annotated[list[str], Field(min_length=1)] = ["a"],  # noqa: B006
        code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "ABC",
        note: Annotated[str, typing_extensions.Doc("Free text")] = "",
    ):
        """Search.

        Args:
            city: Docstring words lose to Annotated.
            tags: Docstring words for tags.
        """

    p = props(f)
    assert p["city"] == {"type": "string", "description": "The city to search"}
    assert p["count"] == {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many"}
    assert p["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "description": "Docstring words for tags.",
    }
    assert p["code"] == {"type": "string", "pattern": "^[A-Z]{3}$"}
    assert p["note"] == {"type": "string", "description": "Free text"}


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _resolve_all_refs(parameters: dict) -> None:
    for ref in _refs(parameters):
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in parameters["$defs"], ref


def test_pydantic_model_parameter_is_inlined_without_dangling_refs():
    def place(order: Order, note: str = ""):
        """Place an order."""

    p = params(place)
    order = p["properties"]["order"]
    assert order["type"] == "object"
    assert order["description"] == "A customer order."
    assert order["required"] == ["order_id", "title"]
    assert order["properties"]["title"] == {
        "type": "string",
        "description": "What the customer calls it",
    }
    assert (
        "title" not in order
    )  # pydantic's auto titles are stripped, the *field* named title stays
    assert p["required"] == ["order"]
    _resolve_all_refs(p)


def test_recursive_and_nested_models_keep_defs_at_parameters_level():
    def grow(tree: TreeNode, extra: list[LineItem] | None = None): ...

    p = params(grow)
    assert set(p["$defs"]) == {"TreeNode"}  # only the self-referencing model needs a def
    line_item = p["properties"]["extra"]["anyOf"][0]["items"]
    assert line_item["properties"]["sku"] == {"type": "string"}  # inlined
    assert p["properties"]["tree"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/TreeNode"
    }
    _resolve_all_refs(p)
    assert list(p)[:3] == ["type", "properties", "required"]


def test_no_defs_key_when_everything_inlines():
    def add(item: LineItem): ...

    assert "$defs" not in params(add)
    assert props(add)["item"]["properties"]["sku"] == {"type": "string"}


def test_docstring_styles():
    def google(a, b, c):
        """Do it.

        Args:
            a (int): First,
                continued here.
            b: Second.

        Returns:
            Nothing.
        """

    def rest(a, b):
        """Do it.

        :param int a: First one.
        :param b: Second one,
            on two lines.
        :returns: nothing
        """

    def numpy(a, b):
        """Do it.

        Parameters
        ----------
        a : int
            First one.
        b
            Second one.

        Returns
        -------
        None
        """

    assert props(google) == {
        "a": {"type": "string", "description": "First, continued here."},
        "b": {"type": "string", "description": "Second."},
        "c": {"type": "string"},
    }
    assert props(rest) == {
        "a": {"type": "string", "description": "First one."},
        "b": {"type": "string", "description": "Second one, on two lines."},
    }
    assert props(numpy) == {
        "a": {"type": "string", "description": "First one."},
        "b": {"type": "string", "description": "Second one."},
    }
    assert function_to_json(google)["function"]["description"] == google.__doc__


def test_keyword_args_section_and_unreadable_docstrings():
    def keyword(a, **options):
        """Do it.

        Keyword Args:
            a: First.
        """

    def odd(a):
        """:param x:Keyword Args:**kw:Keyword Args:
        ----------Parameters
        :  : text Keyword Args::raises:Returns:Returns:"""

    assert props(keyword) == {"a": {"type": "string", "description": "First."}}
    # text the docstring parser trips on describes no argument; the tool keeps its schema
    assert props(odd) == {"a": {"type": "string"}}


# --------------------------------------------------------------------------- errors at build time


def test_unknown_annotations_raise_naming_function_and_parameter():
    def f(a: int, thing: Opaque): ...

    def g(callback: collections.abc.Callable[[int], int]): ...

    def i(deep: list[dict[str, Opaque]]): ...

    for func, param in [(f, "thing"), (g, "callback"), (i, "deep")]:
        with pytest.raises(ToolSchemaError) as info:
            function_to_json(func)
        assert f"tool {func.__name__!r}" in str(info.value)
        assert f"parameter {param!r}" in str(info.value)
        assert isinstance(info.value, TypeError)
        with pytest.raises(ToolSchemaError):
            tool_spec(func)


def test_var_positional_is_an_error_and_var_keyword_is_skipped():
    def star(a, *rest): ...

    with pytest.raises(ToolSchemaError, match=r"\*rest"):
        function_to_json(star)

    def kw(a: int, **options):
        """Pass-through options."""

    p = params(kw)
    assert list(p["properties"]) == ["a"]
    assert p["required"] == ["a"]
    # extras go to **options unvalidated; the named ones are still checked (and passed as sent)
    assert tool_spec(kw).parse_arguments({"a": "1", "colour": "red"}) == {"a": "1", "colour": "red"}
    with pytest.raises(ToolArgumentError, match="'a'"):
        tool_spec(kw).parse_arguments({"a": "x", "colour": "red"})


def test_positional_only_is_an_error():
    def pos(a, /, b): ...

    with pytest.raises(ToolSchemaError, match="positional-only"):
        tool_spec(pos)


def test_unresolvable_string_annotation_names_the_parameter():
    namespace: dict[str, Any] = {}
    source = "def late(a: int, b: NotDefinedAnywhere = None):\n    pass\n"
    flags = __future__.annotations.compiler_flag
    exec(compile(source, "<tool>", "exec", flags=flags, dont_inherit=True), namespace)
    with pytest.raises(ToolSchemaError, match=r"parameter 'b'.*NotDefinedAnywhere"):
        function_to_json(namespace["late"])


def test_postponed_annotations_in_a_foreign_module_resolve_against_its_globals():
    namespace: dict[str, Any] = {}
    source = (
        "from typing import Annotated, Literal\n"
        "Mode = Literal['a', 'b']\n"
        "def tool(mode: Mode, n: Annotated[int, 'How many'] = 1, context_variables=None):\n"
        "    pass\n"
    )
    flags = __future__.annotations.compiler_flag
    exec(compile(source, "<tool>", "exec", flags=flags, dont_inherit=True), namespace)
    assert isinstance(namespace["tool"].__annotations__["mode"], str)
    assert props(namespace["tool"]) == {
        "mode": {"type": "string", "enum": ["a", "b"]},
        "n": {"type": "integer", "description": "How many"},
    }


# ---------------------------------------------------------------- callables of every shape


def transfer(order_id: int, reason: str, channel: str = "web", context_variables=None) -> str:
    """Transfer an order."""
    return f"{order_id}:{reason}:{channel}"


async def fetch(url: str, retries: int = 1) -> str:
    """Fetch a page."""
    return url * retries


def test_partial_removes_bound_arguments_and_keeps_the_wrapped_name_and_doc():
    p = functools.partial(transfer, 7, channel="phone")
    schema = function_to_json(p)
    assert schema["function"]["name"] == "transfer"
    assert schema["function"]["description"] == "Transfer an order."
    assert schema["function"]["parameters"] == {
        "type": "object",
        "properties": {"reason": {"type": "string"}},
        "required": ["reason"],
    }
    spec = tool_spec(p)
    assert spec.wants_context is True
    assert spec.parse_arguments('{"reason": "late"}') == {"reason": "late"}
    # the model cannot override what the programmer bound
    with pytest.raises(ToolArgumentError, match="unknown argument 'channel'"):
        spec.parse_arguments('{"reason": "late", "channel": "fax"}')
    assert p(**spec.parse_arguments('{"reason": "late"}')) == "7:late:phone"


def test_nested_partials():
    p = functools.partial(functools.partial(transfer, reason="x"), channel="y")
    assert list(props(p)) == ["order_id"]
    assert tool_spec(p).name == "transfer"


def test_bound_methods_drop_self_and_share_a_cached_spec():
    shop = Shop()
    assert list(props(shop.restock)) == ["sku", "amount"]
    assert tool_spec(shop.restock) is tool_spec(shop.restock)
    assert tool_spec(shop.restock) is tool_spec(Shop().restock)
    assert tool_spec(shop.restock).name == "restock"


class Registry:
    @classmethod
    def register(cls, name: str, context_variables=None): ...

    @staticmethod
    def lookup(name: str): ...

    async def __call__(self, query: str): ...


def test_classmethod_staticmethod_and_callable_objects():
    assert list(props(Registry.register)) == ["name"]
    assert tool_spec(Registry.register).wants_context is True
    assert list(props(Registry.lookup)) == ["name"]
    reg = Registry()
    spec = tool_spec(reg)
    assert list(props(reg)) == ["query"]
    assert spec.is_async is True
    assert tool_spec(reg) is spec


def logged(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@logged
def decorated(city: str, context_variables: dict) -> str:
    """Decorated tool."""
    return city + context_variables["suffix"]


def test_decorated_functions_follow_wrapped_signature():
    # a co_varnames check on the wrapper would see only (args, kwargs)
    assert "context_variables" not in decorated.__code__.co_varnames
    spec = tool_spec(decorated)
    assert spec.wants_context is True
    assert spec.name == "decorated"
    assert function_to_json(decorated)["function"]["parameters"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    kwargs = spec.parse_arguments('{"city": "Oslo"}')
    assert decorated(**kwargs, context_variables={"suffix": "!"}) == "Oslo!"


def test_async_functions_and_partials_of_them():
    spec = tool_spec(fetch)
    assert spec.is_async is True
    assert list(props(fetch)) == ["url", "retries"]
    assert tool_spec(functools.partial(fetch, retries=2)).is_async is True
    assert tool_spec(transfer).is_async is False
    kwargs = tool_spec(fetch).parse_arguments('{"url": "ab", "retries": 2}')
    assert asyncio.run(fetch(**kwargs)) == "abab"


def test_cache_is_a_lookup_and_does_not_keep_functions_alive():
    assert tool_spec(transfer) is tool_spec(transfer)

    def make():
        def temporary(x: int): ...

        return temporary

    func = make()
    spec = tool_spec(func)
    assert isinstance(spec, ToolSpec)
    ref = weakref.ref(func)
    del func, spec
    gc.collect()
    assert ref() is None


# --------------------------------------------------------------------------- parse_arguments


def lookup_order(order_id: int, include_items: bool = False, note: str | None = None):
    """Look up an order."""


def untyped(a, b=None): ...


def test_parse_valid_json_checks_but_passes_the_values_as_sent():
    """Swarm passes ``json.loads`` of the arguments: ``"7"`` for an ``int`` stays ``"7"``.
    The check still refuses what cannot be an int (test_parse_wrong_type_message...)."""
    spec = tool_spec(lookup_order)
    assert spec.parse_arguments('{"order_id": "7"}') == {"order_id": "7"}
    assert spec.parse_arguments('{"order_id": 7, "include_items": "true"}') == {
        "order_id": 7,
        "include_items": "true",
    }
    assert spec.parse_arguments(b'{"order_id": 1, "note": null}') == {"order_id": 1, "note": None}
    # only what the model sent comes back: the function's own defaults fill the rest
    assert "include_items" not in spec.parse_arguments({"order_id": 1})


def test_parse_malformed_json():
    with pytest.raises(ToolArgumentError) as info:
        tool_spec(lookup_order).parse_arguments('{"order_id": 7')
    assert str(info.value).startswith("lookup_order: arguments are not valid JSON: ")
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("raw", "kind"), [("[1, 2]", "array"), ('"7"', "string"), ("7", "number"), ([1], "array")]
)
def test_parse_non_object(raw, kind):
    with pytest.raises(ToolArgumentError, match=f"arguments must be a JSON object, got {kind}"):
        tool_spec(lookup_order).parse_arguments(raw)


def test_parse_unknown_missing_and_wrong_type_together():
    with pytest.raises(ToolArgumentError) as info:
        tool_spec(lookup_order).parse_arguments('{"include_items": "maybe", "colour": 1}')
    err = info.value
    assert err.tool == "lookup_order"
    assert "missing required argument 'order_id'" in err.problems
    assert "unknown argument 'colour' (accepted: order_id, include_items, note)" in err.problems
    assert any(
        p.startswith("argument 'include_items': Input should be a valid boolean")
        for p in err.problems
    )
    assert str(err).startswith("lookup_order: ")


def test_parse_wrong_type_message_names_tool_and_argument():
    with pytest.raises(ToolArgumentError) as info:
        tool_spec(lookup_order).parse_arguments({"order_id": "abc"})
    assert str(info.value) == (
        "lookup_order: argument 'order_id': Input should be a valid integer, "
        "unable to parse string as an integer (got 'abc')"
    )


def test_parse_drops_model_supplied_context_variables():
    spec = tool_spec(transfer)
    raw = {"order_id": 1, "reason": "x", "context_variables": {"is_admin": True}}
    assert spec.parse_arguments(raw) == {"order_id": 1, "reason": "x"}
    assert "context_variables" in raw  # the caller's dict is not modified
    # dropped even for tools that never asked for context, and for untyped tools
    assert tool_spec(lookup_order).parse_arguments('{"order_id": 1, "context_variables": {}}') == {
        "order_id": 1
    }
    assert tool_spec(untyped).parse_arguments({"a": 1, "context_variables": 2}) == {"a": 1}


@pytest.mark.parametrize("raw", [None, "", "   ", "null", "{}", {}])
def test_parse_no_arguments(raw):
    assert tool_spec(no_params).parse_arguments(raw) == {}


def test_no_arg_tool_rejects_arguments():
    with pytest.raises(ToolArgumentError, match="unknown argument 'x' \\(accepted: none\\)"):
        tool_spec(no_params).parse_arguments('{"x": 1}')


def test_no_arguments_for_a_tool_that_needs_some():
    with pytest.raises(ToolArgumentError, match="missing required argument 'order_id'"):
        tool_spec(lookup_order).parse_arguments(None)


def test_untyped_parameters_accept_any_json_unchanged():
    value = {"nested": [1, "two", None, {"x": 1.5}]}
    assert tool_spec(untyped).parse_arguments(json.dumps({"a": value})) == {"a": value}
    assert tool_spec(untyped).parse_arguments({"a": 5, "b": [1]}) == {"a": 5, "b": [1]}
    with pytest.raises(ToolArgumentError, match="missing required argument 'a'"):
        tool_spec(untyped).parse_arguments({"b": 1})
    with pytest.raises(ToolArgumentError, match="unknown argument 'c'"):
        tool_spec(untyped).parse_arguments({"a": 1, "c": 1})


def test_pydantic_model_argument_is_checked_and_passed_as_the_dict_sent():
    def place(order: Order, priority: Priority = Priority.LOW): ...

    raw = '{"order": {"order_id": "12", "title": "Bees", "items": [{"sku": "Q1", "qty": "3"}]}}'
    kwargs = tool_spec(place).parse_arguments(raw)
    assert kwargs == json.loads(raw)  # what the model sent, as Swarm passes it

    @validate_call  # a tool that wants the instance asks for conversion itself
    def place_typed(order: Order, priority: Priority = Priority.LOW):
        return order

    assert tool_spec(place_typed).schema["function"]["parameters"] == params(place)
    assert tool_spec(place_typed).parse_arguments(raw) == kwargs
    assert place_typed(**kwargs).items[0] == LineItem(sku="Q1", qty=3)
    with pytest.raises(ToolArgumentError) as info:
        tool_spec(place).parse_arguments({"order": {"order_id": 1, "items": [{"qty": "z"}]}})
    problems = info.value.problems
    assert "argument 'order.title': Field required" in problems
    assert "argument 'order.items[0].sku': Field required" in problems
    assert any(
        p.startswith("argument 'order.items[0].qty': Input should be a valid integer")
        for p in problems
    )


def test_literal_enum_and_constraints_are_checked():
    def choose(
        mode: Literal["fast", "slow"], colour: Colour, n: Annotated[int, Field(ge=1)] = 1
    ): ...

    spec = tool_spec(choose)
    kwargs = spec.parse_arguments({"mode": "fast", "colour": "blue", "n": "2"})
    assert kwargs == {"mode": "fast", "colour": "blue", "n": "2"}  # checked, not converted
    with pytest.raises(ToolArgumentError) as info:
        spec.parse_arguments({"mode": "medium", "colour": "green", "n": 0})
    text = str(info.value)
    assert "argument 'mode': Input should be 'fast' or 'slow'" in text
    assert "argument 'colour': Input should be 'red' or 'blue'" in text
    assert "argument 'n': Input should be greater than or equal to 1" in text


def test_containers_are_checked_and_passed_as_fresh_copies_of_what_was_sent():
    def f(ids: list[int], pair: tuple[int, str], scores: dict[str, float]): ...

    sent = {"ids": ["1", 2], "pair": [1, 2], "scores": {"a": "1.5"}}
    kwargs = tool_spec(f).parse_arguments(sent)
    assert kwargs == sent
    # copies: a tool that appends to its list does not change the reply that sent it
    assert kwargs["ids"] is not sent["ids"] and kwargs["scores"] is not sent["scores"]
    with pytest.raises(ToolArgumentError, match=r"argument 'ids\[0\]'"):
        tool_spec(f).parse_arguments({**sent, "ids": ["one"]})


def test_null_is_accepted_where_the_default_is_none():
    def f(reason: str = None): ...  # noqa: RUF013 - the Swarm-era spelling we must accept

    assert props(f) == {"reason": {"type": "string"}}
    assert tool_spec(f).parse_arguments({"reason": None}) == {"reason": None}
    assert tool_spec(f).parse_arguments({"reason": 5}) == {"reason": 5}  # accepted, as sent


def test_parameter_names_that_clash_with_pydantic_internals():
    def f(json: int, model_config: str, _private: bool = False, schema: list | None = None): ...

    sent = {"json": "1", "model_config": "x", "_private": 1}
    assert tool_spec(f).parse_arguments(sent) == sent
    with pytest.raises(ToolArgumentError, match="'json'"):
        tool_spec(f).parse_arguments({**sent, "json": "x"})


# ------------------------------------------------------- schema and validator from one pass


def test_a_constraint_on_an_optional_list_limits_the_list_in_schema_and_validator():
    def tag(tags: Annotated[list[str] | None, Field(max_length=2)] = None): ...

    tags = props(tag)["tags"]
    # on the array branch, where it limits something (not beside the anyOf, where it did not)
    assert tags == {
        "anyOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 2}, {"type": "null"}]
    }
    spec = tool_spec(tag)
    assert spec.parse_arguments({"tags": ["a", "b"]}) == {"tags": ["a", "b"]}
    assert spec.parse_arguments({"tags": None}) == {"tags": None}
    with pytest.raises(ToolArgumentError, match="at most 2 items"):
        spec.parse_arguments({"tags": ["a", "b", "c"]})


def test_constraints_inside_containers_are_described_where_they_are_checked():
    def f(
        scores: list[Annotated[int, Field(ge=0, le=5)]],
        names: dict[str, Annotated[str, Field(min_length=2)]],
    ): ...

    p = props(f)
    bounded = {"type": "integer", "minimum": 0, "maximum": 5}
    assert p["scores"] == {"type": "array", "items": bounded}
    longer = {"type": "string", "minLength": 2}
    assert p["names"] == {"type": "object", "additionalProperties": longer}
    spec = tool_spec(f)
    with pytest.raises(ToolArgumentError) as info:
        spec.parse_arguments({"scores": [1, 9], "names": {"a": "x"}})
    assert any(p.startswith("argument 'scores[1]'") for p in info.value.problems)
    assert any(p.startswith("argument 'names.a'") for p in info.value.problems)


def test_integer_keyed_dicts_take_json_string_keys():
    """Changed on purpose: ``dict[int, str]`` used to be refused; pydantic validates JSON's
    string keys into ints, so the schema (an object of strings) and the validator agree."""

    def f(pairs: dict[int, str]): ...

    assert props(f)["pairs"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert tool_spec(f).parse_arguments('{"pairs": {"1": "a"}}') == {"pairs": {"1": "a"}}
    with pytest.raises(ToolArgumentError, match="pairs"):
        tool_spec(f).parse_arguments('{"pairs": {"x": "a"}}')


# --------------------------------------------------------------------------- doctests
