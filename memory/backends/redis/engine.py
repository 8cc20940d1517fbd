"""Redis clients for the store: one client per URL per process, conversation locks, errors.

URL: ``redis://[:password@]host:port/db[?ttl=seconds]``. ``ttl`` (ours, removed before
redis-py sees the URL) makes a conversation's keys expire ``ttl`` seconds after its last
write; without it they live until cleared.

**Timeouts.** Every command gives up after ``socket_timeout`` seconds (default 10) and a
connect after ``socket_connect_timeout`` (default 5), so a frozen or partitioned server
surfaces as :class:`memory.StorageUnavailable` instead of a hang; both are redis-py URL
parameters (``?socket_timeout=2``) and the URL wins over our defaults. TCP keepalive is on.
redis-py's own retries are off: it would resend a whole ``MULTI``/``EXEC`` after a
connection error, which may store a turn twice; our callers decide what is safe to retry.

**Locks.** A save holds the conversation's lock (:func:`conversation_lock`: ``SET NX PX``,
redis-py's ``Lock``) for the milliseconds it lasts; a killed worker's lock expires after
:data:`LOCK_LEASE_S` (2 s): that is the longest the next save of the conversation waits. The
lease is short because it is fenced: the save also ``WATCH``es the conversation's keys, so if
the lease ever runs out while its holder still saves and another writer gets in, the holder's
``EXEC`` fails (:class:`memory.TurnInterrupted`, nothing written) instead of overwriting.

Example:
    >>> redis_options("redis://:pw@127.0.0.1:6379/0?ttl=3600")
    ('redis://:pw@127.0.0.1:6379/0', 3600)
    >>> context_key("conv-42"), messages_key("conv-42"), records_key("conv-42")
    ('swarm_context:conv-42', 'message_store:conv-42', 'swarm_records:conv-42')
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, ResponseError, WatchError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.lock import Lock
from redis.retry import Retry

from ...errors import StorageConfigurationError, StorageUnavailable
from ...per_process import PerProcess
from ...urls import redact_url, scrub, url_scheme

#: Key prefixes are constants; the conversation id is appended, never parsed.
MESSAGES_PREFIX = "message_store:"  # langchain-community's default, so upstream can read it
CONTEXT_PREFIX = "swarm_context:"
RECORDS_PREFIX = "swarm_records:"
LOCK_PREFIX = "swarm_lock:"
#: Seconds a turn's lock lives if its holder dies: the longest the next writer of that
#: conversation waits after a worker is killed mid-save. A save takes milliseconds; one that
#: outlives the lease is fenced (EXEC fails on the WATCHed keys, nothing written).
LOCK_LEASE_S = 2.0
#: Seconds a writer waits for another writer's turn before giving up.
LOCK_WAIT_S = 60.0


def messages_key(conversation_id: str) -> str:
    """The list holding a conversation's messages (newest first, as upstream pushes them)."""
    return MESSAGES_PREFIX + conversation_id


def context_key(conversation_id: str) -> str:
    """The hash holding a conversation's context record."""
    return CONTEXT_PREFIX + conversation_id


def records_key(conversation_id: str) -> str:
    """The hash holding a conversation's records (field ``kind:key``)."""
    return RECORDS_PREFIX + conversation_id


def redis_options(url: str) -> tuple[str, int | None]:
    """``url`` as redis-py takes it, and the ``ttl`` taken out of its query string."""
    if url_scheme(url) not in ("redis", "rediss"):
        raise ValueError(f"not a Redis URL: {redact_url(url)}")
    base, _, query = url.partition("?")
    ttl = None
    kept = []
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "ttl":
            if not value.isdigit() or int(value) <= 0:
                raise ValueError(f"ttl must be a positive number of seconds, got {value!r}")
            ttl = int(value)
        else:
            kept.append((key, value))
    return base + (("?" + urlencode(kept)) if kept else ""), ttl


#: Client settings unless the URL says otherwise (redis-py lets URL parameters win).
CLIENT_DEFAULTS: dict[str, Any] = {
    "socket_timeout": 10.0,
    "socket_connect_timeout": 5.0,
    "socket_keepalive": True,
}


def new_client(url: str) -> redis.Redis:
    """A sync client for ``url`` with our timeouts and without redis-py's retries."""
    return redis.Redis.from_url(
        redis_options(url)[0], retry=Retry(NoBackoff(), 0), **CLIENT_DEFAULTS
    )


_clients: PerProcess[str, redis.Redis] = PerProcess(new_client)


def sync_client(url: str) -> redis.Redis:
    """The process-wide client (and connection pool) for ``url``."""
    return _clients.get(url)


def conversation_lock(client: redis.Redis, conversation_id: str) -> Lock:
    """The lock a save of ``conversation_id`` holds (not yet acquired)."""
    return client.lock(
        LOCK_PREFIX + conversation_id,
        timeout=LOCK_LEASE_S,
        blocking_timeout=LOCK_WAIT_S,
        sleep=0.005,
    )


_UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)
# Replies that mean the URL is wrong (password, user, database number), not the server down.
_MISCONFIGURED = ("DB index is out of range", "NOAUTH", "WRONGPASS", "invalid password")


@contextmanager
def unavailable_as_storage_error(url: str) -> Iterator[None]:
    """Turn "server not there" errors inside the block into ``StorageUnavailable``, and a
    server's refusal of the URL's credentials or database into ``StorageConfigurationError``."""
    try:
        yield
    except (AuthenticationError, ResponseError) as error:
        reason = str(error).strip() or type(error).__name__
        if isinstance(error, AuthenticationError) or any(m in reason for m in _MISCONFIGURED):
            raise StorageConfigurationError(url, scrub(reason, url)) from None
        raise
    except _UNAVAILABLE as error:
        if isinstance(error, StorageUnavailable):
            raise
        reason = str(error).strip() or type(error).__name__
        raise StorageUnavailable(url, scrub(reason, url)) from None


def lost_connection(error: WatchError) -> bool:
    """redis-py reports a connection lost during a watched EXEC as a WatchError too
    ("A ConnectionError occurred while watching..."); a real one says the key changed."""
    return "occurred while watching" in str(error)
