"""``close_stores()``: close the connections this process's stores keep open.

A store is a handle on a process-wide object (:mod:`.per_process`): an SQLAlchemy engine per
SQLite file, a connection pool per Postgres URL, a client per Redis URL, and a connection per
long-term store. They live as long as the process, which is what a service wants; a program
that opens many store files (a test suite, a benchmark: one SQLite file per case) keeps a
few file descriptors open for each until it exits. :func:`close_stores` closes them: an
SQLite engine drops its connections (the last one checkpoints and removes the ``-wal``
file) and connects again when next used, by any store on it; a pool or a client is closed
and forgotten, with the stores ``open_store`` kept on it, so the next open makes new ones.
Only modules already imported are entered: closing never imports a database driver.

Example:
    >>> import os, tempfile
    >>> from swarmgraph.memory import close_stores, open_store
    >>> from swarmgraph.memory.store import TurnWrite
    >>> url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "chat.db")
    >>> open_store(url).save("c", TurnWrite(context={"n": 1}), expected_version=0)
    1
    >>> close_stores("sqlite") >= 1
    True
    >>> open_store(url).load("c").context                  # opened again on first use
    {'n': 1}
"""

from __future__ import annotations

import os
import sys
from contextlib import suppress

from .per_process import registries

__all__ = ["SCHEMES", "close_stores"]

#: What :func:`close_stores` can close, by URL scheme.
SCHEMES = ("sqlite", "postgresql", "redis")
_PACKAGE = __name__.rpartition(".")[0]
_SQLITE = f"{_PACKAGE}.backends.sqlite.engine"
_POSTGRES = f"{_PACKAGE}.backends.postgres.engine"
_REDIS = f"{_PACKAGE}.backends.redis.engine"
_LONG_TERM = f"{_PACKAGE}.long_term_store"


def close_stores(*schemes: str) -> int:
    """Close every engine, pool and client this process's stores hold for ``schemes`` (all
    of :data:`SCHEMES` when none is named), and the long-term stores on them; return how
    many were closed. Stores opened before stay usable (each connects again when next
    used), except long-term ones: a ``Session`` or ``LongTermMemory`` made before the call
    holds a closed one, so make a new one after it."""
    wanted = set(schemes or SCHEMES)
    unknown = wanted - set(SCHEMES)
    if unknown:
        raise ValueError(f"close_stores() takes {', '.join(SCHEMES)}; got {sorted(unknown)}")
    closed = _close_long_term(wanted)
    owners = {"sqlite": _SQLITE, "postgresql": _POSTGRES, "redis": _REDIS}
    modules = {sys.modules.get(owners[s]) for s in wanted} - {None}
    for registry in registries():
        if sys.modules.get(registry.owner or "") not in modules:
            continue
        for key, value in registry.mine():
            dispose, close = getattr(value, "dispose", None), getattr(value, "close", None)
            if dispose is not None:  # an SQLite engine: kept (stores hold it), and it
                pool = value.pool  # connects again when next used
                if not pool.checkedin() and not pool.checkedout():
                    continue  # nothing open (closed before): a test suite closes often
                dispose()  # the last connection closed removes the -wal file
            elif close is not None:  # a pool or a client: closed for good, so forgotten
                registry.discard(key)  # (and the stores open_store kept on it)
                with suppress(Exception):  # a server already gone: nothing left to close
                    close()
            else:  # a flag (a schema made), not a connection
                continue
            closed += 1
    return closed


def _close_long_term(wanted: set[str]) -> int:
    """The long-term stores of ``wanted`` schemes, through their own public closer."""
    module = sys.modules.get(_LONG_TERM)
    if module is None:
        return 0
    urls = []
    for pid, key in list(module._stores):  # keyed (process, "sqlite:<path>" | Postgres URL)
        if pid != os.getpid():
            continue
        if key.startswith("sqlite:"):
            if "sqlite" in wanted:
                urls.append("sqlite:///" + key.removeprefix("sqlite:"))
        elif "postgresql" in wanted:
            urls.append(key)
    return sum(module.close_long_term_store(url) for url in urls)
