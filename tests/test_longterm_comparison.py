"""Issue 39 item 4: the long-term comparison treats every row alike and asks what the field
asks. Context and long-term rows see the same conversation history; the dev split's other
question kinds (the value before X, how many, never said) are generated from the facts and
scored from what the prompt holds; the key-naming ablation writes the gold facts under
opaque keys."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.longterm import (
    HISTORY,
    Assistant,
    _plan,
    extraction_tokens,
    extractors,
    opaque_key,
    pareto_front,
)
from benchmarks.longterm_answer import UNKNOWN, answer
from benchmarks.longterm_data import BEFORE, HOW_MANY, NEVER_SAID, generate, mentions
from benchmarks.longterm_score import score_kinds

SMALL = {
    "users": 2, "sessions": 3, "facts_per_user": 8, "updates_per_user": 2,
    "deletions_per_user": 1, "restatements_per_user": 1, "distractors_per_user": 2,
}  # fmt: skip


class Recording(Assistant):
    """The benchmark's assistant, also keeping how many earlier messages each dialogue turn's
    prompt carried (every message but the system prompt and the new one)."""

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.history: list[int] = []

    def _respond(self, messages: list[BaseMessage]) -> str:
        if str(messages[-1].content) not in self.questions:
            self.history.append(sum(not isinstance(m, SystemMessage) for m in messages) - 1)
        return super()._respond(messages)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_context_and_long_term_rows_see_the_same_conversation_history(tmp_path, split):
    # Before issue 39 a long-term row sent its conversation's whole history and a context row
    # none: the same dialogue cost them differently. Now both see the last HISTORY messages.
    data = generate(0, split=split, chatter_per_session=8, **SMALL)
    seen = {}
    for n, row in enumerate(("context", "long-term")):
        assistant = Recording(data)
        extract = extractors(data)["gold"]
        _plan(data, f"sqlite:///{tmp_path / f'{n}.db'}", assistant, row, extract, 3)
        seen[row] = assistant.history
    assert seen["context"] == seen["long-term"]
    assert max(seen["long-term"]) == HISTORY  # long conversations: the window is full
    longest = max(len(c.turns) for c in data.conversations)
    assert 2 * (longest - 1) > HISTORY  # (so the whole history would have been more)


def test_gold_rows_are_charged_what_a_model_extractor_sends():
    data = generate(0, **SMALL)
    model = extractors(data)["model"]
    for _, turn in data.turns():
        model(turn.text)
    assert extraction_tokens(data) == model.tokens > 0


def test_the_pareto_front_leaves_out_rows_below_the_minimum_recall():
    rows = {
        "cheap and blind": {"current_in_prompt": 0.02, "whole_run_tokens": 10},
        "dear and right": {"current_in_prompt": 1.0, "whole_run_tokens": 1000},
        "gold, charged": {"current_in_prompt": 1.0, "whole_run_tokens": 100,
                          "deployed_tokens": 5000},
    }  # fmt: skip
    assert pareto_front(rows) == ["dear and right"]
    assert pareto_front(rows, min_recall=0.0) == ["cheap and blind", "dear and right"]


def test_opaque_keys_carry_no_word_of_the_kind_of_fact():
    data = generate(0, **SMALL)
    written = [op for _, t in data.turns() for op in extractors(data)["gold-opaque"](t.text)]
    assert written and all(op.key.startswith("k") and op.key[1:].isdigit() for op in written)
    assert opaque_key("home_city") != opaque_key("dog_name")
    gold = [op.key for _, t in data.turns() for op in extractors(data)["gold"](t.text)]
    assert [opaque_key(key) for key in gold] == [op.key for op in written]


# -- the dev split's other question kinds ------------------------------------------------


def test_the_dev_split_asks_before_x_how_many_and_never_said_from_its_facts():
    data = generate(1)
    said = " ".join(t.text for _, t in data.turns())
    by_kind: dict[str, list] = {}
    for q in data.extra_questions:
        by_kind.setdefault(q.kind, []).append(q)
    facts = {(f.user_id, f.key): f for f in data.facts}
    updated = [f for f in data.facts if f.status == "updated" and f.key in BEFORE]
    assert len(by_kind["temporal"]) == len(updated) > 0
    for q in by_kind["temporal"]:
        fact = facts[q.user_id, q.key]
        assert mentions(q.text, fact.values[-1]) and q.answer == fact.values[-2]
    for q in by_kind["aggregate"]:
        fact = facts[q.user_id, q.key]
        assert q.text == HOW_MANY[q.key] and q.answer == str(len(set(fact.values)))
        assert set(q.needs) == set(fact.values)
    assert {q.answer for q in by_kind["aggregate"]} >= {"1", "2"}  # both counts asked
    for q in by_kind["abstain"]:
        assert q.text in NEVER_SAID and q.answer is None
        assert q.text not in said
    assert "gym" not in said.lower() and "grandmother" not in said.lower()
    assert generate(1, split="test").extra_questions == ()


def test_the_other_kinds_change_nothing_else_of_the_data():
    # drawn last from the seed: the facts, dialogue and fact questions stay as they were
    dev = generate(2)
    assert dev.extra_questions and all(q.kind == "fact" for q in dev.questions)
    assert len(dev.questions) == len(dev.facts)
    assert all(q.qid.count(":") == 1 for q in dev.questions)
    assert all(q.qid.count(":") == 2 for q in dev.extra_questions)


def test_kinds_are_scored_from_what_the_prompt_holds_and_the_answer_says():
    data = generate(1)
    temporal = next(q for q in data.extra_questions if q.kind == "temporal")
    never = next(q for q in data.extra_questions if q.kind == "abstain")
    fact = next(f for f in data.facts if (f.user_id, f.key) == (temporal.user_id, temporal.key))
    values = [v for f in data.facts for v in f.values]
    both = " ".join(fact.values)
    out = score_kinds(
        [temporal, never],
        {temporal.qid: both, never.qid: ""},
        {temporal.qid: fact.values[-2], never.qid: values[0]},
        values,
    )
    assert (out["temporal_in_prompt"], out["temporal_accuracy"], out["abstained"]) == (1, 1, 0)
    out = score_kinds(
        [temporal, never],
        {temporal.qid: fact.values[-1], never.qid: ""},
        {temporal.qid: fact.values[-1], never.qid: UNKNOWN},
        values,
    )
    assert (out["temporal_in_prompt"], out["temporal_accuracy"], out["abstained"]) == (0, 0, 1)
    assert out["aggregate_in_prompt"] != out["aggregate_in_prompt"]  # none asked: nan


def test_the_answering_stand_in_reads_earlier_values_from_a_memory_block():
    block = SystemMessage(
        'Be kind.\n\n<memory>\n- home_city: "Porto"\n'
        '- home_city: "Lyon" (earlier value, held from 2025-01-01 until 2026-01-01)\n</memory>'
    )
    assert answer([block, HumanMessage("Which city do I live in?")]) == "Porto"
    assert answer([block, HumanMessage("Which city did I live in before Porto?")]) == "Lyon"
    assert answer([block, HumanMessage("How many cities have I lived in?")]) == "2"
    assert answer([block, HumanMessage("Which gym do I go to?")]) == UNKNOWN
