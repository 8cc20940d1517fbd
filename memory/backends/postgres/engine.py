"""Postgres connections for the stores: one pool per URL per process, locks, error translation.

* **Pooling.** :func:`sync_pool` is a ``psycopg_pool.ConnectionPool`` shared by every store
  on a URL in this process (keyed by pid too: a forked child must not reuse its parent's
  sockets). ``check=ConnectionPool.check_connection`` tests a connection before handing it
  out, so after a server restart the dead ones are replaced instead of failing a turn.
  Async callers hop to a thread and use the same pool (see
  :class:`swarmgraph.memory.history.AsyncByThread`), so ``pool_max`` bounds the connections
  a process opens however many coroutines run turns, and nothing is tied to an event loop
  (an ``AsyncConnectionPool`` belongs to one loop, and its background tasks hung
  ``asyncio.run``'s shutdown when the loop ended before the pool was closed).
* **One turn, one lock.** :func:`write_transaction` opens a transaction and, given a
  conversation id, takes ``pg_advisory_xact_lock`` on a 64-bit key derived from it. Every
  writer of that conversation takes the same lock before reading what it will update, so
  concurrent turns queue for the milliseconds a save takes (never during a model call), their
  messages get contiguous ids in commit order, and no version check can lose an update.
  The lock is released by COMMIT/ROLLBACK, or by the server when a killed worker's socket
  closes.
* **Errors.** Driver errors that mean "the server is not there" become
  :class:`swarmgraph.memory.errors.StorageUnavailable` with the password scrubbed.

Our own URL parameters (removed before psycopg sees the URL): ``pool_max`` (connections per
process, default 10) and ``pool_timeout`` (seconds to wait for a connection, default 10).

Example:
    >>> conninfo("postgresql+psycopg://bob:pw@db:5432/app?pool_max=4&sslmode=disable")
    ('postgresql://bob:pw@db:5432/app?sslmode=disable', {'pool_max': 4, 'pool_timeout': 10.0})
    >>> conversation_uuid("conv-42") == conversation_uuid("conv-42"), lock_key("conv-42") < 2**63
    (True, True)
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode

import psycopg
import psycopg_pool

from ...errors import StorageUnavailable
from ...urls import redact_url, scrub, url_scheme

#: Fixed namespace for :func:`conversation_uuid`; changing it would orphan stored rows.
CONVERSATION_NAMESPACE = uuid.UUID("6f1d2b0e-8a53-5c0b-9a57-2f8f5bd6a3c1")
#: Serialises schema creation across processes (CREATE ... IF NOT EXISTS can race).
SCHEMA_LOCK_KEY = 0x5357_4152_4D47_5200  # "SWARMGR\0"
DEFAULTS = {"pool_max": 10, "pool_timeout": 10.0}

_lock = threading.Lock()
_pools: dict[tuple[int, str], psycopg_pool.ConnectionPool] = {}
_ready: set[tuple[int, str, str]] = set()


class _QuietReconnects(logging.Filter):
    """Drop psycopg_pool's per-attempt reconnect warnings for *our* pools only.

    While a server is down the pool logs a warning for every failed attempt; our caller
    already gets one StorageUnavailable per failed operation. Other pools in the user's
    process, and every error-level record, still get through.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno < logging.ERROR and "swarmgraph-" in record.getMessage())


logging.getLogger("psycopg.pool").addFilter(_QuietReconnects())


def conversation_uuid(conversation_id: str) -> uuid.UUID:
    """The stable UUID that stands for ``conversation_id`` in UUID-keyed tables.

    Example:
        >>> str(conversation_uuid("conv-42"))
        'd6943f70-094d-56ab-a37e-9595b5df8b73'
    """
    return uuid.uuid5(CONVERSATION_NAMESPACE, conversation_id)


def lock_key(conversation_id: str) -> int:
    """The signed 64-bit advisory-lock key of a conversation (a collision only serialises)."""
    return int.from_bytes(conversation_uuid(conversation_id).bytes[:8], "big", signed=True)


def conninfo(url: str) -> tuple[str, dict[str, Any]]:
    """``url`` as psycopg takes it, and our pool options taken out of its query string."""
    if url_scheme(url) != "postgresql":
        raise ValueError(f"not a Postgres URL: {redact_url(url)}")
    rest = url.split("://", 1)[1]
    base, _, query = rest.partition("?")
    options: dict[str, Any] = dict(DEFAULTS)
    kept = []
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in DEFAULTS:
            options[key] = type(DEFAULTS[key])(value)
        else:
            kept.append((key, value))
    info = "postgresql://" + base + (("?" + urlencode(kept)) if kept else "")
    return info, options


def _new_pool(url: str) -> psycopg_pool.ConnectionPool:
    info, options = conninfo(url)
    pool = psycopg_pool.ConnectionPool(
        info,
        min_size=1,
        max_size=max(1, options["pool_max"]),
        timeout=options["pool_timeout"],
        kwargs={"autocommit": True},  # reads need no transaction; writes open one explicitly
        check=psycopg_pool.ConnectionPool.check_connection,
        name=f"swarmgraph-{os.getpid()}",
        open=True,
    )
    atexit.register(pool.close, timeout=1.0)
    return pool


def sync_pool(url: str) -> psycopg_pool.ConnectionPool:
    """The process-wide connection pool for ``url`` (created on first use)."""
    key = (os.getpid(), url)
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = _new_pool(url)
        return pool


def _discard_pool(url: str) -> None:
    """Drop ``url``'s pool after a failure; the next call opens a fresh one.

    A pool that lost its server retries with exponential backoff, so after a long outage it
    could take seconds to notice the server is back; a fresh pool connects at once.
    """
    with _lock:
        pool = _pools.pop((os.getpid(), url), None)
    if pool is not None:
        threading.Thread(target=pool.close, kwargs={"timeout": 0}, daemon=True).start()


class TransactionDomain:
    """Stands for "one Postgres database URL in this process": stores that share it can
    join one transaction (:class:`memory.Session` compares domains by identity). Stable
    while pools behind it are replaced after an outage."""

    def __init__(self, url: str) -> None:
        self.description = describe(url)

    def __repr__(self) -> str:
        return f"TransactionDomain({self.description!r})"


_domains: dict[tuple[int, str], TransactionDomain] = {}


def transaction_domain(url: str) -> TransactionDomain:
    """The domain object of ``url`` in this process."""
    with _lock:
        return _domains.setdefault((os.getpid(), url), TransactionDomain(url))


_UNAVAILABLE = (psycopg.OperationalError, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed)


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, psycopg_pool.PoolTimeout):
        text = f"no connection within the pool timeout ({text})"
    return re.sub(r"\s+", " ", text)


@contextmanager
def unavailable_as_storage_error(url: str) -> Iterator[None]:
    """Turn "server not there" driver errors inside the block into ``StorageUnavailable``."""
    try:
        yield
    except _UNAVAILABLE as error:
        _discard_pool(url)
        raise StorageUnavailable(url, _reason(error)) from None


@contextmanager
def read_connection(url: str) -> Iterator[psycopg.Connection]:
    """A pooled autocommit connection for reads (errors translated)."""
    with unavailable_as_storage_error(url), sync_pool(url).connection() as conn:
        yield conn


@contextmanager
def write_transaction(url: str, conversation_id: str | None = None) -> Iterator[psycopg.Connection]:
    """A transaction on a pooled connection, holding ``conversation_id``'s lock if given.

    Committed on exit, rolled back on error (including a killed process: the server rolls
    back when the socket closes).
    """
    with unavailable_as_storage_error(url), sync_pool(url).connection() as conn, conn.transaction():
        if conversation_id is not None:
            lock_conversation(conn, conversation_id)
        yield conn


def lock_conversation(conn: psycopg.Connection, conversation_id: str) -> None:
    """Take ``conversation_id``'s transaction-scoped lock (re-entrant within a transaction)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(conversation_id),))


def ensure_schema(url: str, name: str, statements: tuple[str, ...]) -> None:
    """Run ``statements`` (constant DDL) once per process per URL, serialised across processes."""
    key = (os.getpid(), url, name)
    if key in _ready:
        return
    with write_transaction(url) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
        for statement in statements:
            conn.execute(statement)
    _ready.add(key)


def describe(url: str) -> str:
    """``url`` safe to print (password scrubbed)."""
    return scrub(redact_url(url), url)
