"""Errors every server-backed store (Postgres, Redis) raises the same way.

A database that is down, unreachable or restarting surfaces as :class:`StorageUnavailable`,
whatever the driver calls it, with the URL's password replaced by ``***``: errors end up in
logs and tracebacks, credentials must not.

Example:
    >>> error = StorageUnavailable("postgresql://bob:secret@db:5432/app", "connection refused")
    >>> print(error)
    storage at postgresql://bob:***@db:5432/app is unavailable: connection refused
    >>> isinstance(error, ConnectionError), error.url
    (True, 'postgresql://bob:***@db:5432/app')
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from memory.urls import redact_url


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


class StorageUnavailable(ConnectionError):
    """The database behind a store could not be reached (down, restarting, refused).

    ``url`` is the redacted URL. Nothing of the failed operation was committed; turns
    committed before it are intact, and the next operation reconnects on its own.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = redact_url(url)
        self.reason = scrub(reason, url)
        super().__init__(f"storage at {self.url} is unavailable: {self.reason}")
