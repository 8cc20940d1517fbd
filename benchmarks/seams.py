"""How much of our code one turn walks through, and how big the packages are (issue 19's figures).

Counts, with ``sys.setprofile``, the distinct functions of this repository (``graph/``,
``memory/``, ``swarmgraph/``) called by one steady-state turn, and the files they live in:

- ``Swarm.run``: a two-agent handoff (model asks for ``transfer_to_b``, B answers), after a
  warm-up run, so caches are what a service sees on its second request;
- ``Session.run``: the same turn through a :class:`~swarmgraph.memory.Session` on SQLite,
  after a warm-up turn on the same conversation (storage included);
- ``openai/swarm``: the same handoff through PyPI ``openai-swarm`` (its own files), when
  installed, for scale.

Also: source lines (non-blank, non-comment) per package and the public names of
``swarmgraph``, ``swarmgraph.graph`` and ``swarmgraph.memory`` (``__all__``).

Run: ``.venv/bin/python -m benchmarks.seams`` (prints JSON).

Example:
    >>> figures = count_calls()
    >>> figures["Swarm.run"]["functions"] > 0 and figures["Session.run"]["files"] > 0
    True
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"graph": ROOT / "graph", "memory": ROOT / "memory", "swarmgraph": ROOT / "swarmgraph"}


def _ours(filename: str) -> bool:
    return any(filename.startswith(str(path) + os.sep) for path in PACKAGES.values())


def _profiled(run: Callable[[], Any], keep: Callable[[str], bool]) -> dict[str, Any]:
    seen: set[tuple[str, int, str]] = set()

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if keep(code.co_filename):
                seen.add((code.co_filename, code.co_firstlineno, code.co_name))

    sys.setprofile(profiler)
    try:
        run()
    finally:
        sys.setprofile(None)
    files = {f for f, _, _ in seen}
    return {"functions": len(seen), "files": len(files)}


def _handoff_parts() -> tuple[Any, Any, Callable[[], Any]]:
    from swarmgraph.graph import Agent

    from benchmarks.handoff import make_model

    b = Agent(name="B", instructions="You are B.")
    a = Agent(name="A", instructions="You are A.", handoffs=[b])
    return a, b, make_model


def count_calls() -> dict[str, Any]:
    """Distinct functions and files of ours per steady-state ``Swarm.run`` and
    ``Session.run``, and of openai/swarm's own package per ``Swarm.run`` when installed."""
    from swarmgraph.graph import Swarm
    from swarmgraph.memory import Session

    a, _, model = _handoff_parts()
    swarm = Swarm(chat_model=model())
    messages = [{"role": "user", "content": "ping"}]
    swarm.run(a, messages)  # warm-up: compile, bind tools, build schemas
    figures: dict[str, Any] = {"Swarm.run": _profiled(lambda: swarm.run(a, messages), _ours)}

    url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "seams.db")
    Session("seams", url=url).run(swarm, a, "ping")  # warm-up turn
    figures["Session.run"] = _profiled(
        lambda: Session("seams", url=url).run(swarm, a, "ping"), _ours
    )
    peer = _openai_swarm_calls()
    if peer is not None:
        figures["openai/swarm Swarm.run"] = peer
    return figures


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
    report = {
        "calls": count_calls(),
        "sloc": package_sloc(),
        "public_names": public_names(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
