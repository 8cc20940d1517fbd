"""docs/long_term_memory.md and docs/benchmarks.md quote the committed long-term benchmark run
(benchmarks/results.json, written by ``python -m benchmarks --only longterm --merge``): each
figure is recomputed here, so a re-run that changes one fails until the docs say it."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pct(cell: dict) -> str:
    if cell["min"] == cell["max"]:
        return f"{cell['mean']:.0%}"
    return f"{cell['mean']:.0%} ({cell['min']:.0%}-{cell['max']:.0%})"


def figures() -> dict[str, str]:
    """The figures the docs quote, from the committed run."""
    run = json.loads((ROOT / "benchmarks" / "results.json").read_text())["longterm"]
    rows, writes = run["rows"], run["writes"]
    check = run["target_check"]
    vector = run["target_checks"]["long-term (vector) (gold)"]
    lt_vec = "long-term (vector) (gold)"
    lt_mini, mini = "long-term (minilm) (gold)", run["target_checks"]["long-term (minilm) (gold)"]
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
        "vec_gold_dev": _pct(rows["dev"][lt_vec]["current_in_prompt"]),
        "vec_gold_test": _pct(rows["test"][lt_vec]["current_in_prompt"]),
        "vec_gold_share": f"{rows['test'][lt_vec]['share_of_buffer']['mean']:.1%}",
        "vec_hybrid_test": _pct(rows["test"]["hybrid (vector) (gold)"]["current_in_prompt"]),
        "vec_leaks": str(
            max(
                r["leakage"]["max"]
                for split in rows.values()
                for n, r in split.items()
                if "(vector)" in n or "(minilm)" in n
            )
        ),
        "vec_missed": " | ".join(
            f["question"] for f in run["failures"]["test"][lt_vec] if f["why"] == "not in prompt"
        ),
        "vec_target_recall": f"{vector['values']['current_in_prompt']['min']:.0%}",
        "vec_target_met": str(vector["met"]),
        "mini_gold_dev": _pct(rows["dev"][lt_mini]["current_in_prompt"]),
        "mini_gold_test": _pct(rows["test"][lt_mini]["current_in_prompt"]),
        "mini_gold_share": f"{rows['test'][lt_mini]['share_of_buffer']['mean']:.1%}",
        "mini_hybrid_test": _pct(rows["test"]["hybrid (minilm) (gold)"]["current_in_prompt"]),
        "mini_target_recall": f"{mini['values']['current_in_prompt']['min']:.0%}",
        "mini_target_met": str(mini["met"]),
    }


def _verdict(met: str) -> str:
    return "**met**" if met == "True" else "**not met**"


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
        f"with BM25 recall {_verdict(f['target_met'])}, {f['target_recall']} of current facts "
        "in the prompt",
        f"puts {f['vec_gold_dev']} on dev and {f['vec_gold_test']} on test, at "
        f"{f['vec_gold_share']} of buffer's whole-run tokens",
        f"`HybridMemory` over the vector store, {f['vec_hybrid_test']} on test",
        f"with vector recall {_verdict(f['vec_target_met'])}, {f['vec_target_recall']} of "
        "current facts in the prompt",
        f"puts {f['mini_gold_dev']} on dev and {f['mini_gold_test']} on test, at "
        f"{f['mini_gold_share']} of buffer's whole-run tokens",
        f"`HybridMemory` over the MiniLM store, {f['mini_hybrid_test']} on test",
        f"with MiniLM vector recall {_verdict(f['mini_target_met'])}, "
        f"{f['mini_target_recall']} of current facts in the prompt",
    ):
        assert sentence in section, sentence
    assert f["vec_leaks"] == "0"  # "still no leakage"
    for question in ("What do I drive?", "Where did I study?"):  # the misses quoted
        assert question in f["vec_missed"] and f'"{question}"' in section, question


def test_the_benchmarks_page_row_quotes_the_committed_run():
    f = figures()
    row = next(
        line
        for line in (ROOT / "docs" / "benchmarks.md").read_text().splitlines()
        if line.startswith("| long-term memory")
    )
    assert f"long-term memory, gold writes: {f['lt_gold_test']} of current facts" in row
    assert f"at {f['lt_gold_share']} of buffer's whole-run tokens" in row
    assert f"with vector recall {f['vec_gold_test']} at {f['vec_gold_share']}" in row
    assert ("(not met either)" in row) == (f["vec_target_met"] == "False")
    assert f"with MiniLM vector recall {f['mini_gold_test']} at {f['mini_gold_share']}" in row
    assert f"model stand-in writes {f['model_dev']} right on dev, {f['model_test']} on test" in row
