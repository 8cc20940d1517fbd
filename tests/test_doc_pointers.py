"""What the docs say about files of the repository is true of those files."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_parallel_md_says_which_graphs_the_repositorys_langgraph_json_serves():
    served = sorted(json.loads((ROOT / "langgraph.json").read_text())["graphs"])
    page = " ".join((ROOT / "docs" / "parallel.md").read_text().split())
    match = re.search(r"the repository's `langgraph.json` serves only `(\w+)`", page)
    assert match and [match[1]] == served
    assert "swarmgraph.app.served:research_graph" in page
    from swarmgraph.app import served

    assert hasattr(served, "research_graph")  # what the page tells you to name


def test_the_scaling_out_worker_points_at_a_page_that_walks_through_it():
    worker = (ROOT / "docs" / "scaling_out_worker.py").read_text()
    doc = worker.split('"""', 2)[1]
    pointed = re.findall(r"(docs/\w+\.md)", doc)
    assert pointed, "the worker names the page that walks through it"
    assert "README" not in doc
    for page in pointed:
        text = (ROOT / page).read_text()
        assert "scaling_out_worker.py" in text  # the page does walk through this worker
    assert "test_scaling_example.py" in doc and (ROOT / "tests/test_scaling_example.py").exists()
    assert ".venv/bin/python docs/scaling_out_worker.py" in doc
