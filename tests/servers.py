"""Throwaway PostgreSQL and Redis servers on 127.0.0.1 for the storage tests.

``scripts/ensure_services.sh`` (run by ``make test``) installs the binaries; this module only
finds and runs them. Every server lives in its own temp folder on a free port, so a system
cluster on 5432 or a Redis on 6379 is never touched or relied on.

Postgres refuses to run as root, so when the tests run as root the server runs as the
``postgres`` OS user (created by the Debian package), else ``nobody``. The database superuser
is always called ``postgres`` (``initdb -U``), whatever the OS user, so URLs look the same
everywhere.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PG_SUPERUSER = "postgres"
PG_DATABASE = "swarmgraph_test"
_PG_TOOLS = ("initdb", "pg_ctl", "postgres")
_INSTALL_HINT = "run `bash scripts/ensure_services.sh` as root (make test does) to install it"


class ServiceUnavailable(RuntimeError):
    """A test server could not be found or started; the message says why and what to do."""


def find_pg_bindir(
    path: str | None = None, roots: tuple[str, ...] = ("/usr/lib/postgresql",)
) -> Path:
    """Return the folder holding ``initdb``, ``pg_ctl`` and ``postgres``.

    PATH wins (a developer's own build); then Debian's ``<root>/<version>/bin``, newest first.

    >>> find_pg_bindir(path="", roots=())  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ServiceUnavailable: PostgreSQL (initdb, pg_ctl, postgres) not found on PATH or in ...
    """
    found = [shutil.which(tool, path=path) for tool in _PG_TOOLS]
    if all(found):
        return Path(os.path.realpath(found[0])).parent  # type: ignore[arg-type]
    candidates: list[Path] = []
    for root in roots:
        candidates += [Path(d) for d in glob.glob(os.path.join(root, "*", "bin"))]

    def version(d: Path) -> tuple[int, ...]:
        return tuple(int(p) for p in d.parent.name.split(".") if p.isdigit())

    for d in sorted(candidates, key=version, reverse=True):
        if all(os.access(d / tool, os.X_OK) for tool in _PG_TOOLS):
            return d
    raise ServiceUnavailable(
        f"PostgreSQL ({', '.join(_PG_TOOLS)}) not found on PATH or in "
        f"{', '.join(r + '/*/bin' for r in roots) or 'no other folder'}; {_INSTALL_HINT}"
    )


def find_redis_server(path: str | None = None) -> Path:
    """Return the ``redis-server`` binary.

    >>> find_redis_server(path="")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ServiceUnavailable: redis-server not found on PATH; run `bash scripts/...
    """
    found = shutil.which("redis-server", path=path)
    if found is None:
        raise ServiceUnavailable(f"redis-server not found on PATH; {_INSTALL_HINT}")
    return Path(found)


def free_port() -> int:
    """Ask the kernel for a free TCP port on 127.0.0.1.

    >>> 0 < free_port() < 65536
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _clean_env() -> dict[str, str]:
    # A developer's PGDATA/PGPORT/PGHOST must not steer pg_ctl or initdb at another cluster.
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


class PostgresServer:
    """One throwaway Postgres cluster; ``stop()``/``start()`` keep its data and its port.

    ``url`` names database ``swarmgraph_test``; ``new_database()`` makes more on demand.
    """

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir or find_pg_bindir()
        self._as_other_user = os.geteuid() == 0
        self.os_user = (
            self._pick_os_user() if self._as_other_user else pwd.getpwuid(os.geteuid())[0]
        )
        # /tmp rather than $TMPDIR or pytest's 0700 tmp_path: the postgres user must reach it.
        self.base = Path(tempfile.mkdtemp(prefix="swarmgraph-pg-", dir="/tmp"))
        self.datadir = self.base / "data"
        self.logfile = self.base / "server.log"
        self.port = 0
        self._initialised = False
        self._closed = False
        if self._as_other_user:
            pw = pwd.getpwnam(self.os_user)
            os.chown(self.base, pw.pw_uid, pw.pw_gid)
        atexit.register(self.close)

    @staticmethod
    def _pick_os_user() -> str:
        for name in ("postgres", "nobody"):
            try:
                pwd.getpwnam(name)
                return name
            except KeyError:
                continue
        raise ServiceUnavailable(
            "running as root but no 'postgres' or 'nobody' user to run Postgres"
        )

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kwargs: dict = {}
        if self._as_other_user:
            pw = pwd.getpwnam(self.os_user)
            kwargs = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        proc = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            cwd=self.base,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
            **kwargs,
        )
        if check and proc.returncode != 0:
            raise ServiceUnavailable(
                f"{args[0]} failed (exit {proc.returncode}): "
                f"{proc.stderr.strip() or proc.stdout.strip()}"
                f"\n--- server log ---\n{_tail(self.logfile)}"
            )
        return proc

    @property
    def url(self) -> str:
        """``postgresql://postgres@127.0.0.1:PORT/swarmgraph_test``."""
        return self.url_for(PG_DATABASE)

    def url_for(self, database: str) -> str:
        """URL of another database on this server (``postgres`` is the maintenance one)."""
        return f"postgresql://{PG_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    @property
    def running(self) -> bool:
        """True while the postmaster answers ``pg_ctl status``."""
        if not self._initialised:
            return False
        return self._run("pg_ctl", "-D", str(self.datadir), "status", check=False).returncode == 0

    def _initdb(self) -> None:
        self._run(
            "initdb", "-D", str(self.datadir), "-U", PG_SUPERUSER, "-A", "trust",
            "-E", "UTF8", "--no-locale", "--no-sync",
        )  # fmt: skip
        self._initialised = True

    def _configure(self) -> None:
        # fsync=off only risks data on an OS crash, never on a server kill: tests that stop or
        # kill the server still see every committed row. synchronous_commit stays on for that.
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.base}'",
            "fsync": "off",
            "full_page_writes": "off",
            "max_connections": "200",
            "shared_buffers": "32MB",
        }
        conf = self.datadir / "postgresql.auto.conf"
        lines = [line for line in conf.read_text().splitlines() if line.startswith("#")]
        lines += [f"{k} = {v}" for k, v in settings.items()]
        conf.write_text("\n".join(lines) + "\n")  # rewriting keeps the owner initdb gave it

    def start(self) -> None:
        """Start (or restart after ``stop``) the server, same port and data; wait until ready."""
        if self._closed:
            raise ServiceUnavailable("this Postgres server was closed")
        if not self._initialised:
            self._initdb()
            for attempt in range(3):
                self.port = free_port()
                self._configure()
                try:
                    self._pg_ctl_start()
                    break
                except ServiceUnavailable:
                    # Another process may have taken the port between bind and listen.
                    if attempt == 2:
                        raise
            self._create_database(PG_DATABASE)
            return
        if not self.running:
            self._pg_ctl_start()

    def _pg_ctl_start(self) -> None:
        self._run(
            "pg_ctl", "-D", str(self.datadir), "-l", str(self.logfile), "-w", "-t", "60", "start"
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` (clean) or ``immediate`` (a crash; WAL recovery on start)."""
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"unknown pg_ctl stop mode {mode!r}")
        if self.running:
            self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "-t", "60", "stop")

    def restart(self) -> None:
        """``stop()`` then ``start()``."""
        self.stop()
        self.start()

    @contextlib.contextmanager
    def stopped(self, mode: str = "fast") -> Iterator[None]:
        """Keep the server down inside the block; it is up again afterwards, even on error."""
        self.stop(mode)
        try:
            yield
        finally:
            self.start()

    def _pids(self) -> list[int]:
        """The postmaster and every process it forked (backends, checkpointer, ...)."""
        try:
            postmaster = int((self.datadir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return []
        pids = [postmaster]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:  # field 4 of stat: the parent's pid
                pids.append(int(Path(stat).parent.name))
        return pids

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """SIGSTOP the whole server inside the block (as a network partition looks to a
        client: sockets stay open, nothing answers); SIGCONT afterwards, even on error."""
        pids = self._pids()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def new_database(self, name: str) -> str:
        """Create database ``name`` (an identifier you choose, not user input); return its URL."""
        self._create_database(name)
        return self.url_for(name)

    def _create_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url_for("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def close(self) -> None:
        """Stop the server and delete its folder; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            if self._initialised:
                self._run("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "-w", "stop",
                          check=False)  # fmt: skip
        shutil.rmtree(self.base, ignore_errors=True)


class RedisServer:
    """One throwaway Redis run as production would: append-only file, ``appendfsync always``
    (a write is on disk before its reply), so ``stop()``/``kill()`` then ``start()`` keep the
    port and every acknowledged write."""

    def __init__(self, binary: Path | None = None) -> None:
        self.binary = binary or find_redis_server()
        self.base = Path(tempfile.mkdtemp(prefix="swarmgraph-redis-"))
        self.logfile = self.base / "server.log"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        atexit.register(self.close)

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def _spawn(self) -> None:
        with open(self.logfile, "ab") as log:
            self._proc = subprocess.Popen(
                [
                    str(self.binary), "--port", str(self.port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                    "--daemonize", "no",
                    "--dir", str(self.base),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own session: Ctrl-C in pytest must not kill it before teardown runs.
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ServiceUnavailable(
                    f"redis-server exited with {self._proc.returncode}:\n{_tail(self.logfile)}"
                )
            if self._ping():
                return
            time.sleep(0.02)
        self.stop()
        raise ServiceUnavailable(
            f"redis-server did not answer PING in 20 s:\n{_tail(self.logfile)}"
        )

    def start(self) -> None:
        """Start the server (on the same port after a ``stop``) and wait for PING."""
        if self.running:
            return
        if self.port:
            self._spawn()
            return
        for attempt in range(3):
            self.port = free_port()
            try:
                self._spawn()
                return
            except ServiceUnavailable:
                if attempt == 2:
                    raise

    def stop(self) -> None:
        """Terminate the server and wait for it."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def kill(self) -> None:
        """SIGKILL the server (a crash: no shutdown, no final flush) and wait for it."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """SIGSTOP the server inside the block (sockets stay open, nothing answers);
        SIGCONT afterwards, even on error."""
        assert self._proc is not None and self._proc.poll() is None, "server is not running"
        self._proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        """Stop the server and delete its folder; safe to call twice."""
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)
