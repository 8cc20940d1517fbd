"""Issue 30, notebook 04's Pareto chart: three policies that land on (almost) one dot had
their labels stacked on top of each other. Each label of ``plot_pareto`` is drawn where no
other label is, and says which policy it is."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

matplotlib = pytest.importorskip("matplotlib")  # the [draw] extra; make test installs it

from swarmgraph.app.recall import plot_pareto  # noqa: E402


def _drawn_labels(results: dict[str, Any], tmp_path, monkeypatch) -> list[tuple[str, Any]]:
    """Draw the chart and return each label's text and its box on the canvas (pixels)."""
    import matplotlib.pyplot as plt

    kept: list[Any] = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))  # keep it to measure
    plot_pareto(results, str(tmp_path / "pareto.png"))
    assert (tmp_path / "pareto.png").stat().st_size > 0
    [fig] = kept
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[0].texts]
    close(fig)
    return labels


def _policy(share: float, kept: int) -> dict[str, Any]:
    return {"share_of_buffer": share, "facts_kept": kept, "total_tokens": int(share * 1e5)}


@pytest.mark.parametrize(
    "results",
    [
        pytest.param(  # the figures of run_recall(turns=200): three policies near 10%, 0 facts
            {
                "buffer": _policy(1.0, 10),
                "window:20": _policy(0.104, 0),
                "tokens:1000": _policy(0.106, 0),
                "summary:10": _policy(0.105, 0),
                "context+window:4": _policy(0.031, 10),
            },
            id="recall-200",
        ),
        pytest.param(  # the worst case: three on exactly one dot, near the right edge too
            {f"policy {i}": _policy(0.9 if i < 3 else 0.5, 4) for i in range(5)},
            id="one-dot",
        ),
    ],
)
def test_no_two_pareto_labels_overlap(results, tmp_path, monkeypatch):
    labels = _drawn_labels(results, tmp_path, monkeypatch)
    assert sorted(text for text, _ in labels) == sorted(results)
    overlapping = [
        (a, b) for (a, box_a), (b, box_b) in itertools.combinations(labels, 2)
        if box_a.overlaps(box_b)
    ]  # fmt: skip
    assert overlapping == []
