"""One registry for what a process keeps per key: SQLite engines, Postgres pools, Redis clients.

Every backend shares long-lived objects (a connection pool per URL, an engine per file) across
all the stores of a process; :class:`PerProcess` is the one place they are made and found.
Entries are keyed by the process id too, so a forked child never reuses its parent's sockets
(it makes its own on first use), and the registry's lock is replaced in the child, so a fork
taken while another thread held it cannot leave the child waiting forever.

Example:
    >>> made = []
    >>> squares = PerProcess(lambda n: made.append(n) or n * n)
    >>> squares.get(3), squares.get(3), made
    (9, 9, [3])
    >>> squares.discard(3), squares.get(3), made
    (9, 9, [3, 3])
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_registries: weakref.WeakSet[PerProcess] = weakref.WeakSet()
#: What forgetting any of these objects forgets too (a cache of stores opened on them).
_dependents: list[Callable[[], None]] = []


def also_forget(forget: Callable[[], None]) -> None:
    """Call ``forget()`` whenever a registry forgets an object (an engine closed, a pool
    dropped), so nothing made on it outlives it: how the stores ``open_store`` keeps are
    forgotten with their engine."""
    _dependents.append(forget)


class PerProcess(Generic[K, V]):
    """``make(key)`` once per key per process; see the module docstring."""

    def __init__(self, make: Callable[[K], V]) -> None:
        self._make = make
        #: The module that made it (the maker's): which backend's objects it holds.
        self.owner: str | None = getattr(make, "__module__", None)
        self._lock = threading.Lock()
        self._items: dict[tuple[int, K], V] = {}
        _registries.add(self)

    def get(self, key: K) -> V:
        """The object for ``key`` in this process, made on first use (under the lock, so two
        threads never make two)."""
        slot = (os.getpid(), key)
        found = self._items.get(slot)  # the usual case: no lock
        if found is not None:
            return found
        with self._lock:
            found = self._items.get(slot)
            if found is None:
                found = self._items[slot] = self._make(key)
            return found

    def discard(self, key: K) -> V | None:
        """Forget ``key``'s object (the next :meth:`get` makes a new one); return it, so the
        caller can close it. What was made on it is forgotten too (:func:`also_forget`)."""
        with self._lock:
            found = self._items.pop((os.getpid(), key), None)
        for forget in _dependents:
            forget()
        return found

    def mine(self) -> list[tuple[K, V]]:
        """This process's ``(key, object)`` pairs (what it would close at exit)."""
        pid = os.getpid()
        with self._lock:
            return [(key, value) for (owner, key), value in self._items.items() if owner == pid]

    def _after_fork(self) -> None:
        self._lock = threading.Lock()


def registries() -> list[PerProcess]:
    """Every registry of this process (what :func:`~.store_closing.close_stores` walks).

    Example:
        >>> squares = PerProcess(lambda n: n * n)
        >>> squares in registries(), squares.owner == __name__
        (True, True)
    """
    return list(_registries)


def _reset_locks_in_child() -> None:
    for registry in list(_registries):
        registry._after_fork()


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork to survive
    os.register_at_fork(after_in_child=_reset_locks_in_child)
