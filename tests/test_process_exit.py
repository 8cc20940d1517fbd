"""The quick exit (graph/process_exit.py): garbage present at exit is still finalised, the
survivors are frozen so teardown skips them, and ``SWARMGRAPH_FREEZE_AT_EXIT=0`` opts out.

Each case runs a fresh interpreter: the hook only acts at interpreter exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

# An atexit hook registered *before* swarmgraph is imported runs *after* swarmgraph's hook
# (atexit is last in, first out), so it sees what the hook left: the freeze count.
PROGRAM = textwrap.dedent(
    """
    import atexit, gc, sys

    atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, flush=True))

    import swarmgraph.graph  # registers the hook
    from swarmgraph import Agent, ScriptedChatModel, Swarm

    class Buffered:
        # A finaliser that only the cyclic collector can reach: the object is in a cycle.
        def __init__(self, path):
            self.path, self.me = path, self
        def __del__(self):
            with open(self.path, "w") as f:
                f.write("flushed")

    Buffered(sys.argv[1])  # garbage from here on, but only a collection finds it
    swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    print(swarm.run(Agent(), [{"role": "user", "content": "hi"}]).messages[-1]["content"])
    """
)


def _run(tmp_path, **env: str) -> tuple[str, str]:
    marker = tmp_path / "finalised.txt"
    gc_off = "import gc; gc.disable()\n"  # so only the exit hook's collection can find it
    done = subprocess.run(
        [sys.executable, "-c", gc_off + PROGRAM, str(marker)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=True,
    )
    return done.stdout, marker.read_text() if marker.exists() else ""


def test_exit_finalises_garbage_then_freezes_the_rest(tmp_path) -> None:
    stdout, finalised = _run(tmp_path)
    assert stdout.splitlines() == ["Hello!", "frozen True"]
    # Freezing without collecting first would have frozen the cycle too: never finalised.
    assert finalised == "flushed"


@pytest.mark.parametrize("value", ["0", "false", "No"])
def test_opt_out_keeps_the_full_teardown(tmp_path, value: str) -> None:
    stdout, _ = _run(tmp_path, SWARMGRAPH_FREEZE_AT_EXIT=value)
    assert stdout.splitlines() == ["Hello!", "frozen False"]
