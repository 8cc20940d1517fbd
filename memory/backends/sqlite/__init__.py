"""SQLite (``sqlite:///path``): messages, context and records in one file, a turn in one
transaction (see :mod:`.store`)."""

from __future__ import annotations

from .store import SQLiteStore, open_store

__all__ = ["SQLiteStore", "open_store"]
