"""The SQLite driver that can load sqlite-vec, for long-term memory's vector index on SQLite.

LangGraph's ``SqliteStore`` keeps vectors in a table and ranks them with the sqlite-vec
extension's SQL functions, which it loads into its connection. Python's ``sqlite3`` can load
extensions only when Python was built with ``--enable-loadable-sqlite-extensions``: most
Linux distributions' and Homebrew's Pythons are, python.org's macOS installer and some
pyenv/uv builds are not (``sqlite3.Connection`` then has no ``enable_load_extension``).

So the driver is the standard ``sqlite3`` when it can load extensions (one SQLite library in
the process), else ``sqlean`` from the ``sqlean.py`` package (the ``vector`` extra): a
drop-in DB-API ``sqlite3`` with its own, current SQLite built with extension loading, with
wheels for Linux (x86-64, arm64), macOS and Windows. (``pysqlite3-binary`` is the other
drop-in; its wheels are for Linux x86-64 only.)

A second SQLite library in one process shares no file locks with the first: SQLite's own
"how to corrupt a database" notes that closing a file in one copy drops the POSIX locks the
other copy holds on it. With ``sqlean`` as the driver, keep the vector store in a database
file of its own, not the file ``Session`` keeps messages in (see docs/long_term_memory.md).

Example:
    >>> driver = sqlite_vec_driver()
    >>> driver.__name__ in ("sqlite3", "sqlean")
    True
    >>> conn = connect_with_sqlite_vec(":memory:")
    >>> conn.execute("SELECT vec_length(vec_f32('[1, 2, 3]'))").fetchone()
    (3,)
"""

from __future__ import annotations

import functools
import sqlite3
from types import ModuleType
from typing import Any

#: The extra that installs a driver able to load extensions (and sqlite-vec itself).
EXTRA = "vector"


def can_load_extensions(module: ModuleType) -> bool:
    """True when ``module`` (a DB-API sqlite module) can load SQLite extensions.

    Example:
        >>> import sqlite3
        >>> isinstance(can_load_extensions(sqlite3), bool)
        True
    """
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


@functools.cache
def sqlite_vec_driver() -> ModuleType:
    """The DB-API module that opens SQLite connections able to load sqlite-vec: ``sqlite3``
    when this Python's can, else ``sqlean``; ``ImportError`` naming the extra when neither.
    """
    if can_load_extensions(sqlite3):
        return sqlite3
    try:
        import sqlean
    except ImportError:
        raise ImportError(
            "vector recall on sqlite:/// needs the sqlite-vec extension, and this Python's "
            "sqlite3 cannot load extensions (it was built without "
            "--enable-loadable-sqlite-extensions): pip install 'swarmgraph[vector]' "
            "(sqlean.py: a drop-in sqlite3 that can), or use a Python whose sqlite3 can"
        ) from None
    return sqlean


def connect_with_sqlite_vec(path: str, **kwargs: Any) -> Any:
    """A connection to ``path`` from :func:`sqlite_vec_driver`, sqlite-vec loaded into it.

    ``kwargs`` go to the driver's ``connect`` (``timeout``, ``isolation_level``...).
    """
    try:
        import sqlite_vec
    except ImportError:  # pragma: no cover - langgraph-checkpoint-sqlite depends on it
        raise ImportError(
            f"vector recall on sqlite:/// needs sqlite-vec: pip install 'swarmgraph[{EXTRA}]'"
        ) from None
    conn = sqlite_vec_driver().connect(path, **kwargs)
    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)  # no SQL statement may load a library later
    return conn
