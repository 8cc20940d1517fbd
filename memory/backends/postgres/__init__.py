"""PostgreSQL (``postgresql://...``): messages, context and records, pooled, a turn in one
transaction under the conversation's advisory lock (see :mod:`.store` and :mod:`.engine`)."""

from __future__ import annotations

from .store import PostgresStore, open_store

__all__ = ["PostgresStore", "open_store"]
