"""Opening LangGraph's own ``BaseStore`` from a storage URL, for long-term memory.

One URL rule for every kind of memory (see :mod:`swarmgraph.memory.urls`): no URL means the
default store (``$SWARMGRAPH_DB``, else ``.swarmgraph/swarmgraph.db``), a bare path means
SQLite, and passwords never appear in errors or ``repr``.

=====================  ============================================================  ==========
URL                    store                                                         vector index
=====================  ============================================================  ==========
``memory://[name]``    ``InMemoryStore``, one per name in this process               yes (tested)
``sqlite:///path``     ``SqliteStore`` (langgraph-checkpoint-sqlite), table ``store``  no
``postgresql://...``   ``PostgresStore`` (langgraph-checkpoint-postgres, extra        no
                       ``postgres``), table ``store``, pooled
=====================  ============================================================  ==========

A store is opened once per URL per process (per pid: a forked child opens its own
connections) and its tables are created or migrated on first use, once per process, under a
lock that serialises concurrent processes (an ``IMMEDIATE`` transaction in SQLite, an
advisory lock in Postgres). :meth:`LongTermStore.write` applies a list of puts atomically:
a memory and its history entry are committed together or not at all, even on ``kill -9``.

Vector search: only ``memory://`` is offered with ``embeddings`` here. ``SqliteStore`` needs
the sqlite-vec extension loaded into Python's ``sqlite3`` (this project's Python cannot load
extensions) and ``PostgresStore`` needs pgvector on the server; neither is tested, so both
refuse ``embeddings`` with a clear error rather than claim support. Lexical search (BM25)
works on every backend.

Example:
    >>> store = open_long_term_store("memory://doctest-ltm-store")
    >>> store is open_long_term_store("memory://doctest-ltm-store")   # shared per name
    True
    >>> type(store.store).__name__, store.vector_search
    ('InMemoryStore', False)
    >>> open_long_term_store("redis://localhost:6379/0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: long-term memory needs memory://, sqlite:/// or postgresql://; ...
"""

from __future__ import annotations

import atexit
import functools
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, cast

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, IndexConfig, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from .urls import default_url, memory_namespace, redact_url, shown_url, sqlite_path, url_scheme

if TYPE_CHECKING:
    from langgraph.store.postgres import PostgresStore
    from langgraph.store.sqlite import SqliteStore

#: The field of a stored memory that the vector index embeds (see ``LongTermMemory``).
EMBEDDED_FIELD = "memory"
#: How long (ms) a SQLite writer waits for another process's lock before failing.
SQLITE_BUSY_TIMEOUT_MS = int(os.environ.get("SWARMGRAPH_SQLITE_BUSY_TIMEOUT_MS", "60000"))
SCHEMES = ("memory", "sqlite", "postgresql")
#: Serialises Postgres store migrations across processes ("SWGLTM\0\0").
_PG_SETUP_LOCK = 0x5357_474C_544D_0000


class LongTermStore:
    """A LangGraph ``BaseStore`` opened from a URL, with an atomic :meth:`write`.

    ``store`` is the plain LangGraph store: hand it to ``graph.compile(store=...)`` or read it
    with LangGraph's API. :meth:`read` runs ops that only read; :meth:`write` runs puts
    (and deletes: a put of ``None``) in one transaction.
    """

    def __init__(
        self,
        url: str,
        store: BaseStore,
        *,
        lock: AbstractContextManager[Any] | None = None,
        embeddings: Embeddings | None = None,
    ) -> None:
        self.url = shown_url(url)
        self.scheme = url_scheme(url)
        self.store = store
        self.embeddings = embeddings
        # memory:// has no transactions of its own: one lock per name stands in for them.
        self._lock = lock

    @property
    def vector_search(self) -> bool:
        """True when ``store`` embeds memories (``search(query=...)`` ranks by similarity)."""
        return self.embeddings is not None

    def _guard(self) -> AbstractContextManager[Any]:
        return self._lock if self._lock is not None else nullcontext()

    def read(self, ops: Sequence[Op]) -> list[Result]:
        """Run read ops (gets and searches) and return their results in order."""
        with self._guard():
            return self.store.batch(ops)

    def write(self, ops: Sequence[PutOp]) -> None:
        """Apply ``ops`` atomically: all of them are committed, or none."""
        with self._guard():
            self.store.batch(ops)

    def __repr__(self) -> str:
        return f"LongTermStore({self.url!r}, {type(self.store).__name__})"


class _PostgresLongTermStore(LongTermStore):
    """Reads share a pool; a write takes one pooled connection and one transaction."""

    def __init__(self, url: str, store: PostgresStore, pool: Any) -> None:
        super().__init__(url, store)
        self._raw_url = url
        self._pool = pool

    def read(self, ops: Sequence[Op]) -> list[Result]:
        with _postgres_errors(self._raw_url):
            return self.store.batch(ops)

    def write(self, ops: Sequence[PutOp]) -> None:
        from langgraph.store.postgres import PostgresStore

        with (
            _postgres_errors(self._raw_url),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            # PostgresStore on one connection runs its statements inside our transaction.
            PostgresStore(conn).batch(ops)


_lock = threading.Lock()
_memory_stores: dict[str, LongTermStore] = {}
_stores: dict[tuple[int, str], LongTermStore] = {}


def open_long_term_store(
    url: str | None = None, *, embeddings: Embeddings | None = None, dims: int | None = None
) -> LongTermStore:
    """The process-wide long-term store ``url`` names (opened and migrated on first use).

    ``embeddings``: LangChain embeddings for the store's vector index (``memory://`` only,
    see the module docstring); ``dims`` is their size, measured with one ``embed_query``
    call when not given. The first opener of a ``memory://`` name fixes its embeddings;
    opening it again with different ones is a ``ValueError``.

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "ltm.db")
        >>> type(open_long_term_store(url).store).__name__
        '_SqliteStore'
        >>> open_long_term_store("sqlite://")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: in-memory SQLite ('sqlite://') loses data across connections; ...
    """
    url = default_url() if url is None else url
    scheme = url_scheme(url)
    if scheme not in SCHEMES:
        raise ValueError(
            f"long-term memory needs memory://, sqlite:/// or postgresql://; "
            f"{redact_url(url)!r} names {scheme!r}, which has no LangGraph store here"
        )
    if scheme == "memory":
        return _open_memory(url, embeddings, dims)
    if embeddings is not None:
        raise ValueError(
            f"embeddings are supported on memory:// stores only; {scheme}:// stores use "
            "lexical (BM25) recall. SqliteStore's index needs sqlite-vec loaded into "
            "Python's sqlite3 and PostgresStore's needs pgvector: neither is tested here"
        )
    if scheme == "sqlite":
        path = str(sqlite_path(url))
        key = (os.getpid(), f"sqlite:{path}")
        with _lock:
            store = _stores.get(key)
            if store is None:
                store = _stores[key] = LongTermStore(url, _open_sqlite(path))
            return store
    key = (os.getpid(), url)
    with _lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = _open_postgres(url)
        return store


def store_for(store: BaseStore) -> LongTermStore:
    """The :class:`LongTermStore` around ``store``: the one :func:`open_long_term_store` made
    when ``store`` came from it (``LongTermMemory(...).store``, handed to
    ``graph.compile(store=...)``), else a new wrapper whose writes are as atomic as
    ``store.batch`` is (serialised in this process by a lock).

    Example:
        >>> opened = open_long_term_store("memory://doctest-store-for")
        >>> store_for(opened.store) is opened
        True
        >>> store_for(InMemoryStore()).url
        'memory://'
    """
    with _lock:
        for known in (*_memory_stores.values(), *_stores.values()):
            if known.store is store:
                return known
    return LongTermStore("memory://", store, lock=threading.RLock())


def _index(embeddings: Embeddings, dims: int | None) -> IndexConfig:
    if dims is None:
        dims = len(embeddings.embed_query("dimension probe"))
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ValueError(f"dims must be a positive int, got {dims!r}")
    return {"dims": dims, "embed": embeddings, "fields": [EMBEDDED_FIELD]}


def _open_memory(url: str, embeddings: Embeddings | None, dims: int | None) -> LongTermStore:
    name = memory_namespace(url)
    with _lock:
        store = _memory_stores.get(name)
        if store is None:
            index = _index(embeddings, dims) if embeddings is not None else None
            store = LongTermStore(
                url, InMemoryStore(index=index), lock=threading.RLock(), embeddings=embeddings
            )
            _memory_stores[name] = store
        elif embeddings is not None and store.embeddings is not embeddings:
            raise ValueError(
                f"{shown_url(url)} is already open in this process with "
                f"{'other' if store.embeddings is not None else 'no'} embeddings; a store's "
                "vector index has one embedding model: pass the same object, or none"
            )
        return store


@functools.cache  # one subclass, made on first use (langgraph.store.sqlite loads then)
def _sqlite_store_class() -> type[SqliteStore]:
    from langgraph.store.sqlite import SqliteStore

    class _SqliteStore(SqliteStore):
        """``SqliteStore`` that rolls back a failed batch and migrates atomically.

        The upstream cursor commits in ``finally``, so a batch that failed halfway would
        commit its first half; and its ``setup`` commits each migration separately, so two
        processes starting at once could both apply one. Here a batch that raises rolls
        back, and every pending migration runs in one ``BEGIN IMMEDIATE`` transaction.
        """

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
                self.conn.execute("BEGIN")
                try:
                    yield cur
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                else:
                    self.conn.execute("COMMIT")
                finally:
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
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
                self.is_setup = True

    return _SqliteStore


def _open_sqlite(path: str) -> SqliteStore:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    conn = sqlite3.connect(
        path,
        check_same_thread=False,  # the store's own lock serialises this process's threads
        isolation_level=None,  # the store issues BEGIN/COMMIT itself
        timeout=SQLITE_BUSY_TIMEOUT_MS / 1000,
    )
    conn.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
    conn.execute("PRAGMA synchronous = NORMAL")  # safe against a killed process in WAL mode
    store = _sqlite_store_class()(conn)
    store.setup()
    return store


@contextmanager
def _postgres_errors(url: str) -> Iterator[None]:
    """Driver errors that mean "the server is not there" as ``StorageUnavailable``."""
    import psycopg
    import psycopg_pool

    from .errors import StorageUnavailable

    try:
        yield
    except (psycopg.OperationalError, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed) as e:
        raise StorageUnavailable(url, str(e).strip() or type(e).__name__) from None


def _open_postgres(url: str) -> LongTermStore:
    try:
        from langgraph.store.postgres import PostgresStore
        from psycopg import Connection
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import ConnectionPool
    except ImportError as error:  # pragma: no cover - the extra is installed in tests
        raise ImportError(
            "postgresql:// long-term memory needs the postgres extra: "
            "pip install 'swarmgraph[postgres]'"
        ) from error
    # The same URL parameters as Session's Postgres stores (pool_max, pool_timeout, ...).
    from .backends.postgres.engine import conninfo, probe

    info, options = conninfo(url)
    probe(url)  # a wrong database or password fails here, with the server's reason
    with _postgres_errors(url):
        # PostgresStore reads rows as dicts and needs autocommit (its DDL includes
        # CREATE INDEX CONCURRENTLY); writes open their own transaction.
        pool = cast(
            "ConnectionPool[Connection[DictRow]]",
            ConnectionPool(
                info,
                min_size=1,
                max_size=max(1, int(options["pool_max"])),
                timeout=float(options["pool_timeout"]),
                kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
                check=ConnectionPool.check_connection,  # replace connections a restart killed
                name=f"swarmgraph-ltm-{os.getpid()}",
                open=True,
            ),
        )
        with pool.connection() as conn:
            # A session lock, not a transaction: CREATE INDEX CONCURRENTLY refuses those.
            conn.execute("SELECT pg_advisory_lock(%s)", (_PG_SETUP_LOCK,))
            try:
                PostgresStore(conn).setup()
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_SETUP_LOCK,))
    atexit.register(pool.close, timeout=1.0)
    return _PostgresLongTermStore(url, PostgresStore(pool), pool)
