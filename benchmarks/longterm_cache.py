"""One offline long-term run per test session, shared by everything that asks for it.

The test suite asks for the same quick long-term benchmark four times: the smoke test, the
doctest of :mod:`benchmarks.longterm`, ``python -m benchmarks --quick`` and notebook 07 (in
a kernel of its own). Each checks what it does with the figures; none needs them computed
again. When ``SWARMGRAPH_LONGTERM_CACHE`` names a folder (the root ``conftest.py`` sets one
per pytest session, deleted at its end), :func:`cached` keeps each dataset's result there,
keyed by everything that decides it; unset (``make bench``), nothing is kept. Runs with a
real model are never kept: their answers are not a function of the key.

Example:
    >>> import os, tempfile
    >>> saved = os.environ.pop(CACHE_ENV, None)  # a test session's own folder, put back below
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return {"rows": {"buffer": {"leakage": 0}}}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.environ[CACHE_ENV] = folder
    ...     first = cached({"split": "dev", "seed": 0}, compute)
    ...     first["rows"]["buffer"]["leakage"] = 9  # a caller's edit stays its own
    ...     again = cached({"split": "dev", "seed": 0}, compute)
    ...     other = cached({"split": "test", "seed": 0}, compute)
    ...     del os.environ[CACHE_ENV]
    >>> len(calls), again["rows"]["buffer"]["leakage"]
    (2, 0)
    >>> _ = cached({"split": "dev", "seed": 0}, compute)  # unset: computed every time
    >>> len(calls)
    3
    >>> if saved is not None:
    ...     os.environ[CACHE_ENV] = saved
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

CACHE_ENV = "SWARMGRAPH_LONGTERM_CACHE"


def cached(key: Mapping[str, Any], compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``compute()``'s result, from the cache folder when one is set and holds ``key``.

    Each call returns its own copy (callers pop and edit what they get). ``key`` must be
    JSON: it is hashed into the file name.
    """
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return compute()
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    path = Path(folder) / f"{digest}.pickle"
    if path.exists():
        # Written by this session's own process or its notebook kernel, into a folder it made.
        return pickle.loads(path.read_bytes())
    result = compute()
    blob = pickle.dumps(result)
    partial = path.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(blob)
    os.replace(partial, path)  # whole or absent: a reader never sees half a file
    return pickle.loads(blob)
