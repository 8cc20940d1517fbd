"""The tools a middleware brings (``AgentMiddleware.tools``), as the functions a swarm step runs.

LangChain's ``create_agent`` binds every middleware's ``tools`` beside the agent's own; a swarm
step does the same (``GraphRuntime.tools_of``): they join the agent's ``functions`` in the
model's tool list and run in the step like them (``context_variables`` and the run's injected
parameters included, ``wrap_tool_call`` around them, a returned ``Agent``/``Result`` handing off).
A tool is a plain function (read as any swarm tool is) or a LangChain ``BaseTool`` (a ``@tool``),
which becomes a function with the tool's name, description and argument schema that calls
``tool.invoke`` (``ainvoke`` for an async-only tool). One whose function takes what the step
fills (``context_variables``, or what LangGraph's ``ToolNode`` injects: ``ToolRuntime``,
``InjectedToolCallId``, ``InjectedState``, ``InjectedStore``, graph/core/langchain_args.py) has
its own function called with the model's arguments and those values (:func:`_live`). A
``return_direct`` tool is refused with a clear error: a swarm agent's turn ends when it answers
or hands off, and running the tool without ending would drop the flag unsaid.
``Agent(functions=[...])`` takes LangChain tools too, made into functions the same way.

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def add(a: int, b: int = 2) -> int:
    ...     '''Add two numbers.'''
    ...     return a + b
    >>> run = as_function(add)
    >>> run.__name__, run(a=1), as_function(add) is run
    ('add', 3, True)
    >>> from swarmgraph.graph.core.schema import tool_spec
    >>> tool_spec(run).schema["function"]["parameters"]["required"]
    ['a']
"""

from __future__ import annotations

import inspect
import typing
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import Field, create_model

from .injected import INJECTED
from .langchain_args import JSON_SCHEMA, Filled, filled_by_step, is_langchain_tool

# types.Agent's tool type, not imported: types.check_middleware calls this module
AgentFunction = Callable[..., Any]
# ``Annotated`` indexed with a tuple made at run time (the field's metadata)
_ANNOTATED: Any = Annotated

__all__ = ["LANGCHAIN_TOOL", "REPORTS_ITSELF", "as_function", "middleware_tools"]

#: Set (True) on a tool function that tells the run's callbacks of its call itself: a LangChain
#: tool run through ``tool.invoke``, whose own start and end events, with the runs nested in
#: it, stand for the step's (graph/core/tool_events.py).
REPORTS_ITSELF = "__swarmgraph_reports_itself__"
#: Set on the function made for a LangChain tool: the tool it runs.
LANGCHAIN_TOOL = "__swarmgraph_tool__"

# One function per LangChain tool (by identity: a pydantic tool is not hashable), so its schema
# is built once; holding the tool, so its id is not reused while it is here; bounded.
_made: OrderedDict[int, tuple[Any, AgentFunction]] = OrderedDict()
_MADE_MAX = 1024


def middleware_tools(middleware: Sequence[Any]) -> list[AgentFunction]:
    """Every tool of ``middleware`` (each one's ``tools``, in order), as step functions.

    Example:
        >>> from langchain.agents.middleware import AgentMiddleware
        >>> def ping() -> str:
        ...     '''Ping.'''
        ...     return "pong"
        >>> class Pinging(AgentMiddleware):
        ...     tools = [ping]
        >>> [f.__name__ for f in middleware_tools([Pinging(), AgentMiddleware()])]
        ['ping']
    """
    found: list[AgentFunction] = []
    for m in middleware:
        for tool in getattr(m, "tools", None) or ():
            found.append(as_function(tool, owner=getattr(m, "name", type(m).__name__)))
    return found


def as_function(tool: Any, owner: str = "a middleware") -> AgentFunction:
    """``tool`` as a function a swarm step runs: a plain callable as it is, a LangChain
    ``BaseTool`` wrapped (the same function for the same tool)."""
    if not is_langchain_tool(tool):
        if not callable(tool):
            raise TypeError(
                f"{owner}: tools takes LangChain tools (BaseTool, @tool) or functions, not {tool!r}"
            )
        return tool
    made = made_for(tool)
    if made is not None:
        return made
    made = _wrap(tool, owner)
    _made[id(tool)] = (tool, made)
    while len(_made) > _MADE_MAX:
        _made.popitem(last=False)
    return made


def made_for(tool: Any) -> AgentFunction | None:
    """The function :func:`as_function` made for the LangChain tool ``tool``, if it made one."""
    hit = _made.get(id(tool))
    return hit[1] if hit is not None and hit[0] is tool else None


def _wrap(tool: Any, owner: str) -> AgentFunction:
    """The function for one LangChain tool: its signature is the tool's call schema (what the
    model is told) and the swarm parameters it takes (``context_variables``...); its body runs
    the tool with the arguments the model sent."""
    every = getattr(getattr(tool, "args_schema", None), "model_fields", None) or {}
    ours = [name for name in every if name in INJECTED]  # the step fills them (schema.py)
    body = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    hints = _hints(body)
    filled = _filled(hints, ours)  # what LangGraph's ToolNode would inject, the step fills
    _refuse_unrunnable(tool, owner, ours, filled)
    schema = tool.tool_call_schema
    fields = getattr(schema, "model_fields", None)
    live = bool(ours) or any(f.kind != "config" for f in filled.values())
    json_schema = None
    if fields is None:  # a JSON-schema dict (an MCP tool's): told as it is (schema.py)
        if live:
            raise TypeError(
                f"{owner}: tool {tool.name!r} describes its arguments as a JSON schema and takes "
                f"{', '.join([*ours, *filled])}, which the step fills for a tool with a pydantic "
                "args_schema (or a function) only"
            )
        json_schema = {k: v for k, v in schema.items() if k not in ("title", "description")}
        fields = {}
    parameters = []
    told = [(n, info) for n, info in fields.items() if n not in filled]  # (its schema's own)
    for name, info in [*told, *((n, every[n]) for n in ours if n not in fields)]:
        hint = _ANNOTATED[(info.annotation, Field(description=info.description), *info.metadata)]
        default = inspect.Parameter.empty if info.is_required() else info.get_default()
        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter(name, keyword, default=default, annotation=hint))
    if json_schema is not None:  # its arguments, whatever they are, go to tool.invoke
        parameters.append(inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD))
    only_async = getattr(tool, "func", True) is None and getattr(tool, "coroutine", None)
    function: Any
    if live:
        function = _live(tool, owner, schema, [*ours, *filled], only_async)
        for name in filled:  # filled by the tool runner, as for any tool (schema.py)
            keyword = inspect.Parameter.KEYWORD_ONLY
            parameters.append(inspect.Parameter(name, keyword, annotation=hints[name]))
    else:
        function = _invoking(tool, only_async)
    # Discovery (graph/core/discovery.py) reads the tool's own function through ``__wrapped__``
    # for the agents it may hand off to; ``__signature__`` stays what the model is told.
    if body is not None:
        function.__wrapped__ = body
    function.__name__ = function.__qualname__ = tool.name
    function.__doc__ = tool.description
    function.__signature__ = inspect.Signature(parameters)
    setattr(function, LANGCHAIN_TOOL, tool)  # what it runs, for a reader of the step's tools
    if json_schema is not None:
        setattr(function, JSON_SCHEMA, json_schema)
    return function


def _refuse_unrunnable(tool: Any, owner: str, ours: list[str], filled: dict[str, Filled]) -> None:
    """Raise ``TypeError`` for a tool a swarm step cannot run as it was meant: one taking an
    injected argument nothing fills, or a ``return_direct`` one."""
    theirs = sorted(set(getattr(tool, "_injected_args_keys", ()) or ()) - {*ours, *filled})
    unfilled = [n for n, f in filled.items() if f.kind == "unfilled"]
    if theirs or unfilled:
        raise TypeError(
            f"{owner}: tool {tool.name!r} takes injected arguments nothing in a swarm step fills "
            f"({', '.join(theirs or unfilled)}): it fills context_variables, its features' "
            "parameters, and what LangGraph's ToolNode injects by annotation (ToolRuntime, "
            "InjectedToolCallId, InjectedState, InjectedStore, RunnableConfig)"
        )
    if getattr(tool, "return_direct", False):
        # create_agent ends its loop on such a call; a swarm agent's turn ends when it answers
        # or hands off, and running the tool without ending would drop the flag silently.
        raise TypeError(
            f"{owner}: tool {tool.name!r} is return_direct, which a swarm step does not honour: "
            "to hand off, put the agent in Agent(handoffs=[...]) or return it from a tool; "
            "otherwise drop return_direct"
        )


def _invoking(tool: Any, only_async: Any) -> AgentFunction:
    """The function that runs ``tool`` through ``invoke`` (``ainvoke`` for an async-only tool)
    in the step's config: a ``config: RunnableConfig`` parameter gets it, and what the tool runs
    nests in its run, which the run's callbacks hear in place of the step's own event for the
    call (REPORTS_ITSELF)."""
    function: Any
    if only_async:
        ainvoke = tool.ainvoke

        async def run_async(**arguments: Any) -> Any:
            return await ainvoke(arguments)

        function = run_async
    else:
        invoke = tool.invoke

        def run(**arguments: Any) -> Any:
            return invoke(arguments)

        function = run
    setattr(function, REPORTS_ITSELF, True)
    return function


def _hints(body: Any) -> dict[str, Any]:
    """The annotations of a tool's own function, with their ``Annotated`` marks."""
    try:
        return typing.get_type_hints(body, include_extras=True) if body is not None else {}
    except Exception:  # an annotation that does not resolve: the tool's schema says the rest
        return {}


def _filled(hints: dict[str, Any], ours: list[str]) -> dict[str, Filled]:
    """The parameters of a tool's function that the step fills by their annotation (beside
    ``ours``, filled by name)."""
    found = {n: filled_by_step(h) for n, h in hints.items() if n not in ours and n != "return"}
    return {n: f for n, f in found.items() if f is not None}


def _live(tool: Any, owner: str, schema: Any, passed: list[str], only_async: Any) -> AgentFunction:
    """The function for a LangChain tool that takes what the step fills (``passed``:
    ``context_variables``, a ``ToolRuntime``...): the tool's own function, called with the
    model's arguments as the tool's schema reads them and the step's values. ``tool.invoke``
    would validate the live dict into a copy, and a tool's in-place write to
    ``context_variables`` would be lost. A ``ToolException`` it raises is answered as the tool's
    ``handle_tool_error`` says, and a ``content_and_artifact`` tool's content is what the model
    reads, as ``tool.invoke`` would have it."""
    body = only_async or getattr(tool, "func", None)
    if body is None:
        raise TypeError(
            f"{owner}: tool {tool.name!r} takes {', '.join(passed)} but has no function to call "
            "with the live value; write it as a function or a @tool"
        )

    fields = schema.model_fields
    if any(name in fields for name in passed):  # not marked InjectedToolArg: the model's schema
        kept = {n: (info.annotation, info) for n, info in fields.items() if n not in passed}
        schema = create_model(f"{tool.name}_arguments", **kept)  # type: ignore[call-overload]

    def arguments_for(given: dict[str, Any]) -> dict[str, Any]:
        live = {name: given.pop(name) for name in passed if name in given}
        parsed = schema.model_validate(given)  # as the tool would read them
        return {**{name: getattr(parsed, name) for name in given}, **live}

    if only_async:

        async def run_live_async(**given: Any) -> Any:
            try:
                return _content(tool, await body(**arguments_for(given)))
            except Exception as error:
                return _handled(tool, error)

        return run_live_async

    def run_live(**given: Any) -> Any:
        try:
            return _content(tool, body(**arguments_for(given)))
        except Exception as error:
            return _handled(tool, error)

    return run_live


def _content(tool: Any, value: Any) -> Any:
    """What the model reads of a tool's return value: for a ``content_and_artifact`` tool, the
    content of its ``(content, artifact)`` pair, as ``tool.invoke`` gives it (the artifact is
    not kept: a swarm's answers hold none, so any checkpointer can save them)."""
    if getattr(tool, "response_format", "content") != "content_and_artifact":
        return value
    if not isinstance(value, tuple) or len(value) != 2:
        raise ValueError(
            "response_format='content_and_artifact' asks for a (content, artifact) pair, got "
            f"{type(value).__name__}"
        )
    return value[0]


def _handled(tool: Any, error: Exception) -> str:
    """What the model reads for a ``ToolException`` the tool's ``handle_tool_error`` handles
    (LangChain's rule: True, the error's text; a string, that; a function, what it returns);
    any other error is raised on, and answered as any tool's error is."""
    from langchain_core.tools import ToolException

    handle = getattr(tool, "handle_tool_error", False)
    if not isinstance(error, ToolException) or not handle:
        raise error
    if isinstance(handle, str):
        return handle
    if callable(handle):
        return str(handle(error))
    return error.args[0] if error.args else "Tool execution error"
