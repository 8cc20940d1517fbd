"""How much of our code one turn walks through, and how big the packages are (issues 19, 29).

Counts, with ``sys.setprofile``, the distinct functions of this repository (``graph/``,
``memory/``, ``swarmgraph/``; the scripted chat model's own functions left out, as issue 29
measured) called by one steady-state turn, and the files they live in:

- ``Swarm.run``: a two-agent handoff (the model asks for ``transfer_to_b``, B answers), after a
  warm-up run, so caches are what a service sees on its second request;
- ``Swarm.run typed``: the same with a pydantic ``context_schema`` and an input guardrail;
- ``Session.run``: the same turn (A hands off to B, B answers) through a
  :class:`~swarmgraph.memory.Session` on SQLite, storage included: a new conversation, after
  warm-up turns on others, so the measured turn compiles nothing (``compiles`` says so);
- ``openai/swarm``: the same handoff through PyPI ``openai-swarm`` (its own files), when
  installed, for scale.

Each figure also splits by package (``graph``: the engine's share, ``memory``: the memory
side's). Also: the swarmgraph modules a plain program imports (a fresh process), each figure beside
issue 29's target (``targets``), source lines (non-blank, non-comment) per package and the
public names of ``swarmgraph``, ``swarmgraph.graph`` and ``swarmgraph.memory`` (``__all__``).

Run: ``.venv/bin/python -m benchmarks.seams`` (prints JSON).

Example:
    >>> figures = count_calls()
    >>> figures["Swarm.run"]["functions"] > 0 and figures["Session.run"]["files"] > 0
    True
    >>> figures["Session.run"]["compiles"], figures["Session.run"]["agent"]
    (0, 'B')
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"graph": ROOT / "graph", "memory": ROOT / "memory", "swarmgraph": ROOT / "swarmgraph"}
#: The offline model's file: its functions are the model's work, not the framework's.
SCRIPTED = str(ROOT / "graph" / "chat_models" / "scripted.py")

#: Issue 29's targets: figure -> (most functions, most files or None: no target) of one
#: steady turn.
TARGETS: dict[str, tuple[int, int | None]] = {
    "Swarm.run": (60, 10),
    "Swarm.run typed": (80, None),
    "Session.run": (120, 20),
}
#: Issue 29's target for the swarmgraph modules a plain program imports.
MODULES_TARGET = 25


def _ours(filename: str) -> bool:
    if filename == SCRIPTED:
        return False
    return any(filename.startswith(str(path) + os.sep) for path in PACKAGES.values())


def _profiled(run: Callable[[], Any], keep: Callable[[str], bool]) -> dict[str, Any]:
    seen: set[tuple[str, int, str]] = set()
    compiles = 0

    def profiler(frame: Any, event: str, arg: Any) -> None:
        nonlocal compiles
        if event == "call":
            code = frame.f_code
            if keep(code.co_filename):
                seen.add((code.co_filename, code.co_firstlineno, code.co_name))
            elif code.co_name == "compile" and f"{os.sep}langgraph{os.sep}" in code.co_filename:
                compiles += 1  # a StateGraph compiled inside the measured turn

    sys.setprofile(profiler)
    try:
        out = run()
    finally:
        sys.setprofile(None)
    files = {f for f, _, _ in seen}
    figures: dict[str, Any] = {"functions": len(seen), "files": len(files), "compiles": compiles}
    for name, path in PACKAGES.items():  # the engine's share and the memory side's
        mine = [f for f, _, _ in seen if f.startswith(str(path) + os.sep)]
        if mine:
            figures[name] = {"functions": len(mine), "files": len(set(mine))}
    agent = getattr(getattr(out, "agent", None), "name", None)
    if agent is not None:
        figures["agent"] = agent
    return figures


def _handoff_parts(typed: bool = False) -> tuple[Any, Any, dict[str, Any]]:
    """A hands off to B (``transfer_to_b``, the name the scripted rule asks for); typed: with a
    context schema and an input guardrail that lets everything through."""
    from swarmgraph.graph import Agent

    b = Agent(name="B", instructions="You are B.")
    extra: dict[str, Any] = {}
    swarm_options: dict[str, Any] = {}
    if typed:
        from pydantic import BaseModel

        class Desk(BaseModel):
            name: str = "Ming"
            visits: int = 0

        def polite(context_variables: Any, messages: Any) -> None:
            return None

        extra["input_guardrails"] = [polite]
        swarm_options["context_schema"] = Desk
    a = Agent(name="A", instructions="You are A.", handoffs=[b], **extra)
    return a, b, swarm_options


def _swarm(options: dict[str, Any]) -> Any:
    from swarmgraph.graph import Swarm

    from benchmarks.handoff import make_model

    return Swarm(chat_model=make_model(), **options)


def count_calls() -> dict[str, Any]:
    """Distinct functions and files of ours per steady-state ``Swarm.run`` (plain and typed)
    and ``Session.run``, and of openai/swarm's own package per ``Swarm.run`` when installed."""
    from swarmgraph.memory import Session

    messages = [{"role": "user", "content": "ping"}]
    figures: dict[str, Any] = {}
    for label, typed in (("Swarm.run", False), ("Swarm.run typed", True)):
        a, _, options = _handoff_parts(typed)
        swarm = _swarm(options)
        swarm.run(a, messages)  # warm-up: compile, bind tools, build schemas
        figures[label] = _profiled(lambda: swarm.run(a, messages), _ours)  # noqa: B023

    a, _, options = _handoff_parts()
    swarm = _swarm(options)
    url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "seams.db")
    # Each turn opens a new conversation, so each starts with A and hands off to B, as the
    # Swarm.run above does (a second turn of one conversation would resume with B).
    for i in range(3):  # warm-up turns: the first compiles, the store's tables exist after
        Session(f"warm-up-{i}", url=url).run(swarm, a, "ping")
    figures["Session.run"] = _profiled(
        lambda: Session("measured", url=url).run(swarm, a, "ping"), _ours
    )
    peer = _openai_swarm_calls()
    if peer is not None:
        figures["openai/swarm Swarm.run"] = peer
    return figures


PLAIN_PROGRAM = """
import sys
from swarmgraph import Agent, Swarm
from benchmarks.handoff import make_model
b = Agent(name="B", instructions="You are B.")
a = Agent(name="A", instructions="You are A.", handoffs=[b])
Swarm(chat_model=make_model()).run(a, [{"role": "user", "content": "ping"}])
print(len([m for m in sys.modules if m == "swarmgraph" or m.startswith("swarmgraph.")]))
"""


def modules_imported() -> int:
    """How many swarmgraph modules a plain handoff program imports (a fresh process)."""
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_PROGRAM],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return int(done.stdout.split()[-1])


def against_targets(calls: dict[str, Any], modules: int) -> dict[str, Any]:
    """Each figure beside issue 29's target, and whether it is met.

    Example:
        >>> against_targets({"Session.run": {"functions": 130, "files": 18}}, 30)
        ... # doctest: +NORMALIZE_WHITESPACE
        {'Session.run': {'functions': 130, 'most_functions': 120, 'files': 18,
                         'most_files': 20, 'met': False},
         'modules imported': {'modules': 30, 'most': 25, 'met': False}}
    """
    report: dict[str, Any] = {}
    for label, (most_functions, most_files) in TARGETS.items():
        if label not in calls:
            continue
        got = calls[label]
        report[label] = {
            "functions": got["functions"],
            "most_functions": most_functions,
            "files": got["files"],
            "most_files": most_files,
            "met": got["functions"] <= most_functions
            and (most_files is None or got["files"] <= most_files),
        }
    report["modules imported"] = {
        "modules": modules,
        "most": MODULES_TARGET,
        "met": modules <= MODULES_TARGET,
    }
    return report


def _openai_swarm_calls() -> dict[str, Any] | None:
    try:
        import swarm as openai_swarm  # PyPI openai-swarm
    except ImportError:
        return None
    from benchmarks.peers import openai_swarm_handoff

    package = str(Path(openai_swarm.__file__).parent)
    run = openai_swarm_handoff()
    run()
    return _profiled(run, lambda f: f.startswith(package + os.sep))


def sloc(path: Path) -> int:
    """Lines of a Python file that hold code (not blank, not only a comment or docstring)."""
    source = path.read_text()
    lines: set[int] = set()
    previous = tokenize.INDENT
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = token.type
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                    tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING):  # fmt: skip
            previous = kind if kind != tokenize.COMMENT else previous
            continue
        # A string statement on its own (a docstring) holds no code.
        if kind == tokenize.STRING and previous in (tokenize.INDENT, tokenize.DEDENT,
                                                    tokenize.NEWLINE):  # fmt: skip
            previous = kind
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
        previous = kind
    return len(lines)


def package_sloc() -> dict[str, int]:
    """Source lines per package (``graph/``, ``memory/``, ``swarmgraph/``)."""
    return {
        name: sum(sloc(p) for p in sorted(path.rglob("*.py"))) for name, path in PACKAGES.items()
    }


def public_names() -> dict[str, Any]:
    """``__all__`` of each public namespace, and how many distinct names they hold together."""
    import importlib

    names: dict[str, Any] = {}
    distinct: set[str] = set()
    for module in ("swarmgraph", "swarmgraph.graph", "swarmgraph.memory"):
        exported = list(importlib.import_module(module).__all__)
        names[module] = len(exported)
        distinct.update(exported)
    names["distinct"] = len(distinct)
    return names


def main() -> None:
    calls = count_calls()
    report = {
        "calls": calls,
        "targets": against_targets(calls, modules_imported()),
        "sloc": package_sloc(),
        "public_names": public_names(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
