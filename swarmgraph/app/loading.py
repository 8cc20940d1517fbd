"""Find the user's agent from a command-line spec: ``path/to/file.py:triage`` or
``package.module:triage``.

A file is run as a module of its own (its folder goes first on ``sys.path``, so it can import
its neighbours, as ``python file.py`` would); a dotted name is imported from the working
directory or the installed packages, as ``python -m`` would. The attribute may be dotted
(``agents.triage``); without one, the module's only ``Agent`` is used.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "desk.py").write_text(
    ...     "from swarmgraph import Agent\\n"
    ...     "sales = Agent(name='Sales')\\n"
    ...     "triage = Agent(name='Triage', handoffs=[sales])\\n")
    >>> load_agent(f"{folder}/desk.py:triage").name
    'Triage'
    >>> try:
    ...     load_agent(f"{folder}/desk.py")
    ... except AgentSpecError as error:
    ...     print(str(error).replace(str(folder), "DIR"))
    DIR/desk.py holds 2 agents (sales, triage): name one, e.g. DIR/desk.py:sales
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["AgentSpecError", "load_agent"]


class AgentSpecError(ValueError):
    """The spec names no loadable agent; the message says what was found instead."""


def load_agent(spec: str) -> Any:
    """The ``Agent`` (or named compiled LangGraph graph) that ``spec`` names.

    Raises :class:`AgentSpecError` with a one-line reason when there is none.
    """
    where, _, name = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if not where:
        raise AgentSpecError(f"{spec!r}: expected path/to/file.py:agent or package.module:agent")
    module = _load_file(where) if _is_path(where) else _import(where)
    if not name:
        return _only_agent(module, where)
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            found = ", ".join(sorted(_agents_in(module))) or "none"
            raise AgentSpecError(f"{where} has no {name!r} (agents there: {found})")
        value = getattr(value, part)
    if not _is_member(value):
        raise AgentSpecError(
            f"{where}:{name} is a {type(value).__name__}, not an Agent or a compiled "
            "LangGraph graph with a name"
        )
    return value


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _load_file(where: str) -> ModuleType:
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise AgentSpecError(f"no such file: {where}")
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its neighbours import as they would under `python file.py`
    module_name = f"_swarmgraph_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise AgentSpecError(f"cannot load {where} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _import(where: str) -> ModuleType:
    cwd = str(Path.cwd())
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # `python -m` finds the working directory's packages too
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        if error.name and where.startswith(error.name):
            raise AgentSpecError(f"no module named {where!r} (from {cwd})") from None
        raise


def _is_member(value: Any) -> bool:
    from ..graph.core.types import Agent, is_compiled_graph

    return isinstance(value, Agent) or is_compiled_graph(value)


def _agents_in(module: ModuleType) -> dict[str, Any]:
    from ..graph.core.types import Agent

    return {k: v for k, v in vars(module).items() if isinstance(v, Agent) and not k.startswith("_")}


def _only_agent(module: ModuleType, where: str) -> Any:
    agents = _agents_in(module)
    if len(agents) == 1:
        return next(iter(agents.values()))
    if not agents:
        raise AgentSpecError(f"{where} defines no Agent at module level")
    names = sorted(agents)
    raise AgentSpecError(
        f"{where} holds {len(agents)} agents ({', '.join(names)}): name one, e.g. "
        f"{where}:{names[0]}"
    )
