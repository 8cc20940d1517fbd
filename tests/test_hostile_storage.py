"""A hostile or unlucky storage input: a corrupt file, a full disk, a URL carrying a password
SQLite cannot use, a tuple in context, a Postgres role without grants, a missing extra.

Each is named for its cause, with the driver's own error kept as ``__cause__``; none loses a
turn that was committed before it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from scale_helpers import ENV, ROOT, fresh_id
from sqlalchemy import event
from sqlalchemy.exc import DatabaseError, OperationalError
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
from swarmgraph.memory import Session
from swarmgraph.memory.backends.sqlite.engine import dispose_engine, sync_engine
from swarmgraph.memory.errors import StorageConfigurationError, StorageUnavailable

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _turn(session: Session, text: str = "hi", answer: str = "ok") -> None:
    session.run(Swarm(chat_model=ScriptedChatModel([answer])), Agent(), text)


# -- a corrupt file ----------------------------------------------------------------------


def _not_a_database(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _damaged_pages(path: Path) -> None:
    session = Session("c", url=f"sqlite:///{path}")
    for i in range(40):
        _turn(session, f"message {i} " + "x" * 500)
    dispose_engine(path)  # closed, as a finished process leaves it (WAL checkpointed)
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    data[4096 : len(data) - 4096] = b"\xff" * (len(data) - 8192)  # keep the header page
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_not_a_database, _damaged_pages])
def test_a_corrupt_sqlite_file_is_a_configuration_error_and_stays_as_it_was(tmp_path, damage):
    path = tmp_path / "chat.db"
    damage(path)
    before = path.read_bytes()
    with pytest.raises(
        StorageConfigurationError, match="not a SQLite database, or is corrupt"
    ) as caught:
        session = Session("c", url=f"sqlite:///{path}")
        session.messages  # noqa: B018 - damaged pages are met on the first read
    assert isinstance(caught.value.__cause__, DatabaseError)  # the driver's error, kept
    assert "restore it from a backup" in str(caught.value)
    assert path.read_bytes() == before  # nothing written over what may be recovered
    dispose_engine(path)


# -- a full disk -------------------------------------------------------------------------


@contextlib.contextmanager
def _tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (root only): a disk that really fills up."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (not root?): {done.stderr.decode().strip()}")
    try:
        yield mount / "chat.db"
    finally:
        dispose_engine(mount / "chat.db")
        subprocess.run(["umount", "-l", str(mount)], check=False)


@contextlib.contextmanager
def _page_limit(tmp_path: Path) -> Iterator[Path]:
    """``PRAGMA max_page_count`` on every connection: SQLite answers SQLITE_FULL, as on a
    full disk, wherever the tests run."""
    path = tmp_path / "chat.db"
    _turn(Session("c", url=f"sqlite:///{path}"))  # the tables, before the limit
    dispose_engine(path)
    engine = sync_engine(path)

    @event.listens_for(engine, "connect")
    def _limit(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        cursor.execute(f"PRAGMA max_page_count = {pages + 8}")
        cursor.close()

    try:
        yield path
    finally:
        dispose_engine(path)


@pytest.mark.parametrize("full", [_tiny_tmpfs, _page_limit], ids=["tmpfs", "max_page_count"])
def test_a_full_disk_is_storage_unavailable_and_committed_turns_stay(tmp_path, full):
    with full(tmp_path) as path:
        session = Session("c", url=f"sqlite:///{path}")
        stored = 0
        with pytest.raises(StorageUnavailable, match="is full or failing") as caught:
            for i in range(200):
                _turn(session, f"turn {i} " + "y" * 4000, "z" * 4000)
                stored = len(session.messages)
        assert not isinstance(caught.value, StorageConfigurationError)  # it may pass
        assert isinstance(caught.value.__cause__, OperationalError)
        assert "database or disk is full" in str(caught.value.__cause__)
        assert stored >= 2  # some turns fitted before the disk filled
        assert len(Session("c", url=f"sqlite:///{path}").messages) == stored  # all of them


# -- URLs and context --------------------------------------------------------------------


def test_a_sqlite_url_with_a_password_is_refused_without_echoing_it(tmp_path):
    url = f"sqlite://bob:hunter2@/{tmp_path}/x.db"
    with pytest.raises(ValueError, match="takes no user or password") as caught:
        Session("c", url=url)
    assert "hunter2" not in str(caught.value)
    assert "bob:***@" in str(caught.value)


def test_a_tuple_in_context_comes_back_as_a_list_as_the_storage_page_says(tmp_path):
    session = Session(fresh_id("tuple"), url=f"sqlite:///{tmp_path / 'chat.db'}")
    session.run(
        Swarm(chat_model=ScriptedChatModel(["ok"])),
        Agent(),
        "hi",
        context_variables={"size": (3, 4), "nested": {"pair": ("a", 1)}},
    )
    reopened = Session(session.conversation_id, url=f"sqlite:///{tmp_path / 'chat.db'}")
    assert reopened.context_variables == {"size": [3, 4], "nested": {"pair": ["a", 1]}}
    page = " ".join((DOCS / "storage.md").read_text().split())
    assert "a tuple comes back as a list" in page


# -- Postgres: a role without grants -----------------------------------------------------


@pytest.fixture
def role_without_grants(postgres_server):
    """A login role with USAGE on the schema of current tables, and no rights on them."""
    import psycopg
    from psycopg import sql

    role, name = fresh_id("nogrants").replace("-", "_"), fresh_id("owned").replace("-", "_")
    owner_url = postgres_server.new_database(name)
    _turn(Session("c", url=owner_url))  # the owner creates the tables: current
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(sql.Identifier(role)))
    yield owner_url.replace("postgres@", f"{role}@", 1), role
    with psycopg.connect(postgres_server.url_for("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.mark.postgres
def test_a_postgres_role_without_grants_is_told_it_lacks_them(role_without_grants):
    url, role = role_without_grants
    with pytest.raises(StorageConfigurationError) as caught:
        Session("c", url=url)
    said = str(caught.value)
    assert "created or upgraded" not in said  # they are current
    assert f"the tables are there, but user {role} lacks rights on them" in said
    assert "SELECT on swarm_context" in said and "INSERT on swarm_messages" in said
    assert f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}" in said
    assert caught.value.__cause__ is not None  # the server's refusal, kept


# -- a missing extra ---------------------------------------------------------------------


@pytest.mark.slow  # a fresh interpreter, with the driver hidden
@pytest.mark.parametrize(
    ("hidden", "url", "extra"),
    [
        ("psycopg", "postgresql://u@127.0.0.1:9/x", "postgres"),
        ("redis", "redis://127.0.0.1:9/0", "redis"),
    ],
)
def test_a_storage_url_without_its_driver_names_the_extra(hidden, url, extra):
    program = textwrap.dedent(
        f"""
        import sys
        sys.modules[{hidden!r}] = None  # as if the extra was not installed
        from swarmgraph.memory import Session
        try:
            Session("c", url={url!r})
        except ModuleNotFoundError as error:
            print(type(error).__name__, error.name, "|", error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=ENV, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    kind, name, said = done.stdout.replace("|", " ", 1).split(" ", 2)
    assert kind == "ModuleNotFoundError" and name.split(".")[0] == hidden
    assert f"needs the {extra} extra" in said
    assert f"pip install 'swarmgraph[{extra}]'" in said
