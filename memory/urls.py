"""Storage URLs: which backend a URL names, where its file is, and how to print it safely.

Every backend is chosen from the URL's scheme (the registry in
:mod:`swarmgraph.memory.backends`), so a new backend only adds an entry there; callers keep
passing one string.

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
from urllib.parse import unquote

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
        >>> sqlite_path("sqlite://bob:hunter2@/x.db")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: a SQLite URL ... takes no user or password: sqlite://bob:***@/x.db ...
    """
    if url_scheme(url) != "sqlite":
        raise ValueError(f"not a SQLite URL: {redact_url(url)}")
    if "://" in url:
        rest = url.split("://", 1)[1]
        if "@" in rest.split("/", 1)[0]:
            # SQLite has no users: say so without echoing what may be a password.
            raise ValueError(
                f"a SQLite URL names a file and takes no user or password: {redact_url(url)} "
                "(use 'sqlite:///file.db', or 'postgresql://user:password@host/db')"
            )
        if not rest.startswith("/") or rest in ("/", "/:memory:"):
            raise ValueError(
                f"in-memory SQLite ({redact_url(url)!r}) loses data across connections; use "
                "'memory://' for an in-process store or 'sqlite:///file.db'"
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


#: Query keys whose values are secrets (compared case-insensitively, ``-`` read as ``_``).
SECRET_KEYS = frozenset(
    {
        "password", "pass", "passwd", "pwd", "secret", "token", "access_token", "auth",
        "auth_token", "api_key", "apikey", "key", "sslpassword", "client_secret",
        "private_key", "credential", "credentials", "signature", "sig",
    }
)  # fmt: skip
MASK = "***"
# A URL inside free text: scheme://, then anything up to whitespace or a closing quote.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*://[^\s'\"<>]+")
# key=value pairs (libpq conninfo strings, query strings) whose key names a secret.
_SECRET_PAIR = re.compile(
    r"(?<![A-Za-z0-9_])(" + "|".join(sorted(SECRET_KEYS, key=len, reverse=True)) + r")"
    r"(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&;,'\"]+)",
    re.IGNORECASE,
)


def _is_secret_key(key: str) -> bool:
    return unquote(key).strip().lower().replace("-", "_") in SECRET_KEYS


def redact_url(url: str) -> str:
    """``url`` with its password and every password-like query value replaced by ``***``.

    The URL is parsed, not pattern-matched: the userinfo's password (``user:pass@``) and the
    values of query keys such as ``password``, ``pass``, ``pwd``, ``secret``, ``token`` or
    ``api_key`` are masked; user, host, port, path and other parameters stay readable.

    Example:
        >>> redact_url("redis://:hunter2@localhost:6379/0")
        'redis://:***@localhost:6379/0'
        >>> redact_url("postgresql://bob@db/app?sslmode=require&password=hunter2")
        'postgresql://bob@db/app?sslmode=require&password=***'
        >>> redact_url("http://me:p%40ss@proxy:8080/v1?api_key=abc&x=1")
        'http://me:***@proxy:8080/v1?api_key=***&x=1'
        >>> redact_url("sqlite:///chat.db")
        'sqlite:///chat.db'
    """
    url = str(url)
    match = re.match(r"^([A-Za-z][A-Za-z0-9.+-]*://)([^/?#]*)(.*)$", url, re.DOTALL)
    if match is None:
        return _redact_pairs(url)
    scheme, netloc, rest = match.groups()
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + MASK
        netloc = f"{userinfo}@{host}"
    path, hash_, fragment = rest.partition("#")
    path, question, query = path.partition("?")
    if query:
        parts = []
        for pair in query.split("&"):
            key, equals, _value = pair.partition("=")
            parts.append(f"{key}={MASK}" if equals and _is_secret_key(key) else pair)
        query = "&".join(parts)
    return f"{scheme}{netloc}{path}{question}{query}{hash_}{fragment}"


def _redact_pairs(text: str) -> str:
    return _SECRET_PAIR.sub(lambda m: m.group(1) + m.group(2) + MASK, text)


def url_secrets(url: str) -> set[str]:
    """Every secret ``url`` carries: its password and password-like query values, raw and
    percent-decoded, to scrub from driver messages.

    Example:
        >>> sorted(url_secrets("redis://:s3cret@localhost:6379/0?token=t%2Bk")), url_secrets("x")
        (['s3cret', 't%2Bk', 't+k'], set())
    """
    url = str(url)
    match = re.match(r"^[A-Za-z][A-Za-z0-9.+-]*://([^/?#]*)[^?#]*(?:\?([^#]*))?", url)
    if match is None:
        return set()
    netloc, query = match.group(1), match.group(2) or ""
    raw: list[str] = []
    if "@" in netloc:
        userinfo = netloc.rsplit("@", 1)[0]
        if ":" in userinfo:
            raw.append(userinfo.split(":", 1)[1])
    for pair in query.split("&"):
        key, equals, value = pair.partition("=")
        if equals and _is_secret_key(key):
            raw.append(value)
    secrets = set()
    for value in raw:
        secrets |= {value, unquote(value), unquote(value.replace("+", " "))}
    return {s for s in secrets if s}


def shown_url(url: str) -> str:
    """``url`` safe to print: its password, secret query values and every other place its
    secrets stand as whole words masked (the ``repr`` of every store).

    Example:
        >>> shown_url("redis://:s3cret@localhost:6379/0?token=abc")
        'redis://:***@localhost:6379/0?token=***'
    """
    return scrub(url, url)  # scrub redacts the URL itself too


def scrub(text: str, url: str | None = None) -> str:
    """``text`` safe to show: every URL in it redacted (:func:`redact_url`), every
    ``password=...``-style pair masked, and ``url``'s secrets masked where they stand as
    whole words.

    Whole words only, so a password that is also a common substring ("a", "pass") never
    garbles the rest of the message.

    Example:
        >>> scrub("login as bob:secret failed", "postgresql://bob:secret@db/app")
        'login as bob:*** failed'
        >>> scrub("password authentication failed for user a", "postgresql://a:a@db/app")
        'password authentication failed for user ***'
        >>> scrub("dsn: host=db password='x y' dbname=app")
        'dsn: host=db password=*** dbname=app'
        >>> scrub("GET http://u:pw@proxy/v1 failed")
        'GET http://u:***@proxy/v1 failed'
    """
    text = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), str(text))
    text = _redact_pairs(text)
    for secret in sorted(url_secrets(url) if url else (), key=len, reverse=True):
        bounded = r"(?<![A-Za-z0-9])" + re.escape(secret) + r"(?![A-Za-z0-9])"
        text = re.sub(bounded, MASK, text)
    return text
