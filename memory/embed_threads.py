"""How many threads a local embedding model's numpy matrix products may use.

OpenBLAS (numpy's default BLAS) starts one thread per core for every product. A sentence
model embeds one short text at a time, where those threads cost more to wake and join than
they save, and on a busy machine they fight every other process for the cores: measured
for issue 39, a ``remember`` with MiniLM took 805 ms on a shared two-core machine with
OpenBLAS's default pool and 64 ms with one thread. So the local models run with
:func:`embed_threads` threads, **1 unless ``SWARMGRAPH_EMBED_THREADS`` says otherwise**:

* with `threadpoolctl <https://pypi.org/project/threadpoolctl/>`_ installed (the
  ``embeddings-local`` extra brings it), only the embedding call is limited
  (:func:`bounded_threads`), whenever numpy was loaded, and the rest of the program keeps
  its BLAS threads;
* without it, importing :mod:`.local_embeddings` before numpy is loaded sets
  ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` for the process
  (:func:`limit_blas_before_numpy`), and only when none of them is set already: a value you
  set yourself always wins.

Example:
    >>> import os
    >>> os.environ["SWARMGRAPH_EMBED_THREADS"] = "2"
    >>> embed_threads()
    2
    >>> del os.environ["SWARMGRAPH_EMBED_THREADS"]
    >>> embed_threads()
    1
    >>> with bounded_threads():
    ...     pass
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The environment variable that sets the local embedding models' thread count.
EMBED_THREADS_ENV = "SWARMGRAPH_EMBED_THREADS"
#: The variables BLAS libraries read when numpy loads them.
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def embed_threads() -> int:
    """Threads for one embedding call: ``$SWARMGRAPH_EMBED_THREADS`` (a positive int), else 1.

    Example:
        >>> os.environ["SWARMGRAPH_EMBED_THREADS"] = "many"
        >>> embed_threads()
        Traceback (most recent call last):
        ...
        ValueError: SWARMGRAPH_EMBED_THREADS must be a positive int, got 'many'
        >>> del os.environ["SWARMGRAPH_EMBED_THREADS"]
    """
    raw = os.environ.get(EMBED_THREADS_ENV, "1")
    try:
        threads = int(raw)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{EMBED_THREADS_ENV} must be a positive int, got {raw!r}")
    return threads


def limit_blas_before_numpy() -> bool:
    """Set the BLAS thread variables to :func:`embed_threads` if numpy is not loaded yet,
    threadpoolctl is not installed, and none of them is set; True when it set them."""
    if "numpy" in sys.modules or any(name in os.environ for name in BLAS_ENV):
        return False
    try:
        import threadpoolctl  # noqa: F401 - with it, each call is limited instead
    except ImportError:
        threads = str(embed_threads())
        for name in BLAS_ENV:
            os.environ[name] = threads
        return True
    return False


@contextmanager
def bounded_threads() -> Iterator[bool]:
    """Run the block with BLAS limited to :func:`embed_threads` threads (threadpoolctl);
    without threadpoolctl, as :func:`limit_blas_before_numpy` left it. Yields whether a
    BLAS library was found to limit.

    Each library's count is set only when it differs, and put back after to what it was:
    a block that finds it already at the limit (another thread's block running) leaves it
    alone, so concurrent blocks never leave the process at the limit for good.
    """
    threads, changed = embed_threads(), []
    libraries = _blas_libraries()
    try:
        for library in libraries:
            before = library.num_threads
            if before != threads:
                library.set_num_threads(threads)
                changed.append((library, before))
        yield bool(libraries)
    finally:
        for library, before in changed:
            library.set_num_threads(before)


_found: list[list[Any]] = []


def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the BLAS libraries loaded (``[]`` without it), found
    once numpy is loaded: finding them walks every loaded library (0.2 ms), where setting a
    count is 2 us."""
    if not _found:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return []
        if "numpy" not in sys.modules:  # its BLAS is not loaded yet: look again next time
            return []
        _found.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _found[0]
