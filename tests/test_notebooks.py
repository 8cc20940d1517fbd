"""The teaching notebooks: committed in sync with their sources, and executable top to bottom.

Each notebook runs in a fresh ``python3`` kernel (the project venv: jupyter_client starts the
kernelspec's ``python`` as the interpreter running these tests). Besides "no cell failed",
each notebook is checked for the outcome it teaches, read from its own outputs.
"""

from __future__ import annotations

import base64
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest
from swarmgraph.graph.onetoone import OUTPUT_TYPES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load_build_module():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOK_DIR / "_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build_module()
_executed: dict[str, nbformat.NotebookNode] = {}


def executed(name: str) -> nbformat.NotebookNode:
    """The committed notebook ``name``, executed once per test session in a fresh kernel."""
    if name not in _executed:
        nb = nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        _executed[name] = build.execute(nb)
    return _executed[name]


def outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def text_of(nb: nbformat.NotebookNode) -> str:
    """Everything the notebook printed, in order."""
    parts = []
    for o in outputs(nb):
        if o.get("output_type") == "stream":
            parts.append(o["text"])
        elif "text/plain" in o.get("data", {}):
            parts.append(o["data"]["text/plain"])
    return "".join(parts)


def pngs(nb: nbformat.NotebookNode) -> list[bytes]:
    return [
        base64.b64decode(o["data"]["image/png"])
        for o in outputs(nb)
        if "image/png" in o.get("data", {})
    ]


def table_rows(text: str, *header: str) -> dict[str, list[str]]:
    """The ``a | b | c`` table whose header line holds every ``header`` title, by first cell."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if all(h in line for h in header))
    rows = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        if set(line) <= set("-+ "):
            continue
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 2:
            break
        rows[cells[0]] = cells[1:]
    return rows


# -- committed files ---------------------------------------------------------------------


@pytest.mark.parametrize("name", build.NOTEBOOKS)
def test_committed_notebook_matches_its_source_and_has_outputs(name):
    committed = nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
    fresh = build.make_notebook(name)
    assert [(c.cell_type, c.source) for c in committed.cells] == [
        (c.cell_type, c.source) for c in fresh.cells
    ], f"{name}.ipynb is out of date: run .venv/bin/python notebooks/_build.py {name[:2]}"
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), f"{name}.ipynb was not executed"
    assert not [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert str(ROOT) not in nbformat.writes(committed), "absolute repo path in outputs"


def test_build_parses_percent_cells():
    cells = build.parse_cells("# header\n# %% [markdown]\n# # T\n#\n# body\n# %%\nx = 1\n\n")
    assert cells == [("markdown", "# T\n\nbody"), ("code", "x = 1")]


# -- executed in a fresh kernel ----------------------------------------------------------


@pytest.mark.slow
def test_kernel_is_the_project_venv():
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.prefix)"))
    build.execute(nb, timeout=60)
    assert text_of(nb).strip() == sys.prefix


@pytest.mark.slow
@pytest.mark.parametrize("name", build.NOTEBOOKS)
def test_notebook_runs_top_to_bottom(name):
    nb = executed(name)  # raises CellExecutionError on the first failing cell
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]


@pytest.mark.slow
def test_01_shows_the_graph_picture_and_who_served_each_call():
    nb = executed("01_agents_and_handoffs")
    images = pngs(nb)
    assert len(images) == 3 and all(img.startswith(PNG_SIGNATURE) for img in images)
    text = text_of(nb)
    assert "small-model  served: You are Triage." in text
    assert "large-model  served: You are Expert." in text
    assert "fields unchanged after two runs: True" in text
    assert "Triage -.-> Refunds;" in text and "Triage -.-> Sales;" in text
    assert "Error: Tool transfer_to_refunds not found." in text
    # the demo swarm: handoffs happened and the context carried the fields across agents
    assert '-> handoff: {"assistant": "Refunds"}' in text
    assert "context at the end: {'name': 'Ming', 'order_id': 7" in text
    # every agent is drawn with a loop; the notebook says when a tool-less one takes it
    assert "Refunds  tools: (none)" in text and "loop: only after a bad call" in text
    assert "a tool-less agent looping: Lonely → tool → Lonely" in text


@pytest.mark.slow
def test_02_context_is_copied_injected_written_back_and_gone():
    text = text_of(executed("02_context_variables"))
    assert "unchanged: True" in text
    assert "list_orders: parameters = []" in text  # context_variables hidden from the model
    assert "the tool received:     {'user_id': 456}" in text  # forged argument ignored
    assert "call 1: system prompt = 'You are Support. You are talking to Li.'" in text
    assert "tool received:  {}" in text  # the second run without context sees nothing


@pytest.mark.slow
def test_03_table_shows_what_each_persist_choice_restores():
    nb = executed("03_memory_vs_context")
    rows = table_rows(text_of(nb), "persist", "model saw earlier text", "tool saw field")
    # columns: model saw earlier text, tool saw field, turn-2 agent, tokens, bytes
    assert rows["messages+context"][:2] == ["yes", "yes"]
    assert rows["messages"][:2] == ["yes", "no"]
    assert rows["context"][:2] == ["no", "yes"]
    assert rows["none"][:2] == ["no", "no"]
    assert int(rows["none"][4]) == 0 < int(rows["context"][4]) < int(rows["messages"][4])
    text = text_of(nb)
    assert "with rules: {'name': 'Xiaoming', 'school': 'A High School'}" in text
    assert "tool searched near: A High School" in text
    # the two numbers that look backwards are measured and explained: restarting at Triage
    # costs turn 2 an extra model call when the context (with the active agent) is not kept
    assert int(rows["none"][3]) > int(rows["context"][3])
    assert int(rows["messages"][4]) > int(rows["messages+context"][4])
    assert "none              turn 2 made 3 model calls" in text
    assert "context           turn 2 made 2 model calls" in text
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "the active agent is saved with the" in markdown
    assert "offline rule-based" in markdown
    # Session and a checkpointer on the same swarm: same outcome, different bookkeeping
    ours = "agent Refunds | context {'name': 'Ming', 'order_id': 7, 'refund_status': 'approved'}"
    assert f"Session:      {ours}" in text and f"checkpointer: {ours}" in text
    stored = dict(re.findall(r"^(Session|checkpointer): +([\d,]+) bytes$", text, flags=re.M))
    assert int(stored["Session"].replace(",", "")) < int(stored["checkpointer"].replace(",", ""))
    assert "handoff_trail after the run: []" in text


@pytest.mark.slow
def test_04_plots_tokens_and_recall_per_policy():
    nb = executed("04_memory_models")
    # one chart per policy, so no line hides another
    assert (
        "one chart per policy: buffer, window (10 msgs), token trim (500), summary (keep 10)"
        in text_of(nb)
    )
    assert any(img.startswith(PNG_SIGNATURE) for img in pngs(nb))
    rows = table_rows(text_of(nb), "policy", "tokens, last turn", "answer")
    # columns: tokens all turns, tokens last turn, fact seen until turn, answer
    assert "4711" in rows["buffer"][3] and "4711" in rows["summary (keep 10)"][3]
    assert "don't know" in rows["window (10 msgs)"][3]
    assert "don't know" in rows["token trim (500)"][3]
    buffer_last = int(rows["buffer"][1])
    for policy in ("window (10 msgs)", "token trim (500)", "summary (keep 10)"):
        assert int(rows[policy][1]) < buffer_last / 4, policy
    assert "stored messages: 128" in text_of(nb)


@pytest.mark.slow
def test_05_pairs_views_formats_and_graph():
    nb = executed("05_one_to_one")
    text = text_of(nb)
    roles = [line.split("]")[0] + "]" for line in text.splitlines()[:5]]
    assert roles == ["[User]", "[Writer]", "[Editor]", "[Writer]", "[Editor]"]
    assert "Approved:" in text.splitlines()[4]
    assert "user      | Editor: Too long" in text  # the writer reads the editor as a user turn
    assert "Skeptic: Biggest risk: Long-haul" in text
    for output_type in OUTPUT_TYPES:
        assert f"===== {output_type!r} -> " in text, output_type
    assert any(img.startswith(PNG_SIGNATURE) for img in pngs(nb))
    assert "Editor -.-> Writer;" in text and "Writer --> Editor;" in text
    # what dict-all-except-first drops, and why, is shown next to the formats
    assert "dict-all-except-first leaves out: ['User: Write a tagline" in text
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "conversation_history[2:]" in markdown and "system prompt and the task" in markdown


@pytest.mark.slow
def test_06_approvals_budgets_routes_handback_and_views():
    nb = executed("06_control")
    text = text_of(nb)
    assert "waiting: Refunds wants process_refund(order_id=7) (id c2)" in text
    assert "refunded so far: []" in text and "refunded: [7]" in text
    assert "no decision -> pending again: ['c2'] []" in text
    assert "Error: denied: order 7 was already refunded by phone" in text
    assert "model calls after the restart: 1" in text
    assert "every tool call answered: True" in text
    rows = table_rows(text, "agent", "model_calls", "handoffs")
    assert rows["total"] == ["3", "2", "1"]
    assert [int(rows[a][0]) for a in ("Triage", "Refunds")] == [1, 2]
    assert "('route', 'refund approved')" in text
    assert "Approver -. &nbsp;refund approved&nbsp; .-> Desk;" in text
    assert "Front -> Support -> Billing -> Support -> Front" in text
    assert (
        "Refunds' call saw:       [('system', 'You handle refunds.'), ('human', 'I want a refund')]"
        in text
    )
