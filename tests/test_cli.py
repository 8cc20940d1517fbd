"""The ``swarmgraph`` command line, run as a user runs it: a real process, a temp directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

BIN = Path(sys.executable).parent
SWARMGRAPH = BIN / "swarmgraph"
pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "SWARMGRAPH_DB",
            "NO_COLOR",
            "SWARMGRAPH_DEBUG",
        )
    }
    env.update(extra)
    return env


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    command = [str(SWARMGRAPH)] if SWARMGRAPH.exists() else [sys.executable, "-m", "swarmgraph"]
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_one_line_error(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    for needle in needles:
        assert needle in lines[0]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    cwd = tmp_path_factory.mktemp("demo")
    return cwd, run(cwd, "demo")


def test_demo_shows_turns_tools_handoffs_and_the_measured_table(demo_dir):
    cwd, done = demo_dir
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline demo model" in out
    assert "Triage → Refunds" in out and "Triage → Sales" in out
    assert 'set_name(name="Ming")' in out and "record_order(order_id=7)" in out
    assert '"name": "Ming", "order_id": 7' in out
    assert "\x1b[" not in out  # not a terminal: no colour codes
    rows = {
        line.split("|")[0].strip(): [c.strip() for c in line.split("|")]
        for line in out.splitlines()
        if line.count("|") >= 5
    }
    assert rows["messages+context"][1:3] == ["yes", "yes"]
    assert rows["messages"][1:3] == ["yes", "no"]
    assert rows["context"][1:3] == ["no", "yes"]
    assert rows["none"][1:3] == ["no", "no"]
    assert int(rows["none"][5]) == 0 < int(rows["context"][5]) < int(rows["messages"][5])
    # the two numbers that look backwards are explained under the table
    assert int(rows["none"][4]) > int(rows["context"][4])
    assert int(rows["messages"][5]) > int(rows["messages+context"][5])
    assert "Measured with the offline rule-based model" in out
    assert "restarts\nat Triage and hands off to Refunds again" in out
    assert ".swarmgraph/swarmgraph.db" in out
    assert (cwd / ".swarmgraph" / "swarmgraph.db").stat().st_size > 0


def test_demo_is_deterministic_and_replays_from_the_start(demo_dir):
    cwd, first = demo_dir
    again = run(cwd, "demo")
    assert again.returncode == 0, again.stderr
    # A second run starts a new conversation beside the first, never over it.
    assert again.stdout == first.stdout.replace("'demo'", "'demo-2'").replace(
        "--session demo", "--session demo-2"
    )
    assert "Hi, I'm Ming" in run(cwd, "history", "--session", "demo").stdout


def test_demo_never_touches_data_it_did_not_create(tmp_path):
    """``--db`` may name a user's store: their "demo" conversation and any compare-*.db files
    next to it survive byte for byte; the demo writes only a conversation it starts."""
    import sqlite3

    user_db = tmp_path / "mine.db"
    url = f"sqlite:///{user_db}"
    setup = (
        "from swarmgraph.memory import open_context_store, open_history\n"
        "from langchain_core.messages import HumanMessage\n"
        f"open_history({url!r}, 'demo').add_messages([HumanMessage('my own demo notes')])\n"
        f"open_context_store({url!r}).save('demo', {{'mine': True}})\n"
    )
    subprocess.run([sys.executable, "-c", setup], check=True, timeout=120)
    for folder in (tmp_path / "compare", tmp_path / ".swarmgraph" / "compare"):
        folder.mkdir(parents=True)
        (folder / "compare-messages.db").write_bytes(b"user data")
        (folder / "compare-mine.db-wal").write_bytes(b"more user data")
    before = {p: p.read_bytes() for p in tmp_path.rglob("compare-*")}

    done = run(tmp_path, "demo", "--db", url)
    assert done.returncode == 0, done.stderr
    assert "conversation 'demo-2'" in done.stdout and "--session demo-2" in done.stdout
    assert {p: p.read_bytes() for p in tmp_path.rglob("compare-*")} == before
    with sqlite3.connect(user_db) as conn:
        rows = conn.execute(
            "SELECT message FROM message_store WHERE session_id = 'demo'"
        ).fetchall()
        context = conn.execute(
            "SELECT context FROM swarm_context WHERE conversation_id = 'demo'"
        ).fetchall()
    assert len(rows) == 1 and "my own demo notes" in rows[0][0]
    assert context == [('{"mine":true}',)]
    history = run(tmp_path, "history", "--session", "demo-2", "--db", url)
    assert "Hi, I'm Ming" in history.stdout


def test_history_shows_what_demo_stored(demo_dir):
    cwd, _ = demo_dir
    done = run(cwd, "history", "--session", "demo")
    assert done.returncode == 0, done.stderr
    assert "Hi, I'm Ming" in done.stdout and "Did my refund go through?" in done.stdout
    assert "Triage → Refunds" in done.stdout
    assert '"order_id": 7' in done.stdout and "active agent: Refunds" in done.stdout
    # messages on the left, context on the right of the same line
    assert re.search(r"you › Hi, I'm Ming.*│ \{", done.stdout)


def test_demo_db_flag_and_env_var_choose_the_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'elsewhere' / 'x.db'}"
    assert run(tmp_path, "demo", "--db", url).returncode == 0
    assert (tmp_path / "elsewhere" / "x.db").exists()
    assert not (tmp_path / ".swarmgraph" / "swarmgraph.db").exists()
    done = run(tmp_path, "history", "--session", "demo", SWARMGRAPH_DB=url)
    assert done.returncode == 0 and "Ming" in done.stdout


def test_unknown_session_is_one_line(demo_dir):
    cwd, _ = demo_dir
    assert_one_line_error(run(cwd, "history", "--session", "nobody"), "nobody")


def test_missing_database_file_is_one_line_and_not_created(tmp_path):
    done = run(tmp_path, "history", "--session", "demo")
    assert_one_line_error(done, "demo")
    assert not (tmp_path / ".swarmgraph").exists()


def test_an_upgrade_points_at_the_store_older_versions_used(tmp_path):
    # Before 0.2 the default store was ./swarmgraph.db; the default is .swarmgraph/ now.
    assert run(tmp_path, "demo", "--db", "sqlite:///swarmgraph.db").returncode == 0
    done = run(tmp_path, "history", "--session", "demo")
    assert_one_line_error(done, "demo", "--db sqlite:///swarmgraph.db")
    assert not (tmp_path / ".swarmgraph").exists()
    done = run(tmp_path, "history", "--session", "demo", "--db", "sqlite:///swarmgraph.db")
    assert done.returncode == 0 and "Ming" in done.stdout
    # Once the new store exists, its own errors stand alone.
    assert run(tmp_path, "demo").returncode == 0
    done = run(tmp_path, "history", "--session", "nobody")
    assert_one_line_error(done, "nobody")
    assert "swarmgraph.db;" not in done.stderr


@pytest.mark.parametrize("url", ["foo://bar", "sqlite://", "postgresql://u@127.0.0.1:1/db"])
def test_bad_url_is_one_line(tmp_path, url):
    assert_one_line_error(run(tmp_path, "history", "--session", "s", "--db", url))


def test_missing_key_for_a_real_model_is_one_line(tmp_path):
    done = run(tmp_path, "chat", "--session", "s", "--model", "gpt-4o")
    assert_one_line_error(done, "OPENAI_API_KEY")


def test_unknown_command_and_bad_memory_policy_are_one_line(tmp_path):
    assert_one_line_error(run(tmp_path, "fly"), "fly")
    assert_one_line_error(run(tmp_path, "chat", "--session", "s", "--memory", "lots"), "lots")


def test_locked_database_is_one_line(demo_dir, tmp_path):
    import sqlite3

    cwd, _ = demo_dir
    db = tmp_path / "locked.db"
    run(cwd, "demo", "--db", f"sqlite:///{db}")
    holder = sqlite3.connect(db, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = run(cwd, "demo", "--db", f"sqlite:///{db}", SWARMGRAPH_SQLITE_BUSY_TIMEOUT_MS="300")
    finally:
        holder.rollback()
        holder.close()
    assert_one_line_error(done, "locked")


def test_graph_mermaid_has_the_handoff_edges(tmp_path):
    done = run(tmp_path, "graph", "--format", "mermaid")
    assert done.returncode == 0, done.stderr
    for edge in (
        "Triage -.-> Refunds",
        "Triage -.-> Sales",
        "Sales -.-> Triage",
        "Refunds -.-> Triage",
    ):
        assert edge in done.stdout


def test_graph_png_is_a_png(tmp_path):
    done = run(tmp_path, "graph", "--format", "png", "--output", "g.png")
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "g.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def test_python_dash_m_swarmgraph_works(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "swarmgraph", "graph"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Triage" in done.stdout


# -- the REPL, through a pseudo-terminal --------------------------------------------------------
# prompt_toolkit draws the prompt's trailing space as a cursor move, so match without it.
PROMPT = "you ›"


def chat(cwd: Path, *args: str, **env: str) -> pexpect.spawn:
    """``swarmgraph chat ARGS`` on a pseudo-terminal."""
    # pexpect's terminal never answers prompt_toolkit's cursor-position query; without this
    # prompt_toolkit waits for the answer and then prints a warning.
    env.setdefault("PROMPT_TOOLKIT_NO_CPR", "1")
    return pexpect.spawn(
        str(SWARMGRAPH),
        ["chat", *args],
        cwd=str(cwd),
        env=_env(**env),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
        # poll, not select: select() refuses a descriptor numbered 1024 or more, which a
        # long test process that keeps store connections open can reach
        use_poll=True,
    )


def quit_chat(child: pexpect.spawn) -> None:
    """Leave a chat at its prompt with ``/quit`` and check it exited cleanly."""
    child.expect(PROMPT)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def _chat(cwd: Path, session: str, *args: str, **env: str) -> pexpect.spawn:
    return chat(cwd, "--session", session, *args, **env)


def test_repl_streams_tools_handoffs_and_commands(tmp_path):
    child = _chat(tmp_path, "ada", NO_COLOR="1")
    child.expect("offline demo model")
    child.expect(PROMPT)
    child.sendline("Hi, I'm Ada, order 12 needs a refund")
    child.expect(r'set_name\(name="Ada"\)')
    child.expect("Triage → Refunds")
    child.expect("Refunds › Done, Ada: the refund for order 12 is approved")
    child.expect(PROMPT)
    child.sendline("/context")
    child.expect(r'context_variables: \{"name": "Ada", "order_id": 12')
    child.expect(PROMPT)
    child.sendline("/agent")
    child.expect("active agent: Refunds")
    child.expect(PROMPT)
    child.sendline("/history")
    child.expect("you › Hi, I'm Ada")
    child.expect(PROMPT)
    child.sendline("/nope")
    child.expect("unknown command /nope; /help lists them")
    child.expect(PROMPT)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    # a new process with the same session sees the stored history and agent
    child = _chat(tmp_path, "ada", NO_COLOR="1")
    child.expect(r"resuming: \d+ stored messages, talking to Refunds")
    child.expect(PROMPT)
    child.sendline("Did my refund go through?")
    child.expect("Refund for order 12: approved")
    child.expect(PROMPT)
    child.sendline("/clear")
    child.expect(r"delete the \d+ stored messages and the context of session 'ada'\? \[y/N\]")
    child.sendline("y")
    child.expect("cleared")
    child.expect(PROMPT)
    child.sendline("/context")
    child.expect(r"context_variables: \{\}")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_repl_colours_agents_on_a_terminal(tmp_path):
    child = _chat(tmp_path, "colour")
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect(re.escape("\x1b[1;33mTriage\x1b[0m"))
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_command_that_loaded_temporals_core_exits_without_finalising_but_runs_atexit(tmp_path):
    """temporalio's Rust threads can take the GIL while Python finalises and abort the
    process (rc -6; ``swarmgraph worker`` did after SIGTERM now and then): once the core is
    loaded, ``main`` ends the process itself, after the atexit hooks and the flushes, with
    the command's own status."""
    script = (
        "import atexit, sys\n"
        "import temporalio.bridge.temporal_sdk_bridge\n"
        "atexit.register(print, 'atexit hook ran')\n"
        f"sys.argv = ['swarmgraph', 'sessions', '--db', {f'sqlite:///{tmp_path}/x.db'!r}]\n"
        "from swarmgraph.app.cli import main\n"
        "status = main()\n"
        "print('main returned', status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "atexit hook ran" in done.stdout
    assert "main returned" not in done.stdout  # it never went back into finalisation
    without = script.replace("import temporalio.bridge.temporal_sdk_bridge\n", "")
    plain = subprocess.run(
        [sys.executable, "-c", without], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert "main returned 0" in plain.stdout, plain.stderr  # other commands return as before
