"""docs/long_term_memory.md and docs/benchmarks.md quote the committed long-term benchmark run
(benchmarks/results.json, written by ``python -m benchmarks --only longterm --merge``): each
figure is recomputed here, so a re-run that changes one fails until the docs say it."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pct(cell: dict) -> str:
    if cell["min"] == cell["max"]:
        return f"{cell['mean']:.0%}"
    return f"{cell['mean']:.0%} ({cell['min']:.0%}-{cell['max']:.0%})"


def figures() -> dict[str, str]:
    """The figures the docs quote, from the committed run."""
    run = json.loads((ROOT / "benchmarks" / "results.json").read_text())["longterm"]
    rows, writes = run["rows"], run["writes"]
    check = run["target_check"]
    return {
        "ctx_gold_test": _pct(rows["test"]["context (gold)"]["current_in_prompt"]),
        "lt_gold_dev": _pct(rows["dev"]["long-term (gold)"]["current_in_prompt"]),
        "lt_gold_test": _pct(rows["test"]["long-term (gold)"]["current_in_prompt"]),
        "lt_gold_share": f"{rows['test']['long-term (gold)']['share_of_buffer']['mean']:.1%}",
        "model_dev": _pct(writes["dev"]["model"]["right"]),
        "model_test": _pct(writes["test"]["model"]["right"]),
        "rules_dev": _pct(writes["dev"]["rules"]["right"]),
        "rules_test": _pct(writes["test"]["rules"]["right"]),
        "lt_model_dev": _pct(rows["dev"]["long-term (model)"]["current_in_prompt"]),
        "lt_model_test": _pct(rows["test"]["long-term (model)"]["current_in_prompt"]),
        "buf_acc_dev": _pct(rows["dev"]["buffer"]["answer_accuracy"]),
        "buf_acc_test": _pct(rows["test"]["buffer"]["answer_accuracy"]),
        "target_recall": f"{check['values']['current_in_prompt']['min']:.0%}",
        "target_met": str(check["met"]),
    }


def test_the_long_term_memory_page_quotes_the_committed_run():
    text = " ".join((ROOT / "docs" / "long_term_memory.md").read_text().split())
    f = figures()
    section = text.split("## The benchmark")[1].split("## Limits")[0]
    for sentence in (
        f"`context_variables` put {f['ctx_gold_test']} of current facts in the prompt "
        "on the test split",
        f"puts {f['lt_gold_dev']} on dev, {f['lt_gold_test']} on test's reworded questions, "
        f"at {f['lt_gold_share']} of buffer's whole-run tokens",
        f"writes {f['model_dev']} of current facts right on dev and {f['model_test']} on test; "
        f"the rules {f['rules_dev']} and {f['rules_test']}",
        f"falls from {f['lt_model_dev']} to {f['lt_model_test']}",
        f"answers {f['buf_acc_dev']} right on dev and {f['buf_acc_test']} on test",
        f"{f['target_recall']} of current facts in the prompt on the worst seed",
    ):
        assert sentence in section, sentence
    assert ("**not met**" in section) == (f["target_met"] == "False")


def test_the_benchmarks_page_row_quotes_the_committed_run():
    f = figures()
    row = next(
        line
        for line in (ROOT / "docs" / "benchmarks.md").read_text().splitlines()
        if line.startswith("| long-term memory")
    )
    assert f"long-term memory, gold writes: {f['lt_gold_test']} of current facts" in row
    assert f"at {f['lt_gold_share']} of buffer's whole-run tokens" in row
    assert f"model stand-in writes {f['model_dev']} right on dev, {f['model_test']} on test" in row
