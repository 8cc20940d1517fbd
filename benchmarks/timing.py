"""Shared timing helpers: median/min/max of repeated batches, interleaved across contenders.

Every comparison in the report is a ratio of medians taken in the same process, with the
contenders' batches interleaved round-robin so drift (thermal, other load) hits all alike.

Example:
    >>> stats = Stats.of([3.0, 1.0, 2.0])
    >>> stats.median, stats.min, stats.max
    (2.0, 1.0, 3.0)
    >>> out = interleaved({"noop": lambda: None}, number=10, repeat=3)
    >>> sorted(out), len(out["noop"].samples)
    (['noop'], 3)
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Stats:
    """A median with its spread, in the unit of the samples (seconds unless said otherwise)."""

    median: float
    min: float
    max: float
    samples: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, samples: list[float]) -> Stats:
        return cls(statistics.median(samples), min(samples), max(samples), list(samples))

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "min": self.min, "max": self.max}


def batch_time(
    fn: Callable[[], object], number: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds per call of ``fn``, averaged over one batch of ``number`` calls (GC paused).
    ``clock=time.process_time`` counts this process's CPU only: steadier on a shared machine,
    for work that never waits (a zero-latency model)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        for _ in range(number):
            fn()
        return (clock() - start) / number
    finally:
        if enabled:
            gc.enable()


def interleaved(
    contenders: dict[str, Callable[[], object]],
    *,
    number: int,
    repeat: int,
    warmup: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Stats]:
    """Per-call seconds for each contender: ``repeat`` batches of ``number`` calls, round-robin
    (``clock``: see :func:`batch_time`)."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            samples[name].append(batch_time(fn, number, clock))
    return {name: Stats.of(values) for name, values in samples.items()}
