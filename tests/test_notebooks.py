"""The teaching notebooks: committed in sync with their sources, executable top to bottom, and
printing on a fresh run what they printed when committed.

Each notebook runs in a fresh ``python3`` kernel (the project venv: jupyter_client starts the
kernelspec's ``python`` as the interpreter running these tests). A notebook checks its own
claims as it runs (``notebooks/checks.py``: a failed ``check`` is a failed cell); here each
fresh run's printed text, the checks' ``✓`` lines included, is compared cell by cell with the
committed outputs, and each notebook is checked for the outcome it teaches.
"""

from __future__ import annotations

import base64
import difflib
import doctest
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


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_module("notebooks_build", NOTEBOOK_DIR / "_build.py")
checks = _load_module("notebooks_checks", NOTEBOOK_DIR / "checks.py")
_executed: dict[str, nbformat.NotebookNode] = {}


def committed(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)


def executed(name: str) -> nbformat.NotebookNode:
    """The committed notebook ``name``, executed once per test session in a fresh kernel."""
    if name not in _executed:
        nb = committed(name)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        _executed[name] = build.scrub(build.execute(nb))
    return _executed[name]


def outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def cell_text(cell: nbformat.NotebookNode) -> str:
    """What one code cell printed (and the text of its result), in order."""
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o["text"])
        elif "text/plain" in o.get("data", {}) and "image/png" not in o.get("data", {}):
            parts.append(o["data"]["text/plain"])
    return "".join(parts)


def text_of(nb: nbformat.NotebookNode) -> str:
    """Everything the notebook printed, in order."""
    return "".join(cell_text(c) for c in nb.cells if c.cell_type == "code")


#: What may differ between two runs of the same notebook: throwaway folders, object addresses.
_VOLATILE = [
    (re.compile(r"<tmp>/[\w.-]+"), "<tmp>/…"),
    (re.compile(r"0x[0-9a-f]{6,}"), "0x…"),
    # when an earlier value held (notebook 07's recall block): the day the notebook ran
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),
]


def masked(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def pngs(nb: nbformat.NotebookNode) -> list[bytes]:
    return [
        base64.b64decode(o["data"]["image/png"])
        for o in outputs(nb)
        if "image/png" in o.get("data", {})
    ]


def markdown_of(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


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


@pytest.mark.parametrize("name", build.NOTEBOOKS)
def test_each_notebook_says_what_you_will_learn_and_what_you_saw(name):
    nb = committed(name)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert "## What you will learn" in markdown[0], f"{name}: no 'What you will learn' up front"
    assert markdown[-1].lstrip().startswith("## What you saw"), f"{name}: no closing 'What you saw'"
    assert nb.cells[-1].cell_type == "markdown", f"{name}: 'What you saw' is not the last cell"
    bullets = [line for line in markdown[-1].splitlines() if line.startswith("* ")]
    assert len(bullets) >= 3, f"{name}: 'What you saw' restates too little"


@pytest.mark.parametrize("name", build.NOTEBOOKS)
def test_each_notebook_checks_its_claims_where_it_makes_them(name):
    """Claims are checked in the cells that show them: every notebook imports ``check`` and its
    committed outputs hold ✓ lines from most of its code cells, never a failed one."""
    nb = committed(name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "from checks import check" in code[0].source, f"{name}: check is not imported"
    checked = [c for c in code if "\u2713 " in cell_text(c)]
    assert len(checked) >= len(code) // 2, f"{name}: only {len(checked)} of {len(code)} cells check"
    assert "AssertionError" not in text_of(nb)


def test_check_prints_a_tick_or_stops_with_the_claim(capsys):
    failures, _ = doctest.testmod(checks, verbose=False)
    assert failures == 0
    checks.check("one and one make two", 1 + 1, 2)
    assert capsys.readouterr().out == "\u2713 one and one make two: 2\n"
    with pytest.raises(AssertionError, match="the notebook says: it is sunny"):
        checks.check("it is sunny", False)
    with pytest.raises(AssertionError, match="not so"):
        checks.check("a list is not a yes", [1])  # only True passes, not any truthy value


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
    nb = executed(name)  # raises CellExecutionError on the first failing cell (or check)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("name", build.NOTEBOOKS)
def test_a_fresh_run_prints_what_is_committed(name):
    """The committed outputs are what a fresh run prints: every cell's text, the ✓ lines of
    its checks included, after masking throwaway folders and object addresses."""
    fresh = [c for c in executed(name).cells if c.cell_type == "code"]
    kept = [c for c in committed(name).cells if c.cell_type == "code"]
    diffs = []
    for index, (old, new) in enumerate(zip(kept, fresh, strict=True)):
        before, after = masked(cell_text(old)), masked(cell_text(new))
        if before != after:
            diff = difflib.unified_diff(
                before.splitlines(),
                after.splitlines(),
                f"committed cell {index}",
                f"fresh run, cell {index}",
                lineterm="",
            )
            diffs.append("\n".join(diff))
    assert not diffs, (
        f"notebooks/{name}.ipynb prints something else on a fresh run; rebuild it with "
        f".venv/bin/python notebooks/_build.py {name[:2]} and check the change:\n"
        + "\n\n".join(diffs)
    )
    assert len(pngs(executed(name))) == len(pngs(committed(name))), "a picture is missing"


@pytest.mark.slow
def test_01_shows_the_graph_picture_and_who_served_each_call():
    nb = executed("01_agents_and_handoffs")
    images = pngs(nb)
    assert len(images) == 3 and all(img.startswith(PNG_SIGNATURE) for img in images)
    text = text_of(nb)
    assert "small-model  served: You are Triage." in text
    assert "large-model  served: You are Expert." in text
    assert "\u2713 the agent's fields are unchanged after two runs" in text
    assert "Triage -.-> Refunds;" in text and "Triage -.-> Sales;" in text
    assert "'Error: Tool transfer_to_refunds not found.'" in text
    # the demo swarm: handoffs happened and the context carried the fields across agents
    assert '-> handoff: {"assistant": "Refunds"}' in text
    assert "context at the end: {'name': 'Ming', 'order_id': 7" in text
    # every agent is drawn with a loop; the notebook says when a tool-less one takes it
    assert "Refunds  tools: (none)" in text and "loop: only after a bad call" in text
    assert "'Lonely \u2192 tool \u2192 Lonely'" in text
    # the picture is read in the text: entry / resume / max_turns=0 out of start
    assert "['entry', 'resume', 'resume', 'max_turns=0']" in text
    assert "a run allowed no turn at all ends before any agent" in markdown_of(nb)


@pytest.mark.slow
def test_02_context_is_copied_injected_written_back_and_gone():
    text = text_of(executed("02_context_variables"))
    assert "\u2713 the caller's dict is unchanged, nested value included" in text
    assert "list_orders: parameters = []" in text  # context_variables hidden from the model
    assert "the tool received:     {'user_id': 456}" in text  # forged argument ignored
    assert "call 1: system prompt = 'You are Support. You are talking to Li.'" in text
    assert "\u2713 the tool received an empty dict: {}" in text  # the run without context


@pytest.mark.slow
def test_03_table_shows_what_each_persist_choice_restores():
    nb = executed("03_memory_vs_context")
    text = text_of(nb)
    rows = table_rows(text, "persist", "model saw earlier text", "tool saw field")
    # columns: model saw earlier text, tool saw field, turn-2 agent, tokens, bytes
    assert rows["messages+context"][:2] == ["yes", "yes"]
    assert rows["messages"][:2] == ["yes", "no"]
    assert rows["context"][:2] == ["no", "yes"]
    assert rows["none"][:2] == ["no", "no"]
    assert int(rows["none"][4]) == 0 < int(rows["context"][4]) < int(rows["messages"][4])
    assert "\u2713 with rules: {'name': 'Xiaoming', 'school': 'A High School'}" in text
    assert "the tool searched near the school from the context: 'A High School'" in text
    # the two numbers that look backwards are measured and explained: restarting at Triage
    # costs turn 2 an extra model call when the context (with the active agent) is not kept
    assert int(rows["none"][3]) > int(rows["context"][3])
    assert int(rows["messages"][4]) > int(rows["messages+context"][4])
    assert "none              turn 2 made 3 model calls" in text
    assert "context           turn 2 made 2 model calls" in text
    markdown = markdown_of(nb)
    assert "the active agent is saved with the" in markdown
    assert "offline rule-based" in markdown
    # what each choice left in the database, opened as after a refresh (issue 24: it printed
    # 0 messages and {} for every choice while the text said otherwise)
    stored = table_rows(text, "persist", "stored messages", "stored context")
    assert int(stored["messages"][0]) == int(stored["messages+context"][0]) + 2 > 2
    assert stored["messages+context"][1] == "{'name': 'Xiaoming', 'order_id': 7}"
    assert [stored[k] for k in ("context", "none")] == [
        ["0", "{'name': 'Xiaoming', 'order_id': 7}"],
        ["0", "{}"],
    ]
    # Session and a checkpointer on the same swarm: same outcome, different bookkeeping
    ours = (
        "agent Refunds | context {'name': 'Ming', 'order_id': 7, 'refunds': {'7': 'approved'}, "
        "'refund_status': 'approved'}"
    )
    assert f"Session:      {ours}" in text and f"checkpointer: {ours}" in text
    stored_kb = dict(re.findall(r"^(Session|checkpointer): +about +(\d+) kB$", text, flags=re.M))
    assert int(stored_kb["Session"]) < int(stored_kb["checkpointer"])
    assert "handoff_trail after the run (an agent answered): []" in text


@pytest.mark.slow
def test_04_plots_tokens_and_recall_per_policy():
    nb = executed("04_memory_models")
    text = text_of(nb)
    # one chart per policy, so no line hides another
    assert (
        "one chart per policy: ['buffer', 'window (10 msgs)', 'token trim (500)', "
        "'summary (keep 10)']" in text
    )
    assert "\u2713 every panel labels its y axis" in text
    assert len(pngs(nb)) == 2 and all(img.startswith(PNG_SIGNATURE) for img in pngs(nb))
    rows = table_rows(text, "policy", "tokens, last turn", "answer")
    # columns: tokens all turns, tokens last turn, fact seen until turn, answer
    assert "4711" in rows["buffer"][3] and "4711" in rows["summary (keep 10)"][3]
    assert "don't know" in rows["window (10 msgs)"][3]
    assert "don't know" in rows["token trim (500)"][3]
    buffer_last = int(rows["buffer"][1])
    for policy in ("window (10 msgs)", "token trim (500)", "summary (keep 10)"):
        assert int(rows[policy][1]) < buffer_last / 4, policy
    assert "all 128 messages" in text
    # the ten-facts experiment comes from the package, not from a sys.path edit
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "sys.path" not in code and "from swarmgraph.app.recall import" in code
    assert "\u2713 the Pareto front: ['context+window:4']" in text
    # the summary policy also runs with a generic summariser, beside the scripted one
    assert "SummaryMemory(generic_summariser" in code and "ExtractiveSummaryModel" in code
    assert "\u2713 the generic summary kept the code too" in text


@pytest.mark.slow
def test_05_pairs_views_formats_and_graph():
    nb = executed("05_one_to_one")
    text = text_of(nb)
    roles = [line.split("]")[0] + "]" for line in text.splitlines()[:5]]
    assert roles == ["[User]", "[Writer]", "[Editor]", "[Writer]", "[Editor]"]
    assert "Approved:" in text.splitlines()[4]
    assert "user      | Editor: Too long" in text  # the writer reads the editor as a user turn
    assert "Skeptic: Biggest risk: Long-haul" in text
    # each format once: every output type is shown, or named as an alias of one shown
    shown = re.findall(r"^===== '([\w-]+)' -> ", text, flags=re.M)
    (alias_line,) = [line for line in text.splitlines() if line.startswith("aliases: ")]
    aliases = re.findall(r"[\w-]+", alias_line.removeprefix("aliases: "))
    assert sorted(set(shown) | set(aliases)) == sorted(OUTPUT_TYPES)
    assert len(shown) == len(set(shown)) and "dictionary" not in shown
    assert len({"str", "string", "all"} & set(shown)) == 1
    assert any(img.startswith(PNG_SIGNATURE) for img in pngs(nb))
    assert "Editor -.-> Writer;" in text and "Writer --> Editor;" in text
    # what dict-all-except-first drops, and why, is shown next to the formats
    assert "dict-all-except-first leaves out: ['User: Write a tagline" in text
    markdown = markdown_of(nb)
    assert "conversation_history[2:]" in markdown and "system prompt and the task" in markdown
    assert "*not* OpenAI Swarm" in markdown and "kyegomez/swarms" in markdown


@pytest.mark.slow
def test_06_approvals_budgets_routes_handback_and_views():
    nb = executed("06_control")
    text = text_of(nb)
    assert "waiting: Refunds wants process_refund(order_id=7) (id c2)" in text
    assert (
        "\u2713 it did not run: []" in text and "\u2713 approved, the refund ran once: [7]" in text
    )
    assert "\u2713 without a decision: pending again, nothing new: (['c2'], [])" in text
    assert "Error: denied: order 7 was already refunded by phone" in text
    # issue 24: after the denial the model said "Refund sent."; now its reply follows it
    assert "Refund sent" not in text
    assert "'I did not refund order 7: order 7 was already refunded by phone.'" in text
    assert "model calls after the restart (only that reply): 1" in text
    assert "\u2713 every tool call is answered" in text
    rows = table_rows(text, "agent", "model_calls", "handoffs")
    assert rows["total"] == ["3", "2", "1"]
    assert [int(rows[a][0]) for a in ("Triage", "Refunds")] == [1, 2]
    assert "('route', 'refund approved')" in text
    assert "\u2713 Approver -> Desk: (True, 'refund approved')" in text
    assert "'Front -> Support -> Billing -> Support -> Front'" in text
    assert "[('system', 'You handle refunds.'), ('human', 'I want a refund')]" in text
    # issue 21: the guarded desk (a second picture: the contracts drawn)
    assert "\u2713 the first transfer did not switch: 'Error: Refunds needs order_id'" in text
    assert "\u2713 Refunds' model was never called: 0" in text
    assert "\u2713 the last word is Humans': ('Humans', 'Your refund is on its way.')" in text
    assert "\u2713 Triage -> Refunds says what Refunds needs: 'needs order_id'" in text
    assert len(pngs(nb)) == 2


@pytest.mark.slow
def test_07_shows_scopes_across_conversations_and_the_whole_benchmark_table():
    nb = executed("07_long_term_memory")
    text = text_of(nb)
    assert "no OPENAI_API_KEY: every model below is an offline stand-in" in text
    assert "\u2713 but not Triage's note: an agent's notes are its own" in text
    assert "\u2713 a model-supplied user id is refused" in text
    rows = table_rows(text, "memory model", "current in prompt", "whole-run tokens")
    assert list(rows) == [
        "buffer",
        "window:20",
        "tokens:1500",
        "summary",
        "retrieval",
        *(
            f"{m} ({e})"
            for m in (
                "context",
                "long-term",
                "long-term (vector)",
                "long-term (minilm)",
                "hybrid",
                "hybrid (vector)",
                "hybrid (minilm)",
            )
            for e in ("gold", "rules", "model")
        ),
        *(f"{m} (gold-opaque)" for m in ("long-term", "long-term (vector)", "long-term (minilm)")),
    ]  # every memory model x extractor, the losers too, and the key-naming ablation
    assert {cells[5] for cells in rows.values()} == {"0"}  # leakage
    assert "dev split" in text and "test split" in text  # both splits, every claim on both
    assert "\u2713 on test the extractor matters more than the memory model" in text
    assert "\u2713 at these sizes the whole target is not met" in text  # said, not hidden
    assert "\u2713 on test, vector recall puts more current facts in the prompt than BM25" in text
    # issue 39: a past-value question answered from long-term memory, and what to pick per kind
    lyon = "'Before that you lived in Lyon.'"
    assert f"\u2713 and it is answered from long-term memory: {lyon}" in text
    assert "\u2713 context (gold) never does: its update overwrote it: 0.0" in text
    assert "\u2713 the longer the sessions, the smaller long-term memory's share" in text
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "Path.cwd()" not in code  # benchmarks/ is found from the package, not the cwd
    assert len(pngs(nb)) == 1 and pngs(nb)[0].startswith(PNG_SIGNATURE)
