"""Write the teaching notebooks from the cell sources below, execute them, save the outputs.

The notebooks are generated so their code stays reviewable as plain Python; the executed
``.ipynb`` files (outputs included) are committed so GitHub shows the plots and pictures.

    .venv/bin/python notebooks/_build.py            # every notebook
    .venv/bin/python notebooks/_build.py 04 05      # only these (matched by prefix)

Start it with the project's venv Python: the kernelspec ``python3`` runs ``python``, which
jupyter_client replaces with the interpreter that started it, so the kernel uses the venv.
Cell sources live in ``notebooks/_cells/<name>.py`` as percent-format files: ``# %%`` opens a
code cell, ``# %% [markdown]`` a markdown cell whose lines are ``# ``-prefixed.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
CELLS = HERE / "_cells"
ROOT = HERE.parent

NOTEBOOKS = (
    "01_agents_and_handoffs",
    "02_context_variables",
    "03_memory_vs_context",
    "04_memory_models",
    "05_one_to_one",
    "06_control",
    "07_long_term_memory",
    "08_parallel",
)

CELL_TIMEOUT_S = 120
_MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?[ \t]*$")


def parse_cells(text: str) -> list[tuple[str, str]]:
    """Percent-format text -> ``[(kind, source)]`` with kind ``"code"`` or ``"markdown"``.

    >>> parse_cells("# %% [markdown]\\n# # Title\\n#\\n# text\\n# %%\\nx = 1\\n")
    [('markdown', '# Title\\n\\ntext'), ('code', 'x = 1')]
    """
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        match = _MARKER.match(line)
        if match:
            cells.append(("markdown" if match["md"] else "code", []))
            continue
        if not cells:
            continue  # a file header before the first cell
        kind, lines = cells[-1]
        if kind == "markdown":
            if line.startswith("# "):
                line = line[2:]
            elif line.rstrip() == "#":
                line = ""
        lines.append(line)
    return [(kind, "\n".join(lines).strip("\n")) for kind, lines in cells]


def make_notebook(name: str) -> nbformat.NotebookNode:
    """The unexecuted notebook ``name`` built from ``_cells/<name>.py``."""
    nb = nbformat.v4.new_notebook()
    for kind, source in parse_cells((CELLS / f"{name}.py").read_text(encoding="utf-8")):
        if kind == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(source))
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:02d}"  # stable ids keep rebuilds diff-free
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(nb: nbformat.NotebookNode, *, timeout: int = CELL_TIMEOUT_S) -> nbformat.NotebookNode:
    """Run ``nb`` top to bottom in a fresh ``python3`` kernel started in ``notebooks/``.

    Raises ``nbclient.exceptions.CellExecutionError`` on the first failing cell.
    """
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(HERE)}},
        record_timing=False,
    )
    client.execute()
    return nb


def scrub(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what changes from run to run and machine to machine (absolute paths, versions)."""
    replacements = [(str(ROOT), "<repo>"), (tempfile.gettempdir(), "<tmp>")]
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            if "text" in output:
                for old, new in replacements:
                    output["text"] = output["text"].replace(old, new)
            data = output.get("data", {})
            if "text/plain" in data:
                for old, new in replacements:
                    data["text/plain"] = data["text/plain"].replace(old, new)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def build(name: str) -> float:
    """Generate, execute and save one notebook; returns the execution time in seconds."""
    nb = make_notebook(name)
    started = time.perf_counter()
    execute(nb)
    elapsed = time.perf_counter() - started
    nbformat.write(scrub(nb), HERE / f"{name}.ipynb")
    return elapsed


def main(argv: list[str]) -> None:
    wanted = [n for n in NOTEBOOKS if not argv or any(n.startswith(a) for a in argv)]
    for name in wanted:
        print(f"{name}: executed in {build(name):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
