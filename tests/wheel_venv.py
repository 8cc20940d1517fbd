"""The built wheel, installed into a fresh virtual environment (the ``wheel_venv`` fixture).

The wheel is built from the sources offline (``--no-build-isolation``) and installed without
its dependencies and without an index; the venv sees the test venv's dependencies through a
``.pth`` line, but not its editable swarmgraph (a ``.pth`` inside a directory named by another
``.pth`` is never executed). So what runs there is the installed copy, as in a user's project.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class WheelVenv:
    python: str  # the venv's interpreter
    bin: Path  # its scripts folder (the ``swarmgraph`` command)
    site: str  # its site-packages, where the wheel went
    build_log: str = ""  # what building the wheel printed (setuptools' warnings among it)

    def run(self, code: str, cwd: Path) -> str:
        """Run ``code`` with the venv's Python (no OPENAI_* or PYTHON* variables); its stdout."""
        return run_python(code, cwd, self.python)


def run_python(code: str, cwd: Path, python: str = sys.executable) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "PYTHON"))}
    done = subprocess.run(
        [python, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def build_wheel_venv(workdir: Path) -> WheelVenv:
    wheels = workdir / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("swarmgraph-*.whl")
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = run_python("import site; print(site.getsitepackages()[0])", workdir, python).strip()
    deps = next(p for p in sys.path if p.endswith("site-packages"))
    Path(site, "test-deps.pth").write_text(deps + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    log = built.stdout + built.stderr
    return WheelVenv(python=python, bin=venv / "bin", site=site, build_log=log)
