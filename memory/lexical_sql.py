"""Lexical recall on the database's own full-text search: SQLite's FTS5 with its ``bm25()``
ranking, Postgres's ``tsvector`` with ``ts_rank``. Both are kept by the database in the
same transaction as the fact they index, so a rolled-back write never reaches the index, a
superseded or forgotten value leaves it with the write that replaced it, and a write by any
process (or any client of the same LangGraph table) is indexed.

* **SQLite**: FTS5 tables (``porter unicode61`` tokenizer: case-folded words, English
  stems, ``dog_name`` is two words) over each fact's key (weighted :data:`KEY_WEIGHT`),
  value and source text, one for current facts and one for their history
  (:mod:`.fact_history`), filled by triggers on LangGraph's ``store`` table (rows under
  ``swarmgraph.ltm.*``, ``swarmgraph.ltm-history.*``; not tombstones or markers).
  A small key table maps a fact's (namespace, key) to its FTS row, because LangGraph
  writes with ``INSERT OR REPLACE``, which changes a row's rowid and fires no delete
  trigger. A file written before this index existed is indexed once, when opened.
* **Postgres**: a stored generated column ``swarmgraph_fts`` on LangGraph's ``store`` table
  (``to_tsvector('english', key value text)`` for facts and their history, ``NULL`` for
  anything else) with a GIN index.

The query is the words of the question less stop words (:func:`.fact_search.query_words`),
any of them matching (OR); the database stems them as it stemmed the facts. Results are
confined to the namespaces asked for (the user's own, by exact prefix); ties go to the newer
fact. A question with no searchable word gets the ``k`` newest facts.

Example:
    >>> fts_query(["dog", "name"]), fts_query([])
    ('"dog" OR "name"', '')
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, cast

from langgraph.store.base import BaseStore, PutOp

from .fact_namespaces import HISTORY
from .fact_search import query_words

Record = dict[str, Any]
Namespace = tuple[str, ...]
#: How much a word of the key counts against one of the value or text (FTS5's ``bm25()``
#: column weights; ``ts_rank``'s A and B weights on Postgres). A key names the kind of fact
#: ("dog_name"), so its words say what a question is about. Chosen on the long-term
#: benchmark's dev split (``benchmarks/longterm_vector.py``, gold writes): at 1, FTS5's
#: recall@1 was 88% where the in-process BM25's is 90%; at 2 it is 90%, recall@3 91%, both.
KEY_WEIGHT = 2
#: Matches read past the ``k`` best, so a tie at the ``k``-th place goes to the newer fact.
TIE_WINDOW = 8

#: The FTS5 tables (current facts; their history, searched for a question about the past,
#: apart so that history's rows cost a current recall nothing) and the table mapping a
#: fact's (prefix, key) to its FTS row.
FTS_TABLE, FTS_HISTORY = "swarmgraph_ltm_fts", "swarmgraph_ltm_history_fts"
FTS_KEYS = "swarmgraph_ltm_fts_keys"
_GLOBS = {FTS_TABLE: "swarmgraph.ltm.*", FTS_HISTORY: "swarmgraph.ltm-history.*"}
_BODY = (
    "coalesce(json_extract(new.value, '$.key'), ''), "
    "coalesce(json_extract(new.value, '$.value'), '') || ' ' || "
    "coalesce(json_extract(new.value, '$.text'), '')"
)


def _triggers(table: str) -> list[str]:
    """The statements that make ``table`` follow the store's rows under its glob."""
    row = f"new.prefix GLOB '{_GLOBS[table]}'"
    index_new = f"""
    INSERT OR IGNORE INTO {FTS_KEYS} (prefix, key) VALUES (new.prefix, new.key);
    DELETE FROM {table} WHERE rowid =
        (SELECT id FROM {FTS_KEYS} WHERE prefix = new.prefix AND key = new.key);
    INSERT INTO {table} (rowid, prefix, key, body)
        SELECT id, new.prefix, {_BODY} FROM {FTS_KEYS} WHERE prefix = new.prefix AND key = new.key
        AND coalesce(json_extract(new.value, '$.forgotten'), 0) = 0
        AND json_extract(new.value, '$.value') IS NOT NULL;
    """
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} "
        "USING fts5(prefix UNINDEXED, key, body, tokenize='porter unicode61')",
        f"CREATE TRIGGER IF NOT EXISTS {table}_ins AFTER INSERT ON store WHEN {row} "
        f"BEGIN {index_new} END",
        f"CREATE TRIGGER IF NOT EXISTS {table}_upd AFTER UPDATE OF value ON store WHEN {row} "
        f"BEGIN {index_new} END",
        f"CREATE TRIGGER IF NOT EXISTS {table}_del AFTER DELETE ON store "
        f"WHEN old.prefix GLOB '{_GLOBS[table]}' BEGIN "
        f"DELETE FROM {table} WHERE rowid = "
        f"(SELECT id FROM {FTS_KEYS} WHERE prefix = old.prefix AND key = old.key); "
        f"DELETE FROM {FTS_KEYS} WHERE prefix = old.prefix AND key = old.key; END",
    ]


SQLITE_SCHEMA = [
    f"CREATE TABLE IF NOT EXISTS {FTS_KEYS} (id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, "
    "key TEXT NOT NULL, UNIQUE (prefix, key))",
    # The newest facts of a namespace without sorting all of them (a question with no word).
    f"CREATE INDEX IF NOT EXISTS {FTS_TABLE}_newest ON store "
    "(prefix, json_extract(value, '$.created_at'))",
    *_triggers(FTS_TABLE),
    *_triggers(FTS_HISTORY),
]


def fts_query(words: Sequence[str]) -> str:
    """An FTS5 query matching any of ``words`` (each quoted: no word is an operator)."""
    return " OR ".join(f'"{w}"' for w in words)


def setup_sqlite_fts(conn: Any) -> None:
    """Create the FTS5 index and its triggers if the file has none, and index the facts
    already there, in one ``IMMEDIATE`` transaction (another process opening the file at
    the same time waits, then finds it done)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
        ).fetchone()
        for statement in SQLITE_SCHEMA:
            conn.execute(statement)
        if exists is None:  # made now; a file written before the index: index what it holds
            for table, glob in _GLOBS.items():
                # The table's own rank, stored in the file: bm25() with the key weighted.
                conn.execute(
                    f"INSERT INTO {table} ({table}, rank) "
                    f"VALUES ('rank', 'bm25(0, {KEY_WEIGHT}, 1)')"
                )
                conn.execute(
                    f"INSERT OR IGNORE INTO {FTS_KEYS} (prefix, key) SELECT prefix, key "
                    "FROM store WHERE prefix GLOB ?",
                    (glob,),
                )
                conn.execute(
                    f"INSERT INTO {table} (rowid, prefix, key, body) SELECT k.id, k.prefix, "
                    f"{_BODY.replace('new.value', 's.value')} FROM {FTS_KEYS} k JOIN store s "
                    "ON s.prefix = k.prefix AND s.key = k.key WHERE k.prefix GLOB ? "
                    "AND coalesce(json_extract(s.value, '$.forgotten'), 0) = 0 "
                    "AND json_extract(s.value, '$.value') IS NOT NULL",
                    (glob,),
                )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteFtsIndex:
    """Lexical recall on a SQLite file's FTS5 index (see the module docstring)."""

    def apply(self, ops: Sequence[PutOp]) -> None:
        """Nothing to do: the triggers indexed the write in its own transaction."""

    def search(
        self, store: BaseStore, namespaces: Sequence[Namespace], query: str, k: int
    ) -> list[tuple[Record, float]]:
        prefixes = [".".join(ns) for ns in namespaces]
        words = query_words(query)
        conn, lock = store.conn, store.lock  # type: ignore[attr-defined]
        table = FTS_HISTORY if namespaces and namespaces[0][1] == HISTORY else FTS_TABLE
        with lock:
            if not words:
                return _newest(conn, prefixes, k)
            found = None
            if _alone(conn, table, prefixes):
                found = _ranked(conn, table, prefixes, words, k, filtered=False)
            if found is None:  # other namespaces share the index (or one came meanwhile)
                found = _ranked(conn, table, prefixes, words, k, filtered=True)
        return best(found or [], k)


def _ranked(
    conn: Any, table: str, prefixes: Sequence[str], words: Sequence[str], k: int, filtered: bool
) -> list[tuple[Record, float]] | None:
    """The ``k + TIE_WINDOW`` best matches of ``words`` in ``prefixes``, ranked in FTS5, then
    the winners' values read (a common word's many matches are scored, never joined or
    parsed). ``filtered``: FTS5 ranks every match by its stored ``rank`` and the namespace is
    checked on the best few as they come out. Not ``filtered`` (the index holds no other
    namespace, :func:`_alone`): SQLite keeps the best few of ``bm25()`` itself, the same
    scores and order (ties: the older row first, as FTS5's own ranking gives them), without
    FTS5's sort of every match: 0.68 ms against 1.0 ms for 1,000 matches here; and a common
    word's matches are scored only when they could reach the top (:func:`_best_matches`).
    ``None`` when a winner is another namespace's (written since :func:`_alone` looked)."""
    if filtered:
        marks = ", ".join("?" * len(prefixes))
        top = conn.execute(
            f"SELECT rowid, rank FROM {table} "
            f"WHERE {table} MATCH ? AND prefix IN ({marks}) ORDER BY rank LIMIT ?",
            [fts_query(words), *prefixes, k + TIE_WINDOW],
        ).fetchall()
    else:
        top = _best_matches(conn, table, words, k + TIE_WINDOW)
    scores = {rowid: -float(rank) for rowid, rank in top}  # bm25(): lower is better
    rows = conn.execute(
        f"SELECT k.id, k.prefix, s.value FROM {FTS_KEYS} k JOIN store s "
        f"ON s.prefix = k.prefix AND s.key = k.key "
        f"WHERE k.id IN ({', '.join('?' * len(scores))})",
        list(scores),
    ).fetchall()
    if not filtered and any(prefix not in prefixes for _, prefix, _ in rows):
        return None
    return [(json.loads(value), scores[rowid]) for rowid, _, value in rows]


#: FTS5's ``bm25()`` constants: no word's share of a fact's score reaches ``idf * (K1 + 1)``
#: (its term-frequency part tends to ``K1 + 1`` as the word repeats, never reaching it).
K1 = 1.2
#: A common word's matches are split off (:func:`_best_matches`) only from this many on:
#: below, the two or three statements cost more than scoring them (about 1 us each here).
SPLIT_FROM = 64


def _scored(conn: Any, table: str, expression: str, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best (``bm25()``, then rowid) matches of the FTS5 ``expression``."""
    return cast(
        list[tuple[int, float]],
        conn.execute(
            f"SELECT rowid, bm25({table}, 0, {KEY_WEIGHT}, 1) AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY score, rowid LIMIT ?",
            [expression, limit],
        ).fetchall(),
    )


def _best_matches(
    conn: Any, table: str, words: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` best matches of any of ``words`` (rowid, ``bm25()``; lower is better),
    what ``MATCH '"a" OR "b"' ORDER BY bm25(), rowid LIMIT limit`` gives, without scoring
    every match of a word found in a large share of the facts ("name" in "dog_name",
    "cat_name", ...), which made the cost follow the facts stored.

    A fact's ``bm25()`` is a sum over the query's words, and a word it lacks adds exactly
    0. The most common word goes last in the query, so every statement adds a fact's
    per-word scores in one order (the same sums to the last bit; against the words in
    the order asked, a fact holding three or more of them may differ in the last bit).
    The matches split into those holding a rarer word, ranked by FTS5 as ``rare AND
    common`` and ``rare NOT common`` (the same phrases, so the same scores), and those
    holding only the common word, none of which reaches ``idf(common) * (K1 + 1)``. When the
    ``limit``-th best of the first already scores more, the second are never scored;
    otherwise they are (``common NOT rare``), and all merge into the same ``limit`` best.
    ``idf(common)`` is bounded from above without FTS5's private row count: by the
    table's largest rowid (at least its row count) and the word's exact match count.
    Measured for issue 39 (one user, 10,000 facts, "dog" OR "name"): 0.35 ms against
    0.82 ms, the same rows and scores.
    """
    every = fts_query(words)
    distinct = list(dict.fromkeys(words))  # a word asked twice counts twice, as in ``every``
    if len(distinct) < 2:
        return _scored(conn, table, every, limit)
    # FTS5 reads the largest rowid off its index's end (max() would scan every row): at
    # least the row count, so a small table is ranked at once, its words left uncounted.
    last = conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    rows = int(last[0]) if last else 0
    if rows < SPLIT_FROM:
        return _scored(conn, table, every, limit)
    counts = {
        w: int(conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",
                            [fts_query([w])]).fetchone()[0])
        for w in distinct
    }  # fmt: skip
    common = max(distinct, key=counts.__getitem__)
    rare = [w for w in words if w != common]
    held = sum(counts[w] for w in dict.fromkeys(rare))  # at least the facts holding any
    # Worth it only when the common word's matches outnumber the rest and the rest can
    # fill ``limit`` (else the common word's matches are scored anyway).
    if counts[common] < SPLIT_FROM or counts[common] <= held or held < limit:
        return _scored(conn, table, every, limit)
    # The common word last, in every statement alike: FTS5 adds a fact's per-word scores
    # in the query's order, and only one order gives the same sums to the last bit.
    rare_q, common_q = f"({fts_query(rare)})", f"({fts_query([common] * words.count(common))})"
    found = _scored(conn, table, f"{rare_q} AND {common_q}", limit)
    found += _scored(conn, table, f"{rare_q} NOT {common_q}", limit)
    found.sort(key=lambda row: (row[1], row[0]))
    hits = counts[common]
    idf = max(math.log((rows - hits + 0.5) / (hits + 0.5)), 1e-6)
    # the best a fact holding only the common word scores (each time it is asked)
    bound = words.count(common) * idf * (K1 + 1) * (1 + 1e-9)
    if len(found) < limit or -found[limit - 1][1] <= bound:
        found += _scored(conn, table, f"{common_q} NOT {rare_q}", limit)
        found.sort(key=lambda row: (row[1], row[0]))
    return found[:limit]


def _alone(conn: Any, table: str, prefixes: Sequence[str]) -> bool:
    """True when ``table`` indexes no namespace but ``prefixes`` (one user's file, say),
    so a match needs no namespace check. Asked of the key table's (prefix, key) index: one
    seek per gap between the sorted prefixes, whatever the facts' count."""
    base = _GLOBS[table].removesuffix("*")  # "swarmgraph.ltm." ...
    ordered = sorted(set(prefixes))
    if not ordered or not all(p.startswith(base) for p in ordered):
        return False
    # the gaps: [base, first), (each, next), (last, base's end); "/" follows "." in ASCII
    gaps = [(base, ">=", ordered[0])]
    gaps += [(a, ">", b) for a, b in pairwise(ordered)]
    gaps.append((ordered[-1], ">", base[:-1] + "/"))
    found = conn.execute(
        " UNION ALL ".join(
            f"SELECT 1 FROM (SELECT 1 FROM {FTS_KEYS} WHERE prefix {op} ? AND prefix < ? LIMIT 1)"
            for _, op, _ in gaps
        )
        + " LIMIT 1",
        [part for low, _, high in gaps for part in (low, high)],
    ).fetchone()
    return found is None


def best(found: list[tuple[Record, float]], k: int) -> list[tuple[Record, float]]:
    """The ``k`` best of ``found``: the higher score first, ties to the newer fact."""
    found.sort(key=lambda pair: str(pair[0].get("created_at") or ""), reverse=True)
    found.sort(key=lambda pair: -pair[1])
    return found[:k]


def _newest(conn: Any, prefixes: Sequence[str], k: int) -> list[tuple[Record, float]]:
    """The ``k`` newest current facts of ``prefixes``: ``k`` per namespace by its index on
    (prefix, created_at), merged."""
    found: list[tuple[Record, float]] = []
    for prefix in prefixes:
        rows = conn.execute(
            "SELECT value FROM store WHERE prefix = ? "
            "AND coalesce(json_extract(value, '$.forgotten'), 0) = 0 "
            "ORDER BY json_extract(value, '$.created_at') DESC LIMIT ?",
            (prefix, k),
        ).fetchall()
        found.extend((json.loads(value), 0.0) for (value,) in rows)
    return best(found, k)


#: The generated column and its index on LangGraph's Postgres ``store`` table.
PG_COLUMN = "swarmgraph_fts"
PG_SCHEMA = [
    f"""ALTER TABLE store ADD COLUMN IF NOT EXISTS {PG_COLUMN} tsvector GENERATED ALWAYS AS (
        CASE WHEN (prefix LIKE 'swarmgraph.ltm.%' OR prefix LIKE 'swarmgraph.ltm-history.%')
             AND value ? 'value'
             AND coalesce(value->>'forgotten', 'false') <> 'true'
        THEN setweight(to_tsvector('english'::regconfig, coalesce(value->>'key', '')), 'A') ||
             setweight(to_tsvector('english'::regconfig, coalesce(value->>'value', '') || ' ' ||
                                   coalesce(value->>'text', '')), 'B')
        END) STORED""",
    f"CREATE INDEX IF NOT EXISTS store_{PG_COLUMN}_idx ON store USING gin ({PG_COLUMN})",
    f"CREATE INDEX IF NOT EXISTS store_{PG_COLUMN}_newest "
    "ON store (prefix, (value->>'created_at'))",
]


def setup_postgres_fts(conn: Any) -> None:
    """Add the generated column and its GIN index (idempotent; the caller holds the
    migration lock)."""
    for statement in PG_SCHEMA:
        conn.execute(statement)


class PostgresFtsIndex:
    """Lexical recall on Postgres's full-text search (see the module docstring)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def apply(self, ops: Sequence[PutOp]) -> None:
        """Nothing to do: the column is computed in the write's own statement."""

    def search(
        self, store: BaseStore, namespaces: Sequence[Namespace], query: str, k: int
    ) -> list[tuple[Record, float]]:
        prefixes = [".".join(ns) for ns in namespaces]
        words = query_words(query)
        with self._pool.connection() as conn:
            if words:
                rows = conn.execute(
                    f"SELECT value, ts_rank('{{0.1, 0.2, 0.5, {0.5 * KEY_WEIGHT}}}'::float4[], "
                    f"{PG_COLUMN}, q, 1) AS score "
                    "FROM store, to_tsquery('english', %s) q "
                    f"WHERE prefix = ANY(%s) AND {PG_COLUMN} @@ q "
                    "ORDER BY score DESC, value->>'created_at' DESC LIMIT %s",
                    (" | ".join(words), prefixes, k),
                ).fetchall()
                return [(dict(row["value"]), float(row["score"])) for row in rows]
            found: list[tuple[Record, float]] = []
            for prefix in prefixes:  # each by its (prefix, created_at) index
                rows = conn.execute(
                    "SELECT value FROM store WHERE prefix = %s AND value ? 'key' "
                    "AND coalesce(value->>'forgotten', 'false') <> 'true' "
                    "ORDER BY value->>'created_at' DESC LIMIT %s",
                    (prefix, k),
                ).fetchall()
                found.extend((dict(row["value"]), 0.0) for row in rows)
        return best(found, k)
