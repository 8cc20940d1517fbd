"""Setting up a SQLite connection that many processes share: WAL, a busy timeout, and
``synchronous=NORMAL``, used by both the conversation store and the long-term store.

Switching a file into WAL mode needs a write lock that SQLite takes by *upgrading* a read
transaction, and an upgrade never calls the busy handler (two upgraders waiting on each
other would deadlock). So when several processes open a new file at once, all but one may be
told "database is locked" at once, however long the busy timeout. :func:`use_wal` retries the
switch, outside any transaction, until the busy timeout has passed.

Example:
    >>> import sqlite3, tempfile, os
    >>> conn = sqlite3.connect(os.path.join(tempfile.mkdtemp(), "x.db"), isolation_level=None)
    >>> use_wal(conn)
    >>> conn.execute("PRAGMA journal_mode").fetchone()[0]
    'wal'
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

#: How long (ms) a writer waits for another writer's lock before "database is locked".
#: Long by default so bursts of concurrent turns queue instead of failing; an interactive
#: tool (or a test of the locked case) can shorten it with SWARMGRAPH_SQLITE_BUSY_TIMEOUT_MS.
BUSY_TIMEOUT_MS = int(os.environ.get("SWARMGRAPH_SQLITE_BUSY_TIMEOUT_MS", "60000"))


def use_wal(conn: Any, *, timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    """Give a DB-API SQLite connection (``sqlite3`` or a driver built on it) the busy
    timeout, WAL and ``synchronous=NORMAL`` (safe against a killed process in WAL mode).

    Raises the driver's ``OperationalError`` ("database is locked") only when the file stayed
    locked for ``timeout_ms``.
    """
    conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")
    deadline = time.monotonic() + timeout_ms / 1000
    pause = 0.002
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            break
        except Exception as error:  # sqlite3's or sqlean's OperationalError: same message
            if "database is locked" not in str(error) or time.monotonic() >= deadline:
                raise
        # Jittered, growing pauses: the processes that lost the race don't retry in step.
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 0.1)
    conn.execute("PRAGMA synchronous = NORMAL")
