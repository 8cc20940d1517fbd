"""How long-term recall's cost grows with the facts a user has: CPU ms per ``recall(k=3)`` at
10, 100, 1,000 and 10,000 facts, and a ``Session`` turn at 10 vs 10,000 facts (issue 39).

One user's facts are synthetic and deterministic (:func:`facts`): a kind of fact among 40
(``dog_name``, ``home_city``, ...) numbered apart, a value of two made-up words, and the
sentence that stated it; they are stored in bulk through the store's own atomic write, so
the long-term index (SQLite's FTS5, the in-process index, the vector index) is filled as
``remember`` fills it. Each recall asks one of a fixed set of questions (:data:`QUESTIONS`),
some naming a kind of fact (their words match from a fortieth to an eighth of the facts, and
every match is scored, so the cost of these grows with the count), some a made-up word
(matching a handful), one with no searchable word (the newest facts).

Rows: ``memory://`` (lexical, in-process BM25), ``sqlite`` (lexical, FTS5), the same two
asked only :data:`RARE` questions (``(rare words)``: what the index itself costs, without
more matches to score), ``sqlite+wordllama`` (hybrid: FTS5 fused with the store's vector
top k, which sqlite-vec finds by comparing every vector; when the ``embeddings-local`` extra
is installed), and a ``Session`` turn on SQLite (recall into the prompt, a scripted model,
the turn's save). Time is this process's CPU
(``time.process_time``), the median of interleaved batches (:mod:`benchmarks.timing`).

Targets: recall at 10,000 facts at most 3x recall at 1,000 on every row; a Session turn at
10,000 facts at most 2x one at 10.

Run: ``python -m benchmarks.recall_growth [--sizes 10 100 1000 10000] [--json PATH]``.

Example:
    >>> out = run_recall_growth(sizes=(10, 100), rows=("memory",), turn_sizes=())
    >>> sorted(out["recall_ms"]["memory"]) == ["10", "100"]
    True
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.fact import Fact, namespace_label
from swarmgraph.memory.fact_namespaces import namespaces
from swarmgraph.memory.fact_recall import indexed_text
from swarmgraph.memory.long_term_store import close_long_term_store

from benchmarks.timing import interleaved

SIZES = (10, 100, 1_000, 10_000)
KINDS = [
    "dog_name",
    "home_city",
    "employer",
    "phone",
    "car_model",
    "favourite_food",
    "partner_name",
    "hometown",
    "birthday",
    "allergy",
    "doctor",
    "gym",
    "bank",
    "school",
    "university",
    "hobby",
    "sport",
    "team",
    "instrument",
    "language",
    "cat_name",
    "coffee_order",
    "shoe_size",
    "blood_type",
    "passport_country",
    "nickname",
    "favourite_book",
    "favourite_film",
    "favourite_band",
    "bike_model",
    "laptop",
    "phone_model",
    "dentist",
    "landlord",
    "neighbour",
    "manager",
    "colleague",
    "child_name",
    "plant",
    "pet_vet",
]
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ze",
    "ba",
    "de",
    "fi",
    "go",
    "hu",
    "ja",
    "ke",
]
QUESTIONS = (
    "What is my dog's name?",
    "Which city is my home city?",
    "Who is my employer these days?",
    "Tell me about kalomi",
    "Is rusati my favourite food?",
    "what is it?",
)


def word(n: int) -> str:
    """A made-up word for ``n`` (three syllables; distinct for distinct ``n`` below 4,096)."""
    return "".join(SYLLABLES[(n >> shift) & 15] for shift in (8, 4, 0))


def facts(count: int, user: str) -> list[Fact]:
    """``count`` deterministic facts of ``user`` (see the module docstring).

    Example:
        >>> [f.line() for f in facts(2, "ming")]
        ['dog_name_0: kakaka kakavo', 'home_city_1: kakalo kamigo']
    """
    out = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        value = f"{word(i % 4096)} {word((i * 37 + 7) % 4096)}"
        said = f"My {kind.replace('_', ' ')} is {value}."
        out.append(Fact(f"{kind}_{i}", value, "user", user_id=user, text=said))
    return out


def fill(memory: LongTermMemory, count: int) -> None:
    """Store ``count`` facts for ``memory``'s user in bulk (current value and history entry
    per fact, as ``remember`` writes them), 500 per transaction."""
    current, history = namespaces(namespace_label(memory.user_id), "user", None)
    store = memory._store
    stated = facts(count, memory.user_id)
    for start in range(0, count, 500):
        ops = []
        for n, fact in enumerate(stated[start : start + 500], start=start):
            record = fact.to_record()
            ops.append(PutOp(history, f"w-{n}", record, index=False))
            ops.append(PutOp(current, fact.key, {**record, "memory": indexed_text(fact)}))
        store.write(ops)


#: Questions whose words each name a handful of facts however many there are (a made-up
#: word; no word at all): the ``(rare words)`` rows, where cost should not follow the count.
RARE = ("Tell me about kalomi", "Is rusati what I said?", "what is it?")


def _open(row: str, folder: Path, size: int) -> tuple[LongTermMemory, str]:
    row = row.removesuffix(" (rare words)")
    if row == "memory":
        url = f"memory://recall-growth-{size}-{time.monotonic_ns()}"
        return LongTermMemory(url, user_id="ming"), url
    url = f"sqlite:///{folder / f'{row}-{size}.db'}"
    if row == "sqlite":
        return LongTermMemory(url, user_id="ming"), url
    from swarmgraph.memory.local_embeddings import WordLlamaEmbeddings

    return LongTermMemory(url, user_id="ming", embeddings=WordLlamaEmbeddings()), url


def _asker(memory: LongTermMemory, questions: Sequence[str]) -> Callable[[], object]:
    turn = iter(range(10**9))
    return lambda: memory.recall(questions[next(turn) % len(questions)], k=3)


def _turner(url: str, memory: LongTermMemory) -> Callable[[], object]:
    from swarmgraph.graph import Agent, ScriptedChatModel, Swarm

    from swarmgraph import Session

    agent = Agent(name="Triage")
    swarm = Swarm(chat_model=ScriptedChatModel(["Noted."] * 10_000))
    turn = iter(range(10**9))

    def one() -> object:
        n = next(turn)  # a new conversation each time: the history does not grow
        session = Session(f"c-{n}", url=url, user_id=memory.user_id, long_term=memory)
        return session.run(swarm, agent, QUESTIONS[n % len(QUESTIONS)])

    return one


def available_rows() -> tuple[str, ...]:
    """The rows this environment can run (WordLlama's only with its extra installed)."""
    try:
        import wordllama  # noqa: F401
    except ImportError:
        return LEXICAL
    return (*LEXICAL, "sqlite+wordllama")


LEXICAL = ("memory", "sqlite", "memory (rare words)", "sqlite (rare words)")


def run_recall_growth(
    sizes: Sequence[int] = SIZES,
    *,
    rows: Sequence[str] | None = None,
    turn_sizes: Sequence[int] = (10, 10_000),
    repeat: int = 5,
) -> dict[str, Any]:
    """CPU ms per recall, per row and size; per Session turn, per size; and the targets."""
    rows = tuple(rows or available_rows())
    out: dict[str, Any] = {"sizes": list(sizes), "recall_ms": {}, "turn_ms": {}, "targets": {}}
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            contenders, urls = {}, []
            for size in sizes:
                memory, url = _open(row, Path(folder), size)
                fill(memory, size)
                questions = RARE if row.endswith("(rare words)") else QUESTIONS
                contenders[str(size)], _ = _asker(memory, questions), urls.append(url)
            stats = interleaved(contenders, number=12, repeat=repeat, clock=time.process_time)
            out["recall_ms"][row] = {s: round(v.median * 1000, 3) for s, v in stats.items()}
            for url in urls:
                close_long_term_store(url)
        turns = {}
        for size in turn_sizes:
            url = f"sqlite:///{Path(folder) / f'turn-{size}.db'}"
            memory = LongTermMemory(url, user_id="ming")
            fill(memory, size)
            turns[str(size)] = _turner(url, memory)
        if turns:
            stats = interleaved(turns, number=4, repeat=repeat, clock=time.process_time)
            out["turn_ms"] = {s: round(v.median * 1000, 3) for s, v in stats.items()}
    measured = out["recall_ms"]
    for row, by_size in measured.items():
        if "1000" in by_size and "10000" in by_size:
            ratio = by_size["10000"] / by_size["1000"]
            out["targets"][f"recall {row} 10k/1k"] = {"ratio": round(ratio, 2), "met": ratio <= 3}
    if {"10", "10000"} <= set(out["turn_ms"]):
        ratio = out["turn_ms"]["10000"] / out["turn_ms"]["10"]
        out["targets"]["session turn 10k/10"] = {"ratio": round(ratio, 2), "met": ratio <= 2}
    return out


def table(out: dict[str, Any]) -> str:
    """The figures as a markdown table, then the targets."""
    sizes = [str(s) for s in out["sizes"]]
    lines = [
        "| CPU ms per recall(k=3) | " + " | ".join(f"{int(s):,}" for s in sizes) + " |",
        "| --- |" + " --- |" * len(sizes),
    ]
    for row, by_size in out["recall_ms"].items():
        lines.append(f"| {row} | " + " | ".join(f"{by_size.get(s, '')}" for s in sizes) + " |")
    for size, ms in out["turn_ms"].items():
        lines.append(f"Session turn at {int(size):,} facts: {ms} CPU ms")
    for name, target in out["targets"].items():
        lines.append(f"target {name}: {target['ratio']}x, {'met' if target['met'] else 'NOT met'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.recall_growth [--sizes ...] [--rows ...] [--json PATH]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall_growth")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rows", nargs="+", choices=(*LEXICAL, "sqlite+wordllama"))
    parser.add_argument("--turn-sizes", type=int, nargs="*", default=[10, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    out = run_recall_growth(
        args.sizes, rows=args.rows, turn_sizes=args.turn_sizes, repeat=args.repeat
    )
    print(table(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
