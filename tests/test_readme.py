"""The README stays honest: its python blocks run offline, its commands and files exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_installing_into_your_project_then_the_two_commands():
    first_section = README.index("## ")
    install = re.search(r"```bash\n(.*?)```", README, flags=re.S)
    assert install is not None and README.index(install.group(0)) < README.index(
        "## ", first_section + 1
    )
    assert all(line.startswith("pip install") for line in install.group(1).strip().splitlines())
    assert "[postgres,redis]" in install.group(1)
    for extra in ("`postgres`", "`redis`", "`dev`"):
        assert extra in README[: README.index("## Working on swarmgraph")], extra
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    assert blocks[1].split() == ["make", "demo", "make", "test"]
    assert README.index(blocks[1]) < README.index("## Coming from Swarm")


def test_coming_from_swarm_is_one_import_line():
    section = README[README.index("## Coming from Swarm") : README.index("## The 30-second tour")]
    assert "from swarm import Swarm, Agent" in section
    assert "from swarmgraph import Swarm, Agent" in section
    assert "(#how-it-differs-from-openai-swarm)" in section
    assert "## How it differs from OpenAI Swarm" in README


@pytest.mark.slow
def test_readme_first_example_runs_from_the_installed_wheel(wheel_venv, tmp_path):
    first = BLOCKS[0]
    assert README.index(first) < README.index("## Working on swarmgraph")
    out = wheel_venv.run(first + "\nimport swarmgraph; print(swarmgraph.__file__)\n", tmp_path)
    assert out.splitlines()[0] == "Refunds Refund filed."
    assert out.splitlines()[1].startswith(wheel_venv.site)  # the wheel's copy, not the sources


def test_readme_has_python_samples():
    assert len(BLOCKS) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs_offline(index, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # A fresh interpreter per block: nothing leaks between samples, files land in tmp_path.
    done = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for expected in re.findall(r"print\(.*?\)\s+# (.+)$", BLOCKS[index], flags=re.M):
        assert expected.strip() in done.stdout, (expected, done.stdout)


def test_readme_links_and_pictures_exist():
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target
    png = (ROOT / "docs" / "demo_graph.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_readme_table_matches_what_memory_measures(tmp_path):
    from swarmgraph.memory.compare import compare_persistence

    shown = {
        cells[0]: cells[1:4]
        for line in README.splitlines()
        if line.count("|") == 5 and not line.startswith("persist ")
        for cells in [[c.strip() for c in line.split("|")]]
    }
    measured = {
        row["persist"]: [
            "yes" if row["model_saw_earlier_text"] else "no",
            "yes" if row["tool_saw_field"] else "no",
            row["agent_turn_2"],
        ]
        for row in compare_persistence(tmp_path)
    }
    assert shown == measured


def test_readme_explains_the_persist_table_and_the_venv():
    assert "with the offline rule-based model" in README
    assert "turn 2 restarts at Triage, which hands off to Refunds again" in README
    assert "`none` sends more tokens than\n`context`" in README
    assert "source .venv/bin/activate" in README and "make notebooks" in README
    # every command that needs the venv's Python names it; the first block installs
    # swarmgraph into the reader's own project, with the reader's own pip
    for line in re.findall(r"```bash\n(.*?)```", README, flags=re.S)[1:]:
        for command in line.splitlines():
            word = command.split()[0] if command.split() else ""
            assert word not in ("python", "python3", "pip", "swarmgraph", "jupyter"), command
