"""The long-term memory benchmark's data, extractors and scorer (benchmarks/longterm_*.py):
the generator is seeded and makes what it says, each phrasing is read by exactly the
extractors its table says, and the scorer counts what could go wrong."""

from __future__ import annotations

import doctest
import sys
import uuid
from pathlib import Path

import pytest

# benchmarks/ is a top-level folder, not an installed package: import it from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.long_term import format_facts

import benchmarks.longterm as runner_module
import benchmarks.longterm_answer as answer_module
import benchmarks.longterm_cache as cache_module
import benchmarks.longterm_data as data_module
import benchmarks.longterm_extract as extract_module
import benchmarks.longterm_phrasing_test as test_phrasing_module
import benchmarks.longterm_score as score_module
from benchmarks.longterm_data import (
    CHATTER,
    CHATTER_REPLY,
    FORGET_CANONICAL,
    REPLIES,
    SLOTS,
    TWIN_DOG,
    UPDATE_PREFIXES,
    Question,
    generate,
    mentions,
    update_text,
)
from benchmarks.longterm_extract import (
    Forget,
    Remember,
    apply_operations,
    model_extract,
    rule_extract,
)
from benchmarks.longterm_phrasing_test import (
    JOINERS,
    RELATIONS,
    SMALL_TALK,
    TEST_PHRASING,
)
from benchmarks.longterm_score import Answer, score


@pytest.mark.parametrize(
    "module",
    [
        data_module,
        extract_module,
        score_module,
        test_phrasing_module,
        answer_module,
        runner_module,
        cache_module,
    ],
)
def test_the_benchmark_modules_doctests_pass(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_a_session_runs_each_offline_dataset_once_and_a_real_model_every_time(
    tmp_path, monkeypatch
):
    """The smoke test, the doctest, ``--quick`` and notebook 07 share one computed run
    through the session's cache folder; a run with a model of the caller's is never kept."""
    monkeypatch.setenv(cache_module.CACHE_ENV, str(tmp_path))
    computed: list[str] = []
    real = runner_module.run_dataset

    def counted(data, **kwargs):
        computed.append(data.split)
        return real(data, **kwargs)

    monkeypatch.setattr(runner_module, "run_dataset", counted)
    ask = {"seeds": (0,), "quick": True, "splits": ("dev",), "models": ["buffer"],
           "profiles": ("short",)}  # fmt: skip
    first = runner_module.run_longterm(**ask)
    again = runner_module.run_longterm(**ask)
    assert computed == ["dev"] and again["rows"] == first["rows"]
    assert again["failures"] == first["failures"]  # popped from each caller's own copy
    runner_module.run_longterm(**{**ask, "models": ["window:20"]})  # another key: computed
    assert computed == ["dev", "dev"]
    model = runner_module.ScriptedChatModel(respond=lambda messages: "I don't know.")
    runner_module.run_longterm(**ask, answer_model=model)
    assert computed == ["dev", "dev", "dev"]


# -- the generator ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_seed_decides_everything():
    assert generate(seed=3) == generate(seed=3)
    assert generate(seed=3) != generate(seed=4)
    texts = [t.text for _, t in generate(seed=3).turns()]
    assert texts != [t.text for _, t in generate(seed=4).turns()]


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"users": 2, "sessions": 2, "facts_per_user": 4, "updates_per_user": 1,
         "deletions_per_user": 1, "restatements_per_user": 1},
        {"users": 8, "sessions": 6, "facts_per_user": 8, "updates_per_user": 3,
         "deletions_per_user": 2, "restatements_per_user": 2, "paraphrase_share": 0.5},
    ],
)  # fmt: skip
def test_the_counts_are_what_was_asked(config):
    data = generate(seed=11, **config)
    c = {**dict(generate.__kwdefaults__ or {}), **config}
    users, counts = c["users"], data.counts()
    assert counts["users"] == users and counts["conversations"] == users * c["sessions"]
    assert counts["planted"] == users * c["facts_per_user"]
    assert counts["updated"] == users * c["updates_per_user"]
    assert counts["deleted"] == users * c["deletions_per_user"]
    assert counts["restated"] == users * c["restatements_per_user"]
    assert counts["distractors"] == users * c["distractors_per_user"]
    assert counts["chatter"] == users * c["sessions"] * c["chatter_per_session"]
    assert counts["questions"] == counts["planted"]
    assert counts["questions_updated"] == counts["updated"]
    assert counts["questions_deleted"] == counts["deleted"]
    # Phrasings: each user's plants, and each user's updates, in the given shares (rounded
    # half up); every restatement is in another phrasing than its plant, so never casual.
    statements = c["facts_per_user"] + c["updates_per_user"]
    casual = sum(
        int(n * c["casual_share"] + 0.5) for n in (c["facts_per_user"], c["updates_per_user"])
    )
    paraphrase = sum(
        int(n * c["paraphrase_share"] + 0.5) for n in (c["facts_per_user"], c["updates_per_user"])
    )
    assert counts["casual"] == users * casual
    restated_as_paraphrase = sum(
        t.kind == "restate" and t.phrasing == "paraphrase" for _, t in data.turns()
    )
    assert counts["paraphrase"] == users * paraphrase + restated_as_paraphrase
    assert counts["canonical"] + counts["paraphrase"] + counts["casual"] == (
        users * statements + counts["restated"]
    )
    forgets = int(c["deletions_per_user"] * c["forget_paraphrase_share"] + 0.5)
    assert counts["forget_paraphrase"] == users * forgets


def test_changes_come_after_the_plant_and_restatements_say_the_same_thing_differently():
    data = generate(seed=5, users=6, sessions=4, restatements_per_user=2)
    for user in data.users:
        planted = {}
        for conversation in data.conversations_of(user):
            assert conversation.conversation_id == f"{user}-s{conversation.index}"
            for turn in conversation.turns:
                if turn.kind == "plant":
                    planted[turn.key] = (conversation.index, turn)
                elif turn.kind in ("update", "delete", "restate"):
                    session, plant = planted[turn.key]  # the plant came first
                    assert session < conversation.index
                    if turn.kind == "restate":
                        assert turn.value == plant.value and turn.text != plant.text
                        assert turn.phrasing != plant.phrasing
                    if turn.kind == "update":
                        assert turn.value != plant.value


@pytest.mark.parametrize("split", ["dev", "test"])
def test_gold_questions_match_the_dialogue(split):
    data = generate(seed=2, split=split)
    facts = {(f.user_id, f.key): f for f in data.facts}
    for q in data.questions:
        fact = facts[(q.user_id, q.key)]
        turns = [t for c in data.conversations_of(q.user_id) for t in c.turns]
        said = [t for t in turns if q.key in {k for k, _ in t.writes} or t.key == q.key]
        told = [v for t in said if t.kind in ("plant", "update") for k, v in t.writes if k == q.key]
        assert list(fact.values) == told
        if q.status == "deleted":
            assert q.answer is None and q.stale == fact.values
            assert any(t.kind == "delete" for t in said)
        elif q.status == "updated":
            assert q.answer == told[-1] and q.stale == tuple(told[:-1]) and len(told) == 2
        else:
            assert q.answer == told[0] and q.stale == () and len(told) == 1
        if split == "dev":
            assert q.text == {s.key: s.question for s in SLOTS}[q.key]
        else:
            assert q.text in TEST_PHRASING[q.key].questions


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_twins_share_a_dog_name_but_not_a_vet_and_leaks_are_only_other_peoples_values(split):
    data = generate(seed=0, split=split)
    facts = {(f.user_id, f.key): f for f in data.facts}
    assert facts[("u0", "dog_name")].values == facts[("u1", "dog_name")].values == (TWIN_DOG,)
    vet0, vet1 = facts[("u0", "dog_vet")].current, facts[("u1", "dog_vet")].current
    assert vet0 and vet1 and vet0 != vet1
    for q in data.questions:
        said = " ".join(t.text for c in data.conversations_of(q.user_id) for t in c.turns)
        # The twins' shared dog name is never a leak between them; for anyone else it is.
        assert (TWIN_DOG in q.foreign) == (q.user_id not in ("u0", "u1"))
        assert not any(mentions(said, v) for v in q.foreign)
        own = {v for f in data.facts if f.user_id == q.user_id for v in f.values}
        assert not own & set(q.foreign)
    assert vet1 in next(q for q in data.questions if q.qid == "u0:dog_vet").foreign
    # Apart from the twins' dog, no two users share a value.
    values = [v for f in data.facts for v in f.values if v != TWIN_DOG]
    assert len(values) == len(set(values))


def test_small_talk_carries_no_fact_value():
    every_value = [v for slot in SLOTS for v in (*slot.values, *slot.others)]
    for text in (*CHATTER, *SMALL_TALK, CHATTER_REPLY, *REPLIES):
        assert not [v for v in every_value if mentions(text, v)], text


@pytest.mark.parametrize(
    "config, reason",
    [
        ({"sessions": 1}, "2 sessions"),
        ({"facts_per_user": 21}, "facts_per_user"),
        ({"facts_per_user": 8, "updates_per_user": 4, "deletions_per_user": 2}, "leave"),
        ({"split": "holdout"}, "split"),
        ({"users": 40}, "pool"),
    ],
)
def test_impossible_configurations_are_refused(config, reason):
    with pytest.raises(ValueError, match=reason):
        generate(**config)


# -- the test split: written apart from dev ----------------------------------------------


def test_every_kind_of_fact_has_test_phrasing_none_of_it_a_dev_template():
    assert set(TEST_PHRASING) == {slot.key for slot in SLOTS} and len(SLOTS) >= 20
    dev = {
        t
        for slot in SLOTS
        for t in (*slot.canonical, *slot.paraphrase, *slot.casual, *slot.distractor,
                  *slot.forget_paraphrase, slot.question)
    }  # fmt: skip
    dev_relations = {"sister", "brother", "friend", "cousin", "neighbour"}
    for key, p in TEST_PHRASING.items():
        assert len(p.questions) >= 2 and len(set(p.questions)) == len(p.questions), key
        texts = (*p.state, *p.no_cue, *p.correct, *p.relative, *p.negate, *p.other, *p.questions)
        assert not dev & set(texts), key
        assert all("{old}" in t or "{lv_old}" in t for t in p.correct), key
        assert all("{v}" not in t and "{lv}" not in t for t in p.negate), key
        assert all("{who}" in t for t in p.other), key
    assert not dev_relations & {word for r in RELATIONS for word in r.split()}
    assert len(JOINERS) >= 2


def test_the_test_split_has_every_family_the_issue_asks_for():
    data = generate(seed=0, split="test")
    counts = data.counts()
    assert counts["users"] == 6 and counts["conversations"] == 60 and counts["questions"] == 120
    assert {f.key for f in data.facts if f.user_id == "u3"} == set(TEST_PHRASING)  # 20 kinds
    turns = [t for _, t in data.turns()]
    assert counts["multi_fact"] > 0 and counts["no_cue"] > 0
    for t in turns:
        if t.kind == "update" and t.phrasing == "correct":
            old = next(f for f in data.facts if t.writes[0][0] == f.key and t.value in f.values)
            assert mentions(t.text, old.values[0]) and mentions(t.text, t.value or ""), t.text
        if t.kind == "delete":
            assert t.phrasing == "negate" and not mentions(t.text, t.value or ""), t.text
        if t.kind == "distractor":
            assert any(r.removeprefix("my ") in t.text.lower() for r in RELATIONS), t.text
        if len(t.writes) > 1:
            assert all(mentions(t.text, v or "") for _, v in t.writes), t.text
    assert {t.phrasing for t in turns if t.kind == "update"} == {"correct", "relative", "state"}
    # Each question kind is asked in more than one wording across users and seeds.
    wordings = {q.text for seed in (0, 1, 2) for q in generate(seed, split="test").questions}
    assert all(len(wordings & set(p.questions)) >= 2 for p in TEST_PHRASING.values())
    assert not wordings & {slot.question for slot in SLOTS}


def test_gold_writes_are_what_the_dialogue_did():
    for split in ("dev", "test"):
        data = generate(seed=4, split=split)
        gold = data.gold_writes()
        state: dict[tuple[str, str], str | None] = {}
        for conversation, turn in data.turns():
            assert gold[turn.text] == turn.writes
            for key, value in turn.writes:
                state[(conversation.user_id, key)] = value
        assert state == {(f.user_id, f.key): f.current for f in data.facts}


# -- the extractors: which phrasing each can read ---------------------------------------


def _statements():
    for slot in SLOTS:
        for value in (*slot.values, *slot.others):
            for phrasing in ("canonical", "paraphrase", "casual"):
                for template in slot.templates(phrasing):
                    yield slot, value, phrasing, template.format(v=value, lv=value.lower())
                    for prefix in UPDATE_PREFIXES:
                        yield slot, value, phrasing, update_text(prefix, template, value)


@pytest.mark.slow
def test_rules_read_only_canonical_statements_and_the_stand_in_reads_all_but_casual_ones():
    checked = 0
    for slot, value, phrasing, text in _statements():
        found = [Remember(slot.key, value, text)]
        assert rule_extract(text) == (found if phrasing == "canonical" else []), text
        assert model_extract(text) == (found if phrasing != "casual" else []), text
        checked += 1
    assert checked > 1000


def test_distractors_fool_the_rules_but_not_the_stand_in():
    for slot in SLOTS:
        for template in slot.distractor:
            for value in slot.others:
                text = template.format(v=value)
                assert rule_extract(text) == [Remember(slot.key, value, text)], text
                assert model_extract(text) == [], text


def test_forgets_canonical_for_both_paraphrased_for_the_stand_in_only():
    for slot in SLOTS:
        text = FORGET_CANONICAL.format(topic=slot.topic)
        assert rule_extract(text) == model_extract(text) == [Forget(slot.key, text)]
        for text in slot.forget_paraphrase:
            assert rule_extract(text) == [], text
            assert model_extract(text) == [Forget(slot.key, text)], text
    for text in CHATTER:
        assert rule_extract(text) == model_extract(text) == [], text


def test_on_the_default_data_rules_miss_facts_the_stand_in_finds_and_neither_leaks():
    """End to end on a small dataset: extraction into LongTermMemory, recall per question."""
    data = generate(seed=0, users=4)

    def run(extract) -> dict:
        url = f"memory://bench-{uuid.uuid4().hex}"
        for conversation in data.conversations:
            memory = LongTermMemory(url, user_id=conversation.user_id)
            for i, turn in enumerate(conversation.turns):
                apply_operations(
                    memory,
                    extract(turn.text),
                    conversation_id=conversation.conversation_id,
                    turn_id=str(i),
                )
        answers = [
            Answer(q.qid, format_facts(LongTermMemory(url, user_id=q.user_id).recall(q.text, k=3)))
            for q in data.questions
        ]
        return score(data.questions, answers).row()

    rules, stand_in = run(rule_extract), run(model_extract)
    assert rules["leakage"] == stand_in["leakage"] == 0
    assert rules["current_recall"] < stand_in["current_recall"] < 1.0  # casual ones missed
    assert rules["deleted_shown"] > stand_in["deleted_shown"] == 0.0
    assert rules["distracted"] > stand_in["distracted"] == 0.0


# -- the scorer -------------------------------------------------------------------------


def _q(qid="u0:city", status="current", answer="Porto", stale=(), foreign=(), distractors=()):
    return Question(qid, qid.split(":")[0], "home_city", "Which city?", status, answer,
                    tuple(stale), tuple(foreign), tuple(distractors))  # fmt: skip


def test_recall_is_whole_words_ignoring_case_and_spacing():
    q = _q(answer="Dr  Moreau")
    assert score([q], [Answer(q.qid, "your vet: dr moreau.")]).current_recall == 1.0
    assert score([q], [Answer(q.qid, "Dr Moreauville")]).current_recall == 0.0
    q = _q(answer="Rex")
    for text, hit in [("REX", True), ("Rexford", False), ("T-Rex!", True), ("", False)]:
        assert score([q], [Answer(q.qid, text)]).current_recall == (1.0 if hit else 0.0)


def test_an_old_value_shown_is_stale_even_beside_the_new_one():
    q = _q(status="updated", answer="Porto", stale=("Lyon",))
    both = score([q], [Answer(q.qid, "Lyon, then Porto")])
    assert (both.current_recall, both.stale_rate, both.per_question[0].stale) == (
        1.0,
        1.0,
        ("Lyon",),
    )
    assert score([q], [Answer(q.qid, "Porto")]).stale_rate == 0.0
    only_old = score([q], [Answer(q.qid, "Lyon")])
    assert (only_old.current_recall, only_old.stale_rate) == (0.0, 1.0)


def test_a_deleted_fact_is_not_recall_and_showing_it_is_stale():
    deleted = _q(qid="u0:phone", status="deleted", answer=None, stale=("555-0142",))
    current = _q(qid="u0:city", answer="Porto")
    result = score(
        [deleted, current], [Answer(deleted.qid, "I don't know"), Answer(current.qid, "Porto")]
    )
    assert (result.current_recall, result.stale_rate, result.deleted_shown) == (1.0, 0.0, 0.0)
    assert result.per_question[0].recalled is None
    shown = score([deleted, current], [Answer(deleted.qid, "555-0142"), Answer(current.qid, "?")])
    assert (shown.current_recall, shown.stale_rate, shown.deleted_shown) == (0.0, 1.0, 1.0)


def test_leakage_counts_questions_showing_another_users_value():
    a = _q(qid="u0:vet", answer="Dr Moreau", foreign=("Dr Haddad", "Ghent"))
    b = _q(qid="u0:city", answer="Porto", foreign=("Dr Haddad", "Ghent"))
    result = score([a, b], [Answer(a.qid, "Dr Moreau or Dr Haddad"), Answer(b.qid, "Ghent, Ghent")])
    assert result.leakage == 2 and result.per_question[0].leaked == ("Dr Haddad",)
    clean = score([a, b], [Answer(a.qid, "Dr Moreau"), Answer(b.qid, "Porto")])
    assert clean.leakage == 0


def test_distractors_and_tokens():
    q = _q(distractors=("Dundee",))
    r = _q(qid="u1:city")
    result = score([q, r], [Answer(q.qid, "Dundee?", tokens=30), Answer(r.qid, "x", tokens=10)])
    assert result.distracted == 0.5 and result.tokens_per_question == 20.0


def test_every_question_must_be_answered_exactly_once():
    q, r = _q(), _q(qid="u1:city")
    with pytest.raises(ValueError, match="missing"):
        score([q, r], [Answer(q.qid, "Porto")])
    with pytest.raises(ValueError, match="unknown"):
        score([q], [Answer(q.qid, "Porto"), Answer("u9:x", "?")])
    with pytest.raises(ValueError, match="twice"):
        score([q], [Answer(q.qid, "Porto"), Answer(q.qid, "Porto")])
    empty = score([], [])
    assert (empty.current_recall, empty.stale_rate, empty.tokens_per_question) == (0.0, 0.0, 0.0)
