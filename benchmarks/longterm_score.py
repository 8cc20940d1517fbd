"""Scoring a memory policy on the long-term benchmark's questions.

A policy answers each :class:`~benchmarks.longterm_data.Question` with an :class:`Answer`:
the text it would show or say for that question (a model's answer, or the memories and
messages it put in the prompt) and the tokens it sent to get there. :func:`score` checks
that text against the gold data, value by value, as whole words and ignoring case:

=======================  ===================================================================
``current_recall``       questions about a fact that is still true (current or updated)
                         whose current value is in the text, over all such questions
``stale_rate``           questions about an updated or deleted fact whose text holds an old
                         value (superseded, or the deleted one), over all such questions; a
                         text holding both the old and the new value counts as stale (a
                         reader cannot tell which is true)
``deleted_shown``        the part of ``stale_rate`` about deleted facts: deleted questions
                         whose deleted value is shown, over deleted questions
``superseded_as_current`` updated questions whose text holds an old value and *not* the
                         current one (a reader has only the old value), over updated
                         questions
``accuracy``             questions answered right: the current value and no old one, or,
                         for a deleted fact, no deleted value (abstaining is correct)
``leakage``              questions whose text holds another user's value (never a value
                         this user also has or said), a count: it must be 0
``distracted``           questions whose text holds another person's value of the same kind
                         ("my sister's dog Bruno"), over all questions
``tokens_per_question``  mean tokens the policy sent per question
=======================  ===================================================================

The dev split's other question kinds are scored apart, by :func:`score_kinds`: a
``temporal`` question ("before Porto?") or an ``aggregate`` one ("how many cities?") is
*in prompt* when every value it needs is; answered right when the answer says the earlier
value, or the count; an ``abstain`` question (a fact never mentioned) is answered right
when the answer gives none of the values of the dataset (the user's own or anyone's).

Example:
    >>> from benchmarks.longterm_data import Question
    >>> q = Question("u0:city", "u0", "home_city", "Which city do I live in?", "updated",
    ...              answer="Porto", stale=("Lyon",), foreign=("Ghent",))
    >>> result = score([q], [Answer("u0:city", "You live in Porto.", tokens=40)])
    >>> result.current_recall, result.stale_rate, result.leakage, result.tokens_per_question
    (1.0, 0.0, 0, 40.0)
    >>> score([q], [Answer("u0:city", "Lyon or Porto; Ghent?", tokens=10)]).row()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'questions': 1, 'current_recall': 1.0, 'stale_rate': 1.0, 'deleted_shown': 0.0,
     'superseded_as_current': 0.0, 'accuracy': 0.0, 'leakage': 1, 'distracted': 0.0,
     'tokens_per_question': 10.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchmarks.longterm_data import Question, mentions


@dataclass(frozen=True)
class Answer:
    """What a policy showed or said for question ``qid``, and the tokens it sent for it."""

    qid: str
    text: str
    tokens: int = 0


@dataclass(frozen=True)
class QuestionScore:
    """One question's outcome. ``recalled`` is ``None`` for a deleted fact (nothing to
    recall); ``stale`` lists the old values shown, ``leaked`` the other users' values."""

    qid: str
    status: str
    recalled: bool | None
    stale: tuple[str, ...]
    leaked: tuple[str, ...]
    distracted: bool
    tokens: int
    superseded_as_current: bool = False

    @property
    def correct(self) -> bool:
        """The current value and no old one; for a deleted fact, no deleted value."""
        return not self.stale and self.recalled is not False


@dataclass(frozen=True)
class Score:
    """A policy's result over a set of questions (see the module docstring)."""

    questions: int
    current_recall: float
    stale_rate: float
    deleted_shown: float
    leakage: int
    distracted: float
    tokens_per_question: float
    per_question: tuple[QuestionScore, ...]
    superseded_as_current: float = 0.0
    accuracy: float = 0.0

    def row(self) -> dict[str, float | int]:
        """The figures as one table row."""
        return {
            "questions": self.questions,
            "current_recall": self.current_recall,
            "stale_rate": self.stale_rate,
            "deleted_shown": self.deleted_shown,
            "superseded_as_current": self.superseded_as_current,
            "accuracy": self.accuracy,
            "leakage": self.leakage,
            "distracted": self.distracted,
            "tokens_per_question": self.tokens_per_question,
        }


def _share(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def score(questions: Sequence[Question], answers: Iterable[Answer]) -> Score:
    """Score ``answers`` (one per question, any order) against ``questions``.

    Raises ``ValueError`` when a question has no answer, an answer has no question, or a
    question is answered twice: a runner that skips questions must not look better.
    """
    by_qid: dict[str, Answer] = {}
    for answer in answers:
        if answer.qid in by_qid:
            raise ValueError(f"question {answer.qid!r} answered twice")
        by_qid[answer.qid] = answer
    known = {q.qid for q in questions}
    unknown = sorted(set(by_qid) - known)
    missing = sorted(known - set(by_qid))
    if unknown or missing:
        raise ValueError(
            f"answers do not match the questions: missing {missing}, unknown {unknown}"
        )
    results = []
    for q in questions:
        answer = by_qid[q.qid]
        text = answer.text
        recalled = None if q.answer is None else mentions(text, q.answer)
        stale = tuple(v for v in q.stale if mentions(text, v))
        results.append(
            QuestionScore(
                qid=q.qid,
                status=q.status,
                recalled=recalled,
                stale=stale,
                superseded_as_current=q.status == "updated" and bool(stale) and not recalled,
                leaked=tuple(v for v in q.foreign if mentions(text, v)),
                distracted=any(mentions(text, v) for v in q.distractors),
                tokens=int(answer.tokens),
            )
        )
    live = [r for r in results if r.recalled is not None]
    changed = [r for r, q in zip(results, questions, strict=True) if q.stale]
    deleted = [r for r in results if r.status == "deleted"]
    updated = [r for r in results if r.status == "updated"]
    return Score(
        questions=len(results),
        current_recall=_share(sum(bool(r.recalled) for r in live), len(live)),
        stale_rate=_share(sum(bool(r.stale) for r in changed), len(changed)),
        deleted_shown=_share(sum(bool(r.stale) for r in deleted), len(deleted)),
        leakage=sum(bool(r.leaked) for r in results),
        distracted=_share(sum(r.distracted for r in results), len(results)),
        tokens_per_question=_share(sum(r.tokens for r in results), len(results)),
        per_question=tuple(results),
        superseded_as_current=_share(sum(r.superseded_as_current for r in updated), len(updated)),
        accuracy=_share(sum(r.correct for r in results), len(results)),
    )


#: The other question kinds' figures (:func:`score_kinds`), as table columns.
KIND_METRICS = (
    "temporal_in_prompt",
    "temporal_accuracy",
    "aggregate_in_prompt",
    "aggregate_accuracy",
    "abstained",
)


def score_kinds(
    questions: Sequence[Question],
    shown: dict[str, str],
    said: dict[str, str],
    values: Iterable[str] = (),
) -> dict[str, float]:
    """The dev split's ``temporal``, ``aggregate`` and ``abstain`` questions (the others in
    ``questions`` are skipped): ``shown`` and ``said`` map each one's qid to its prompt's text
    and its answer; ``values``: every value of the dataset (an ``abstain`` answer that gives
    one did not abstain). A kind the data does not ask gives ``nan``.

    Example:
        >>> from benchmarks.longterm_data import Question
        >>> t = Question("u0:b", "u0", "home_city", "Which city did I live in before Porto?",
        ...              "updated", "Lyon", (), (), kind="temporal", needs=("Lyon",))
        >>> n = Question("u0:n", "u0", "", "Which gym do I go to?", "deleted", None, (), (),
        ...              kind="abstain")
        >>> out = score_kinds([t, n], {"u0:b": "Lyon, then Porto", "u0:n": ""},
        ...                   {"u0:b": "Porto", "u0:n": "Lyon"}, values=["Lyon", "Porto"])
        >>> out["temporal_in_prompt"], out["temporal_accuracy"], out["abstained"]
        (1.0, 0.0, 0.0)
    """
    known = list(values)
    hits: dict[str, list[bool]] = {m: [] for m in KIND_METRICS}
    for q in questions:
        if q.kind in ("temporal", "aggregate"):
            hits[f"{q.kind}_in_prompt"].append(all(mentions(shown[q.qid], v) for v in q.needs))
            assert q.answer is not None
            hits[f"{q.kind}_accuracy"].append(mentions(said[q.qid], q.answer))
        elif q.kind == "abstain":
            hits["abstained"].append(not any(mentions(said[q.qid], v) for v in known))
    return {m: sum(h) / len(h) if h else float("nan") for m, h in hits.items()}
