"""One SQLAlchemy engine per SQLite file per process, set up for many writers.

Every connection gets WAL (readers never block the writer), a busy timeout (a writer waits
for the lock instead of failing) and ``synchronous=NORMAL`` (safe against a killed process).
Transactions begin ``DEFERRED`` for reads; :func:`write_transaction` begins ``IMMEDIATE`` so
a writer takes the lock *before* reading what it will update: two writers can never both read
version 3 and both write version 4, and never deadlock upgrading a read lock.

Example:
    >>> import tempfile, os
    >>> from sqlalchemy import text
    >>> path = os.path.join(tempfile.mkdtemp(), "x.db")
    >>> engine = sync_engine(path)
    >>> engine is sync_engine(path)          # cached per file per process
    True
    >>> with write_transaction(engine) as conn:
    ...     _ = conn.execute(text("CREATE TABLE t (x)"))
    >>> with engine.connect() as conn:
    ...     conn.execute(text("PRAGMA journal_mode")).scalar()
    'wal'
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, create_engine

from ...per_process import PerProcess
from ...sqlite_wal import BUSY_TIMEOUT_MS, use_wal

_IMMEDIATE = "swarmgraph_begin_immediate"
_read_only_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


def is_read_only(path: str | Path) -> bool:
    """True when the file at ``path`` exists but cannot be written: read-only media (a
    read-only mount, which binds root too) or file modes that refuse us.

    Example:
        >>> import tempfile, os
        >>> is_read_only(os.path.join(tempfile.mkdtemp(), "new.db"))  # not there: created
        False
    """
    path = Path(path)
    if not path.exists():
        return False
    try:
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    # WAL mode writes -wal and -shm files next to the database, so the folder counts too.
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def read_only(engine: Engine) -> bool:
    """True for an engine :func:`sync_engine` opened read-only."""
    return engine in _read_only_engines


def _file_url(path: str) -> str:
    if is_read_only(path):
        # immutable=1: no locks, no -wal/-shm files, so any reader works on read-only media;
        # writes fail with "attempt to write a readonly database".
        return f"sqlite:///file:{path}?mode=ro&immutable=1&uri=true"
    return f"sqlite:///{path}"


def _configure(engine: Engine) -> None:
    immutable = "immutable=1" in str(engine.url)
    if immutable:
        _read_only_engines.add(engine)
    _write_locks[engine] = threading.Lock()

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # Take BEGIN out of the driver's hands so the "begin" hook below decides its kind.
        dbapi_connection.isolation_level = None
        if immutable:
            return
        use_wal(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _new_engine(path: str) -> Engine:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        _file_url(path),
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
    )
    _configure(engine)
    return engine


_engines: PerProcess[str, Engine] = PerProcess(_new_engine)
# Writers in one process queue on a lock of ours before BEGIN IMMEDIATE. SQLite would
# serialise them anyway, but its busy handler waits by sleeping and retrying (up to 100 ms a
# try), so 200 concurrent turns spent most of their time asleep. Other processes still meet
# the busy timeout, as before. One lock per engine, made with it: an engine is already one
# per file per process (a forked child makes its own engines, and so its own locks).
_write_locks: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()


def sync_engine(path: str | Path) -> Engine:
    """The process-wide engine for the SQLite file at ``path`` (created on first use)."""
    return _engines.get(os.path.abspath(os.fspath(path)))


def dispose_engine(path: str | Path) -> None:
    """Close and forget the engine of ``path`` in this process (the next use opens a new one,
    as a fresh process would)."""
    engine = _engines.discard(os.path.abspath(os.fspath(path)))
    if engine is not None:
        engine.dispose()


def close_all() -> None:
    """Checkpoint and close every SQLite file this process opened: what was committed moves
    from the ``-wal`` file into the database file itself, so copying ``app.db`` after the
    program ended copies every turn. Registered to run at exit (before the interpreter's
    quick exit freezes what is left, see graph/process_exit.py); never raises.

    Example:
        >>> import tempfile, os
        >>> from sqlalchemy import text
        >>> path = os.path.join(tempfile.mkdtemp(), "x.db")
        >>> with write_transaction(sync_engine(path)) as conn:
        ...     _ = conn.execute(text("CREATE TABLE t (x)"))
        >>> close_all(); os.path.exists(path + "-wal")
        False
    """
    for path, engine in _engines.mine():
        if read_only(engine):
            continue
        with suppress(Exception):
            raw = engine.raw_connection()  # autocommit at the driver: no BEGIN around it
            try:
                raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()
        with suppress(Exception):
            _engines.discard(path)
            engine.dispose()  # the last connection closed: SQLite removes the -wal file


atexit.register(close_all)


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A ``BEGIN IMMEDIATE`` transaction: committed on exit, rolled back on error."""
    with _write_locks[engine], engine.connect() as conn:
        conn = conn.execution_options(**{_IMMEDIATE: True})
        with conn.begin():
            yield conn


#: What SQLite says of a file that is not a database, or one whose pages are damaged.
_CORRUPT = ("file is not a database", "database disk image is malformed", "malformed database")
#: What SQLite says when a write finds no room (SQLITE_FULL) or the disk fails under it.
_NO_ROOM = ("database or disk is full", "disk i/o error")


def explained(url: str, path: str | Path, error: Exception) -> Exception:
    """A driver error that the file or its disk causes, named for that cause: a read-only,
    missing or corrupt file is a :class:`~swarmgraph.memory.errors.StorageConfigurationError`
    (retrying will not help), a full disk :class:`~swarmgraph.memory.errors.StorageUnavailable`
    (it may once there is room); any other error as it is. SQLite itself only says "no such
    table" (a read-only file we could not create the tables in), "unable to open database
    file", "attempt to write a readonly database", "file is not a database", "database disk
    image is malformed" or "database or disk is full".

    >>> from sqlalchemy.exc import DatabaseError, OperationalError
    >>> error = DatabaseError("open", {}, Exception("file is not a database"))
    >>> print(explained("sqlite:///notes.txt", "notes.txt", error))  # doctest: +ELLIPSIS
    storage at sqlite:///notes.txt cannot be used: notes.txt is not a SQLite database, or...
    >>> full = OperationalError("insert", {}, Exception("database or disk is full"))
    >>> print(explained("sqlite:///x.db", "x.db", full))  # doctest: +ELLIPSIS
    storage at sqlite:///x.db is unavailable: the disk holding x.db is full...

    Example:
        >>> import tempfile, os
        >>> gone = os.path.join(tempfile.mkdtemp(), "no", "such", "folder", "x.db")
        >>> error = OperationalError("open", {}, Exception("unable to open database file"))
        >>> print(explained("sqlite:///" + gone, gone, error))  # doctest: +ELLIPSIS
        storage at sqlite:///.../x.db cannot be used: cannot open or create .../x.db: its folder ...
    """
    from ...errors import StorageConfigurationError, StorageUnavailable

    text = str(getattr(error, "orig", None) or error)
    where = os.fspath(path)
    lowered = text.lower()
    if any(words in lowered for words in _CORRUPT):
        cause = f"{where} is not a SQLite database, or is corrupt ({text})"
        hint = "restore it from a backup, or give another path; nothing was written to it"
        return StorageConfigurationError(url, cause, hint=hint)
    if any(words in lowered for words in _NO_ROOM):
        return StorageUnavailable(
            url,
            f"the disk holding {where} is full or failing ({text}); nothing of this write "
            "was committed, and turns committed before it are intact: free space and retry",
        )
    folder = os.path.dirname(where) or "."
    if "unable to open database file" in text:
        if not os.path.isdir(folder):
            cause = f"cannot open or create {where}: its folder {folder} does not exist"
        elif _read_only_folder(folder):
            cause = f"cannot open or create {where}: its folder {folder} is read-only"
        else:
            cause = f"cannot open or create {where}: {text}"
        return StorageConfigurationError(url, cause, hint="give a path in a writable folder")
    read_only_now = is_read_only(where)
    if "readonly database" in text or ("no such table" in text and read_only_now):
        table = text.split("no such table:", 1)[-1].strip().split()[0] if "no such" in text else ""
        missing = f" and has no {table} table yet" if table else ""
        cause = f"{where} is read-only (the file or its folder cannot be written){missing}"
        return StorageConfigurationError(
            url, cause, hint="make the file and its folder writable, or give another path"
        )
    return error


def _read_only_folder(folder: str) -> bool:
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:  # read-only media binds root too
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK)
