"""Vector recall on SQLite from a matrix kept in process: one matrix-vector product over a
namespace's vectors finds the few nearest, and sqlite-vec scores only those.

LangGraph keeps a SQLite file's vectors in its ``store_vectors`` table, and ranking them in
SQL means reading and scoring every one on each recall (sqlite-vec compares each vector in
turn): 4.4 ms at 3,000 256-dimension vectors here, against 0.67 ms at 1,000. Here each
namespace's vectors are read once into a numpy matrix; a recall multiplies it by the query
(cosine similarity, float32) and sends only the rows within :data:`MARGIN` of the best few
to sqlite-vec, whose ``1 - vec_distance_cosine`` gives the scores and order, the same as
LangGraph's own search (``SqliteStore.search(query=..., limit=k)``) gives.

A matrix stays right across processes and connections through a version per namespace
that the file keeps itself: triggers on ``store_vectors`` count every insert, update and
delete in :data:`VERSIONS_TABLE` in the writer's own transaction, so a recall that finds a
namespace's version changed reads its vectors again. This process's own writes patch the
matrix in place instead (:meth:`VectorCache.changes`, then :meth:`VectorCache.apply` once
the write committed): the written keys' rows are read back inside the write's transaction,
and the matrix, current at the version before the write, becomes current at the version
after it, without reading the namespace's other vectors again (a write to 10,000 facts cost
the next recall a read of all 10,000). Matrices are held up to :data:`CACHE_BYTES` in all,
the least recently used dropped first.

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.execute("CREATE TABLE store_vectors (prefix TEXT, key TEXT, "
    ...                  "field_name TEXT, embedding BLOB, PRIMARY KEY (prefix, key, field_name))")
    >>> setup_vector_versions(conn)
    >>> _ = conn.execute("INSERT INTO store_vectors VALUES ('p', 'k', 'memory', x'')")
    >>> conn.execute(f"SELECT prefix, version FROM {VERSIONS_TABLE}").fetchall()
    [('p', 1)]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from .embed_threads import bounded_threads

#: Each namespace's vector version, kept by triggers on ``store_vectors``.
VERSIONS_TABLE = "swarmgraph_vector_versions"
#: How far below the ``limit``-th best approximate score a vector is still scored exactly.
#: The float32 product and sqlite-vec's own sums differ by far less (about 1e-7 for
#: unit-length 256- or 384-dimension vectors), so the exact top ``limit`` is always inside.
MARGIN = 1e-3
#: The vectors held in process, all namespaces together (64 MiB: 65,000 384-dimension
#: vectors); past it the least recently used namespace is dropped (read again when asked).
CACHE_BYTES = 64 * 2**20

_BUMP = (
    f"INSERT INTO {VERSIONS_TABLE} (prefix, version) VALUES ({{row}}.prefix, 1) "
    "ON CONFLICT (prefix) DO UPDATE SET version = version + 1;"
)
VERSIONS_SCHEMA = [
    f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} "
    "(prefix TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS {VERSIONS_TABLE}_{event.lower()} AFTER {event} ON "
        f"store_vectors BEGIN {_BUMP.format(row=row)} END"
        for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old"))
    ),
]


def setup_vector_versions(conn: Any) -> None:
    """Create the versions table and its triggers if the file has none (idempotent)."""
    for statement in VERSIONS_SCHEMA:
        conn.execute(statement)


@dataclass
class _Matrix:
    """One namespace's unit vectors, **one per column**: ``columns[:, i]`` is ``keys[i]``'s.

    Column-major because a recall's product then runs OpenBLAS's plain matrix-vector
    kernel (``query @ columns``, each dimension's row of all keys added in turn), which
    streams the matrix at about twice the rate of its transposed kernel, one dot product
    per key, that row-major vectors (``vectors @ query``) run: measured for issue 39,
    10,000 x 384 float32 (15 MB, more than this machine's caches keep between recalls),
    0.72 ms against 1.45 ms on one thread, the same at 1,000 (0.03 ms). The product is
    all of a recall that grows with the facts held, so this is its growth halved.
    """

    version: int
    keys: list[str]
    #: float32 (dims, room): the first ``len(keys)`` columns are the keys' unit vectors,
    #: the rest room to append a written key without a copy.
    columns: Any
    #: Each key's column; ``None`` when a key has several (vectors of several fields),
    #: which a patch does not follow: such a matrix is read again after a write.
    rows: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.rows is None:
            rows = {key: i for i, key in enumerate(self.keys)}
            self.rows = rows if len(rows) == len(self.keys) else None

    @property
    def vectors(self) -> Any:
        """The keys' columns (dims x keys): a view, strided over the room, no copy."""
        return self.columns[:, : len(self.keys)]

    @property
    def size(self) -> int:
        return int(self.columns.nbytes)

    def put(self, key: str, unit: Any) -> None:
        """Column ``key`` becomes ``unit`` (overwritten in place, or appended)."""
        import numpy as np

        assert self.rows is not None
        row = self.rows.get(key)
        if row is None:
            row = len(self.keys)
            if row == self.columns.shape[1]:  # full: twice the room, copied once
                grown = np.empty((self.columns.shape[0], max(8, 2 * row)), dtype=np.float32)
                grown[:, :row] = self.columns[:, :row]
                self.columns = grown
            self.keys.append(key)
            self.rows[key] = row
        self.columns[:, row] = unit

    def drop(self, key: str) -> None:
        """Remove ``key``'s column: the last column takes its place."""
        assert self.rows is not None
        row = self.rows.pop(key, None)
        if row is None:
            return
        last = len(self.keys) - 1
        if row != last:
            moved = self.keys[last]
            self.columns[:, row] = self.columns[:, last]
            self.keys[row] = moved
            self.rows[moved] = row
        self.keys.pop()


@dataclass
class Patch:
    """A write's changes to held matrices, read inside its transaction: per prefix, the
    version before and after it, and each written key's vector now (``None``: it has none)."""

    prefixes: dict[str, tuple[int, int, dict[str, bytes | None]]]


class VectorCache:
    """The matrices of one SQLite file's namespaces (see the module docstring)."""

    def __init__(self, dims: int, max_bytes: int | None = None) -> None:
        self.dims = dims
        self.max_bytes = CACHE_BYTES if max_bytes is None else max_bytes
        self._held: OrderedDict[str, _Matrix] = OrderedDict()

    def matrices(self, conn: Any, prefixes: Sequence[str]) -> list[_Matrix]:
        """The current matrix of each prefix (read again where its version moved)."""
        marks = ", ".join("?" * len(prefixes))
        versions = dict(
            conn.execute(
                f"SELECT prefix, version FROM {VERSIONS_TABLE} WHERE prefix IN ({marks})",
                list(prefixes),
            ).fetchall()
        )
        found = []
        for prefix in prefixes:
            version = int(versions.get(prefix, 0))
            held = self._held.get(prefix)
            if held is None or held.version != version:
                # The version was read first: a write between the two reads moves it
                # again, so the next recall reads these vectors afresh.
                held = self._held[prefix] = self._read(conn, prefix, version)
            self._held.move_to_end(prefix)
            found.append(held)
        total = sum(m.size for m in self._held.values())
        while total > self.max_bytes and len(self._held) > len(prefixes):
            _, dropped = self._held.popitem(last=False)
            total -= dropped.size
        return found

    def _read(self, conn: Any, prefix: str, version: int) -> _Matrix:
        import numpy as np

        rows = conn.execute(
            "SELECT key, embedding FROM store_vectors WHERE prefix = ?", (prefix,)
        ).fetchall()
        rows = [(key, blob) for key, blob in rows if self._usable(blob)]
        vectors = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
        vectors = vectors.reshape(len(rows), self.dims)
        norms = np.linalg.norm(vectors, axis=1)
        # A zero (or non-finite) vector has no cosine: sqlite-vec gives it no score, so it
        # is left out here once, not masked out of every recall's product.
        kept = np.flatnonzero(np.isfinite(norms) & (norms > 0))
        if len(kept) < len(rows):
            rows, vectors, norms = [rows[i] for i in kept], vectors[kept], norms[kept]
        # unit vectors (a recall's product is the cosine itself), one per column (_Matrix)
        columns = np.ascontiguousarray((vectors / norms[:, None]).T, dtype=np.float32)
        return _Matrix(version, [key for key, _ in rows], columns)

    def _usable(self, blob: bytes | None) -> bool:
        return bool(blob) and len(blob or b"") == 4 * self.dims

    def changes(self, conn: Any, written: dict[str, set[str]]) -> Patch | None:
        """What a write does to the held matrices: called inside its transaction, before
        (``Patch.prefixes`` versions before) and again after its statements ran (``None``
        when no written prefix is held). See :meth:`apply`."""
        held = [p for p in written if p in self._held and self._held[p].rows is not None]
        if not held:
            return None
        return Patch({p: (self._version(conn, p), 0, {}) for p in held})

    def read_back(self, conn: Any, patch: Patch, written: dict[str, set[str]]) -> None:
        """Fill ``patch`` after the write's statements ran (same transaction): each
        written key's vector now, and each prefix's version now."""
        for prefix, (before, _, vectors) in list(patch.prefixes.items()):
            keys = sorted(written[prefix])
            for key in keys:
                vectors[key] = None
            for start in range(0, len(keys), 400):  # under SQLite's variable limit
                chunk = keys[start : start + 400]
                for key, blob in conn.execute(
                    "SELECT key, embedding FROM store_vectors WHERE prefix = ? "
                    f"AND key IN ({', '.join('?' * len(chunk))})",
                    [prefix, *chunk],
                ).fetchall():
                    if vectors[key] is not None:  # several fields: read the matrix again
                        before = -1
                    vectors[key] = blob
            patch.prefixes[prefix] = (before, self._version(conn, prefix), vectors)

    def apply(self, patch: Patch) -> None:
        """Bring the held matrices up to a committed write's ``patch``: a matrix that was
        current before the write gets its written rows replaced, added or removed in place
        and the version after; any other is dropped (read again on the next recall)."""
        import numpy as np

        for prefix, (before, after, vectors) in patch.prefixes.items():
            held = self._held.get(prefix)
            if held is None:
                continue
            if held.version != before or held.rows is None:
                del self._held[prefix]
                continue
            for key, blob in vectors.items():
                if not self._usable(blob):
                    held.drop(key)
                    continue
                vector = np.frombuffer(cast(bytes, blob), dtype=np.float32)
                norm = float(np.linalg.norm(vector))
                if np.isfinite(norm) and norm > 0:
                    held.put(key, vector / np.float32(norm))
                else:
                    held.drop(key)
            held.version = after

    @staticmethod
    def _version(conn: Any, prefix: str) -> int:
        row = conn.execute(
            f"SELECT version FROM {VERSIONS_TABLE} WHERE prefix = ?", (prefix,)
        ).fetchone()
        return 0 if row is None else int(row[0])


def approximate(matrices: Sequence[_Matrix], query: Any) -> Any:
    """Cosine similarity of ``query`` to every row of ``matrices``, in one array (rows in
    order); all ``-inf`` when ``query`` is a zero vector (sqlite-vec gives it no score).

    Example:
        >>> import numpy as np
        >>> m = _Matrix(1, ["a", "b"], np.array([[1, 0, 9], [0, 1, 9]], np.float32))
        >>> approximate([m], np.array([3, 4], np.float32)).tolist()
        [0.6000000238418579, 0.800000011920929]
        >>> approximate([m], np.zeros(2, np.float32)).tolist()
        [-inf, -inf]
    """
    import numpy as np

    total = sum(len(matrix.keys) for matrix in matrices)
    norm = float(np.linalg.norm(query))
    if not (np.isfinite(norm) and norm > 0):
        return np.full(total, -np.inf, dtype=np.float32)
    unit = (query / norm).astype(np.float32)
    held = [m.vectors for m in matrices if len(m.keys)]
    with bounded_threads() as bounded:
        # BLAS's matrix-vector product on one thread (.embed_threads: on a busy machine a
        # pool's threads cost more than they save), over the columns (_Matrix says why);
        # einsum's own loop where BLAS cannot be bounded (no threadpoolctl), so no thread
        # is woken. The vectors are unit length and finite (:meth:`VectorCache._read`): no
        # pass over the scores to mask NaN.
        scores = [unit @ v if bounded else np.einsum("ji,j->i", v, unit) for v in held]
    if len(scores) == 1:
        return scores[0]
    return np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)


def candidates(scores: Any, limit: int) -> Any:
    """Indexes of ``scores`` within :data:`MARGIN` of the ``limit``-th best (all of them
    when there are no more than ``limit``).

    Example:
        >>> import numpy as np
        >>> candidates(np.array([0.9, 0.1, 0.5, 0.4999, -np.inf]), 2).tolist()
        [0, 2, 3]
    """
    import numpy as np

    if len(scores) <= limit:
        return np.flatnonzero(scores > -np.inf)
    floor = np.partition(scores, len(scores) - limit)[len(scores) - limit]
    if floor == -np.inf:  # fewer than ``limit`` scored: only those
        return np.flatnonzero(scores > -np.inf)
    return np.flatnonzero(scores >= floor - MARGIN)


def owners(
    prefixes: Sequence[str], matrices: Sequence[_Matrix], rows: Any
) -> list[tuple[str, str]]:
    """The (prefix, key) of each of ``rows``, indexes into :func:`approximate`'s array."""
    import numpy as np

    ends = np.cumsum([len(m.keys) for m in matrices])
    found = []
    for row in rows.tolist():
        n = int(np.searchsorted(ends, row, side="right"))
        found.append((prefixes[n], matrices[n].keys[row - (int(ends[n - 1]) if n else 0)]))
    return found
