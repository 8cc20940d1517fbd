"""Opening LangGraph's own ``BaseStore`` from a storage URL, for long-term memory.

One URL rule for every kind of memory (see :mod:`swarmgraph.memory.urls`): no URL means the
default store (``$SWARMGRAPH_DB``, else ``.swarmgraph/swarmgraph.db``), a bare path means
SQLite, and passwords never appear in errors or ``repr``.

=====================  ============================================================  ==========
URL                    store                                                         vector index
=====================  ============================================================  ==========
``memory://[name]``    ``InMemoryStore``, one per name in this process               yes (tested)
``sqlite:///path``     ``SqliteStore`` (langgraph-checkpoint-sqlite), table ``store``  yes (tested,
                                                                                     sqlite-vec)
``postgresql://...``   ``PostgresStore`` (langgraph-checkpoint-postgres, extra        needs pgvector
                       ``postgres``), table ``store``, pooled                        on the server
=====================  ============================================================  ==========

A store is opened once per URL per process (per pid: a forked child opens its own
connections) and its tables are created or migrated on first use, once per process, under a
lock that serialises concurrent processes (an ``IMMEDIATE`` transaction in SQLite, an
advisory lock in Postgres). :meth:`LongTermStore.write` applies a list of puts atomically:
a memory and its history entry are committed together or not at all, even on ``kill -9``.

Vector search (``embeddings=``): the store's own index embeds each current fact's
``memory`` field (its key as words and its value, ``"home city: Lyon"``:
:func:`.fact_recall.indexed_text`). On SQLite the index is LangGraph's ``store_vectors``
table, ranked by sqlite-vec's functions, loaded through :mod:`.sqlite_vec_driver`; the file
records which embeddings (class, model, dims) filled it, and refuses others, since vectors
of two models cannot be compared. Opening a file with embeddings embeds any current fact
that has no vector yet (written by a process without embeddings). On Postgres the index
needs the pgvector extension on the server: without it, ``embeddings=`` is a
:class:`~swarmgraph.memory.errors.StorageConfigurationError` naming pgvector (the Postgres
this project tests against has none, so the pgvector path itself is untested). Lexical
search (BM25) works on every backend, with or without embeddings.

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
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, cast

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, IndexConfig, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from .lexical_index import LexicalIndex, MemoryLexicalIndex
from .lexical_sql import PostgresFtsIndex, SqliteFtsIndex, setup_postgres_fts
from .long_term_sqlite import open_sqlite
from .urls import default_url, memory_namespace, redact_url, shown_url, sqlite_path, url_scheme
from .vector_index import require_pgvector

if TYPE_CHECKING:
    from langgraph.store.postgres import PostgresStore
    from langgraph.store.sqlite import SqliteStore

    from .vector_cache import VectorCache

#: The field of a stored memory that the vector index embeds (see ``LongTermMemory``).
EMBEDDED_FIELD = "memory"
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
        dims: int | None = None,
        lexical: LexicalIndex | None = None,
    ) -> None:
        self.url = shown_url(url)
        self.scheme = url_scheme(url)
        self.store = store
        self.embeddings = embeddings
        self.dims = dims
        # memory:// has no transactions of its own: one lock per name stands in for them.
        self._lock = lock
        #: Lexical recall: the database's own full-text index, else one kept in process.
        self.lexical: LexicalIndex = lexical if lexical is not None else MemoryLexicalIndex()
        self._vectors: VectorCache | None = None  # SQLite vectors held in process, on first use

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
            self.lexical.apply(ops)  # an in-process index follows only committed writes

    def lexical_search(
        self, namespaces: Sequence[tuple[str, ...]], query: str, k: int
    ) -> list[tuple[dict[str, Any], float]]:
        """The ``k`` facts of ``namespaces`` best matching ``query`` by the lexical index
        (records and scores, best first; no searchable word: the ``k`` newest)."""
        with self._guard():
            return self.lexical.search(self.store, namespaces, query, k)

    def nearest(
        self, namespaces: Sequence[tuple[str, ...]], query: str, k: int
    ) -> list[tuple[dict[str, Any], float]]:
        """SQLite with embeddings: the ``k`` current facts of ``namespaces`` nearest
        ``query`` by the file's vector index (records and similarities, best first), read
        without parsing every row (:func:`.vector_index.sqlite_nearest`)."""
        from .vector_cache import VectorCache
        from .vector_index import sqlite_nearest

        if self.scheme != "sqlite" or self.embeddings is None or self.dims is None:
            raise ValueError(f"{self.url} has no SQLite vector index")
        if self._vectors is None:
            self._vectors = VectorCache(self.dims)
            # this process's writes patch the held matrices (not read again after each)
            self.store.vector_cache = self._vectors  # type: ignore[attr-defined]
        return sqlite_nearest(cast("SqliteStore", self.store), self._vectors, namespaces, query, k)

    def __repr__(self) -> str:
        return f"LongTermStore({self.url!r}, {type(self.store).__name__})"


class _PostgresLongTermStore(LongTermStore):
    """Reads share a pool; a write takes one pooled connection and one transaction."""

    def __init__(
        self, url: str, store: PostgresStore, pool: Any, index: IndexConfig | None = None
    ) -> None:
        super().__init__(
            url,
            store,
            embeddings=index["embed"] if index else None,  # type: ignore[arg-type]
            dims=index["dims"] if index else None,
            lexical=PostgresFtsIndex(pool),
        )
        self._raw_url = url
        self._pool = pool
        self._index = index

    def read(self, ops: Sequence[Op]) -> list[Result]:
        with _postgres_errors(self._raw_url):
            return self.store.batch(ops)

    def lexical_search(
        self, namespaces: Sequence[tuple[str, ...]], query: str, k: int
    ) -> list[tuple[dict[str, Any], float]]:
        with _postgres_errors(self._raw_url):
            return self.lexical.search(self.store, namespaces, query, k)

    def write(self, ops: Sequence[PutOp]) -> None:
        from langgraph.store.postgres import PostgresStore

        with (
            _postgres_errors(self._raw_url),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            # PostgresStore on one connection runs its statements inside our transaction.
            PostgresStore(conn, index=cast(Any, self._index)).batch(ops)


_lock = threading.Lock()
_memory_stores: dict[str, LongTermStore] = {}
_stores: dict[tuple[int, str], LongTermStore] = {}
_wrapped: weakref.WeakKeyDictionary[BaseStore, tuple[Any, MemoryLexicalIndex]] = (
    weakref.WeakKeyDictionary()
)


def open_long_term_store(
    url: str | None = None, *, embeddings: Embeddings | None = None, dims: int | None = None
) -> LongTermStore:
    """The process-wide long-term store ``url`` names (opened and migrated on first use).

    ``embeddings``: LangChain embeddings for the store's vector index (see the module
    docstring); ``dims`` is their size, measured with one ``embed_query`` call when not
    given. The first opener of a store in a process fixes its embeddings: opening it again
    with equal ones (``==``) or none shares it; with other ones, or with embeddings where it
    was opened without, is a ``ValueError``.

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
    if url is None and embeddings is not None:
        _check_default_vector_file()
    url = default_url() if url is None else url
    scheme = url_scheme(url)
    if scheme not in SCHEMES:
        raise ValueError(
            f"long-term memory needs memory://, sqlite:/// or postgresql://; "
            f"{redact_url(url)!r} names {scheme!r}, which has no LangGraph store here"
        )
    if scheme == "memory":
        return _open_memory(url, embeddings, dims)
    if scheme == "sqlite":
        path = str(sqlite_path(url))
        key = (os.getpid(), f"sqlite:{path}")
        with _lock:
            store = _stores.get(key)
            if store is None:
                index = _index(embeddings, dims) if embeddings is not None else None
                store = LongTermStore(
                    url,
                    open_sqlite(path, index, url=url),
                    embeddings=embeddings,
                    dims=index["dims"] if index else None,
                    lexical=SqliteFtsIndex(),
                )
                _stores[key] = store
            else:
                _check_same_embeddings(store, embeddings, dims)
            return store
    key = (os.getpid(), url)
    with _lock:
        store = _stores.get(key)
        if store is None:
            index = _index(embeddings, dims) if embeddings is not None else None
            store = _stores[key] = _open_postgres(url, index)
        else:
            _check_same_embeddings(store, embeddings, dims)
        return store


def close_long_term_store(url: str) -> bool:
    """Close and forget this process's open long-term store for ``url`` (SQLite: its
    connection; Postgres: its pool); the next open makes a new one, as a fresh process
    would. ``False`` when none was open (a ``memory://`` store holds no file: nothing to do).
    For a program that opens many store files (a benchmark's, a test's), so they don't
    stay open after their folder is gone.

    Example:
        >>> import os, tempfile
        >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "gone.db")
        >>> first = open_long_term_store(url)
        >>> close_long_term_store(url), close_long_term_store(url)
        (True, False)
        >>> open_long_term_store(url) is first
        False
    """
    scheme = url_scheme(url)
    if scheme == "sqlite":
        key = (os.getpid(), f"sqlite:{sqlite_path(url)}")
    elif scheme == "postgresql":
        key = (os.getpid(), url)
    else:
        return False
    with _lock:
        store = _stores.pop(key, None)
    if store is None:
        return False
    pool = getattr(store, "_pool", None)
    if pool is not None:
        pool.close()
    else:
        with store._guard():
            store.store.conn.close()  # type: ignore[attr-defined]
    return True


def _check_default_vector_file() -> None:
    """Vectors in the default database need this Python's own sqlite3 to load sqlite-vec:
    with a second SQLite library (sqlean) on the file Session also writes through
    ``sqlite3``, the two would not see each other's file locks (see
    :mod:`.sqlite_vec_driver`)."""
    from .sqlite_vec_driver import sqlite_vec_driver

    if url_scheme(default_url()) == "sqlite" and sqlite_vec_driver() is not sqlite3:
        raise ValueError(
            "this Python's sqlite3 cannot load sqlite-vec, so vector recall on SQLite goes "
            "through sqlean, a second SQLite library, which must not share the default "
            f"database ({redact_url(default_url())}) with Session: give vector long-term "
            "memory a file of its own, e.g. LongTermMemory('sqlite:///.swarmgraph/ltm.db', ...)"
        )


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
        # One lock and lexical index per outside store, so the index is built once; held
        # weakly (neither refers to the store), so a store dropped by its owner goes.
        lock, lexical = _wrapped.get(store) or (threading.RLock(), MemoryLexicalIndex())
        _wrapped[store] = (lock, lexical)
    return LongTermStore("memory://", store, lock=lock, lexical=lexical)


def _index(embeddings: Embeddings, dims: int | None) -> IndexConfig:
    if dims is None:
        dims = len(embeddings.embed_query("dimension probe"))
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ValueError(f"dims must be a positive int, got {dims!r}")
    return {"dims": dims, "embed": embeddings, "fields": [EMBEDDED_FIELD]}


def _check_same_embeddings(
    store: LongTermStore, embeddings: Embeddings | None, dims: int | None
) -> None:
    """A second opener of ``store`` in this process: no embeddings (the store's apply), or
    embeddings equal to the first opener's; anything else is a ``ValueError``."""
    if embeddings is None:
        return
    if store.embeddings is None or store.embeddings != embeddings:
        raise ValueError(
            f"{store.url} is already open in this process with "
            f"{'other' if store.embeddings is not None else 'no'} embeddings; a store's "
            "vector index has one embedding model: pass equal embeddings (==), or none"
        )
    if dims is not None and dims != store.dims:
        raise ValueError(f"{store.url} is already open with dims={store.dims}, not {dims}")


def _open_memory(url: str, embeddings: Embeddings | None, dims: int | None) -> LongTermStore:
    name = memory_namespace(url)
    with _lock:
        store = _memory_stores.get(name)
        if store is None:
            index = _index(embeddings, dims) if embeddings is not None else None
            store = LongTermStore(
                url,
                InMemoryStore(index=index),
                lock=threading.RLock(),
                embeddings=embeddings,
                dims=index["dims"] if index else None,
            )
            _memory_stores[name] = store
        else:
            _check_same_embeddings(store, embeddings, dims)
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


def _open_postgres(url: str, index: IndexConfig | None = None) -> LongTermStore:
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
        try:
            with pool.connection() as conn:
                if index is not None:
                    require_pgvector(conn, url)
                # A session lock, not a transaction: CREATE INDEX CONCURRENTLY refuses those.
                conn.execute("SELECT pg_advisory_lock(%s)", (_PG_SETUP_LOCK,))
                try:
                    PostgresStore(conn, index=cast(Any, index)).setup()
                    setup_postgres_fts(conn)
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_SETUP_LOCK,))
        except BaseException:
            pool.close()
            raise
    atexit.register(pool.close, timeout=1.0)
    return _PostgresLongTermStore(url, PostgresStore(pool, index=cast(Any, index)), pool, index)
