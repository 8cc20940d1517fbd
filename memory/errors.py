"""Every exception and warning ``swarmgraph.memory`` raises, in one place.

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

from typing import Any

from .urls import redact_url, scrub


class StorageUnavailable(ConnectionError):
    """The database behind a store could not be reached (down, restarting, refused).

    ``url`` is the redacted URL. Nothing of the failed operation was committed; turns
    committed before it are intact, and the next operation reconnects on its own.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = redact_url(url)
        self.reason = scrub(reason, url)
        super().__init__(f"storage at {self.url} is unavailable: {self.reason}")


class TurnOutcomeUnknown(StorageUnavailable):
    """The connection broke while the turn was being committed: it may or may not be stored.

    Retrying with the same turn id is safe: ``Session.run(..., turn_id=error.turn_id)``
    returns the stored turn without calling the model if the commit went through, and runs
    it once if it did not.

    Example:
        >>> print(TurnOutcomeUnknown("redis://db:6379/0", "connection reset", turn_id="t-1"))
        ... # doctest: +NORMALIZE_WHITESPACE
        storage at redis://db:6379/0 may or may not have stored turn 't-1' (connection reset);
        retrying with the same turn id is safe: Session.run(..., turn_id='t-1')
    """

    def __init__(self, url: str, reason: str, *, turn_id: str | None = None) -> None:
        self.url = redact_url(url)
        self.reason = scrub(reason, url)
        self.turn_id = turn_id
        which = f"turn {turn_id!r}" if turn_id else "this turn"
        retry = f"Session.run(..., turn_id={turn_id!r})" if turn_id else "the same turn id"
        ConnectionError.__init__(
            self,
            f"storage at {self.url} may or may not have stored {which} ({self.reason}); "
            f"retrying with the same turn id is safe: {retry}",
        )


class StorageConfigurationError(StorageUnavailable):
    """The server answered and refused: the database does not exist, the user or password is
    wrong. ``reason`` is the server's own words; retrying will not help until the URL is
    fixed. A subclass of :class:`StorageUnavailable`, so code that handles outages still
    catches it.

    Example:
        >>> error = StorageConfigurationError("postgresql://db/x", 'database "x" does not exist')
        >>> print(error)  # doctest: +NORMALIZE_WHITESPACE
        storage at postgresql://db/x refused the connection: database "x" does not exist
        (check the URL's database, user and password)
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = redact_url(url)
        self.reason = scrub(reason, url)
        ConnectionError.__init__(
            self,
            f"storage at {self.url} refused the connection: {self.reason} "
            "(check the URL's database, user and password)",
        )


class ContextSerializationError(TypeError):
    """A context value JSON cannot store; ``path`` names it, e.g. ``context_variables['a'][0]``."""

    def __init__(self, path: str, value: Any, hint: str = "") -> None:
        self.path = path
        self.value = value
        kind = type(value).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        message = f"{path} is {article} {kind}, which JSON cannot store; store a "
        message += "str/int/float/bool/None/list/dict instead"
        if hint:
            message += f" ({hint})"
        super().__init__(message)
        #: Set by Session: the run whose context could not be saved (its messages were).
        self.response: Any = None


class ContextSizeWarning(UserWarning):
    """Saved context is larger than the configured limit (context is meant to be small)."""


class ContextDepthWarning(UserWarning):
    """A stored context value is nested too deep to use; its key was left out on load."""


class ContextVersionConflict(RuntimeError):
    """``save(..., expected_version=v)`` found another version stored (someone else wrote)."""

    def __init__(self, conversation_id: str, stored: int, expected: int) -> None:
        self.conversation_id, self.stored, self.expected = conversation_id, stored, expected
        super().__init__(f"context of {conversation_id!r} is at version {stored}, not {expected}")


class TurnInterrupted(ContextVersionConflict):
    """Another writer changed the conversation during this turn (its lock lease ran out);
    nothing of this turn was written."""

    def __init__(self, conversation_id: str) -> None:
        RuntimeError.__init__(
            self, f"another writer changed {conversation_id!r} during this turn; nothing written"
        )
        self.conversation_id, self.stored, self.expected = conversation_id, -1, -1


class RecordExists(RuntimeError):
    """A record written put-if-absent (``Record(..., if_absent=True)``) is already stored:
    another writer got there first. Nothing of the save was written; ``stored`` is the value
    that won.

    Example:
        >>> print(RecordExists("c1", "approval", "call_1", {"approved": True}))
        record approval:'call_1' of 'c1' is already stored: {'approved': True}
    """

    def __init__(self, conversation_id: str, kind: str, key: str, stored: Any) -> None:
        self.conversation_id, self.kind, self.key, self.stored = conversation_id, kind, key, stored
        super().__init__(
            f"record {kind}:{key!r} of {conversation_id!r} is already stored: {stored!r}"
        )


class UnknownAgentWarning(UserWarning):
    """The stored active agent is not among the Session's known agents; the given one runs."""
