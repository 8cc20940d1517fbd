"""How long-term recall's cost grows with the facts a user has: CPU ms per ``recall(k=3)`` at
10, 100, 1,000 and 10,000 facts, and a ``Session`` turn at 10 vs 10,000 facts (issue 39).

One user's facts are synthetic and deterministic (:func:`facts`): a kind of fact among 40
(``dog_name``, ``home_city``, ...) numbered apart, a value of two made-up words, and the
sentence that stated it; they are stored in bulk through the store's own atomic write, so
the long-term index (SQLite's FTS5, the in-process index, the vector index) is filled as
``remember`` fills it. Each recall asks one of a fixed set of questions (:data:`QUESTIONS`),
some naming a kind of fact (their words match from a fortieth to a tenth of the facts; on
SQLite a common word's matches are left unscored where the rarer words' matches already
fill the top, the others are all scored, so the cost of these grows with the count), some
a made-up word (matching a handful), one with no searchable word (the newest facts).

Rows: ``memory://`` (lexical, in-process BM25), ``sqlite`` (lexical, FTS5), ``postgres``
(lexical, ``tsvector``/``ts_rank``; a throwaway loopback server unless ``--postgres URL``),
each also asked only :data:`RARE` questions (``(rare words)``: what the index itself costs,
without more matches to score), ``sqlite+wordllama`` and ``sqlite+minilm`` (hybrid: FTS5
fused with the store's vector top k: every vector compared with the query in one numpy
product over a matrix held in process, sqlite-vec scoring the nearest few; when
the ``embeddings-local`` extra is installed, MiniLM's wheel too), and a ``Session`` turn on
SQLite (recall into the prompt, a scripted model, the turn's save). Time is this process's
CPU (``time.process_time``), the median of interleaved batches (:mod:`benchmarks.timing`),
except on Postgres, whose work is mostly in its server: there it is wall time, client and
server on the same machine.

Targets: recall at 10,000 facts at most 3x recall at 1,000 on every row; a Session turn at
10,000 facts at most 2x one at 10.

Run: ``python -m benchmarks.recall_growth [--sizes 10 100 1000 10000] [--json PATH]
[--plot PATH] [--postgres URL|none]``; ``make bench`` runs it as the ``growth`` section
(:func:`growth_section` writes RESULTS.md's part, :func:`plot_growth` the plot).

Example:
    >>> out = run_recall_growth(sizes=(10, 100), rows=("memory",), turn_sizes=())
    >>> sorted(out["recall_ms"]["memory"]) == ["10", "100"]
    True
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
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


def _open(
    row: str, folder: Path, size: int, postgres: str | None = None
) -> tuple[LongTermMemory, str]:
    row = row.removesuffix(" (rare words)")
    if row == "memory":
        url = f"memory://recall-growth-{size}-{time.monotonic_ns()}"
        return LongTermMemory(url, user_id="ming"), url
    if row == "postgres":
        assert postgres is not None
        # one user per size (and per run): the sizes share the server, never their facts
        return LongTermMemory(postgres, user_id=f"ming-{size}-{time.monotonic_ns()}"), postgres
    url = f"sqlite:///{folder / f'{row}-{size}.db'}"
    if row == "sqlite":
        return LongTermMemory(url, user_id="ming"), url
    from swarmgraph.memory.local_embeddings import MiniLMEmbeddings, WordLlamaEmbeddings

    embeddings = MiniLMEmbeddings() if row == "sqlite+minilm" else WordLlamaEmbeddings()
    return LongTermMemory(url, user_id="ming", embeddings=embeddings), url


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


def available_rows(postgres: bool = False) -> tuple[str, ...]:
    """The rows this environment can run (``postgres``: with a server; WordLlama's and
    MiniLM's only with their wheels installed)."""
    rows = LEXICAL + (POSTGRES if postgres else ())
    for row, module in VECTOR.items():
        try:
            __import__(module)
        except ImportError:
            continue
        rows += (row,)
    return rows


LEXICAL = ("memory", "sqlite", "memory (rare words)", "sqlite (rare words)")
POSTGRES = ("postgres", "postgres (rare words)")
#: Vector rows, each with the module its embedding model needs.
VECTOR = {"sqlite+wordllama": "wordllama", "sqlite+minilm": "all_minilm_l6_v2"}
ROWS = (*LEXICAL, *POSTGRES, *VECTOR)


@contextlib.contextmanager
def postgres_server(given: str | None) -> Iterator[str | None]:
    """``given`` (a URL), or a throwaway loopback server as the tests start one (``""``),
    or none (``"none"``, or no Postgres binaries here: ``None``)."""
    if given == "none":
        yield None
        return
    if given:
        yield given
        return
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    try:
        from servers import PostgresServer  # type: ignore[import-not-found]

        server = PostgresServer()
        server.start()
    except Exception:  # no binaries: the Postgres rows are left out, and say so
        yield None
        return
    try:
        yield server.url
    finally:
        server.close()


def run_recall_growth(
    sizes: Sequence[int] = SIZES,
    *,
    rows: Sequence[str] | None = None,
    turn_sizes: Sequence[int] = (10, 10_000),
    repeat: int = 5,
    postgres: str | None = "none",
    plot_path: str | None = None,
) -> dict[str, Any]:
    """CPU ms per recall, per row and size (wall ms on Postgres); per Session turn, per
    size; and the targets. ``postgres``: a URL, ``""`` (a throwaway server) or ``"none"``."""
    with postgres_server(postgres) as url:
        out = _measure(sizes, rows, turn_sizes, repeat, url)
    if postgres != "none" and url is None:
        out["unavailable"] = {"postgres": "no Postgres server could be started here"}
    if plot_path:
        plot_growth(out, plot_path)
    return out


def _measure(
    sizes: Sequence[int],
    rows: Sequence[str] | None,
    turn_sizes: Sequence[int],
    repeat: int,
    postgres: str | None,
) -> dict[str, Any]:
    rows = tuple(r for r in rows or available_rows(postgres is not None))
    if postgres is None:
        rows = tuple(r for r in rows if not r.startswith("postgres"))
    out: dict[str, Any] = {"sizes": list(sizes), "recall_ms": {}, "turn_ms": {}, "targets": {},
                           "wall_rows": [r for r in rows if r.startswith("postgres")]}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            contenders, urls = {}, []
            for size in sizes:
                memory, url = _open(row, Path(folder), size, postgres)
                fill(memory, size)
                questions = RARE if row.endswith("(rare words)") else QUESTIONS
                contenders[str(size)], _ = _asker(memory, questions), urls.append(url)
            clock = time.perf_counter if row in out["wall_rows"] else time.process_time
            stats = interleaved(contenders, number=12, repeat=repeat, clock=clock)
            out["recall_ms"][row] = {s: round(v.median * 1000, 3) for s, v in stats.items()}
            for url in dict.fromkeys(urls):
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


def plot_growth(out: dict[str, Any], path: str) -> None:
    """ms per ``recall(k=3)`` against facts stored, log-log, one line per row; the dotted
    line from each row's 1,000-fact point is the 3x-at-10,000 target (linear growth would
    be 10x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=100)
    sizes = [int(s) for s in out["sizes"]]
    for row, by_size in out["recall_ms"].items():
        points = [(s, by_size[str(s)]) for s in sizes if str(s) in by_size]
        wall = " (wall)" if row in out.get("wall_rows", ()) else ""
        (line,) = ax.plot(*zip(*points, strict=True), marker="o", label=row + wall)
        if "1000" in by_size and "10000" in by_size:
            base = by_size["1000"]
            ax.plot([1000, 10_000], [base, 3 * base], linestyle=":", color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("facts stored for the user (log scale)")
    ax.set_ylabel("ms per recall(k=3) (CPU; Postgres: wall; log scale)")
    ax.set_title("Recall cost as facts grow (dotted: 3x from 1,000 to 10,000, the target)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def growth_section(r: dict[str, Any], targets: list, plot_name: str | None) -> list[str]:
    """RESULTS.md's part: the table, the targets (appended to ``targets``), the plot.

    Example:
        >>> out = {"sizes": [1000, 10000], "recall_ms": {"sqlite": {"1000": 1.0,
        ...        "10000": 2.5}}, "turn_ms": {}, "targets": {"recall sqlite 10k/1k":
        ...        {"ratio": 2.5, "met": True}}}
        >>> targets = []
        >>> "| sqlite | 1.0 | 2.5 | 2.5x |" in growth_section(out, targets, None)
        True
        >>> targets[0]["verdict"]
        'met'
    """
    sizes = [str(s) for s in r["sizes"]]
    wall = r.get("wall_rows", [])
    lines = [
        "## 3d. Recall growth: one user's facts from 10 to 10,000",
        "",
        "`benchmarks/recall_growth.py` (`python -m benchmarks.recall_growth`): ms per "
        "`LongTermMemory.recall(k=3)` for one user holding N synthetic facts (40 kinds, "
        "made-up values), each question of a fixed set in turn; this process's CPU, the "
        "median of interleaved batches; Postgres rows are wall ms (its work is in its server, "
        "a throwaway loopback one on the same machine, so each recall's round trip and the "
        "machine's load are in them, and their ratio says little about the index). "
        "`(rare words)` rows ask only questions "
        "whose words match a handful of facts: what the index costs without more matches to "
        "score. Vector rows (`sqlite+wordllama`, `sqlite+minilm`) fuse FTS5 with the store's "
        "vector top k (every vector compared in one product over a matrix held in process, "
        "sqlite-vec scoring the nearest few). Targets: 10,000 facts <= 3x 1,000 "
        "on every row; a Session turn at 10,000 facts <= 2x one at 10.",
        "",
        "| ms per recall(k=3) | " + " | ".join(f"{int(s):,}" for s in sizes) + " | 10k / 1k |",
        "| --- |" + " --- |" * (len(sizes) + 1),
    ]
    for row, by_size in r["recall_ms"].items():
        ratio = r["targets"].get(f"recall {row} 10k/1k", {}).get("ratio")
        name = row + (" (wall ms)" if row in wall else "")
        cells = " | ".join(str(by_size.get(s, "")) for s in sizes)
        lines.append(f"| {name} | {cells} | {'' if ratio is None else f'{ratio}x'} |")
    lines.append("")
    if r["turn_ms"]:
        lines += [
            "Session turn (recall into the prompt, a scripted model, the save): "
            + ", ".join(f"{ms} CPU ms at {int(n):,} facts" for n, ms in r["turn_ms"].items())
            + ".",
            "",
        ]
    for name, t in r["targets"].items():
        limit = 2 if name.startswith("session") else 3
        targets.append(
            {
                "target": f"recall growth: {name} <= {limit}x",
                "verdict": "met" if t["met"] else f"not met: {t['ratio']}x vs target {limit}x",
                "why": f"{t['ratio']}x",
            }
        )
    for name, why in r.get("unavailable", {}).items():
        lines += [f"Not measured: {name} ({why}).", ""]
    if plot_name:
        lines += [f"![recall cost as facts grow]({plot_name})", ""]
    return lines


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
    parser.add_argument("--rows", nargs="+", choices=ROWS)
    parser.add_argument("--turn-sizes", type=int, nargs="*", default=[10, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--plot", help="draw the growth plot to this PNG")
    parser.add_argument("--postgres", default="", help="URL, or 'none' (default: throwaway)")
    args = parser.parse_args(argv)
    out = run_recall_growth(
        args.sizes, rows=args.rows, turn_sizes=args.turn_sizes, repeat=args.repeat,
        postgres=args.postgres, plot_path=args.plot,
    )  # fmt: skip
    print(table(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
