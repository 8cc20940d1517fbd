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

# Absolute: pytest imports memory/backends as a package of its own folder once (for its
# setup), and a relative import out of memory/ fails there.
from swarmgraph.graph.core.errors import SwarmgraphError, SwarmgraphWarning
from swarmgraph.graph.core.errors import UnknownAgentWarning as UnknownAgentWarning  # Session's too

from .urls import redact_url, scrub


class StorageUnavailable(SwarmgraphError, ConnectionError):
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

    def __init__(self, url: str, reason: str, *, hint: str | None = None) -> None:
        self.url = redact_url(url)
        self.reason = scrub(reason, url)
        if hint is None:  # a server that said no
            message = f"refused the connection: {self.reason} "
            message += "(check the URL's database, user and password)"
        else:  # a file or a right we lack: the reason says which, the hint what to do
            message = f"cannot be used: {self.reason} ({hint})"
        ConnectionError.__init__(self, f"storage at {self.url} {message}")


class ContextSerializationError(SwarmgraphError, TypeError):
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


class ContextSizeWarning(SwarmgraphWarning):
    """Saved context is larger than the configured limit (context is meant to be small)."""


class ContextDepthWarning(SwarmgraphWarning):
    """A stored context value is nested too deep to use; its key was left out on load."""


class ContextVersionConflict(SwarmgraphError, RuntimeError):
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


class RecordExists(SwarmgraphError, RuntimeError):
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


class TurnInProgress(SwarmgraphError, RuntimeError):
    """Another run holds this turn id: it is running it now (or finished it) with an effect
    tool in flight, so this run stopped before running any effect, and nothing of it was
    stored. ``turn_id`` names the turn; retry it later with the same id to get its outcome.

    Example:
        >>> print(TurnInProgress("conv-7", "t-1"))  # doctest: +NORMALIZE_WHITESPACE
        turn 't-1' of 'conv-7' is being run by another process (or was finished by one);
        nothing of this run was stored: retry later with turn_id='t-1' for its outcome
    """

    def __init__(self, conversation_id: str, turn_id: str) -> None:
        self.conversation_id, self.turn_id = conversation_id, turn_id
        super().__init__(
            f"turn {turn_id!r} of {conversation_id!r} is being run by another process (or was "
            f"finished by one); nothing of this run was stored: retry later with "
            f"turn_id={turn_id!r} for its outcome"
        )


class ContextConflictWarning(SwarmgraphWarning):
    """Another turn changed a context key this turn changed too, while it ran, and no merge
    rule combined the two: this turn's value was stored over the other's (listed in
    ``response.context_conflicts``). ``Session(..., merge={key: rule})`` combines them."""


class UnstorableFactWarning(SwarmgraphWarning):
    """An extractor found a fact long-term memory cannot store (a value over 64 KiB or
    empty, a key empty or over 256 bytes, a NUL or an unpaired surrogate in either): it was
    refused at extraction, never queued, and the turn's other facts were stored."""


class UnknownAgentError(SwarmgraphError, LookupError):
    """The stored active agent is not among the Session's known agents and calls it made
    are still open (in doubt after a crash, or waiting for approval): running the given
    agent would go past them, so nothing was run and nothing stored. Name the agent in
    ``Session(..., agents=[...])`` and run again. ``calls`` names the open calls.

    Example:
        >>> print(UnknownAgentError("c1", "Billing", "Front", ["pay (call 'p1')"]))
        ... # doctest: +NORMALIZE_WHITESPACE
        conversation 'c1' is held by agent 'Billing', which is neither agents= nor reachable
        from 'Front', and its calls pay (call 'p1') have no answer yet (in doubt or waiting
        for approval); nothing was run or stored: pass that agent in Session('c1', ...,
        agents=[...]) and run again
    """

    def __init__(self, conversation_id: str, agent: str, given: str, calls: list[str]) -> None:
        self.conversation_id, self.agent, self.given = conversation_id, agent, given
        self.calls = calls
        super().__init__(
            f"conversation {conversation_id!r} is held by agent {agent!r}, which is neither "
            f"agents= nor reachable from {given!r}, and its calls {', '.join(calls)} have no "
            "answer yet (in doubt or waiting for approval); nothing was run or stored: pass "
            f"that agent in Session({conversation_id!r}, ..., agents=[...]) and run again"
        )
