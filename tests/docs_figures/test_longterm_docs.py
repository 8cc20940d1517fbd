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


def figures_39() -> dict[str, str]:
    """Issue 39's figures the long-term memory page quotes: the dev split's other question
    kinds (short sessions), the long profile, the deployed tokens and the key-naming
    ablation, from the committed run."""
    run = json.loads((ROOT / "benchmarks" / "results.json").read_text())["longterm"]
    dev, test = run["rows"]["dev"], run["rows"]["test"]
    long = run["profiles"].get("long", {}).get("rows")  # (a run may have the short one only)

    def pct(row: dict, metric: str) -> str:
        return _pct(row[metric])

    return {
        "lt_before": pct(dev["long-term (gold)"], "temporal_in_prompt"),
        "ctx_before": pct(dev["context (gold)"], "temporal_in_prompt"),
        "buf_before": pct(dev["buffer"], "temporal_in_prompt"),
        "lt_many": pct(dev["long-term (gold)"], "aggregate_in_prompt"),
        "ctx_many": pct(dev["context (gold)"], "aggregate_in_prompt"),
        "lt_abstain": pct(dev["long-term (gold)"], "abstained"),
        "buf_abstain": pct(dev["buffer"], "abstained"),
        "history": str(run["history"]),
        "lt_short_share": f"{dev['long-term (gold)']['share_of_buffer']['mean']:.1%}",
        "lt_long_share": (
            f"{long['dev']['long-term (gold)']['share_of_buffer']['mean']:.1%}" if long else ""
        ),
        "lt_deployed": f"{dev['long-term (gold)']['deployed_share']['mean']:.1%}",
        "opaque_test": pct(test["long-term (gold-opaque)"], "current_in_prompt"),
        "lt_gold_test": pct(test["long-term (gold)"], "current_in_prompt"),
        "opaque_mini_test": pct(test["long-term (minilm) (gold-opaque)"], "current_in_prompt"),
        "mini_test": pct(test["long-term (minilm) (gold)"], "current_in_prompt"),
        "seeds": ", ".join(str(s) for s in run["seeds"]),
    }


def issue_39_sentences(f: dict[str, str]) -> list[str]:
    """The sentences of the page that quote :func:`figures_39` (whitespace folded)."""
    return [
        f"context and long-term rows see the last {f['history']} messages of a conversation",
        f"long-term memory with gold writes costs {f['lt_short_share']} of buffer's whole-run "
        + (
            f"tokens on short sessions and {f['lt_long_share']} on long ones (dev split"
            if f["lt_long_share"]
            else "tokens (dev split, short sessions"
        ),
        f"{f['lt_deployed']} once a model extractor's tokens for its writes are counted",
        f"the value before X is in the prompt for {f['lt_before']} of such questions with "
        f"long-term memory (gold writes), {f['ctx_before']} with `context_variables`, "
        f"{f['buf_before']} with buffer",
        f"every value a fact had for {f['lt_many']} with long-term memory and "
        f"{f['ctx_many']} with `context_variables`",
        f"the answering stand-in abstains on {f['lt_abstain']} of them with long-term "
        f"memory's prompt and {f['buf_abstain']} with buffer's",
        f"BM25 recall on test falls from {f['lt_gold_test']} to {f['opaque_test']}; MiniLM's "
        f"from {f['mini_test']} to {f['opaque_mini_test']}",
    ]


def test_the_long_term_memory_page_quotes_issue_39s_run():
    text = " ".join((ROOT / "docs" / "long_term_memory.md").read_text().split())
    section = text.split("## The benchmark")[1].split("## Limits")[0]
    for sentence in issue_39_sentences(figures_39()):
        assert sentence in section, sentence
