"""Issue 40, notebook 07's chart (``plot_recall_vs_tokens``) drawn from the committed results:
no point's label runs into the panel's title, and the legend hides no point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

matplotlib = pytest.importorskip("matplotlib")  # the [draw] extra; make test installs it

from matplotlib.collections import PathCollection  # noqa: E402

from benchmarks.longterm import means, plot_recall_vs_tokens  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    import matplotlib.pyplot as plt

    longterm = json.loads((ROOT / "benchmarks" / "results.json").read_text())["longterm"]
    rows = {split: means(longterm["rows"][split]) for split in longterm["splits"]}
    kept: list[Any] = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))  # keep it to measure
    plot_recall_vs_tokens(rows, str(tmp_path / "chart.png"))
    [fig] = kept
    fig.canvas.draw()
    monkeypatch.setattr(plt, "close", close)
    return fig


def test_no_label_runs_into_a_panel_title_and_the_legend_hides_no_point(tmp_path, monkeypatch):
    fig = _drawn(tmp_path, monkeypatch)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        title = ax.title.get_window_extent(renderer)
        into_title = [
            t.get_text() for t in ax.texts if t.get_window_extent(renderer).overlaps(title)
        ]
        assert into_title == [], f"{ax.get_title()}: labels over the title: {into_title}"
        legend = ax.get_legend().get_window_extent(renderer)
        points = [
            ax.transData.transform(offset)
            for collection in ax.collections
            if isinstance(collection, PathCollection)  # the scatter points, one per row
            for offset in collection.get_offsets()
        ]
        assert len(points) == len(ax.texts)  # one point per row, each labelled
        hidden = [tuple(p) for p in points if legend.contains(*p)]
        assert hidden == [], f"{ax.get_title()}: points under the legend: {hidden}"
