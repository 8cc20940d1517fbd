"""What a store's vector index records and checks: which embedding model filled a SQLite
file's vectors (two models' vectors cannot be compared), the facts still without a vector,
and whether a Postgres server has pgvector. Used by :mod:`.long_term_store`.

Example:
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> embeddings_name(DeterministicFakeEmbedding(size=8))
    'DeterministicFakeEmbedding'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langgraph.store.base import PutOp

from .vector_cache import VectorCache, approximate, candidates, owners

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langgraph.store.sqlite import SqliteStore

__all__ = [
    "SQLITE_INDEX_TABLE",
    "claim_sqlite_index",
    "embed_missing",
    "embeddings_name",
    "require_pgvector",
    "sqlite_nearest",
]


def embeddings_name(embeddings: Embeddings) -> str:
    """What a vector index records about the model that filled it: the class's name (not
    its module, which a library may move between versions) and its ``model``/``model_name``
    field when it has one.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> embeddings_name(DeterministicFakeEmbedding(size=8))
        'DeterministicFakeEmbedding'
    """
    name = type(embeddings).__qualname__
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    return f"{name}:{model}" if isinstance(model, str) and model else name


#: The table that records which embeddings filled a SQLite file's vector index.
SQLITE_INDEX_TABLE = "swarmgraph_vector_index"


def claim_sqlite_index(store: SqliteStore, url: str, name: str, dims: int) -> None:
    """Record (first opener) or check (every later one, any process) the embeddings that
    fill the file's vectors: two models' vectors cannot be compared, so others are refused."""
    from .errors import StorageConfigurationError

    conn = store.conn
    with store.lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SQLITE_INDEX_TABLE} "
                "(id INTEGER PRIMARY KEY CHECK (id = 1), embeddings TEXT NOT NULL, "
                "dims INTEGER NOT NULL)"
            )
            row = conn.execute(
                f"SELECT embeddings, dims FROM {SQLITE_INDEX_TABLE} WHERE id = 1"
            ).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO {SQLITE_INDEX_TABLE} (id, embeddings, dims) VALUES (1, ?, ?)",
                    (name, dims),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    if row is not None and (row[0], int(row[1])) != (name, dims):
        raise StorageConfigurationError(
            url,
            f"its vector index holds {row[1]}-dimension vectors from {row[0]}, and these "
            f"embeddings are {name} with {dims} dimensions",
            hint="open it with the embeddings that filled it, or keep these in another file",
        )


def embed_missing(store: SqliteStore) -> None:
    """Embed every current fact that has no vector yet (written by a process that opened
    the file without embeddings), so vector recall sees all of them."""
    rows = store.conn.execute(
        "SELECT s.prefix, s.key, s.value FROM store s WHERE s.prefix GLOB 'swarmgraph.ltm.*' "
        "AND json_extract(s.value, '$.forgotten') = 0 AND NOT EXISTS (SELECT 1 FROM "
        "store_vectors v WHERE v.prefix = s.prefix AND v.key = s.key)"
    ).fetchall()
    for start in range(0, len(rows), 100):  # namespace labels never hold a "."
        store.batch(
            [
                PutOp(tuple(prefix.split(".")), key, json.loads(value))
                for prefix, key, value in rows[start : start + 100]
            ]
        )


def sqlite_nearest(
    store: SqliteStore,
    cache: VectorCache,
    namespaces: Sequence[tuple[str, ...]],
    query: str,
    k: int,
) -> list[tuple[dict[str, Any], float]]:
    """The ``k`` current facts of ``namespaces`` (exactly these, none below them) nearest
    ``query`` in a SQLite file's vector index, with their cosine similarity, best first.

    The same ranking as ``SqliteStore.search(query=..., limit=k)`` (its score, ``1 -
    vec_distance_cosine``, over the query embedded as it embeds one), found differently:
    that search joins every vector of the namespace to its row and parses each row's JSON
    (its ``forgotten`` filter) before sorting them all, values included, so its cost
    followed the facts stored. Here the namespaces' vectors, held in process
    (:class:`.vector_cache.VectorCache`), are multiplied by the query once; sqlite-vec
    scores the few nearest, and only the winners' rows are read. A forgotten fact's stale
    vector (a tombstone is written unindexed, which leaves it) is skipped, and the search
    widens when skipping left fewer than ``k``.
    """
    import numpy as np
    import sqlite_vec

    if not namespaces or k < 1:
        return []
    prefixes = [".".join(ns) for ns in namespaces]
    # A search query is embedded as SqliteStore embeds one (embed_documents, not _query).
    embedded = store.embeddings.embed_documents([query])[0]
    vector = sqlite_vec.serialize_float32(embedded)
    conn, limit = store.conn, k
    with store.lock:
        matrices = cache.matrices(conn, prefixes)
        approx = approximate(matrices, np.asarray(embedded, dtype=np.float32))
        while True:
            pairs = owners(prefixes, matrices, candidates(approx, limit))
            top = []
            for start in range(0, len(pairs), 400):  # under SQLite's variable limit
                chunk = pairs[start : start + 400]
                rows = ", ".join(["(?, ?)"] * len(chunk))
                top += conn.execute(
                    "SELECT prefix, key, 1.0 - vec_distance_cosine(embedding, ?) FROM "
                    f"store_vectors WHERE (prefix, key) IN (VALUES {rows})",
                    [vector, *(part for pair in chunk for part in pair)],
                ).fetchall()
            top = sorted((row for row in top if row[2] is not None), key=lambda row: -row[2])
            scores: dict[tuple[str, str], float] = {}
            for prefix, key, score in top[:limit]:  # one vector per field: a fact's best counts
                scores.setdefault((prefix, key), float(score))
            found = [
                (record, scores[(prefix, key)])
                for prefix, key, record in _records(conn, list(scores))
                if not record.get("forgotten")
            ]
            if len(found) >= k or limit >= len(approx):
                found.sort(key=lambda pair: -pair[1])
                return found[:k]
            limit *= 4  # forgotten facts took places: look deeper


def _records(conn: Any, keys: Sequence[tuple[str, str]]) -> list[tuple[str, str, dict[str, Any]]]:
    """The stored records of ``keys`` (prefix, key) that are still there."""
    found = []
    for start in range(0, len(keys), 400):  # under SQLite's variable limit
        chunk = keys[start : start + 400]
        rows = conn.execute(
            "SELECT prefix, key, value FROM store WHERE (prefix, key) IN "
            f"(VALUES {', '.join(['(?, ?)'] * len(chunk))})",
            [part for pair in chunk for part in pair],
        ).fetchall()
        found += [(prefix, key, json.loads(value)) for prefix, key, value in rows]
    return found


def require_pgvector(conn: Any, url: str) -> None:
    """``StorageConfigurationError`` naming pgvector unless the server has it installed or
    installable (``CREATE EXTENSION vector`` is what ``PostgresStore.setup`` runs)."""
    from .errors import StorageConfigurationError

    row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if row is None:
        raise StorageConfigurationError(
            url,
            "vector recall (embeddings=) needs the pgvector extension, and this server has "
            "none ('vector' is not in pg_available_extensions)",
            hint="install pgvector on the Postgres server, or drop embeddings= to use "
            "lexical (BM25) recall there, or keep vector memory in sqlite:/// or memory://",
        )
