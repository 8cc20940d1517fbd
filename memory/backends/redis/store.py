"""Redis (``redis://host:port/db[?ttl=seconds]``): a conversation in three keys, a save in one
``MULTI``/``EXEC`` (clients, locks and errors: :mod:`.engine`).

* ``message_store:<id>``: a list, newest first, each item LangChain's message JSON:
  langchain-community's ``RedisChatMessageHistory`` layout, so upstream reads what we write.
  A window of the last ``k`` is ``LRANGE 0 k-1``.
* ``swarm_context:<id>``: a hash with ``context`` and ``meta`` (JSON text), ``version``,
  ``active_agent``.
* ``swarm_records:<id>``: a hash of records, field ``kind:key`` (kinds hold no ``:``).

A load is one ``MULTI``/``EXEC`` of reads (one round trip, one consistent view). Redis has no
rollback, so a save never writes until the end: it takes the conversation's lock, ``WATCH``es
the three keys, reads the stored version (and any put-if-absent record) and checks it, then
sends every write in one ``MULTI``/``EXEC``, applied whole or not at all. The URL's ``ttl``
(re)starts on all three keys with every save, so a conversation expires as a whole.

Example (needs a server; the tests run it against a throwaway one)::

    store = open_store("redis://127.0.0.1:6379/0?ttl=86400")
    store.save("conv-42", TurnWrite([HumanMessage("hi")], context={"order_id": 7}),
               expected_version=0)                                    # -> 1
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from redis.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.exceptions import WatchError
from redis.typing import EncodableT, FieldT

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...errors import RecordExists, TurnInterrupted, TurnOutcomeUnknown
from ...store import (
    ConversationSummary,
    EncodedWrite,
    Half,
    Snapshot,
    StoreBase,
    Window,
    decode_messages,
    next_version,
    since,
)
from ...urls import shown_url
from .engine import (
    CONTEXT_PREFIX,
    LOCK_WAIT_S,
    MESSAGES_PREFIX,
    context_key,
    conversation_lock,
    lost_connection,
    messages_key,
    records_key,
    redis_options,
    sync_client,
    unavailable_as_storage_error,
)

FIELDS = ("context", "version", "active_agent", "meta")
# Clearing keeps the hash as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
TOMBSTONE_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'version', 1)
    redis.call('HSET', KEYS[1], 'context', '{}', 'meta', '{}', 'updated_at', ARGV[1])
    redis.call('HDEL', KEYS[1], 'active_agent')
end
return 0
"""
#: Queues a save's writes on the pipeline, after its checks passed.
Writes = Callable[[Pipeline], None]


def _text(value: bytes | str | None) -> str | None:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _snapshot(values: list[Any], items: Sequence[str | bytes], start: int | None) -> Snapshot:
    context, version, agent, meta = (_text(v) for v in values)
    messages = decode_messages(list(reversed(items)))  # the list is newest first
    if version is None and context is None and meta is None:
        return Snapshot(messages=messages, start=start)
    return Snapshot(
        decode_context(context), int(version or 0), agent, json.loads(meta or "{}"), messages, start
    )


class RedisStore(StoreBase):
    """Conversations in one Redis database; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.ttl = redis_options(url)[1]
        self.size_limit = size_limit
        self.client = sync_client(url)

    def __repr__(self) -> str:
        return f"RedisStore(url={shown_url(self.url)!r})"

    # -- reads -----------------------------------------------------------------------------
    def _load(self, cid: str, window: Window) -> Snapshot:
        key = messages_key(cid)
        with unavailable_as_storage_error(self.url):
            pipe = self.client.pipeline(transaction=True)  # reads in one MULTI/EXEC
            pipe.hmget(context_key(cid), FIELDS)
            if window.last != 0:
                end = window.last - 1 if window.last is not None else -(window.start + 1)
                pipe.lrange(key, 0, end)
            if window.start:
                pipe.llen(key)
            values, *rest = pipe.execute()
        if window.last is not None:
            return _snapshot(values, rest[0] if window.last else [], None)
        items, count = rest[0], (rest[1] if window.start else 0)
        read, start = since(
            window.start, lambda n: items if n else self._range(key, -1), lambda: count
        )
        return _snapshot(values, read, start)

    def _range(self, key: str, last: int) -> list[str | bytes]:
        with unavailable_as_storage_error(self.url):
            return self.client.lrange(key, 0, last)

    def _messages(self, cid: str, limit: int | None) -> list[str | bytes]:
        return list(reversed(self._range(messages_key(cid), -1 if limit is None else limit - 1)))

    def _count(self, cid: str) -> int:
        with unavailable_as_storage_error(self.url):
            return int(self.client.llen(messages_key(cid)))

    def _records(self, cid: str, kind: str, keys: list[str] | None) -> dict[str, str]:
        with unavailable_as_storage_error(self.url):
            if keys is not None:
                values = self.client.hmget(records_key(cid), [f"{kind}:{k}" for k in keys])
                pairs = zip(keys, [_text(v) for v in values], strict=True)
                return {k: v for k, v in pairs if v is not None}
            stored = self.client.hgetall(records_key(cid))
        prefix = kind + ":"
        found = {_text(field) or "": _text(value) for field, value in stored.items()}
        return {f[len(prefix) :]: v for f, v in found.items() if f.startswith(prefix) and v}

    # -- writes ----------------------------------------------------------------------------
    def _save(self, cid: str, write: EncodedWrite, expected: int | None) -> int:
        version = 0
        appends_only = write.appends_only(expected)

        def check(pipe: Pipeline) -> Writes:
            nonlocal version
            stored = self._stored_version(pipe, cid)
            version = stored if appends_only else next_version(cid, stored, expected)
            self._check_absent(pipe, cid, write)
            return lambda queue: self._queue_save(
                queue, cid, write, None if appends_only else version
            )

        self._transaction(cid, check, retry=expected is None)
        return version

    def _stored_version(self, pipe: Pipeline, cid: str) -> int:
        return int(pipe.hget(context_key(cid), "version") or 0)

    @staticmethod
    def _check_absent(pipe: Pipeline, cid: str, write: EncodedWrite) -> None:
        wanted = [r for r in write.records if r.if_absent]
        if not wanted:
            return
        stored = pipe.hmget(records_key(cid), [f"{r.kind}:{r.key}" for r in wanted])
        for record, value in zip(wanted, stored, strict=True):
            if value is not None:
                raise RecordExists(cid, record.kind, record.key, json.loads(value))

    def _queue_save(
        self, pipe: Pipeline, cid: str, write: EncodedWrite, version: int | None
    ) -> None:
        # The new version (None: an append that leaves the record alone), and the context,
        # meta and agent if given.
        if version is not None:
            mapping: dict[FieldT, EncodableT] = {"version": version, "updated_at": time.time()}
            if write.context is not None:
                mapping["context"] = write.context
            if write.meta is not None:
                mapping["meta"] = write.meta
            if write.active_agent is not None:
                mapping["active_agent"] = write.active_agent
            pipe.hset(context_key(cid), mapping=mapping)
        if write.records:
            pipe.hset(
                records_key(cid), mapping={f"{r.kind}:{r.key}": r.value for r in write.records}
            )
        if write.messages:
            # One LPUSH: the turn lands contiguous, in order (the list is newest first).
            pipe.lpush(messages_key(cid), *write.messages)
        if self.ttl:
            for key in (context_key(cid), records_key(cid), messages_key(cid)):
                pipe.expire(key, self.ttl)

    def _clear(self, cid: str, only: Half | None) -> None:
        def queue(pipe: Pipeline) -> None:
            if only != "context":
                pipe.delete(messages_key(cid))
            if only != "messages":
                pipe.delete(records_key(cid))
                pipe.eval(TOMBSTONE_SCRIPT, 1, context_key(cid), repr(time.time()))

        self._transaction(cid, lambda pipe: queue, retry=True)

    def _summaries(self) -> list[ConversationSummary]:
        """SCANs for the context hashes and message lists (never KEYS: it blocks the server),
        then one pipeline reads each conversation's agent, time and message count."""
        with unavailable_as_storage_error(self.url):
            ids: set[str] = set()
            for prefix in (CONTEXT_PREFIX, MESSAGES_PREFIX):
                for key in self.client.scan_iter(match=_glob(prefix) + "*", count=500):
                    ids.add(str(_text(key))[len(prefix) :])
            order = sorted(ids)
            pipe = self.client.pipeline(transaction=False)
            for cid in order:
                pipe.hmget(context_key(cid), ("active_agent", "updated_at"))
                pipe.llen(messages_key(cid))
            values = pipe.execute(raise_on_error=False)
        rows = []
        for at, cid in enumerate(order):
            fields, count = values[2 * at], values[2 * at + 1]
            if isinstance(fields, Exception) or isinstance(count, Exception):
                continue  # a key of that name that is not ours (another type)
            agent, updated = (_text(v) for v in fields)
            rows.append(
                ConversationSummary(cid, agent, int(count), float(updated) if updated else None)
            )
        return rows

    def _transaction(self, cid: str, check: Callable[[Pipeline], Writes], *, retry: bool) -> None:
        """Under the conversation's lock and a WATCH of its keys: ``check`` reads (at once,
        while watching) and raises or returns the writes, sent in one MULTI/EXEC.

        EXEC fails only if a watched key changed, which under the lock means its lease ran
        out: raise :class:`TurnInterrupted` (nothing written), or with ``retry`` (a write that
        expects no version) start again. A connection lost on EXEC is
        :class:`TurnOutcomeUnknown`: the writes may or may not have been applied.
        """
        while True:
            with unavailable_as_storage_error(self.url):
                lock = conversation_lock(self.client, cid)
                if not lock.acquire():
                    raise TimeoutError(f"waited {LOCK_WAIT_S}s for a conversation's lock")
                try:
                    with self.client.pipeline(transaction=True) as pipe:
                        pipe.watch(context_key(cid), messages_key(cid), records_key(cid))
                        writes = check(pipe)
                        pipe.multi()
                        writes(pipe)
                        try:
                            pipe.execute()
                            return
                        except WatchError as error:
                            if lost_connection(error):
                                raise TurnOutcomeUnknown(self.url, str(error)) from None
                            if not retry:
                                raise TurnInterrupted(cid) from None
                        except (RedisConnectionError, RedisTimeoutError, OSError) as error:
                            # EXEC may have reached the server: applied or not, nobody can say.
                            reason = str(error).strip() or type(error).__name__
                            raise TurnOutcomeUnknown(self.url, reason) from None
                finally:
                    # The lease may have run out (or the server left); WATCH guarded EXEC.
                    with suppress(Exception):
                        lock.release()


def open_store(url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> RedisStore:
    """The registry's entry point: the conversations in the Redis database ``url`` names."""
    return RedisStore(url, size_limit=size_limit)


def _glob(prefix: str) -> str:
    """``prefix`` as a literal in a SCAN pattern (``*?[]\\`` escaped)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in prefix)
