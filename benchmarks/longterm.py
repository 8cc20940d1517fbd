"""The long-term memory benchmark: every memory policy on one seeded multi-session dataset.

The data (:mod:`benchmarks.longterm_data`): users talk to an assistant over several
conversations, planting facts, updating and withdrawing some, restating some in other words,
mentioning other people's facts, chatting. Then each user is asked one question per fact, in a
new conversation. Every policy is run through the real stack (``Session`` over SQLite, the
swarm engine, its prompt hook), with an offline assistant whose replies in the dialogue are the
dataset's own lines.

Policies (the short-term ones are given every session of a user as **one** thread, which favours
them: over separate conversations they would see nothing at all):

=============================  ==================================================================
``buffer``                     the whole thread (every session) in every prompt
``window:20``                  the last 20 messages of the thread
``summary``                    ``SummaryMemory(ExtractiveSummaryModel(), keep_last=10)``: a generic
                               extractive summariser, not one written for this data
``context``                    ``context_variables`` filled by the extraction *rules*, shown by
                               the instructions; no earlier text
``long-term (rules)``          ``Session(long_term=True, extract=rule_extract)``, one conversation
                               per session, recall ``k`` facts into the prompt
``long-term (model stand-in)`` the same with the *scripted* structured-extraction stand-in (or a
                               real model with ``OPENAI_API_KEY``)
``raw retrieval (BM25)``       no extraction: the ``k`` past user messages most like the question
``hybrid``                     long-term (model stand-in) plus the ``k`` best raw messages
=============================  ==================================================================

Measured per policy: **recall** (current value in the prompt, over questions about facts still
true), **answered** and **stale answers** (what an answer built from that prompt gives:
:mod:`benchmarks.longterm_answer`, an offline stand-in unless a real model answers),
**stale shown** (an old value anywhere in the prompt), **leakage** (another user's value in the
prompt or answer: must be 0), **tokens per question** (the prompt of the answering call) and
**ms per turn** (wall time of a dialogue turn: load, run, extraction, save, memory writes).

Example:
    >>> out = run_longterm(quick=True)
    >>> sorted(out["policies"]) == sorted(POLICIES)
    True
    >>> all(row["leakage"] == 0 for row in out["policies"].values())
    True
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from swarmgraph.graph import Agent, Response, ScriptedChatModel, Swarm
from swarmgraph.memory import (
    BufferMemory,
    LongTermMemory,
    MemoryPolicy,
    Session,
    SummaryMemory,
    WindowMemory,
)
from swarmgraph.memory.extract import extract_context
from swarmgraph.memory.extractive_summary import ExtractiveSummaryModel
from swarmgraph.memory.fact_search import rank
from swarmgraph.memory.store import NO_MESSAGES

from benchmarks.longterm_answer import QUESTIONS, answer
from benchmarks.longterm_data import PHRASINGS, Dataset, generate
from benchmarks.longterm_extract import (
    BenchFacts,
    Operation,
    Remember,
    model_extract,
    operations,
    rule_extract,
)
from benchmarks.longterm_score import Answer, Score, score

POLICIES = (
    "buffer",
    "window:20",
    "summary",
    "context",
    "long-term (rules)",
    "long-term (model stand-in)",
    "raw retrieval (BM25)",
    "hybrid",
)
INSTRUCTIONS = "You are a helpful assistant. Answer from what you know about the user."
RAW_HEADER = "Earlier, the user said (oldest first; later messages may correct earlier ones):"
#: The issue's target: recall >= 90% of current facts at <= 20% of buffer's tokens, no
#: leakage, <= 5% stale answers.
TARGET = {"recall": 0.9, "share_of_buffer": 0.2, "leakage": 0, "stale_answers": 0.05}


@dataclass
class PolicyRun:
    """What one policy did: per question, the prompt the answering call got and its answer;
    the wall time of each dialogue turn."""

    prompts: dict[str, list[BaseMessage]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    turn_s: list[float] = field(default_factory=list)


class Assistant:
    """The chat model of the runs: in the dialogue it says the dataset's reply to the message
    (the assistant's side is data), to a question it answers with ``answer_model`` if given,
    else with the offline answering stand-in. It records the prompt of each question."""

    def __init__(self, data: Dataset, answer_model: Any = None) -> None:
        self.replies = {t.text: t.reply for _, t in data.turns()}
        self.answer_model = answer_model
        self.asked: list[list[BaseMessage]] = []
        self.model = ScriptedChatModel(respond=self._respond)

    def _respond(self, messages: list[BaseMessage]) -> str:
        said = str(messages[-1].content)
        if said in QUESTIONS:
            self.asked.append(list(messages))
            if self.answer_model is not None:
                return str(self.answer_model.invoke(messages).content)
            return answer(messages)
        return self.replies.get(said, "OK.")

    def swarm(self) -> Swarm:
        if len(self.model.calls) > 50:
            self.model.reset()  # it records every call; the runs keep what they need
        return Swarm(chat_model=self.model)


def _timed(turns: list[float], run: Callable[[], Any]) -> None:
    start = time.perf_counter()
    run()
    turns.append(time.perf_counter() - start)


def _shown(session: Session) -> list[BaseMessage]:
    """What ``session``'s policy would show on its next turn (its load and fold, unsaved)."""
    policy = session.memory
    cid = session.conversation_id
    meta = session.store.load(cid, window=NO_MESSAGES).meta if policy.stateful else {}
    return policy.fold(session.store.load(cid, window=policy.window(meta))).shown


# -- the short-term policies: one thread per user ------------------------------------------
def _run_thread(
    data: Dataset, url: str, policy: Callable[[], MemoryPolicy], assistant: Assistant
) -> PolicyRun:
    run = PolicyRun()
    agent = Agent(name="Assistant", instructions=INSTRUCTIONS)
    for user in data.users:
        session = Session(f"{user}-thread", url=url, persist=("messages",), memory=policy())
        for conversation in data.conversations_of(user):
            for turn in conversation.turns:
                _timed(
                    run.turn_s, lambda s=session, t=turn: s.run(assistant.swarm(), agent, t.text)
                )
        history = _shown(session)
        for q in (q for q in data.questions if q.user_id == user):
            reply = cast(Response, assistant.swarm().run(agent, [*history, HumanMessage(q.text)]))
            run.prompts[q.qid] = assistant.asked[-1]
            run.answers[q.qid] = str(reply.messages[-1]["content"])
    return run


def _context_instructions(context: dict) -> str:
    facts = [f"- {key}: {value}" for key, value in sorted(context.items()) if value]
    if not facts:
        return INSTRUCTIONS
    return "\n".join([INSTRUCTIONS, "", "What you know about the user (context):", *facts])


def _context_update(ops: Sequence[Operation]) -> dict[str, Any]:
    update: dict[str, Any] = {}
    for op in ops:
        update[op.key] = op.value if isinstance(op, Remember) else None
    return update


def _run_context(data: Dataset, url: str, assistant: Assistant) -> PolicyRun:
    run = PolicyRun()
    agent = Agent(name="Assistant", instructions=_context_instructions)
    for user in data.users:
        session = Session(f"{user}-context", url=url, persist=("context",))
        for conversation in data.conversations_of(user):
            for turn in conversation.turns:

                def one(s: Session = session, t: Any = turn) -> None:
                    update = _context_update(rule_extract(t.text))
                    s.run(assistant.swarm(), agent, t.text, context_variables=update)

                _timed(run.turn_s, one)
        for q in (q for q in data.questions if q.user_id == user):
            reply = session.run(assistant.swarm(), agent, q.text)
            run.prompts[q.qid] = assistant.asked[-1]
            run.answers[q.qid] = str(reply.messages[-1]["content"])
    return run


# -- raw retrieval, long-term memory, and the two together ---------------------------------
def raw_retrieval(url: str, data: Dataset, user: str, k: int) -> Callable[..., str | None]:
    """A ``prompt_context`` hook: the ``k`` past user messages of ``user`` (every stored
    conversation of theirs) that BM25 ranks highest for the last user message."""
    from swarmgraph.memory.backends import open_store
    from swarmgraph.memory.long_term_turn import last_user_text

    store = open_store(url)
    said = [
        str(m.content)
        for c in data.conversations_of(user)
        for m in store.messages(c.conversation_id)
        if m.type == "human"
    ]

    def hook(agent: Agent, messages: Sequence[BaseMessage]) -> str | None:
        best = sorted(i for i, _ in rank(last_user_text(messages), said)[:k])
        if not best:
            return None
        return "\n".join([RAW_HEADER, *(f"- {said[i]}" for i in best)])

    return hook


def _run_sessions(
    data: Dataset,
    url: str,
    assistant: Assistant,
    *,
    extract: Callable[[str], list[Operation]] | None,
    k: int,
    raw: int = 0,
) -> PolicyRun:
    """One Session per conversation (long-term memory on when ``extract`` is given), then each
    question in a new conversation: recall from memory, and ``raw`` retrieved messages."""
    run = PolicyRun()
    agent = Agent(name="Assistant", instructions=INSTRUCTIONS)
    memory = LongTermMemory(url, user_id="-") if extract is not None else None
    for user in data.users:
        kwargs: dict[str, Any] = {}
        if memory is not None:
            kwargs = {"long_term": memory.for_user(user), "recall": k}
        for conversation in data.conversations_of(user):
            session = Session(conversation.conversation_id, url=url, extract=extract, **kwargs)
            for turn in conversation.turns:
                _timed(
                    run.turn_s, lambda s=session, t=turn: s.run(assistant.swarm(), agent, t.text)
                )
        hook = raw_retrieval(url, data, user, raw or k) if raw or memory is None else None
        for q in (q for q in data.questions if q.user_id == user):
            asking = Session(f"{user}-ask-{q.key}", url=url, **kwargs)
            extra = {"prompt_context": hook} if hook is not None else {}
            reply = asking.run(assistant.swarm(), agent, q.text, **extra)
            run.prompts[q.qid] = assistant.asked[-1]
            run.answers[q.qid] = str(reply.messages[-1]["content"])
    return run


def model_extractor(model: Any) -> Callable[[str], list[Operation]]:
    """An extractor that asks a real chat model for :class:`BenchFacts` (structured output)."""

    def extract(text: str) -> list[Operation]:
        return operations(extract_context(text, BenchFacts, model=model), text)

    return extract


# -- the run --------------------------------------------------------------------------------
def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _row(data: Dataset, run: PolicyRun, label: str) -> tuple[dict[str, Any], Score, Score]:
    tokens = {qid: count_tokens_approximately(p) for qid, p in run.prompts.items()}
    shown = score(
        data.questions, [Answer(q, _prompt_text(p), tokens[q]) for q, p in run.prompts.items()]
    )
    said = score(data.questions, [Answer(q, a, tokens[q]) for q, a in run.answers.items()])
    row = {
        "label": label,
        "recall": shown.current_recall,
        "answered": said.current_recall,
        "stale_answers": said.stale_rate,
        "stale_shown": shown.stale_rate,
        "deleted_answered": said.deleted_shown,
        "leakage": shown.leakage + said.leakage,
        "distracted": shown.distracted,
        "tokens_per_question": shown.tokens_per_question,
        "ms_per_turn": statistics.fmean(run.turn_s) * 1000 if run.turn_s else 0.0,
    }
    return row, shown, said


def best_phrasing(data: Dataset) -> dict[str, str]:
    """For each question about a fact still true: the most readable phrasing its current value
    was ever stated in (canonical, else paraphrase, else casual)."""
    said: dict[tuple[str, str, str], set[str]] = {}
    for conversation, turn in data.turns():
        if turn.kind in ("plant", "update", "restate") and turn.phrasing:
            key = (conversation.user_id, turn.key or "", turn.value or "")
            said.setdefault(key, set()).add(turn.phrasing)
    out = {}
    for q in data.questions:
        if q.answer is not None:
            found = said.get((q.user_id, q.key, q.answer), set())
            out[q.qid] = next((p for p in PHRASINGS if p in found), "casual")
    return out


def run_longterm(
    seed: int = 0,
    *,
    quick: bool = False,
    k: int = 3,
    answer_model: Any = None,
    extract_model: Any = None,
    plot_path: str | None = None,
    policies: Sequence[str] = POLICIES,
) -> dict[str, Any]:
    """Every policy on ``generate(seed)`` (``quick``: 2 users, 3 sessions); see the module
    docstring. ``answer_model``: a real chat model answers the questions (else the offline
    stand-in); ``extract_model``: a real model extracts for ``long-term (model ...)`` and
    ``hybrid`` (else the scripted stand-in). Returns the table (``policies``), where each
    policy fails (``by_phrasing``, ``failures``), the target's verdict and the Pareto front."""
    data = generate(seed, users=2, sessions=3) if quick else generate(seed)
    extractor = model_extractor(extract_model) if extract_model is not None else model_extract
    model_label = "real model" if extract_model is not None else "scripted stand-in"
    answer_label = "real model" if answer_model is not None else "answering stand-in"
    plans: dict[str, tuple[str, Callable[[str, Assistant], PolicyRun]]] = {
        "buffer": ("every message", lambda u, a: _run_thread(data, u, BufferMemory, a)),
        "window:20": ("last 20 messages", lambda u, a: _run_thread(data, u, _window20, a)),
        "summary": (
            "ExtractiveSummaryModel (generic) + last 10",
            lambda u, a: _run_thread(data, u, _summary, a),
        ),
        "context": ("rules -> context_variables", lambda u, a: _run_context(data, u, a)),
        "long-term (rules)": (
            f"rules, recall k={k}",
            lambda u, a: _run_sessions(data, u, a, extract=rule_extract, k=k),
        ),
        "long-term (model stand-in)": (
            f"{model_label}, recall k={k}",
            lambda u, a: _run_sessions(data, u, a, extract=extractor, k=k),
        ),
        "raw retrieval (BM25)": (
            f"top {k} past user messages",
            lambda u, a: _run_sessions(data, u, a, extract=None, k=k),
        ),
        "hybrid": (
            f"long-term ({model_label}) k={k} + top {k} raw",
            lambda u, a: _run_sessions(data, u, a, extract=extractor, k=k, raw=k),
        ),
    }
    unknown = sorted(set(policies) - set(plans))
    if unknown:
        raise ValueError(f"unknown policies {unknown}; choose from {list(plans)}")
    phrasing = best_phrasing(data)
    rows: dict[str, dict[str, Any]] = {}
    failures: dict[str, list[dict[str, Any]]] = {}
    by_phrasing: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in policies:
            label, plan = plans[name]
            url = "sqlite:///" + os.path.join(tmp, f"{POLICIES.index(name)}.db")
            assistant = Assistant(data, answer_model)
            run = plan(url, assistant)
            row, shown, said = _row(data, run, label)
            rows[name] = row
            by_phrasing[name] = _recall_by_phrasing(shown, phrasing)
            failures[name] = _failures(data, run, shown, said)
    buffer_tokens = rows["buffer"]["tokens_per_question"] if "buffer" in rows else None
    for row in rows.values():
        row["share_of_buffer"] = row["tokens_per_question"] / buffer_tokens if buffer_tokens else 0
    meets = [name for name, row in rows.items() if buffer_tokens and _meets(row)]
    out: dict[str, Any] = {
        "phrasing_counts": {p: list(phrasing.values()).count(p) for p in PHRASINGS},
        "seed": seed,
        "quick": quick,
        "k": k,
        "counts": data.counts(),
        "answers_by": answer_label,
        "extraction_by": model_label,
        "policies": rows,
        "by_phrasing": by_phrasing,
        "failures": failures,
        "pareto": pareto_front(rows),
        "target": dict(TARGET),
        "meets_target": meets,
    }
    if plot_path:
        plot_recall_vs_tokens(rows, plot_path)
    return out


def _window20() -> MemoryPolicy:
    return WindowMemory(20)


def _summary() -> MemoryPolicy:
    return SummaryMemory(ExtractiveSummaryModel(), keep_last=10)


def _meets(row: Mapping[str, Any]) -> bool:
    return bool(
        row["recall"] >= TARGET["recall"]
        and row["share_of_buffer"] <= TARGET["share_of_buffer"]
        and row["leakage"] <= TARGET["leakage"]
        and row["stale_answers"] <= TARGET["stale_answers"]
    )


def _recall_by_phrasing(shown: Score, phrasing: Mapping[str, str]) -> dict[str, float | None]:
    """Recall (in the prompt) of questions whose value was best stated in each phrasing
    (``None``: no such question)."""
    out: dict[str, float | None] = {}
    for kind in PHRASINGS:
        hits = [r.recalled for r in shown.per_question if phrasing.get(r.qid) == kind]
        out[kind] = sum(bool(h) for h in hits) / len(hits) if hits else None
    return out


def _failures(data: Dataset, run: PolicyRun, shown: Score, said: Score) -> list[dict[str, Any]]:
    """Each question a policy got wrong: not recalled, or answered with an old value."""
    by_qid = {q.qid: q for q in data.questions}
    out = []
    for seen, got in zip(shown.per_question, said.per_question, strict=True):
        q = by_qid[seen.qid]
        why = []
        if seen.recalled is False:
            why.append("not in prompt")
        if got.stale:
            why.append(f"answered old value {', '.join(got.stale)}")
        if seen.leaked or got.leaked:
            why.append("another user's value")
        if why:
            out.append(
                {
                    "qid": q.qid,
                    "status": q.status,
                    "gold": q.answer,
                    "answer": run.answers[q.qid],
                    "why": "; ".join(why),
                }
            )
    return out


def pareto_front(rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Policies no other beats on both recall (higher) and tokens per question (fewer).

    Example:
        >>> pareto_front({"a": {"recall": 1.0, "tokens_per_question": 100},
        ...               "b": {"recall": 0.9, "tokens_per_question": 10},
        ...               "c": {"recall": 0.8, "tokens_per_question": 50}})
        ['a', 'b']
    """
    front = []
    for name, r in rows.items():
        beaten = any(
            o["recall"] >= r["recall"]
            and o["tokens_per_question"] <= r["tokens_per_question"]
            and (o["recall"], o["tokens_per_question"]) != (r["recall"], r["tokens_per_question"])
            for o in rows.values()
        )
        if not beaten:
            front.append(name)
    return front


def plot_recall_vs_tokens(rows: Mapping[str, Mapping[str, Any]], path: str) -> None:
    """Recall against tokens per question (log scale), one point per policy, the Pareto front
    joined in green, the target's corner shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    front = set(pareto_front(rows))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    low = max(1.0, min(r["tokens_per_question"] for r in rows.values()) / 3)
    buffer = rows.get("buffer", {}).get("tokens_per_question")
    if buffer:
        ax.fill_between(
            [low, buffer * TARGET["share_of_buffer"]],
            TARGET["recall"],
            1.05,
            color="tab:green",
            alpha=0.08,
            label=f"target: recall >= {TARGET['recall']:.0%} at <= 20% of buffer's tokens",
        )
    placed: list[tuple[float, float]] = []  # labels already drawn: the next near one goes lower
    for name, r in sorted(rows.items(), key=lambda item: item[1]["tokens_per_question"]):
        x, y = max(r["tokens_per_question"], 1), r["recall"]
        ax.scatter([x], [y], s=60, color="tab:green" if name in front else "tab:grey", zorder=3)
        near = sum(abs(y - py) < 0.03 and 0.5 < x / px < 2 for px, py in placed)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(6, 4 - 12 * near), fontsize=8)
        placed.append((x, y))
    line = sorted(
        (max(r["tokens_per_question"], 1), r["recall"]) for n, r in rows.items() if n in front
    )
    ax.plot([p[0] for p in line], [p[1] for p in line], color="tab:green", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlim(low, max(r["tokens_per_question"] for r in rows.values()) * 3)
    ax.set_xlabel("tokens sent per question (log scale)")
    ax.set_ylabel("recall of current facts (value in the prompt)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Memory policies: recall against tokens (green: Pareto front)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def format_rows(rows: Mapping[str, Mapping[str, Any]], *, timing: bool = True) -> str:
    """The table as plain text, every policy (the losers too); ``timing=False`` leaves out
    ms per turn (the one column that changes from run to run).

    Example:
        >>> text = format_rows({"buffer": {"recall": 1.0, "answered": 0.9, "stale_answers": 0.0,
        ...     "stale_shown": 1.0, "leakage": 0, "tokens_per_question": 1200.0,
        ...     "share_of_buffer": 1.0, "ms_per_turn": 4.2}})
        >>> print(text.replace(" | ", "|"))  # doctest: +NORMALIZE_WHITESPACE
        policy|recall|answered|stale answers|stale shown|leakage|tokens/q|of buffer|ms/turn
        buffer|  100%|     90%|           0%|       100%|      0|   1,200|   100.0%|    4.2
    """
    header = [
        "policy",
        "recall",
        "answered",
        "stale answers",
        "stale shown",
        "leakage",
        "tokens/q",
        "of buffer",
        "ms/turn",
    ][: None if timing else -1]
    body = [
        [
            name,
            f"{r['recall']:.0%}",
            f"{r['answered']:.0%}",
            f"{r['stale_answers']:.0%}",
            f"{r['stale_shown']:.0%}",
            str(r["leakage"]),
            f"{r['tokens_per_question']:,.0f}",
            f"{r['share_of_buffer']:.1%}",
            f"{r['ms_per_turn']:.1f}",
        ][: None if timing else -1]
        for name, r in rows.items()
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), *(line(r) for r in body)])
