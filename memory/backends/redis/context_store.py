"""Redis context store: a hash per conversation at ``swarm_context:<conversation id>``.

Fields: ``context`` and ``meta`` (JSON text), ``version``, ``active_agent``. A versioned
save is Redis's conditional update: ``WATCH`` the key, read its version field (never the
context), compare it with ``expected_version``, ``MULTI``/``HSET``/``EXEC``; if another
writer got in between, EXEC fails and the save re-reads and tries again (raising
:class:`ContextVersionConflict` when the caller's expected version is gone). Inside a turn
(``connection=``) the turn's lock and WATCH already cover it, and the write is queued for the
turn's one EXEC. The URL's ``ttl`` applies to the context as to the messages.

Example (needs a server; the tests run it against a throwaway one)::

    store = open_context_store("redis://127.0.0.1:6379/0")
    store.save("conv-42", {"order_id": 7}, active_agent="Refunds")   # -> 1
"""

from __future__ import annotations

import json
from typing import Any

from redis.exceptions import WatchError

from ...context_json import DEFAULT_SIZE_LIMIT, decode_context
from ...context_store import ContextRecord, RecordWriter, next_version
from ...urls import check_conversation_id, shown_url
from .engine import (
    RedisTurn,
    context_key,
    redis_options,
    sync_client,
    unavailable_as_storage_error,
)

FIELDS = ("context", "version", "active_agent", "meta")
# Clearing keeps the hash as a tombstone with the next version: versions never repeat within a
# conversation, so a turn that loaded the context before a clear cannot mistake the cleared
# record for the one it read (its save conflicts and merges over the empty context).
CLEAR_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'version', 1)
    redis.call('HSET', KEYS[1], 'context', '{}', 'meta', '{}')
    redis.call('HDEL', KEYS[1], 'active_agent')
end
return 0
"""


def _record(values: list[Any]) -> ContextRecord:
    context, version, agent, meta = (
        v.decode("utf-8", "surrogatepass") if isinstance(v, bytes) else v for v in values
    )
    if version is None and context is None and meta is None:
        return ContextRecord()
    return ContextRecord(
        decode_context(context), int(version or 0), agent, json.loads(meta or "{}")
    )


class RedisContextStore(RecordWriter):
    """One context record per conversation id in Redis; see the module docstring."""

    def __init__(self, url: str, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> None:
        self.url = url
        self.ttl = redis_options(url)[1]
        self.size_limit = size_limit
        self.client = sync_client(url)
        self.transaction_domain = self.client

    def __repr__(self) -> str:
        return f"RedisContextStore(url={shown_url(self.url)!r})"

    def _queue(self, pipe: Any, cid: str, mapping: dict[str, Any]) -> None:
        key = context_key(cid)
        pipe.hset(key, mapping=mapping)
        if self.ttl:
            pipe.expire(key, self.ttl)

    @staticmethod
    def _mapping(
        encoded: str | None, meta: dict | None, version: int, agent: str | None
    ) -> dict[str, Any]:
        """The fields one write sets: the version always (every write bumps it, so a stale
        conditional save of either half conflicts), the context, meta and agent if given."""
        mapping: dict[str, Any] = {"version": version}
        if encoded is not None:
            mapping["context"] = encoded
        if meta is not None:
            mapping["meta"] = json.dumps(meta)
        if agent is not None:
            mapping["active_agent"] = agent
        return mapping

    def load(self, conversation_id: str, *, connection: RedisTurn | None = None) -> ContextRecord:
        cid = check_conversation_id(conversation_id)
        with unavailable_as_storage_error(self.url):
            if connection is not None:
                connection.claim(cid)
                return _record(connection.reader.hmget(context_key(cid), FIELDS))
            return _record(self.client.hmget(context_key(cid), FIELDS))

    def _write(
        self,
        cid: str,
        encoded: str | None,
        meta: dict | None,
        agent: str | None,
        expected: int | None,
        connection: RedisTurn | None,
    ) -> int:
        key = context_key(cid)
        if connection is not None:
            # The turn holds the conversation's lock and WATCHes this key: comparing the
            # stored version field (not the record) and queueing the write is the
            # conditional update, and EXEC fails if anyone got in regardless.
            connection.claim(cid)
            with unavailable_as_storage_error(self.url):
                stored = int(connection.reader.hget(key, "version") or 0)
            mapping = self._mapping(encoded, meta, next_version(cid, stored, expected), agent)
            connection.queue(lambda pipe: self._queue(pipe, cid, mapping))
            return mapping["version"]
        with unavailable_as_storage_error(self.url), self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    stored = int(pipe.hget(key, "version") or 0)
                    mapping = self._mapping(
                        encoded, meta, next_version(cid, stored, expected), agent
                    )
                    pipe.multi()
                    self._queue(pipe, cid, mapping)
                    pipe.execute()
                    return mapping["version"]
                except WatchError:
                    continue  # someone wrote between WATCH and EXEC: read again

    def delete(self, conversation_id: str, *, connection: RedisTurn | None = None) -> None:
        """Clear the record; its version goes on counting (a tombstone, never back to 0)."""
        cid = check_conversation_id(conversation_id)
        if connection is not None:
            connection.claim(cid)
            connection.queue(lambda pipe: pipe.eval(CLEAR_SCRIPT, 1, context_key(cid)))
            return
        with unavailable_as_storage_error(self.url):
            self.client.eval(CLEAR_SCRIPT, 1, context_key(cid))

    def begin_write(self) -> RedisTurn:
        """A turn; :meth:`load` with it locks and watches the conversation it reads."""
        return RedisTurn(self.url)
