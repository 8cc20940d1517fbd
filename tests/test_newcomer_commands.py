"""What a newcomer copies: the commands the docs and the CLI print run as written, from the
repository root, without an activated venv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SWARMGRAPH = Path(sys.executable).parent / "swarmgraph"
EXAMPLES_README = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")


def _bash_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()]


def test_the_examples_readme_runs_the_venvs_python_not_whatever_python_is_on_path():
    lines = [line for line in _bash_lines(EXAMPLES_README) if line]
    assert lines
    for line in lines:
        words = line.split()
        program = next(w for w in words if "=" not in w)  # after VAR=value prefixes
        assert program == ".venv/bin/python", line
        assert (ROOT / program).exists() or not (ROOT / ".venv").exists()
    modules = [w.split()[0] for w in re.findall(r"-m (examples\.\w+)", EXAMPLES_README)]
    for module in modules:
        assert (ROOT / module.replace(".", "/") / "__main__.py").exists(), module


def _env_without_venv_on_path() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env.pop("SWARMGRAPH_DB", None)
    return env


@pytest.mark.slow  # a demo run in a subprocess
def test_the_demos_last_line_names_a_command_that_runs_from_here(tmp_path):
    env = _env_without_venv_on_path()
    done = subprocess.run(
        [str(SWARMGRAPH), "demo", "--no-color"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    hint = last.split("see it with: ", 1)[1]
    assert hint != "swarmgraph history --session demo"  # not on this PATH
    shown = subprocess.run(
        hint.split(), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    assert "you › Hi, I'm Ming" in shown.stdout
