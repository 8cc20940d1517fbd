"""LangGraph's ``SqliteStore`` as long-term memory opens it: a failed batch rolls back,
migrations run atomically across processes, and the file carries its full-text index
(:mod:`.lexical_sql`) and, with embeddings, its vector index (:mod:`.vector_index`).

Example:
    >>> import os, tempfile
    >>> store = open_sqlite(os.path.join(tempfile.mkdtemp(), "ltm.db"))
    >>> type(store).__name__
    '_SqliteStore'
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from langgraph.store.base import IndexConfig, Op, PutOp, Result

from .lexical_sql import setup_sqlite_fts
from .sqlite_wal import BUSY_TIMEOUT_MS, use_wal
from .vector_cache import Patch, VectorCache, setup_vector_versions
from .vector_index import claim_sqlite_index, embed_missing, embeddings_name

if TYPE_CHECKING:
    from langgraph.store.sqlite import SqliteStore


@functools.cache  # one subclass, made on first use (langgraph.store.sqlite loads then)
def _sqlite_store_class() -> type[SqliteStore]:
    from langgraph.store.sqlite import SqliteStore

    class _SqliteStore(SqliteStore):
        """``SqliteStore`` that rolls back a failed batch and migrates atomically.

        The upstream cursor commits in ``finally``, so a batch that failed halfway would
        commit its first half; and its ``setup`` commits each migration separately, so two
        processes starting at once could both apply one. Here a batch that raises rolls
        back, and every pending migration runs in one ``BEGIN IMMEDIATE`` transaction.

        With :attr:`vector_cache` set (vector recall's matrices, :mod:`.vector_cache`), a
        batch that writes runs in a ``BEGIN IMMEDIATE`` transaction (no other writer
        between the versions it reads and its statements) and reads back what it changed
        in the held matrices, which are patched once it has committed.
        """

        vector_cache: VectorCache | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Reentrant: a writing batch holds it around the upstream batch, which takes it.
            self.lock = threading.RLock()  # type: ignore[assignment]
            self._immediate = False
            self._patches: list[Patch] = []

        def batch(self, ops: Iterable[Op]) -> list[Result]:
            ops = list(ops)
            if self.vector_cache is None or not any(isinstance(op, PutOp) for op in ops):
                return super().batch(ops)
            with self.lock:
                self._immediate = True
                try:
                    return super().batch(ops)
                finally:
                    self._immediate = False

        def _batch_put_ops(self, put_ops: Sequence[tuple[int, PutOp]], cur: Any) -> None:
            cache = self.vector_cache
            if cache is None or not self._immediate:
                super()._batch_put_ops(put_ops, cur)
                self._delete_vectors(put_ops, cur)
                return
            written: dict[str, set[str]] = {}
            for _, op in put_ops:
                written.setdefault(".".join(op.namespace), set()).add(op.key)
            patch = cache.changes(cur, written)
            super()._batch_put_ops(put_ops, cur)
            self._delete_vectors(put_ops, cur)
            if patch is not None:
                cache.read_back(cur, patch, written)
                self._patches.append(patch)

        def _delete_vectors(self, put_ops: Sequence[tuple[int, PutOp]], cur: Any) -> None:
            """Erase a deleted item's vectors with it. ``store_vectors`` declares ``ON DELETE
            CASCADE``, but SQLite enforces it only under ``PRAGMA foreign_keys``, which stays
            off: with it on, the upstream's ``INSERT OR REPLACE INTO store`` would cascade
            too, and an update written without ``index`` would lose its vectors. Without
            this, ``forget(purge=True)`` left the erased text's embedding in the file."""
            if self.index_config:
                gone = [(".".join(op.namespace), op.key) for _, op in put_ops if op.value is None]
                cur.executemany("DELETE FROM store_vectors WHERE prefix = ? AND key = ?", gone)

        @contextmanager
        def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
            if not self.is_setup:
                self.setup()
            with self.lock:
                cur = self.conn.cursor()
                if not transaction:
                    try:
                        yield cur
                    finally:
                        cur.close()
                    return
                self.conn.execute("BEGIN IMMEDIATE" if self._immediate else "BEGIN")
                try:
                    yield cur
                except BaseException:
                    self._patches.clear()  # rolled back: the held matrices stay as they were
                    self.conn.execute("ROLLBACK")
                    raise
                else:
                    self.conn.execute("COMMIT")
                    patches, self._patches = self._patches, []
                    if self.vector_cache is not None:
                        for patch in patches:
                            self.vector_cache.apply(patch)
                finally:
                    self._patches.clear()  # a COMMIT that failed: nothing to apply
                    cur.close()

        def setup(self) -> None:
            with self.lock:
                if self.is_setup:
                    return
                self.conn.execute("BEGIN IMMEDIATE")  # waits out another process's setup
                try:
                    self.conn.execute(
                        "CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)"
                    )
                    row = self.conn.execute("SELECT max(v) FROM store_migrations").fetchone()
                    done = -1 if row is None or row[0] is None else int(row[0])
                    for version in range(done + 1, len(self.MIGRATIONS)):
                        self.conn.execute(self.MIGRATIONS[version])  # one statement each
                        self.conn.execute("INSERT INTO store_migrations (v) VALUES (?)", (version,))
                    if self.index_config:  # the connection has sqlite-vec loaded
                        self._migrate_vectors()
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
                self.is_setup = True

        def _migrate_vectors(self) -> None:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY)"
            )
            row = self.conn.execute("SELECT max(v) FROM vector_migrations").fetchone()
            done = -1 if row is None or row[0] is None else int(row[0])
            for version in range(done + 1, len(self.VECTOR_MIGRATIONS)):
                self.conn.execute(self.VECTOR_MIGRATIONS[version])
                self.conn.execute("INSERT INTO vector_migrations (v) VALUES (?)", (version,))

    return _SqliteStore


def open_sqlite(path: str, index: IndexConfig | None = None, *, url: str = "") -> SqliteStore:
    """The ``SqliteStore`` of the file ``path``, set up (tables, full-text index, vectors)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    options: dict[str, Any] = {
        "check_same_thread": False,  # the store's own lock serialises this process's threads
        "isolation_level": None,  # the store issues BEGIN/COMMIT itself
        "timeout": BUSY_TIMEOUT_MS / 1000,
    }
    if index is None:
        conn = sqlite3.connect(path, **options)
    else:
        from .sqlite_vec_driver import connect_with_sqlite_vec

        conn = connect_with_sqlite_vec(path, **options)
    use_wal(conn)
    # SqliteStore reads the fields to embed from "text_fields", not IndexConfig's "fields"
    # (langgraph-checkpoint-sqlite 3.x); without it, it embeds the whole JSON document,
    # timestamps and all.
    sqlite_index = None if index is None else {**index, "text_fields": index["fields"]}
    store = _sqlite_store_class()(conn, index=cast(Any, sqlite_index))
    store.setup()
    setup_sqlite_fts(conn)
    if index is not None:
        claim_sqlite_index(store, url, embeddings_name(index["embed"]), index["dims"])  # type: ignore[arg-type]
        with store.lock:  # the versions that tell a recall its vectors changed
            conn.execute("BEGIN IMMEDIATE")
            try:
                setup_vector_versions(conn)
                # what a purge left behind before deletes erased their vectors (above)
                conn.execute(
                    "DELETE FROM store_vectors WHERE NOT EXISTS (SELECT 1 FROM store s "
                    "WHERE s.prefix = store_vectors.prefix AND s.key = store_vectors.key)"
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        embed_missing(store)
    return store
