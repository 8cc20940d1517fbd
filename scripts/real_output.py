"""Write the blocks README.md and docs/*.md label as real output, from the code printing them.

A block of real output is a fenced ``text`` block right under a marker line:

    <!-- real output: persist-table -->

and its body is what :data:`GENERATORS` [name] returns now. ``tests/test_readme.py`` fails
when a page's block differs from a fresh run; this script rewrites them:

    .venv/bin/python scripts/real_output.py            # rewrite every marked block
    .venv/bin/python scripts/real_output.py --check    # exit 1 and name the stale blocks
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- real output: ([\w-]+) -->\n```text\n(.*?)```", flags=re.S)


def persist_table() -> str:
    """The table ``swarmgraph demo`` ends with: ``compare_persistence`` in a fresh folder."""
    from swarmgraph.memory.compare import WITH_LONG_TERM, compare_persistence, format_table

    with tempfile.TemporaryDirectory(prefix="swarmgraph-real-output-") as folder:
        return format_table(compare_persistence(folder, choices=WITH_LONG_TERM))


#: Marker name -> the function whose text the block shows.
GENERATORS: dict[str, Callable[[], str]] = {"persist-table": persist_table}


def pages() -> list[Path]:
    """Every page that may hold real output: the README and docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rendered(text: str, outputs: dict[str, str]) -> str:
    """``text`` with each marked block's body replaced by ``outputs`` [its name]."""

    def body(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in outputs:
            raise KeyError(f"no generator for real output {name!r}; known: {sorted(outputs)}")
        return f"<!-- real output: {name} -->\n```text\n{outputs[name].rstrip()}\n```"

    return MARKER.sub(body, text)


def main(argv: list[str]) -> int:
    outputs = {name: make() for name, make in GENERATORS.items()}
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = rendered(text, outputs)
        if new != text:
            stale.append(page.relative_to(ROOT).as_posix())
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    verb = "stale" if "--check" in argv else "rewrote"
    for name in stale:
        print(f"{verb}: {name}")
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
