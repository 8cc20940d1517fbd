"""Tool parameters the framework fills, never the model: ``context_variables`` (Swarm's own)
and those a feature registers.

A tool declares one by naming a parameter so; it is hidden from the tool's schema, a value the
model sends under that name is dropped, and the tool runner (graph/core/tool_calls.py) fills
it. A feature registers a parameter when its module is imported (:func:`register_injected`,
an :class:`InjectedParam`): the description the docs and errors give, how its value is made
for each call (``make``; without one the run supplies it: ``Swarm.run(..., tool_inputs=...)``,
a ``Session`` with long-term memory), and the middleware a run whose tool takes it needs
(``brings``). So that a tool taking such a parameter never shows it to the model, even before
the feature is loaded, the API layer names each parameter's module up front
(:func:`injected_by`, from graph/__init__.py): the module loads when a tool's schema first
names the parameter, never in a program whose tools do not.

This module imports nothing heavy: the package's ``__init__`` imports it.

Example:
    >>> register_injected(InjectedParam("doc_request_id", "the request being served",
    ...     make=lambda call_id, tool, arguments, records: f"req-{call_id}"))
    >>> param_for("doc_request_id").make("c1", "lookup", {}, None)
    'req-c1'
    >>> "doc_request_id" in INJECTED, param_for("context_variables") is None
    (True, True)
    >>> unregister_injected("doc_request_id")
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONTEXT_PARAM",
    "INJECTED",
    "InjectedParam",
    "brings_of",
    "injected_by",
    "param_for",
    "register_injected",
    "unregister_injected",
]

#: The parameter the framework injects run context into (hidden from the model).
CONTEXT_PARAM = "context_variables"

#: Every parameter the framework fills, never the model, and what it receives: hidden from
#: each tool's schema, and a value the model sends under one of these names is dropped. A tool
#: whose injected parameter has no default and no value gets an ``Error:`` answer, not a call.
INJECTED: dict[str, str] = {CONTEXT_PARAM: "the run's live context_variables"}

#: ``make(call_id, tool_name, arguments, records)``: the value for one call; ``records`` are
#: the reply's call records when a middleware handed the tool runner some
#: (graph/core/runtime.py's ``CallRecords``), else None.
MakeValue = Callable[[str, str, Any, Any], Any]


@dataclass(frozen=True)
class InjectedParam:
    """A parameter a feature fills: ``name``, ``description`` (what the tool receives),
    ``make`` (how its value is made per call; None: the run's tool inputs give it) and
    ``brings`` (the middleware a run with a tool taking it needs; None: nothing)."""

    name: str
    description: str
    make: MakeValue | None = None
    brings: Callable[[], Sequence[Any]] | None = None


_PARAMS: dict[str, InjectedParam] = {}
#: name -> the module that registers it, not imported yet (:func:`injected_by`).
_PENDING: dict[str, str] = {}
_lock = threading.Lock()


def register_injected(param: InjectedParam) -> None:
    """Register ``param`` (a feature calls this when its module is imported)."""
    with _lock:
        _PARAMS[param.name] = param
        INJECTED[param.name] = param.description
        _PENDING.pop(param.name, None)


def unregister_injected(name: str) -> None:
    """Forget a registered parameter (a test's, an example's)."""
    with _lock:
        _PARAMS.pop(name, None)
        if name != CONTEXT_PARAM:
            INJECTED.pop(name, None)


def injected_by(name: str, module: str) -> None:
    """Reserve ``name`` for the parameter ``module`` registers when imported: hidden from
    every schema from now on, and ``module`` loaded the first time a tool takes it."""
    with _lock:
        if name not in _PARAMS:
            _PENDING[name] = module
            INJECTED.setdefault(name, f"filled by {module}")


def param_for(name: str) -> InjectedParam | None:
    """The registered parameter ``name`` (loading the module that registers it, the first
    time), or None for ``context_variables`` and for a name nobody registers."""
    module = _PENDING.get(name)
    if module is not None:
        importlib.import_module(module)  # it registers the parameter
        with _lock:
            _PENDING.pop(name, None)
    return _PARAMS.get(name)


def brings_of() -> tuple[Callable[[], Sequence[Any]], ...]:
    """What the registered parameters bring to a run (those that bring anything)."""
    return tuple(p.brings for p in _PARAMS.values() if p.brings is not None)
