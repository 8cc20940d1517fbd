"""Storage URLs: which backend a URL names, where its file is, and how to print it safely.

Every backend is chosen from the URL's scheme, so a new backend (Postgres, Redis) only adds
a branch to the dispatching factories in :mod:`swarmgraph.memory.history` and
:mod:`swarmgraph.memory.context_store`; callers keep passing one string.

Example:
    >>> url_scheme("sqlite:///chat.db"), url_scheme("memory://"), url_scheme("chat.db")
    ('sqlite', 'memory', 'sqlite')
    >>> redact_url("postgresql://bob:secret@db:5432/app")
    'postgresql://bob:***@db:5432/app'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The environment variable that moves the default store (for ``Session`` and the CLI alike).
DB_ENV = "SWARMGRAPH_DB"
#: Where the default store lives, relative to the working directory.
DEFAULT_DB_PATH = Path(".swarmgraph") / "swarmgraph.db"


def default_url() -> str:
    """The store used when none is named: ``$SWARMGRAPH_DB``, else ``.swarmgraph/swarmgraph.db``.

    One rule for ``Session("x")`` and every ``swarmgraph`` command, so the CLI finds what a
    script stored (and the other way round). Read at call time, so setting the variable in a
    running program moves the next Session.

    Example:
        >>> import os
        >>> url = default_url()
        >>> url == os.environ.get("SWARMGRAPH_DB") or url.endswith("/.swarmgraph/swarmgraph.db")
        True
    """
    env = os.environ.get(DB_ENV)
    if env:
        return env
    return f"sqlite:///{(Path.cwd() / DEFAULT_DB_PATH).as_posix()}"


def url_scheme(url: str) -> str:
    """Return the backend name of ``url``; a bare filesystem path means SQLite.

    ``postgresql+psycopg://`` and ``sqlite+aiosqlite://`` name the same backends as their
    plain forms.

    Example:
        >>> url_scheme("sqlite+aiosqlite:////tmp/x.db"), url_scheme("postgresql+psycopg://h/db")
        ('sqlite', 'postgresql')
    """
    if not isinstance(url, str) or not url:
        raise ValueError(f"a storage URL must be a non-empty string, got {url!r}")
    match = re.match(r"^([A-Za-z][A-Za-z0-9.+-]*)://", url)
    if match is None:
        return "sqlite"  # "chat.db" or "/var/lib/app/chat.db"
    scheme = match.group(1).lower().split("+", 1)[0]
    return "postgresql" if scheme == "postgres" else scheme


def sqlite_path(url: str) -> Path:
    """The absolute file path a SQLite URL names (engines and locks are keyed by it).

    In-memory SQLite is refused: every pooled connection would see its own empty database,
    which silently loses data; ``memory://`` is the in-process backend.

    Example:
        >>> sqlite_path("sqlite:////tmp/chat.db").as_posix()
        '/tmp/chat.db'
        >>> sqlite_path("sqlite://")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: in-memory SQLite ('sqlite://') loses data across connections; use 'memory://'...
    """
    if url_scheme(url) != "sqlite":
        raise ValueError(f"not a SQLite URL: {redact_url(url)}")
    if "://" in url:
        rest = url.split("://", 1)[1]
        if not rest.startswith("/") or rest in ("/", "/:memory:"):
            raise ValueError(
                f"in-memory SQLite ({url!r}) loses data across connections; use 'memory://' "
                "for an in-process store or 'sqlite:///file.db'"
            )
        raw = rest[1:].split("?", 1)[0]  # sqlite:///rel.db -> rel.db, sqlite:////abs -> /abs
    else:
        raw = url
    if raw in ("", ":memory:"):
        raise ValueError(
            f"in-memory SQLite ({url!r}) loses data across connections; use 'memory://' "
            "for an in-process store or 'sqlite:///file.db'"
        )
    return Path(os.path.abspath(os.path.expanduser(raw)))


def memory_namespace(url: str) -> str:
    """The store name in ``memory://name`` ('' for plain ``memory://``).

    Example:
        >>> memory_namespace("memory://"), memory_namespace("memory://tests")
        ('', 'tests')
    """
    if url_scheme(url) != "memory":
        raise ValueError(f"not a memory:// URL: {redact_url(url)}")
    return url.split("://", 1)[1].strip("/")


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, for errors and logs.

    Example:
        >>> redact_url("redis://:hunter2@localhost:6379/0")
        'redis://:***@localhost:6379/0'
        >>> redact_url("sqlite:///chat.db")
        'sqlite:///chat.db'
    """
    return re.sub(r"^([^:/]+://[^:/@]*):[^@/]*@", r"\1:***@", str(url))


def check_conversation_id(conversation_id: str) -> str:
    """Return ``conversation_id`` unchanged if a backend can store it, else raise ValueError.

    Ids are only ever bound as query parameters, so quotes or SQL text are harmless; an empty
    id (usually a bug) and NUL (which SQLite and Postgres text columns cannot hold) are refused.

    Example:
        >>> check_conversation_id("conv-42'; DROP TABLE message_store; --")
        "conv-42'; DROP TABLE message_store; --"
        >>> check_conversation_id("")
        Traceback (most recent call last):
        ...
        ValueError: conversation id must be a non-empty string, got ''
    """
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ValueError(f"conversation id must be a non-empty string, got {conversation_id!r}")
    if "\x00" in conversation_id:
        raise ValueError("conversation id must not contain NUL ('\\x00')")
    return conversation_id


def url_password(url: str) -> str | None:
    """The password in ``url`` (``None`` if it has none), to scrub from driver messages.

    Example:
        >>> url_password("redis://:s3cret@localhost:6379/0"), url_password("redis://h:1/0")
        ('s3cret', None)
    """
    try:
        password = urlsplit(url).password
    except ValueError:
        match = re.match(r"^[^:/]+://[^:/@]*:([^@/]*)@", url)
        password = match.group(1) if match else None
    return unquote(password) if password else None


def scrub(text: str, url: str) -> str:
    """``text`` with ``url``'s password (raw and percent-encoded) replaced by ``***``.

    Example:
        >>> scrub("login as bob:secret failed", "postgresql://bob:secret@db/app")
        'login as bob:*** failed'
    """
    text = str(text)
    match = re.match(r"^[^:/]+://[^:/@]*:([^@/]*)@", str(url))
    secrets = {url_password(url), match.group(1) if match else None}
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return redact_url(text) if "://" in text else text
