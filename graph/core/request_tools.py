"""A model request's tools as LangChain's middleware reads them: ``BaseTool`` objects.

In ``create_agent``, ``ModelRequest.tools`` holds ``BaseTool`` s (dicts only for a provider's
built-in tools), and middleware filter them by ``name``: ``LLMToolSelectorMiddleware``, or a
``wrap_model_call`` of yours that picks the tools for a request. A swarm agent's LangChain tool
is listed as itself; a plain Swarm function as a :class:`FunctionTool`, which describes it with
the exact schema the model is told (graph/core/schema.py) and is never run itself (the step
runs the function). When a hook changed the list, each is bound again with that same schema
(:func:`schema_of`); what a hook added that is neither goes to ``bind_tools`` as it is.

Example:
    >>> def lookup(city: str) -> str:
    ...     '''Weather in a city.'''
    ...     return "sunny"
    >>> [listed] = request_tools([lookup])
    >>> listed.name, listed.description, schema_of(listed)["function"]["parameters"]["required"]
    ('lookup', 'Weather in a city.', ['city'])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from .middleware_tools import LANGCHAIN_TOOL, made_for
from .schema import ToolSpec, tool_spec

__all__ = ["FunctionTool", "request_tools", "schema_of"]


class FunctionTool(BaseTool):
    """A swarm function as a model request lists it: its name, description and argument
    schema (``args_schema``, the JSON schema the model is told); the swarm step runs the
    function itself, with ``context_variables`` injected."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    #: The schema the model is told, exactly (``function_to_json``'s).
    openai_schema: dict[str, Any]

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name} is a swarm function: the swarm step runs it")


# One FunctionTool per spec (functions with the same schema share one), made on first use.
_listed: weakref.WeakKeyDictionary[ToolSpec, FunctionTool] = weakref.WeakKeyDictionary()


def request_tools(functions: Sequence[Callable[..., Any]]) -> list[BaseTool]:
    """The ``ModelRequest.tools`` for a step's ``functions``, in order."""
    listed: list[BaseTool] = []
    for function in functions:
        tool = getattr(function, LANGCHAIN_TOOL, None)
        if tool is None:
            spec = tool_spec(function)
            tool = _listed.get(spec)
            if tool is None:
                described = spec.schema["function"]
                tool = _listed[spec] = FunctionTool(
                    name=spec.name,
                    description=described["description"],
                    args_schema=described["parameters"],
                    openai_schema=spec.schema,
                )
        listed.append(tool)
    return listed


def schema_of(tool: Any) -> Any:
    """What ``bind_tools`` gets for one tool of a request: the schema the model is told for a
    swarm function or a LangChain tool of the agent's, anything else as it is (a tool a hook
    gave ``extras`` too, such as ``defer_loading``: the provider's ``bind_tools`` reads them)."""
    if isinstance(tool, FunctionTool) and not tool.extras:
        return tool.openai_schema
    function = made_for(tool) if isinstance(tool, BaseTool) else None
    return tool if function is None else tool_spec(function).schema
