"""The throwaway Postgres and Redis from conftest are real, reachable and restartable."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import psycopg
import pytest
import redis

try:
    from servers import ServiceUnavailable, find_pg_bindir, find_redis_server
except ImportError:  # pragma: no cover
    from tests.servers import ServiceUnavailable, find_pg_bindir, find_redis_server


# --- binary discovery (no servers) -----------------------------------------------------------


def _fake_tools(bindir: Path) -> None:
    bindir.mkdir(parents=True)
    for tool in ("initdb", "pg_ctl", "postgres"):
        exe = bindir / tool
        exe.write_text("#!/bin/sh\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_pg_bindir_prefers_newest_debian_version(tmp_path: Path) -> None:
    for version in ("9.6", "15", "16"):
        _fake_tools(tmp_path / version / "bin")
    (tmp_path / "17" / "bin").mkdir(parents=True)  # half-installed: no tools
    assert find_pg_bindir(path="", roots=(str(tmp_path),)) == tmp_path / "16" / "bin"


def test_pg_bindir_prefers_path(tmp_path: Path) -> None:
    _fake_tools(tmp_path / "own")
    _fake_tools(tmp_path / "debian" / "15" / "bin")
    found = find_pg_bindir(path=str(tmp_path / "own"), roots=(str(tmp_path / "debian"),))
    assert found == tmp_path / "own"


def test_missing_binaries_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ServiceUnavailable, match=r"initdb.*ensure_services\.sh"):
        find_pg_bindir(path="", roots=(str(tmp_path),))
    with pytest.raises(ServiceUnavailable, match=r"redis-server.*ensure_services\.sh"):
        find_redis_server(path=str(tmp_path))


# --- Postgres --------------------------------------------------------------------------------


@pytest.mark.postgres
def test_postgres_url_answers_on_loopback(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql://postgres@127.0.0.1:")
    with psycopg.connect(postgres_url) as conn:
        db, user, addr, one = conn.execute(
            "SELECT current_database(), current_user, host(inet_server_addr()), 1 + 0"
        ).fetchone()
    assert (db, user, addr, one) == ("swarmgraph_test", "postgres", "127.0.0.1", 1)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_postgres_data_survives_stop_and_start(postgres_server, mode: str) -> None:
    url = postgres_server.new_database(f"survive_{mode}")
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, body text NOT NULL)")
        conn.execute("INSERT INTO t VALUES (1, 'kept'), (2, 'also kept')")
    # "immediate" is a crash: committed rows must come back through WAL recovery.
    postgres_server.stop(mode)
    assert not postgres_server.running
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=5)
    postgres_server.start()
    assert postgres_server.running
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id, body FROM t ORDER BY id").fetchall()
    assert rows == [(1, "kept"), (2, "also kept")]


@pytest.mark.postgres
def test_postgres_stopped_block_restarts_even_on_error(postgres_server) -> None:
    port = postgres_server.port
    with pytest.raises(RuntimeError, match="boom"), postgres_server.stopped():
        assert not postgres_server.running
        raise RuntimeError("boom")
    assert postgres_server.running
    assert postgres_server.port == port
    with psycopg.connect(postgres_server.url) as conn:
        assert conn.execute("SELECT 42").fetchone() == (42,)


@pytest.mark.postgres
def test_postgres_databases_are_isolated(postgres_server) -> None:
    a = postgres_server.new_database("iso_a")
    b = postgres_server.new_database("iso_b")
    with psycopg.connect(a) as conn:
        conn.execute("CREATE TABLE only_in_a (x int)")
    with psycopg.connect(b) as conn:
        assert conn.execute("SELECT to_regclass('only_in_a')").fetchone() == (None,)
    with pytest.raises(ValueError, match="stop mode"):
        postgres_server.stop("gentle")


@pytest.mark.postgres
def test_postgres_runs_with_test_settings(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('fsync', 'synchronous_commit', 'listen_addresses')"
            ).fetchall()
        )
    # synchronous_commit must stay on, or an immediate stop could lose committed rows.
    assert settings == {"fsync": "off", "synchronous_commit": "on", "listen_addresses": "127.0.0.1"}


# --- Redis -----------------------------------------------------------------------------------


@pytest.mark.redis
def test_redis_set_get_and_ttl(redis_url: str) -> None:
    assert redis_url.startswith("redis://127.0.0.1:") and redis_url.endswith("/0")
    r = redis.Redis.from_url(redis_url)
    try:
        r.set("svc:plain", "välue")
        assert r.get("svc:plain") == "välue".encode()
        assert r.ttl("svc:plain") == -1  # no expiry
        assert r.ttl("svc:missing") == -2  # no key
        assert r.expire("svc:plain", 100)
        assert 0 < r.ttl("svc:plain") <= 100
        r.set("svc:short", "x", px=50)
        deadline = time.monotonic() + 10
        while r.exists("svc:short") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert r.get("svc:short") is None
        assert r.get("svc:plain") == "välue".encode()
    finally:
        r.delete("svc:plain", "svc:short")
        r.close()


@pytest.mark.redis
def test_redis_stop_or_kill_then_start_keeps_port_and_every_acknowledged_write(
    redis_server,
) -> None:
    r = redis.Redis.from_url(redis_server.url)
    try:
        assert r.config_get("appendonly") == {"appendonly": "yes"}
        assert r.config_get("appendfsync") == {"appendfsync": "always"}
        r.set("svc:durable", "1")
        port = redis_server.port
        redis_server.stop()
        assert not redis_server.running
        with pytest.raises(redis.ConnectionError):
            r.ping()
        redis_server.start()
        assert redis_server.port == port
        assert r.ping() is True
        r.set("svc:after-restart", "2")
        redis_server.kill()  # a crash right after the reply: appendfsync always kept it
        redis_server.start()
        assert r.get("svc:durable") == b"1" and r.get("svc:after-restart") == b"2"
    finally:
        r.delete("svc:durable", "svc:after-restart")
        r.close()


@pytest.mark.postgres
def test_servers_run_as_non_root(postgres_url: str) -> None:
    """Postgres refuses root; as root, the data folder belongs to another OS user."""
    with psycopg.connect(postgres_url) as conn:
        datadir = conn.execute("SHOW data_directory").fetchone()[0]
    owner = os.stat(datadir).st_uid
    assert owner != 0
    assert owner == os.geteuid() or os.geteuid() == 0
