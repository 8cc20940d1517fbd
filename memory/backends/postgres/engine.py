"""Postgres connections for the stores: one pool per URL per process, locks, error translation.

* **Pooling.** :func:`sync_pool` is a ``psycopg_pool.ConnectionPool`` shared by every store
  on a URL in this process (kept in :class:`~swarmgraph.memory.per_process.PerProcess`: a
  forked child never reuses its parent's sockets). Every connection is checked (a round
  trip, within ``connect_timeout``) before use, so after a server restart the dead ones are
  replaced instead of failing a turn, and a frozen server is reported at once. Async
  callers hop to a thread and use the same pool
  (see :class:`swarmgraph.memory.chat_history.StoredChatHistory`), so ``pool_max`` bounds the
  connections a process opens however many coroutines run turns, and nothing is tied to an
  event loop
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
  :class:`swarmgraph.memory.errors.StorageUnavailable` with the password scrubbed; a server
  that answers "no" (database does not exist, authentication failed) fails at once with its
  reason as :class:`~swarmgraph.memory.errors.StorageConfigurationError`, never after
  waiting out the pool timeout.
* **Timeouts.** Connecting gives up after ``connect_timeout`` seconds; the server cancels a
  statement (including a wait for a conversation's lock) after ``statement_timeout``; a
  server that stops answering altogether (frozen, partitioned) is reported after
  ``connect_timeout`` when it stops before an operation (every pooled connection is checked
  first, within it), or after twice ``statement_timeout`` when it stops in the middle of one
  (:mod:`.deadline`); TCP keepalives find dead peers on idle connections. With the defaults
  below: 5 s for a server frozen between operations, at most 30 s for one frozen mid-way;
  ``?connect_timeout=1&statement_timeout=2``: 1 s and 4 s.

URL parameters, with their defaults (ours are removed before psycopg sees the URL; libpq's
own are added only when the URL does not set them):

=====================  ========  ==========================================================
``pool_max``           10        connections per process (ours)
``pool_timeout``       10        seconds to wait for a free pooled connection (ours)
``statement_timeout``  15        seconds (ours; sent as the server's ``statement_timeout``)
``connect_timeout``    5         seconds (libpq)
``keepalives*``        1/10/5/3  on; idle 10 s, interval 5 s, 3 probes (libpq)
=====================  ========  ==========================================================

Example:
    >>> info, options = conninfo("postgresql+psycopg://bob:pw@db:5432/app?pool_max=4")
    >>> info  # doctest: +NORMALIZE_WHITESPACE
    'postgresql://bob:pw@db:5432/app?connect_timeout=5&keepalives=1&keepalives_idle=10&keepalives_interval=5&keepalives_count=3'
    >>> dict(options)
    {'pool_max': 4, 'pool_timeout': 10.0, 'statement_timeout': 15.0}
    >>> conversation_uuid("conv-42") == conversation_uuid("conv-42"), lock_key("conv-42") < 2**63
    (True, True)
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qsl, urlencode

import psycopg
import psycopg_pool
from psycopg.conninfo import conninfo_to_dict

from ...errors import StorageConfigurationError, StorageUnavailable, TurnOutcomeUnknown
from ...per_process import PerProcess
from ...urls import redact_url, scrub, url_scheme
from .deadline import guard

#: Fixed namespace for :func:`conversation_uuid`; changing it would orphan stored rows.
CONVERSATION_NAMESPACE = uuid.UUID("6f1d2b0e-8a53-5c0b-9a57-2f8f5bd6a3c1")
#: Serialises schema creation across processes (CREATE ... IF NOT EXISTS can race).
SCHEMA_LOCK_KEY = 0x5357_4152_4D47_5200  # "SWARMGR\0"
DEFAULTS = {"pool_max": 10, "pool_timeout": 10.0, "statement_timeout": 15.0}
#: libpq parameters we set unless the URL does: a bounded connect, keepalives on idle sockets.
LIBPQ_DEFAULTS = {
    "connect_timeout": "5",
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
}


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


@functools.lru_cache(maxsize=256)
def conninfo(url: str) -> tuple[str, Mapping[str, Any]]:
    """``url`` as psycopg takes it, and our pool options taken out of its query string
    (cached: every guarded operation reads the statement timeout from here)."""
    if url_scheme(url) != "postgresql":
        raise ValueError(f"not a Postgres URL: {redact_url(url)}")
    rest = url.split("://", 1)[1]
    base, _, query = rest.partition("?")
    options: dict[str, Any] = dict(DEFAULTS)
    kept = []
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in DEFAULTS:
            try:
                options[key] = type(DEFAULTS[key])(value)
            except ValueError:
                raise ValueError(f"{key} must be a number, got {value!r}") from None
            if options[key] <= 0:
                raise ValueError(f"{key} must be positive, got {value!r}")
        else:
            kept.append((key, value))
    given = {key for key, _ in kept}
    kept += [(k, v) for k, v in LIBPQ_DEFAULTS.items() if k not in given]
    info = "postgresql://" + base + (("?" + urlencode(kept)) if kept else "")
    try:  # libpq's parser, now: its complaint quotes the whole URL, password and all
        conninfo_to_dict(info)
    except psycopg.ProgrammingError as error:
        raise ValueError(
            f"not a valid Postgres URL: {redact_url(url)} ({scrub(_reason(error), url)})"
        ) from None
    return info, MappingProxyType(options)  # cached and shared: read-only


def connect_timeout(info: str) -> float:
    """The ``connect_timeout`` a conninfo URL sets (seconds)."""
    for key, value in parse_qsl(info.partition("?")[2]):
        if key == "connect_timeout":
            return max(float(value), 1.0)
    return float(LIBPQ_DEFAULTS["connect_timeout"])


def _configure_connection(statement_timeout: float):
    milliseconds = int(statement_timeout * 1000)

    def configure(conn: psycopg.Connection) -> None:
        # A SET rather than a startup "options" parameter: poolers such as PgBouncer refuse
        # unknown startup parameters but pass a SET through.
        conn.execute(f"SET statement_timeout = {milliseconds}")  # an int we formatted

    return configure


@contextmanager
def _checked(url: str) -> Iterator[psycopg.Connection]:
    """A pooled connection that answered a check (a round trip) within ``connect_timeout``.

    A dead one (the server restarted) is dropped and the next taken, as a pool's own check
    would; no answer at all (a frozen or partitioned server) is reported at once as
    :class:`StorageUnavailable`. (A pool's own check would drop it and wait out its whole
    ``pool_timeout`` for a new connection the frozen server never completes: 16 s, whatever
    the timeouts said.)
    """
    pool = sync_pool(url)
    seconds = connect_timeout(conninfo(url)[0])
    for _ in range(pool.max_size + 1):
        with pool.connection() as conn:
            with guard(conn.fileno(), seconds) as armed:
                try:
                    psycopg_pool.ConnectionPool.check_connection(conn)
                except psycopg.Error:
                    conn.close()  # broken: the pool drops it when it comes back
                    if not armed.fired:
                        continue
                    _discard_pool(url)
                    raise StorageUnavailable(
                        url,
                        f"no reply from the server within {seconds:g} s (connect_timeout; "
                        "frozen or unreachable?)",
                    ) from None
            yield conn
            return
    raise StorageUnavailable(url, "every pooled connection was broken")  # pragma: no cover


def probe(url: str) -> None:
    """Connect once, directly: raise the server's own reason if it refuses or is not there.

    A pool retries in the background and only ever reports "no connection within the pool
    timeout"; a direct connect says "database ... does not exist" or "connection refused"
    at once.
    """
    info, _ = conninfo(url)
    try:
        psycopg.connect(info, autocommit=True).close()
    except psycopg.OperationalError as error:
        raise _storage_error(url, error) from None


def _new_pool(url: str) -> psycopg_pool.ConnectionPool:
    info, options = conninfo(url)
    probe(url)  # a wrong database name or password fails here, with the server's reason
    pool = psycopg_pool.ConnectionPool(
        info,
        min_size=1,
        max_size=max(1, options["pool_max"]),
        timeout=options["pool_timeout"],
        kwargs={"autocommit": True},  # reads need no transaction; writes open one explicitly
        configure=_configure_connection(options["statement_timeout"]),
        name=f"swarmgraph-{os.getpid()}",
        open=True,
    )
    atexit.register(pool.close, timeout=1.0)
    return pool


_pools: PerProcess[str, psycopg_pool.ConnectionPool] = PerProcess(_new_pool)


def sync_pool(url: str) -> psycopg_pool.ConnectionPool:
    """The process-wide connection pool for ``url`` (created on first use)."""
    return _pools.get(url)


def _discard_pool(url: str) -> None:
    """Drop ``url``'s pool after a failure; the next call opens a fresh one.

    A pool that lost its server retries with exponential backoff, so after a long outage it
    could take seconds to notice the server is back; a fresh pool connects at once.
    """
    pool = _pools.discard(url)
    if pool is not None:
        threading.Thread(target=pool.close, kwargs={"timeout": 0}, daemon=True).start()


_UNAVAILABLE = (psycopg.OperationalError, psycopg_pool.PoolTimeout, psycopg_pool.PoolClosed)
# What a server says when the URL, not the server, is wrong: retrying cannot help.
_MISCONFIGURED = re.compile(
    r"FATAL:.*(does not exist|authentication failed|no pg_hba\.conf entry|password|"
    r"permission denied|not permitted to log in)",
    re.IGNORECASE | re.DOTALL,
)


def _reason(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    text = re.sub(r"^connection failed: ", "", text)
    text = re.sub(r"connection to server at [^,]+, port \d+ failed: ", "", text)
    text = text.replace("FATAL:  ", "").splitlines()[0]
    if isinstance(error, psycopg_pool.PoolTimeout):
        text = f"no connection within the pool timeout ({text})"
    return re.sub(r"\s+", " ", text).strip()


def _storage_error(url: str, error: BaseException) -> StorageUnavailable:
    if isinstance(error, psycopg.OperationalError) and _MISCONFIGURED.search(str(error)):
        return StorageConfigurationError(url, _reason(error))
    return StorageUnavailable(url, _reason(error))


@contextmanager
def unavailable_as_storage_error(url: str) -> Iterator[None]:
    """Turn "server not there" driver errors inside the block into ``StorageUnavailable``."""
    try:
        yield
    except psycopg_pool.PoolTimeout as error:
        _discard_pool(url)
        probe(url)  # the server's own reason, when there is one (each attempt is bounded)
        raise _storage_error(url, error) from None
    except _UNAVAILABLE as error:
        _discard_pool(url)
        raise _storage_error(url, error) from None


@contextmanager
def _within_deadline(url: str, conn: psycopg.Connection) -> Iterator[None]:
    """Cut ``conn`` off if the block outlives twice the statement timeout (a frozen server)."""
    seconds = 2 * conninfo(url)[1]["statement_timeout"]
    with guard(conn.fileno(), seconds) as armed:
        try:
            yield
        except TurnOutcomeUnknown:
            _discard_pool(url)
            raise
        except (psycopg.Error, StorageUnavailable):
            if not armed.fired:
                raise
            _discard_pool(url)
            raise StorageUnavailable(
                url, f"no reply from the server within {seconds:g} s (frozen or unreachable?)"
            ) from None


@contextmanager
def read_connection(url: str) -> Iterator[psycopg.Connection]:
    """A pooled autocommit connection for reads (errors translated, deadline armed)."""
    with unavailable_as_storage_error(url), _checked(url) as conn, _within_deadline(url, conn):
        yield conn


@contextmanager
def write_transaction(url: str, conversation_id: str | None = None) -> Iterator[psycopg.Connection]:
    """A transaction on a pooled connection, holding ``conversation_id``'s lock if given.

    Committed on exit, rolled back on error (including a killed process: the server rolls
    back when the socket closes). A connection lost after COMMIT was sent, before its answer,
    raises :class:`~swarmgraph.memory.errors.TurnOutcomeUnknown`: the transaction may or may
    not have been committed.
    """
    with unavailable_as_storage_error(url), _checked(url) as conn, _within_deadline(url, conn):
        committing = False
        try:
            with conn.transaction():
                if conversation_id is not None:
                    lock_conversation(conn, conversation_id)
                yield conn
                committing = True  # the block is done: leaving the with sends COMMIT
        except psycopg.Error as error:
            if not committing:
                raise
            # COMMIT was sent and no answer came back: the server may have committed.
            raise TurnOutcomeUnknown(url, _reason(error)) from None


def lock_conversation(conn: psycopg.Connection, conversation_id: str) -> None:
    """Take ``conversation_id``'s transaction-scoped lock (re-entrant within a transaction)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(conversation_id),))


def _create_schema(key: tuple[str, tuple[str, ...], str, tuple[str, ...]]) -> bool:
    url, statements, current, tables = key
    with read_connection(url) as conn:  # tables as this version needs them: no DDL at all
        row = conn.execute(current).fetchone()
    if row is not None and row[0]:
        return True
    try:
        with write_transaction(url) as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
            for statement in statements:
                conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege as error:
        # information_schema shows a role only the columns it has rights on, so tables that
        # are current look missing to a role without grants: say which rights it lacks.
        reason = _lacking_grants(url, tables) or _missing_right(error)
        raise StorageConfigurationError(url, reason) from error
    return True


#: What a role needs on each table, once the tables exist (the sequences need USAGE too).
TABLE_RIGHTS = ("SELECT", "INSERT", "UPDATE", "DELETE")


def _lacking_grants(url: str, tables: tuple[str, ...]) -> str | None:
    """What this user is told when ``tables`` all exist and it lacks rights on them;
    ``None`` when one is missing (then they must be created) or no right is lacking."""
    if not tables:
        return None
    with read_connection(url) as conn:
        user, schema = conn.execute("SELECT current_user, current_schema()").fetchone() or ("", "")
        rows = conn.execute(
            "SELECT t, to_regclass(t) IS NOT NULL, r, "
            "to_regclass(t) IS NOT NULL AND has_table_privilege(t, r) "
            "FROM unnest(%s::text[]) AS t, unnest(%s::text[]) AS r",
            (list(tables), list(TABLE_RIGHTS)),
        ).fetchall()
    lacking = [f"{right} on {table}" for table, _, right, held in rows if not held]
    if not lacking or not all(exists for _, exists, _, _ in rows):
        return None
    return (
        f"the tables are there, but user {user} lacks rights on them ({', '.join(lacking)}): "
        f"as their owner, GRANT {', '.join(TABLE_RIGHTS)} ON ALL TABLES IN SCHEMA {schema} TO "
        f"{user}; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {user}"
    )


def _missing_right(error: BaseException) -> str:
    """What a role without the right to create or upgrade the tables is told."""
    said = _reason(error)
    return (
        f"the tables must be created or upgraded first, and this user may not ({said}): run "
        "one turn (or swarmgraph history) once as the tables' owner, or grant this user CREATE "
        "on the schema; after that a user with SELECT, INSERT, UPDATE, DELETE on the tables "
        "(and USAGE on their sequences) needs no more"
    )


_schemas: PerProcess[tuple[str, tuple[str, ...], str, tuple[str, ...]], bool] = PerProcess(
    _create_schema
)


def ensure_schema(
    url: str, statements: tuple[str, ...], current: str, tables: tuple[str, ...] = ()
) -> None:
    """Make the tables current, once per process per URL: ``current`` (a query answering
    true or false) says whether ``statements`` (constant DDL) need to run at all; they run
    serialised across processes. A role that may not run them gets
    :class:`~swarmgraph.memory.errors.StorageConfigurationError` naming the missing right:
    the rights it lacks on ``tables`` when they all exist, else the right to create them."""
    _schemas.get((url, statements, current, tables))
