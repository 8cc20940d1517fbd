"""Smoke test for benchmarks/: every measurement runs at minimal sizes and returns the
structure RESULTS.md is built from, with its comparisons computed. No timing is asserted
(speed is what the benchmarks report, not what tests check).

``python -m benchmarks --quick`` runs once per session (conftest.py's ``quick``): each
section's test checks that run's figures, and the report test checks the RESULTS.md it wrote.
Each section ran again at its own sizes before (issue 37 item 5: a third of the suite's time);
the quick sizes are chosen so each check still has something to see (a saver size skipped,
more turns than the window holds)."""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pytest

# benchmarks/ is a top-level folder, not an installed package: import it from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.__main__ import main
from benchmarks.effects import BACKENDS as EFFECT_BACKENDS
from benchmarks.effects import WARM_UP as EFFECT_WARM_UP
from benchmarks.guarded import CONTENDERS as GUARDED_CONTENDERS
from benchmarks.guarded import RATIOS as GUARDED_RATIOS
from benchmarks.handoff import CONTENDERS as HANDOFF_CONTENDERS
from benchmarks.handoff import FEATURES as HANDOFF_FEATURES
from benchmarks.handoff import RATIOS
from benchmarks.longterm import MIN_RECALL, QUICK_LONG_MODELS, means, table_rows
from benchmarks.longterm import POLICIES as LONGTERM_POLICIES
from benchmarks.persistence import CONTENDERS as PERSISTENCE_CONTENDERS
from benchmarks.report import handoff_section, render, verdict
from benchmarks.startup import FIRST_FLOOR
from benchmarks.tokens import POLICIES
from swarmgraph.app.recall import FACTS, pareto_front

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`. The first
# test to ask for `quick` (tests/conftest.py) runs every section at minimal sizes: ~185 s on a
# quiet 2-CPU machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _finite_positive(x: float) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_handoff_every_contender_does_the_handoff_and_ratios_are_computed(quick):
    # Each contender's run asserts internally that B answered after a handoff, so a
    # contender that silently skipped the handoff would fail here.
    for factory in HANDOFF_CONTENDERS.values():
        factory()()  # one run each, outside timing
    out = quick["handoff"]
    assert set(out["contenders"]) == set(HANDOFF_CONTENDERS)
    for stats in out["contenders"].values():
        assert stats["min"] <= stats["median"] <= stats["max"]
    assert set(out["ratios"]) == set(RATIOS)
    for name, (num, den) in RATIOS.items():
        expected = out["contenders"][num]["median"] / out["contenders"][den]["median"]
        assert out["ratios"][name] == pytest.approx(expected)


def test_handoff_reports_each_feature_on_its_own_against_the_plain_run(quick):
    # Each row's run asserts its feature took part (the guardrail ran, the context was
    # validated, the view is what B's model saw...) and that it is still the two-call handoff.
    out = quick["handoff"]
    features = out["features"]
    assert set(features["ratios"]) == set(HANDOFF_FEATURES)
    assert set(features["contenders"]) == {"plain", *HANDOFF_FEATURES}
    plain = features["contenders"]["plain"]["median"]
    for feature, ratio in features["ratios"].items():
        assert ratio == pytest.approx(features["contenders"][feature]["median"] / plain)
    # each feature again beside the plain run, in adjacent pairs (quick: two rounds each)
    assert set(features["paired"]) == set(HANDOFF_FEATURES)
    for pair in features["paired"].values():
        low, high = pair["quartiles"]
        assert len(pair["rounds"]) == 2 and 0 < low <= pair["ratio"] <= high
    targets: list = []
    text = "\n".join(handoff_section(out, targets))
    assert "Each feature's cost on its own" in text and "in 2 rounds of two adjacent" in text
    for feature in HANDOFF_FEATURES:
        assert f"| {feature} |" in text, feature
    [noop] = [t for t in targets if t["target"].startswith("one no-op middleware")]
    assert (
        noop["why"]
        == f"{features['paired']['no-op middleware']['ratio']:.3f}x (paired rounds, CPU time)"
    )


def test_guarded_every_contender_hands_off_and_runs_its_checks(quick):
    # Each contender asserts B answered and (guarded ones) that both guardrails ran.
    for factory in GUARDED_CONTENDERS.values():
        factory()()
    out = quick["guarded"]
    assert set(out["contenders"]) == set(GUARDED_CONTENDERS)
    for name, (num, den) in GUARDED_RATIOS.items():
        expected = out["contenders"][num]["median"] / out["contenders"][den]["median"]
        assert out["ratios"][name] == pytest.approx(expected)


def test_persistence_reports_turns_storage_and_bytes_for_each_contender(quick):
    out = quick["persistence"]  # sizes=(10, 40), turns=2, saver_sizes=(10,)
    assert set(out["results"]) == {"10", "40"}
    small, large = out["results"]["10"], out["results"]["40"]
    assert set(small) == set(PERSISTENCE_CONTENDERS)
    for name, row in small.items():
        if name == "LangGraph DeltaChannel" and "error" in row:
            continue  # only when this LangGraph lacks the channel; the error is reported
        assert _finite_positive(row["turn_ms"]["median"]), name
        assert row["storage_ms"]["min"] >= 0
        assert _finite_positive(row["bytes_per_message"])
    assert "skipped" in large["LangGraph SqliteSaver"]  # outside saver_sizes
    ours = large["ours: Session(window=20)"]
    assert ours["stored_messages"] == 40 + 2 * 3  # prefill + warm-up + 2 turns, nothing lost
    assert set(out["ratios"]) >= {"ours turn ms, largest / smallest N"}
    assert "10->40" in out["marginal_bytes_per_message"]["ours: Session(window=20)"]


def test_effects_records_every_effect_call_and_compares_it_with_a_plain_one(quick):
    out = quick["effects"]  # turns=2, stateless=(2, 2)
    # make test has the binaries: the section starts its own Postgres and Redis
    assert list(out["session"]) == list(EFFECT_BACKENDS) and not out["unavailable"]
    for name, row in out["session"].items():
        records = row["records"]
        # warm-up, timed and counted turns: one @effect call each, started and done, and the
        # plain tool's conversation holds none
        assert records["effect"] == records["effect.done"] == EFFECT_WARM_UP + 2 + 1, name
        assert records["expected"] == EFFECT_WARM_UP + 3 and records["plain"] == 0, name
        # the ledger's two writes: started before the call, done after it
        assert row["store_calls"]["plain"] == {"load": 1, "save": 1}, name
        assert row["store_calls"]["effect"] == {"load": 1, "save": 3}, name
        for variant in ("plain", "effect"):
            assert _finite_positive(row[variant]["median_ms"]), (name, variant)
        assert row["plain"]["ledger_median_ms"] == 0 < row["effect"]["ledger_median_ms"], name
        assert row["ratio"] == pytest.approx(row["effect"]["median_ms"] / row["plain"]["median_ms"])
    for name in ("postgres", "redis"):  # each extra save is several round trips
        wire = out["session"][name]["wire"]
        assert wire["effect"] >= wire["plain"] + 2, (name, wire)
    calm = out["stateless"]
    assert calm["ratio"] == pytest.approx(calm["effect"]["median"] / calm["plain"]["median"])
    text = render({"effects": out}, command="x", elapsed_s=1.0, plot_name=None)
    assert "## 2c. What an effect call costs" in text
    assert "every @effect call through a Session recorded started and done | met" in text


def test_tokens_window_policy_sends_fewer_tokens_than_buffer(quick):
    plot = quick.out / "tokens_per_turn.png"
    out = quick["tokens"]  # turns=30
    assert set(out["policies"]) == set(POLICIES)
    buffer, window = out["policies"]["buffer"], out["policies"]["window:20"]
    assert len(buffer["per_turn"]) == 30
    # Past 20 stored messages the window stops growing while the buffer keeps growing.
    assert window["last"] < buffer["last"]
    assert buffer["per_turn"][-1] > buffer["per_turn"][0]
    assert out["ratios"]["window:20 total / buffer total"] < 1
    assert plot.stat().st_size > 1000  # a real PNG was written


def test_concurrency_counts_every_message(quick):
    out = quick["concurrency"]  # sessions=4, turns=2
    swarm = out["swarm"]
    assert swarm["messages_seen"] == swarm["messages_expected"] == 4 * 2 * 2
    assert _finite_positive(swarm["ratio_concurrent_to_one"])
    assert _finite_positive(swarm["speedup_vs_sequential"])
    session = out["session"]
    assert session["messages_stored"] == session["messages_expected"] == 4 * 2 * 2


def test_rss_runs_each_case_in_a_subprocess(quick):
    out = quick["rss"]  # sizes=(10, 50), naive=True
    assert set(out["cases"]) == {
        "ours window=20, 10 messages",
        "ours window=20, 50 messages",
        "naive load-all, 50 messages",
    }
    for case in out["cases"].values():
        assert case["peak_mb"] >= case["before_turn_mb"] > 10  # a Python process, measured
    assert _finite_positive(out["ratios"]["ours peak, largest / smallest N"])


def test_startup_measures_fresh_processes_and_the_first_answer_on_loopback(quick):
    out = quick["startup"]  # repeat=1, first_repeat=1, importtime_runs=1
    assert set(out["ratios"]) >= {"swarmgraph --version / python -c pass"}
    assert all(_finite_positive(p["median"]) for p in out["processes"].values())
    top = out["importtime"]["import swarmgraph"]["top_level_cumulative_ms"]
    assert top and all(ms >= 0 for _, ms in top)
    first = out["first_answer"]
    # Each child asserted it got the loopback server's "pong" from a real Swarm().run.
    assert set(first["contenders"]) == {"ours", "openai/swarm", FIRST_FLOOR}, first
    assert _finite_positive(first["ratios"]["ours / openai/swarm (whole process)"])
    assert _finite_positive(first["ratios"]["ours / floor (whole process)"])


def test_recall_counts_tokens_and_the_facts_each_policy_lets_the_model_see(quick):
    out = quick["recall"]  # turns=24
    policies = out["policies"]
    assert policies["buffer"]["facts_kept"] == len(FACTS)  # everything is in the prompt
    assert policies["window:20"]["facts_kept"] == 0  # the facts scrolled out of the window
    assert policies["context+window:4"]["facts_kept"] == len(FACTS)  # kept in context
    assert policies["context+window:4"]["total_tokens"] < policies["buffer"]["total_tokens"]
    assert "context+window:4" in pareto_front(policies)
    assert (quick.out / "tokens_vs_facts.png").stat().st_size > 1000


def test_longterm_runs_every_model_and_extractor_and_measures_the_stages_apart(quick):
    out = quick["longterm"]  # seeds=(0,), quick=True
    assert out["splits"] == ["dev", "test"]
    for split in out["splits"]:
        rows = means(out["rows"][split])
        assert list(rows) == list(LONGTERM_POLICIES)
        assert all(row["leakage"] == 0 for row in rows.values())  # users never mix
        buffer = rows["buffer"]
        assert buffer["current_in_prompt"] == 1.0 and buffer["deleted_shown"] == 1.0
        assert buffer["share_of_buffer"] == 1.0
        # Perfect extraction: what is written is right, so the memory models differ only in
        # what they show; context shows every fact, long-term recalls some.
        writes = out["writes"][split]
        assert writes["gold"]["right"]["mean"] == 1.0 and writes["gold"]["wrong"]["max"] == 0
        assert rows["context (gold)"]["current_in_prompt"] == 1.0
        assert rows["context (gold)"]["superseded_as_current"] == 0.0
        assert rows["long-term (gold)"]["deleted_shown"] == 0.0
        for name in ("long-term (gold)", "context (gold)", "hybrid (gold)"):
            assert rows[name]["whole_run_tokens"] < buffer["whole_run_tokens"] / 2, name
        # The model stand-in's extraction calls are counted: more tokens than with rules.
        assert (
            rows["long-term (model)"]["whole_run_tokens"]
            > rows["long-term (rules)"]["whole_run_tokens"]
        )
        assert all(_finite_positive(row["ms_per_turn"]) for row in rows.values())
        assert set(out["pareto"][split]) <= set(rows) and out["pareto"][split]
        # a row below the stated minimum recall is no trade-off (issues 40 and 39)
        assert out["min_recall"] == MIN_RECALL
        assert all(rows[name]["current_in_prompt"] >= MIN_RECALL for name in out["pareto"][split])
        # a gold row is charged the extraction a deployment pays for its writes; others not
        for name, row in rows.items():
            free = name.endswith(("(gold)", "(gold-opaque)"))
            assert (row["extraction_tokens"] > 0) == free, name
            assert row["deployed_tokens"] == row["whole_run_tokens"] + row["extraction_tokens"]
        # the headline shows old values shown beside the new, and distracted prompts
        header = table_rows(out["rows"][split])[0]
        assert "old value shown beside" in header and "distracted" in header
        assert buffer["stale_shown"] == 1.0  # the buffer shows every old value
        for failures in out["failures"][split].values():
            assert all(f["qid"] and f["why"] for f in failures)
    dev, test = (means(out["rows"][s]) for s in ("dev", "test"))
    # The dev split's other question kinds: the buffer holds every value, and long-term
    # memory recalls the value before X (issue 39); the test split asks none of them.
    assert dev["buffer"]["temporal_in_prompt"] == 1.0
    assert dev["buffer"]["aggregate_in_prompt"] == 1.0
    assert dev["long-term (gold)"]["temporal_in_prompt"] == 1.0
    assert all(math.isnan(row["temporal_in_prompt"]) for row in test.values())
    # The key-naming ablation: opaque keys lose what the key's words gave lexical recall.
    assert (
        dev["long-term (gold-opaque)"]["current_in_prompt"]
        < dev["long-term (gold)"]["current_in_prompt"]
    )
    # Two session profiles; --quick runs the long one on dev with a few rows.
    assert list(out["profiles"]) == ["short", "long"]
    long = out["profiles"]["long"]
    assert long["splits"] == ["dev"] and list(long["rows"]["dev"]) == list(QUICK_LONG_MODELS)
    longer = means(long["rows"]["dev"])
    assert long["counts"]["dev"]["turns"] > out["counts"]["dev"]["turns"]
    # buffer pays the whole thread; context and long-term only their last HISTORY messages
    assert longer["buffer"]["whole_run_tokens"] > dev["buffer"]["whole_run_tokens"]
    share = "share_of_buffer"
    assert longer["long-term (gold)"][share] < dev["long-term (gold)"][share]
    # The stand-ins were written for dev: on test their writes and answers fall apart.
    assert (
        out["writes"]["dev"]["model"]["right"]["mean"]
        > out["writes"]["test"]["model"]["right"]["mean"]
    )
    assert (
        dev["long-term (model)"]["current_in_prompt"]
        > test["long-term (model)"]["current_in_prompt"]
    )
    assert dev["buffer"]["answer_accuracy"] > test["buffer"]["answer_accuracy"]
    assert out["answers_by"] == "answering stand-in"
    assert out["extraction_by"] == "scripted stand-in"
    assert out["target_check"]["model"] == "long-term (gold)"
    assert list(out["target_checks"]) == [
        "long-term (gold)",
        "long-term (vector) (gold)",
        "long-term (minilm) (gold)",
    ]
    # Vector recall finds reworded questions' facts that BM25 misses, never another user's
    # (leakage is 0 on every row above), and recalls k facts where BM25 finds fewer: more tokens.
    lexical, vector = test["long-term (gold)"], test["long-term (vector) (gold)"]
    assert vector["current_in_prompt"] > lexical["current_in_prompt"]
    assert vector["whole_run_tokens"] > lexical["whole_run_tokens"]
    assert test["long-term (minilm) (gold)"]["current_in_prompt"] > lexical["current_in_prompt"]
    assert (
        test["hybrid (vector) (gold)"]["current_in_prompt"]
        > test["hybrid (gold)"]["current_in_prompt"]
    )
    assert (quick.out / "longterm_recall_vs_tokens.png").stat().st_size > 1000


def test_growth_measures_each_row_at_each_size(quick):
    out = quick["growth"]  # sizes 10 and 100, memory and sqlite, no Session turns
    assert list(out["recall_ms"]) == ["memory", "sqlite"]
    for by_size in out["recall_ms"].values():
        assert sorted(by_size) == ["10", "100"]
        assert all(_finite_positive(ms) for ms in by_size.values())
    assert out["targets"] == {}  # the ratios need 1,000 and 10,000 facts


def test_service_reports_rss_and_bounded_caches_per_mark(quick):
    out = quick["service"]  # marks=(5, 10), users=3
    per_request = out["cases"]["per-request"]
    assert set(per_request) == {"5", "10"}
    assert per_request["10"]["compiled_graphs"] <= 2  # one per topology, not per request
    assert _finite_positive(per_request["10"]["rss_mb"])


def test_verdict_states_the_distance():
    assert verdict(1.0, 1.3) == "met"
    assert verdict(2.6, 1.3) == "not met: 2.6 vs target 1.3 (2.0x over)"


def test_quick_run_writes_results_with_every_section_and_target(quick):
    out = quick.out
    text = (out / "RESULTS.md").read_text()
    for heading in (
        "## Targets",
        "## 0. Start-up",
        "## 3b. Tokens for what is remembered",
        "## 3c. Long-term memory",
        "## 3d. Recall growth",
        "## 6. A long-running service",
        "## 1. Handoff",
        "## 1b. What contracts cost a handoff",
        "## 2. Persistence",
        "## 2b. Session storage on each backend",
        "## 2c. What an effect call costs",
        "## 3. Tokens",
        "## 4. Concurrency",
        "## 4b. Parallel handoffs",
        "## 4c. Durable runs on Temporal",
        "## 5. Memory",
        "Machine:",
        "Versions:",
    ):
        assert heading in text, heading
    assert "handoff: ours <= 0.1x langgraph-swarm" in text
    assert "concurrency: no lost messages | met" in text
    assert "concurrency (side by side): no lost messages | met" in text
    assert "handoff floor: ours <= 1.03x" in text
    assert "adjacent batches, CPU time): median ratio" in text  # the floor pair ran
    assert "guarded handoff: typed context + two guardrails <= 1.1x plain" in text
    # make test starts nothing for the bench: the backends section starts its own servers
    for backend in ("sqlite", "postgres", "redis"):
        assert f"backends ({backend}): concurrent Session.arun loses no message | met" in text
    assert "floor: one LangGraph node calling ChatOpenAI" in text
    assert "effects: every @effect call through a Session recorded started and done | met" in text
    assert (out / "tokens_per_turn.png").exists()
    assert (out / "tokens_vs_facts.png").exists()
    assert (out / "longterm_recall_vs_tokens.png").exists()
    assert (out / "recall_growth.png").stat().st_size > 1000
    assert "recall growth: recall memory" not in text  # quick sizes stop at 100 facts
    # the target is reported for BM25 and for each embedding model
    for recall in ("BM25 recall", "vector recall (WordLlama)", "vector recall (MiniLM)"):
        assert f"long-term (gold writes, test split, {recall}): >= 95% current in prompt" in text
    assert (out / "results.json").exists()


def test_render_handles_a_subset():
    text = render({}, command="x", elapsed_s=0.0, plot_name=None)
    assert "## Targets" in text and "## 1." not in text


def test_merge_keeps_the_earlier_sections_and_says_what_was_rerun(quick, tmp_path):
    shutil.copy(quick.out / "results.json", tmp_path / "results.json")  # the earlier run
    main(["--quick", "--only", "recall", "--merge", "--out", str(tmp_path)])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "## 3. Tokens" in text and "## 3b. Tokens for what is remembered" in text
    assert "## 2c. What an effect call costs" in text  # every earlier section is kept
    assert "Re-run later by `python -m benchmarks --quick --only recall --merge" in text


def test_parallel_times_fan_out_against_one_after_another_and_checks_every_join(quick):
    out = quick["parallel"]  # branches=4, latency=0.005, repeat=1
    for mode in ("arun", "run"):
        m = out["modes"][mode]
        assert m["answers_checked"] == out["repeat"] == 1
        for key in ("fan_out_s", "one_after_another_s", "separate_at_once_s"):
            assert m[key]["min"] <= m[key]["median"] <= m[key]["max"]
        assert m["speedup"] == pytest.approx(
            m["one_after_another_s"]["median"] / m["fan_out_s"]["median"]
        )
    text = render({"parallel": out}, command="x", elapsed_s=1.0, plot_name=None)
    assert "Parallel handoffs" in text and "4 branches in `arun`" in text
