"""Redis (``redis://host:port/db[?ttl=seconds]``): langchain-community's message list, a
context hash and a records hash, a save in one ``MULTI``/``EXEC`` under the conversation's
lock (see :mod:`.store` and :mod:`.engine`)."""

from __future__ import annotations

from .store import RedisStore, open_store

__all__ = ["RedisStore", "open_store"]
