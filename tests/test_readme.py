"""The README and docs/ stay honest: their python blocks run offline, what they label as real
output is what the code prints now, their links, make targets and commands exist."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
DOCS = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
PAGES = {ROOT / "README.md": README, ROOT / "CONTRIBUTING.md": CONTRIBUTING, **DOCS}
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
#: (page, index, source) of every python block of the README and docs/*.md.
ALL_BLOCKS = [
    (path.relative_to(ROOT).as_posix(), i, block)
    for path, text in PAGES.items()
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S))
]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def _load_real_output():
    spec = importlib.util.spec_from_file_location("real_output", ROOT / "scripts/real_output.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the README's shape -------------------------------------------------------------------------
def test_readme_first_screen_says_what_why_and_who_and_it_stays_short():
    intro = README[: README.index("\n## ")]
    assert len(intro.splitlines()) <= 12, "what, why, who: ten lines before the first section"
    for word in ("**What:**", "**Why:**", "**Who:**"):
        assert word in intro
    # 250 until issue 23: its persist-table row and its seven-line long-term section; 276
    # with issue 22's durability section (its table: the promise per path); 279 with issue 38's
    # ui extra row and its line with the page's screenshot
    assert len(README.splitlines()) <= 279


def test_no_readme_section_is_longer_than_a_screen_before_the_first_example():
    before = README[: README.index("```python")]
    for section in re.split(r"\n(?=## )", before):
        assert len(section.splitlines()) <= 45, section.splitlines()[0]


def test_install_is_a_real_command_and_says_it_is_not_on_pypi():
    section = _section(README, "## Install")
    install = _bash_blocks(section)[0]
    lines = install.strip().splitlines()
    assert all(line.startswith("pip install ") for line in lines)
    assert not re.search(r"<[^>]*>", install), "no placeholder in an install command"
    assert lines[0].split("#")[0].split() == ["pip", "install", "."]
    assert "[postgres,redis]" in install
    assert "not on PyPI" in section


def test_the_extras_table_names_every_extra_and_the_command_that_needs_it():
    section = _section(README, "## Install")
    rows = {
        cells[1]: cells[0]
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    extras = {name.strip("`") for name in rows if name != "extra"} - {"none"}
    assert extras == set(EXTRAS), (extras, set(EXTRAS))
    assert "--format png" in rows["`draw`"]
    assert "langgraph dev" in rows["`serve`"]
    assert "postgresql://" in rows["`postgres`"] and "redis://" in rows["`redis`"]
    assert {"matplotlib>=3.8", "grandalf>=0.8"} <= set(EXTRAS["draw"])
    assert any(req.startswith("langgraph-cli[inmem]") for req in EXTRAS["serve"])
    assert any(req.startswith("langgraph-sdk") for req in EXTRAS["serve"])


def test_the_quick_start_is_make_demo_then_make_test():
    section = _section(README, "## Quick start")
    assert _bash_blocks(section)[0].split() == ["make", "demo", "make", "test"]
    assert README.index("## Quick start") < README.index("```python")
    assert "source .venv/bin/activate" in README


def test_langgraph_dev_comes_right_after_the_line_that_installs_the_serve_extra():
    for text in (README, DOCS[ROOT / "docs/langgraph.md"]):
        block = next(b for b in _bash_blocks(text) if "langgraph dev" in b)
        lines = block.strip().splitlines()
        at = next(i for i, line in enumerate(lines) if "langgraph dev" in line)
        assert at > 0 and "'.[serve]'" in lines[at - 1], block


def test_coming_from_swarm_is_one_import_line_and_links_every_difference():
    section = _section(README, "## Coming from Swarm")
    assert "from swarm import Swarm, Agent" in section
    assert "from swarmgraph import Swarm, Agent" in section
    assert "(docs/differences_from_swarm.md)" in section
    assert (
        "# How swarmgraph differs from OpenAI Swarm"
        in DOCS[ROOT / "docs/differences_from_swarm.md"]
    )


def test_sections_other_work_extends_stay_small_and_linked():
    for heading, page in (
        ("## Control of a running swarm", "docs/control.md"),
        ("## Memory and context", "docs/memory.md"),
        ("## With LangGraph", "docs/langgraph.md"),
    ):
        section = _section(README, heading)
        assert f"({page})" in section, heading
        assert len(section.splitlines()) <= 40, heading


def test_the_default_conversation_ids_are_documented_as_the_cli_chooses_them():
    from swarmgraph.app import cli

    assert cli.DEMO_SESSION == "demo" and "The demo's conversation is `demo`" in README
    # `chat AGENT` without --session: the agent's name as a slug
    assert cli._default_session(type("A", (), {"name": "Triage Desk"})()) == "triage-desk"
    assert "`--session` defaults to the agent's name" in DOCS[ROOT / "docs/cli.md"]


def test_contributing_lists_the_make_targets_that_exist():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z-]+)(?: [a-z-]+)*:", makefile, flags=re.M))
    shown = set(re.findall(r"`make ([a-z-]+)`", CONTRIBUTING))
    listed = {"demo", "test", "check", "docs-check", "typecheck", "lint", "bench", "notebooks"}
    assert listed <= shown
    assert shown <= targets, shown - targets
    assert "notebooks/_build.py" in CONTRIBUTING and "make notebooks" in CONTRIBUTING


# -- every page: blocks run, links and commands exist ------------------------------------------
def test_readme_and_docs_have_python_samples():
    assert len(BLOCKS) >= 2
    assert len(ALL_BLOCKS) >= 14


@pytest.mark.slow
def test_readme_first_example_runs_from_the_installed_wheel(wheel_venv, tmp_path):
    first = BLOCKS[0]
    assert README.index(first) < README.index("## The command line")
    out = wheel_venv.run(first + "\nimport swarmgraph; print(swarmgraph.__file__)\n", tmp_path)
    assert out.splitlines()[0] == "Refunds Refund filed."
    assert out.splitlines()[1].startswith(wheel_venv.site)  # the wheel's copy, not the sources


@pytest.mark.slow
@pytest.mark.parametrize(
    "page,index,source", ALL_BLOCKS, ids=[f"{page}-{i}" for page, i, _ in ALL_BLOCKS]
)
def test_python_block_runs_offline(page, index, source, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # A fresh interpreter per block: nothing leaks between samples, files land in tmp_path.
    done = subprocess.run(
        [sys.executable, "-c", source],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for expected in re.findall(r"print\(.*?\)\s+# (.+)$", source, flags=re.M):
        assert expected.strip() in done.stdout, (expected, done.stdout)
    # a comment on the line under a print (for long outputs) is checked too
    for expected in re.findall(r"^print\(.*\)\n# (.+)$", source, flags=re.M):
        assert expected.strip() in done.stdout, (expected, done.stdout)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_pictures_and_anchors_exist():
    checked = 0
    for path, text in PAGES.items():
        for target in re.findall(r"\]\(([^)]+)\)", text):
            if "://" in target:
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            assert dest.exists(), f"{path.name}: {target}"
            if anchor and dest.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), flags=re.M)
                assert anchor in {_slug(h) for h in headings}, f"{path.name}: {target}"
            checked += 1
    assert checked >= 30
    png = (ROOT / "docs" / "demo_graph.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def _commands() -> list[tuple[str, str]]:
    """(page, command) for every line of every bash block."""
    return [
        (path.relative_to(ROOT).as_posix(), line.split("  #")[0].strip())
        for path, text in PAGES.items()
        for block in _bash_blocks(text)
        for line in block.strip().splitlines()
        if line.strip() and not line.startswith("#")
    ]


def test_every_command_shown_exists():
    """swarmgraph command lines parse, make targets exist, extras exist, files exist."""
    from swarmgraph.app.cli import build_parser

    makefile = (ROOT / "Makefile").read_text()
    parser = build_parser()
    seen = {"swarmgraph": 0, "make": 0, "extra": 0}
    for page, command in _commands():
        words = shlex.split(command, comments=True)
        words = [w for w in words if w != "&"]
        if words[0] == ".venv/bin/swarmgraph":
            try:
                parser.parse_args(words[1:])
            except SystemExit as error:  # argparse's way to fail
                raise AssertionError(f"{page}: {command}") from error
            seen["swarmgraph"] += 1
        elif words[0] == "make":
            assert re.search(rf"^([\w-]+ )*{words[1]}( [\w-]+)*:", makefile, flags=re.M), command
            seen["make"] += 1
        for extra in re.findall(r"\.\[([\w,]+)\]", command):
            assert set(extra.split(",")) <= set(EXTRAS), f"{page}: {command}"
            seen["extra"] += 1
        for word in words[1:]:
            if re.match(r"(docs|scripts|notebooks|benchmarks)/.*\.py$", word):
                assert (ROOT / word).exists(), f"{page}: {command}"
    assert seen["swarmgraph"] >= 10 and seen["make"] >= 2 and seen["extra"] >= 4, seen
    assert isinstance(parser, argparse.ArgumentParser)


def test_commands_use_the_venv_except_the_readers_own_install():
    install = _bash_blocks(_section(README, "## Install"))[0]
    for page, command in _commands():
        if command in install:
            continue
        word = command.split()[0]
        assert word not in ("python", "python3", "pip", "swarmgraph", "jupyter"), (page, command)


# -- real output --------------------------------------------------------------------------------
def test_every_block_labelled_real_output_is_what_the_code_prints_now():
    real_output = _load_real_output()
    labelled = [
        (path, match) for path, text in PAGES.items() for match in real_output.MARKER.finditer(text)
    ]
    assert {m.group(1) for _, m in labelled} == set(real_output.GENERATORS)
    assert any(path.name == "README.md" for path, _ in labelled)
    outputs = {name: make() for name, make in real_output.GENERATORS.items()}
    for path, match in labelled:
        assert match.group(2).rstrip() == outputs[match.group(1)].rstrip(), (
            f"{path.name}: real output {match.group(1)!r} is stale; "
            "run .venv/bin/python scripts/real_output.py"
        )
    # no page calls a block real output without the marker that makes this test check it
    for path, text in PAGES.items():
        for hit in re.finditer(r"real output", text):
            line = text[: hit.start()].count("\n")
            nearby = "\n".join(text.splitlines()[line : line + 12])
            assert "<!-- real output:" in nearby or "```text" not in nearby, (path.name, line)


@pytest.mark.slow
def test_the_persist_table_shown_is_the_one_the_demo_prints(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "swarmgraph.app.cli", "demo", "--no-color", "--db", "memory://"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = re.search(r"<!-- real output: persist-table -->\n```text\n(.*?)```", README, re.S)
    assert table is not None
    assert table.group(1).rstrip() in done.stdout


def test_memory_page_explains_the_persist_table():
    memory = DOCS[ROOT / "docs/memory.md"]
    assert "with the offline rule-based model" in memory
    assert "turn 2 restarts at Triage, which hands off to Refunds again" in memory
    assert "`none` sends more tokens than\n`context`" in memory


def test_the_durability_figures_are_the_fault_tests_parameters():
    """The README's "kill -9 at five points x 10 runs x 3 backends" is what
    tests/test_effect_faults.py runs (and asserts: none paid twice, none lost)."""
    source = (ROOT / "tests" / "test_effect_faults.py").read_text(encoding="utf-8")
    points = re.search(r"^KILL_POINTS = \((.*)\)$", source, re.M)
    runs = re.search(r"^RUNS = (\d+)$", source, re.M)
    backends = re.search(r"^URL_BACKENDS = \((.*)\)$", source, re.M)
    assert points and runs and backends
    words = {3: "three", 4: "four", 5: "five", 6: "six"}
    quoted = re.compile(r'"(\w+)"')
    claim = (
        f"kill -9 at {words[len(quoted.findall(points.group(1)))]} points of a payment × "
        f"{runs.group(1)} runs × {len(quoted.findall(backends.group(1)))} backends"
    )
    assert claim in " ".join(README.split()), claim
