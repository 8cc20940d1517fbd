"""The vector matrix SQLite recall holds in process (:mod:`swarmgraph.memory.vector_cache`):
its vectors are kept one per column (issue 39: the product over them streams twice as fast
as over rows), patched in place by this process's writes, read again after another
process's; whatever the layout, recall must rank exactly as a brute-force scan of every
stored vector does.

Vectors here are random (:class:`SeededEmbeddings`: each text's own Gaussian vector), so
near-ties and a matrix grown, shrunk and overwritten many times are all exercised, and the
reference is computed independently: every vector of the file, its cosine in float64.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from swarmgraph.memory import LongTermMemory, vector_cache
from swarmgraph.memory.fact_namespaces import visible
from swarmgraph.memory.sqlite_vec_driver import sqlite_vec_driver
from swarmgraph.memory.vector_cache import _Matrix, approximate

ROOT = Path(__file__).resolve().parents[1]
DIMS = 24


class SeededEmbeddings(Embeddings):
    """Each text's vector: standard normal draws seeded by the text's hash (no meaning)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SeededEmbeddings)

    __hash__ = None  # type: ignore[assignment]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:16], 16)
        return np.random.default_rng(seed).standard_normal(DIMS).tolist()


def brute_force(path: Path, prefixes: list[str], query: str) -> list[tuple[str, float]]:
    """(key, cosine) of every current, unforgotten fact of ``prefixes`` with a vector, best
    first: read straight from the file, scored in float64."""
    q = np.asarray(SeededEmbeddings().embed_query(query), dtype=np.float64)
    marks = ", ".join("?" * len(prefixes))
    # the store's own SQLite library: two libraries in one process do not see each
    # other's locks, so Python's sqlite3 could read a stale snapshot beside sqlean
    with contextlib.closing(sqlite_vec_driver().connect(str(path))) as conn:
        rows = conn.execute(
            "SELECT v.key, v.embedding, s.value FROM store_vectors v JOIN store s "
            f"ON s.prefix = v.prefix AND s.key = v.key WHERE v.prefix IN ({marks})",
            prefixes,
        ).fetchall()
    scored = []
    for key, blob, value in rows:
        if json.loads(value).get("forgotten"):
            continue
        v = np.frombuffer(blob, dtype=np.float32).astype(np.float64)
        scored.append((key, float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))))
    return sorted(scored, key=lambda pair: -pair[1])


def assert_ranks_as_brute_force(memory: LongTermMemory, path: Path, query: str, k: int) -> None:
    spaces = visible(memory.user_id, None)
    reference = brute_force(path, [".".join(ns) for ns in spaces], query)
    found = [(r["key"], s) for r, s in memory._store.nearest(spaces, query, k)]
    assert len(found) == min(k, len(reference)), query
    # sqlite-vec scores in float32: the same scores to 1e-6, and the same facts wherever
    # the reference's scores are apart by more than that
    for (_, got), (_, want) in zip(found, reference, strict=False):
        assert got == pytest.approx(want, abs=1e-6), query
    last = reference[len(found) - 1][1]
    assert {key for key, s in reference[: len(found)] if s > last + 1e-5} <= {
        key for key, _ in found
    }, query
    assert {key for key, _ in found} <= {key for key, s in reference if s >= last - 1e-5}


def test_patched_matrix_ranks_as_a_brute_force_scan_through_growth_overwrites_and_purges(
    tmp_path, monkeypatch
):
    reads: list[str] = []
    read = vector_cache.VectorCache._read
    monkeypatch.setattr(
        vector_cache.VectorCache, "_read", lambda self, *a: reads.append(a[1]) or read(self, *a)
    )
    path = tmp_path / "ltm.db"
    memory = LongTermMemory(f"sqlite:///{path}", user_id="ming", embeddings=SeededEmbeddings())
    rng = np.random.default_rng(7)
    for n in range(40):
        memory.remember(f"fact_{n}", f"value {n}")
    queries = [f"value {n}" for n in range(0, 120, 7)] + ["fact 3: value 3", "nothing alike"]
    for query in queries[:3]:
        assert_ranks_as_brute_force(memory, path, query, 5)
    held = len(reads)
    # appended past the room twice over (the matrix's columns copied to one twice as wide),
    # overwritten in place, forgotten and purged (their stale vectors stay in the file and
    # the matrix: recall skips them by their records; a dropped column is the test below's)
    for step in range(160):
        n = int(rng.integers(0, 120))
        if step % 5 == 4:
            memory.forget(f"fact_{n}", purge=bool(step % 2))
        else:
            memory.remember(f"fact_{n}", f"value {n} take {step}")
        if step % 20 == 0:
            for query in queries:
                assert_ranks_as_brute_force(memory, path, query, int(rng.integers(1, 12)))
    assert len(reads) == held  # every write patched the held matrix, none read it again
    (matrix,) = [m for m in memory._store._vectors._held.values() if m.keys]
    assert matrix.columns.shape[1] > 40 and matrix.columns.flags.c_contiguous
    # and the patched matrix holds exactly what a fresh read of the file gives
    patched = {key: matrix.vectors[:, i].copy() for i, key in enumerate(matrix.keys)}
    memory._store._vectors._held.clear()
    for query in queries:
        assert_ranks_as_brute_force(memory, path, query, 10)
    (fresh,) = [m for m in memory._store._vectors._held.values() if m.keys]
    assert sorted(patched) == sorted(fresh.keys)
    for i, key in enumerate(fresh.keys):
        assert np.allclose(patched[key], fresh.vectors[:, i], atol=1e-6), key


def test_approximate_is_the_product_with_each_held_column_before_and_after_edits():
    # _Matrix alone: random puts (new keys past the room, overwrites) and drops; the
    # product over the held columns must equal the one over a plain dict of the vectors,
    # with BLAS and with einsum's loop (the path where BLAS cannot be bounded), and the
    # room past the last key must never be scored.
    rng = np.random.default_rng(3)

    def unit() -> np.ndarray:
        v = rng.standard_normal(DIMS).astype(np.float32)
        return v / np.linalg.norm(v)

    reference = {f"k{n}": unit() for n in range(5)}
    columns = np.full((DIMS, 7), np.nan, dtype=np.float32)  # room: never read
    columns[:, :5] = np.stack(list(reference.values()), axis=1)
    matrix = _Matrix(1, list(reference), columns)
    for step in range(300):
        key = f"k{int(rng.integers(0, 60))}"
        if step % 3 == 2:
            matrix.drop(key)
            reference.pop(key, None)
        else:
            reference[key] = unit()
            matrix.put(key, reference[key])
        assert sorted(matrix.keys) == sorted(reference)
        assert matrix.rows == {key: i for i, key in enumerate(matrix.keys)}
        query = rng.standard_normal(DIMS).astype(np.float32)
        want = np.array([reference[key] @ query for key in matrix.keys]) / np.linalg.norm(query)
        assert np.allclose(approximate([matrix], query), want, atol=1e-5)
    empty = _Matrix(2, [], np.zeros((DIMS, 0), dtype=np.float32))
    both = approximate([matrix, empty, matrix], query)
    assert np.allclose(both, np.concatenate([want, want]), atol=1e-5)


def test_einsum_fallback_scores_as_blas(monkeypatch):
    from contextlib import contextmanager

    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((DIMS, 50)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=0)
    room = np.zeros((DIMS, 64), dtype=np.float32)
    room[:, :50] = vectors
    matrix = _Matrix(1, [f"k{n}" for n in range(50)], room)
    query = rng.standard_normal(DIMS).astype(np.float32)
    blas = approximate([matrix], query)

    @contextmanager
    def unbounded():
        yield False

    monkeypatch.setattr(vector_cache, "bounded_threads", unbounded)
    assert np.allclose(approximate([matrix], query), blas, atol=1e-6)


CHILD = """
import hashlib, sys
import numpy as np
from langchain_core.embeddings import Embeddings
from swarmgraph.memory import LongTermMemory

DIMS = int(sys.argv[2])

class SeededEmbeddings(Embeddings):  # the same model, by name and by vectors
    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]
    def embed_query(self, text):
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:16], 16)
        return np.random.default_rng(seed).standard_normal(DIMS).tolist()

memory = LongTermMemory(sys.argv[1], user_id="ming", embeddings=SeededEmbeddings())
for op in sys.argv[3:]:
    verb, key, value = op.split(":")
    if verb == "put":
        memory.remember(key, value)
    else:
        memory.forget(key, purge=True)
"""


def child(url: str, *ops: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(DIMS), *ops],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_write_from_another_process_is_seen_by_the_next_recall(tmp_path):
    path = tmp_path / "ltm.db"
    url = f"sqlite:///{path}"
    memory = LongTermMemory(url, user_id="ming", embeddings=SeededEmbeddings())
    for n in range(30):
        memory.remember(f"fact_{n}", f"value {n}")
    assert_ranks_as_brute_force(memory, path, "pet: zebra", 3)  # the matrix is held now
    child(url, "put:pet:zebra", "put:fact_4:changed", "purge:fact_5:")
    found = [r["key"] for r, _ in memory._store.nearest(visible("ming", None), "pet: zebra", 1)]
    assert found == ["pet"]  # its own text: cosine 1
    for query in ("pet: zebra", "fact 4: changed", "fact 4: value 4", "fact 5: value 5"):
        assert_ranks_as_brute_force(memory, path, query, 5)
    spaces = visible("ming", None)
    assert "fact_5" not in [r["key"] for r, _ in memory._store.nearest(spaces, "fact 5", 40)]
    memory.remember("after", "mine")  # this process's write after the other's: patched
    assert_ranks_as_brute_force(memory, path, "after: mine", 3)
