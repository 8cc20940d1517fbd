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

Where one ratio decides a target a few percent away, :func:`paired` measures it instead: the
two contenders in adjacent batches, many rounds, the median of the rounds' ratios.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


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


#: Runs in each batch of a paired round: short, so a round's two batches stand close together.
PAIR_BATCH = 10


@dataclass
class Paired:
    """``a``'s time over ``b``'s, round by round (:func:`paired`): the median of the rounds'
    ratios and its quartiles."""

    ratio: float
    quartiles: tuple[float, float]
    rounds: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"ratio": self.ratio, "quartiles": list(self.quartiles), "rounds": self.rounds}


def paired(
    a: Callable[[], object],
    b: Callable[[], object],
    *,
    number: int = PAIR_BATCH,
    repeat: int,
    clock: Callable[[], float] = time.process_time,
) -> Paired:
    """``a`` against ``b`` in adjacent batches of ``number`` calls (A B, then B A, ...: neither
    always goes first), ``repeat`` rounds. A round's two batches are a moment apart, so the
    machine's drift (another process, the CPU's clock, a neighbour on the host) mostly
    cancels within it, which a table of many contenders, where two stand several batches
    apart, cannot do; the median of the rounds' ratios then leaves out the rounds a burst hit.

    Example:
        >>> pair = paired(lambda: sum(range(200)), lambda: None, number=5, repeat=4)
        >>> len(pair.rounds), pair.ratio > 1, pair.quartiles[0] <= pair.ratio <= pair.quartiles[1]
        (4, True, True)
    """
    for fn in (a, b):
        for _ in range(3):
            fn()
    rounds = []
    for i in range(repeat):
        if i % 2:
            y = batch_time(b, number, clock)
            x = batch_time(a, number, clock)
        else:
            x = batch_time(a, number, clock)
            y = batch_time(b, number, clock)
        rounds.append(x / y)
    low, _, high = statistics.quantiles(rounds, n=4)
    return Paired(statistics.median(rounds), (low, high), rounds)


def middle_half(pair: dict[str, Any]) -> str:
    """A :meth:`Paired.as_dict`'s quartiles, as a report writes them.

    Example:
        >>> middle_half({"ratio": 1.0, "quartiles": [0.95, 1.0625], "rounds": []})
        '0.950-1.062'
    """
    low, high = pair["quartiles"]
    return f"{low:.3f}-{high:.3f}"
