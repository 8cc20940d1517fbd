"""Redis chat history: langchain-community's ``RedisChatMessageHistory`` behind our protocol.

Upstream's layout is kept (a list at ``message_store:<conversation id>``, newest first, each
item upstream's JSON), so upstream can read what we write. We add what it lacks: a turn's
messages pushed by *one* ``LPUSH`` inside ``MULTI`` (never interleaved with another turn's),
windowed reads (``LRANGE 0 k-1`` reads only the newest ``k``), a shared client per URL, the
TTL from the URL (``?ttl=3600``, renewed on every write), async methods as one thread hop each,
and joining a :class:`.engine.RedisTurn` so a turn's messages and context are
written by one ``EXEC``.

Example (needs a server; the tests run it against a throwaway one)::

    history = open_history("redis://127.0.0.1:6379/0?ttl=86400", "conv-42")
    history.add_messages([HumanMessage("refund order 7")])
    history.get_messages(limit=20)
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from ...history import AsyncByThread, check_limit
from ...urls import check_conversation_id, shown_url
from .engine import (
    MESSAGES_PREFIX,
    RedisTurn,
    messages_key,
    redis_options,
    sync_client,
    unavailable_as_storage_error,
)

with warnings.catch_warnings():
    # langchain-community warns at import that it is being sunset; the class still works and
    # stays behind our ChatHistory interface, so users should not see that warning.
    warnings.filterwarnings("ignore", message=".*langchain-community.*", category=Warning)
    from langchain_community.chat_message_histories import RedisChatMessageHistory


def _decode(items: list[bytes]) -> list[BaseMessage]:
    """Newest-first list items back to messages, oldest first."""
    return messages_from_dict([json.loads(item) for item in reversed(items)])


class RedisChatHistory(AsyncByThread, RedisChatMessageHistory):
    """One conversation's messages in Redis; see the module docstring."""

    def __init__(self, url: str, session_id: str) -> None:
        check_conversation_id(session_id)
        client_url, ttl = redis_options(url)
        super().__init__(session_id, url=client_url, key_prefix=MESSAGES_PREFIX, ttl=ttl)
        self.url = url
        # Upstream opens a client per object; share the per-URL one (and its pool) instead.
        self.redis_client = sync_client(url)
        self.transaction_domain = self.redis_client

    def __repr__(self) -> str:
        return f"RedisChatHistory({self.session_id!r}, url={shown_url(self.url)!r})"

    def _push(self, pipe: Any, encoded: list[str]) -> None:
        key = messages_key(self.session_id)
        pipe.lpush(key, *encoded)  # one command: the turn lands contiguous, in order
        if self.ttl:
            pipe.expire(key, self.ttl)

    @staticmethod
    def _encode(messages: Sequence[BaseMessage]) -> list[str]:
        return [json.dumps(message_to_dict(m)) for m in messages]

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return self.get_messages()

    def get_messages(self, limit: int | None = None) -> list[BaseMessage]:  # type: ignore[override]
        """The conversation in order; with ``limit`` only the last ``limit`` messages."""
        limit = check_limit(limit)
        if limit == 0:
            return []
        with unavailable_as_storage_error(self.url):
            items = self.redis_client.lrange(self.key, 0, -1 if limit is None else limit - 1)
        return _decode(items)

    def add_message(self, message: BaseMessage) -> None:
        self.add_messages([message])

    def add_messages(  # type: ignore[override]
        self, messages: Sequence[BaseMessage], *, connection: RedisTurn | None = None
    ) -> None:
        """Append ``messages`` atomically (or queue them on ``connection``'s turn)."""
        encoded = self._encode(messages)
        if not encoded:
            return
        if connection is not None:
            connection.claim(self.session_id)
            connection.queue(lambda pipe: self._push(pipe, encoded))
            return
        with unavailable_as_storage_error(self.url):
            pipe = self.redis_client.pipeline(transaction=True)
            self._push(pipe, encoded)
            pipe.execute()

    def get_messages_since(self, position: int) -> list[BaseMessage]:
        """``messages[position:]``: all but the oldest ``position``, in one command."""
        with unavailable_as_storage_error(self.url):
            items = self.redis_client.lrange(self.key, 0, -(max(int(position), 0) + 1))
        return _decode(items)

    def count(self) -> int:
        with unavailable_as_storage_error(self.url):
            return int(self.redis_client.llen(self.key))

    def clear(self, *, connection: RedisTurn | None = None) -> None:  # type: ignore[override]
        if connection is not None:
            connection.claim(self.session_id)
            connection.queue(lambda pipe: pipe.delete(self.key))
            return
        with unavailable_as_storage_error(self.url):
            self.redis_client.delete(self.key)

    def begin_write(self) -> RedisTurn:
        """A turn holding this conversation's lock; the context store can join it."""
        turn = RedisTurn(self.url)
        return _Claimed(turn, self.session_id)


class _Claimed:
    """A turn that claims its conversation on entry, so the lock is held before any read."""

    def __init__(self, turn: RedisTurn, conversation_id: str) -> None:
        self.turn, self.conversation_id = turn, conversation_id

    def __enter__(self) -> RedisTurn:
        turn = self.turn.__enter__()
        try:
            turn.claim(self.conversation_id)
        except BaseException:
            turn.__exit__(None, None, None)
            raise
        return turn

    def __exit__(self, *exc: Any) -> None:
        self.turn.__exit__(*exc)
