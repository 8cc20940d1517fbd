"""``swarmgraph chat`` as a person uses it: a pseudo-terminal for line editing and Ctrl-C,
pipes for the rest, a loopback OpenAI-compatible server for the real-model paths."""

from __future__ import annotations

import subprocess
import textwrap
import threading
from pathlib import Path

import pytest
from openai_stub import OpenAIStub, stub_error, stub_raw, stub_text
from swarmgraph.memory import Session
from test_cli import PROMPT, SWARMGRAPH, _chat, _env, quit_chat, run

pytestmark = pytest.mark.slow
UP = "\x1b[A"  # the arrow-up key as a terminal sends it


def _stored(cwd: Path, session: str) -> Session:
    return Session(session, url=f"sqlite:///{cwd / '.swarmgraph' / 'swarmgraph.db'}")


def _pipe_chat(cwd: Path, lines: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SWARMGRAPH), "chat", *args],
        cwd=cwd,
        env=_env(**env),
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- item 7: a line editor --------------------------------------------------------------------
def test_a_line_longer_than_the_tty_limit_arrives_whole(tmp_path):
    long_line = "I'm Ada. " + "bees " * 1000 + "end"  # 5,012 characters; a tty cuts at 4,095
    assert len(long_line) > 4095
    child = _chat(tmp_path, "long", NO_COLOR="1")
    child.expect(PROMPT)
    child.sendline(long_line)
    child.expect("Triage ›")
    quit_chat(child)
    first = _stored(tmp_path, "long").messages[0]
    assert first.content == long_line


def test_arrow_up_recalls_lines_also_after_a_restart(tmp_path):
    child = _chat(tmp_path, "arrows", NO_COLOR="1")
    child.expect(PROMPT)
    child.sendline("How much is a hive?")
    child.expect("one hive costs")
    child.expect(PROMPT)
    child.send(UP + "\r")  # the same line again, without typing it
    child.expect("one hive costs")
    quit_chat(child)
    history = (tmp_path / ".swarmgraph" / "swarmgraph.db.history").read_text(encoding="utf-8")
    assert "How much is a hive?" in history

    child = _chat(tmp_path, "arrows", NO_COLOR="1")  # a new process reads the history file
    child.expect(PROMPT)
    child.send(UP + UP + "\r")  # one up: "/quit"; two up: the question
    child.expect("one hive costs")
    quit_chat(child)
    users = [m.content for m in _stored(tmp_path, "arrows").messages if m.type == "human"]
    assert users == ["How much is a hive?"] * 3


# -- item 8: Ctrl-C while the model thinks ----------------------------------------------------
def test_ctrl_c_while_the_model_thinks_returns_at_once_and_stores_nothing(tmp_path):
    answer = threading.Event()
    asked = threading.Event()

    def slow(body):  # the model "thinks" until the test lets it answer
        asked.set()
        answer.wait(120)
        return stub_text("A late answer nobody should store.")

    with OpenAIStub([slow, stub_text("Second answer.")]) as stub:
        child = _chat(
            tmp_path, "intr", "--model", "stub-model", OPENAI_BASE_URL=stub.base_url, NO_COLOR="1"
        )
        child.expect(PROMPT)
        child.sendline("first question")
        assert asked.wait(60)
        child.sendintr()
        # The prompt is back while the server still holds the answer: no waiting for it.
        child.expect(r"\(interrupted; nothing of this turn was saved\)")
        child.expect(PROMPT)
        assert not answer.is_set()
        answer.set()  # the abandoned turn gets its answer now; it must be thrown away
        child.sendline("second question")
        child.expect("Second answer.")
        quit_chat(child)
    stored = [(m.type, m.content) for m in _stored(tmp_path, "intr").messages]
    assert stored == [("human", "second question"), ("ai", "Second answer.")]
    assert "late answer" not in (tmp_path / ".swarmgraph" / "swarmgraph.db").read_bytes().decode(
        "utf-8", "replace"
    )


# -- item 10: /help, /clear asks, --version, OPENAI_BASE_URL without --model -------------------
def test_help_lists_commands_and_clear_asks_before_deleting(tmp_path):
    child = _chat(tmp_path, "ask", NO_COLOR="1")
    child.expect("type /help for commands")
    child.expect(PROMPT)
    child.sendline("/help")
    for name in ("/help", "/context", "/history", "/agent", "/clear", "/quit"):
        child.expect(name)
    child.expect(PROMPT)
    child.sendline("I'm Ada, refund order 12")
    child.expect("refund for order 12 is approved")
    child.expect(PROMPT)
    child.sendline("/clear")
    child.expect(r"\[y/N\]")
    child.sendline("")  # Enter: the default is no
    child.expect("kept: nothing was deleted")
    quit_chat(child)
    assert _stored(tmp_path, "ask").context_variables["order_id"] == 12


def test_version_flag(tmp_path):
    from swarmgraph import __version__

    done = run(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"swarmgraph {__version__}"


def test_base_url_without_model_says_which_model_answers(tmp_path):
    done = _pipe_chat(
        tmp_path, "hello\n", "--session", "s", OPENAI_BASE_URL="http://127.0.0.1:9/v1"
    )
    assert done.returncode == 0, done.stderr
    assert "model: offline demo model" in done.stdout
    assert "OPENAI_BASE_URL is set (http://127.0.0.1:9/v1) but --model is not" in done.stdout
    assert "add --model NAME" in done.stdout


# -- item 6: --memory summary ------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["summary", "summary:2"])
def test_memory_summary_uses_the_runs_model(tmp_path, spec):
    lines = "I'm Ming, refund order 7\nHow much is a hive?\nDid my refund go through?\n"
    done = _pipe_chat(tmp_path, lines, "--session", "s", "--memory", spec)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "Refund for order 7: approved" in done.stdout
    # Three demo turns store more than 10 messages: the oldest were folded into a summary,
    # written by the demo model.
    meta = _stored(tmp_path, "s").store.load("s").meta
    assert meta["summarized"] > 0 and "refund order 7" in meta["summary"]


def test_memory_summary_with_a_real_model_asks_that_model(tmp_path):
    def reply(body):
        if "running summary" in body["messages"][0]["content"]:
            return stub_text("SUMMARY: the user counted.")
        return stub_text("noted")

    with OpenAIStub([reply] * 10) as stub:
        done = _pipe_chat(
            tmp_path,
            "one\ntwo\nthree\n",
            *("--session", "s", "--memory", "summary:1", "--model", "stub-model"),
            OPENAI_BASE_URL=stub.base_url,
        )
        assert done.returncode == 0, done.stderr
        asked = [r for r in stub.requests if "running summary" in r["messages"][0]["content"]]
    assert asked and all(r["model"] == "stub-model" for r in asked)
    assert _stored(tmp_path, "s").store.load("s").meta["summary"] == "SUMMARY: the user counted."


# -- item 9: one default store ---------------------------------------------------------------
def test_session_default_and_cli_share_one_store_and_one_variable(tmp_path):
    script = textwrap.dedent(
        """
        from swarmgraph import Swarm
        from swarmgraph.app.demo import demo_agents, demo_model
        from swarmgraph.memory import Session
        triage, _, _ = demo_agents()
        Session("from-script").run(Swarm(chat_model=demo_model()), triage, "I'm Ada, order 12")
        """
    )
    python = str(SWARMGRAPH.parent / "python")
    done = subprocess.run(
        [python, "-c", script], cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".swarmgraph" / "swarmgraph.db").exists()
    shown = run(tmp_path, "history", "--session", "from-script")
    assert shown.returncode == 0 and "I'm Ada, order 12" in shown.stdout

    moved = f"sqlite:///{tmp_path / 'moved.db'}"
    done = subprocess.run(
        [python, "-c", script],
        cwd=tmp_path,
        env=_env(SWARMGRAPH_DB=moved),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "moved.db").exists()
    # wide enough that the table's title shows the whole path (a worker's tmp_path is long)
    shown = run(tmp_path, "history", "--session", "from-script", SWARMGRAPH_DB=moved, COLUMNS="400")
    assert shown.returncode == 0 and "moved.db" in shown.stdout


# -- item 11: provider errors a person can act on -----------------------------------------------
def _real(cwd: Path, stub: OpenAIStub, lines: str = "hello\n") -> subprocess.CompletedProcess:
    return _pipe_chat(
        cwd, lines, "--session", "s", "--model", "stub-model", OPENAI_BASE_URL=stub.base_url
    )


def test_a_5xx_is_reported_as_retried_then_the_answer_comes(tmp_path):
    with OpenAIStub([stub_error(503, "overloaded"), stub_text("Hello from the server.")]) as stub:
        done, url = _real(tmp_path, stub), stub.base_url
    assert done.returncode == 0
    assert "Hello from the server." in done.stdout
    line = next(x for x in done.stderr.splitlines() if "retrying" in x)
    assert f"the model server at {url}/chat/completions answered HTTP 503" in line
    assert "retrying (1 of 2 retries)" in line


def test_a_5xx_that_persists_names_url_status_and_attempts(tmp_path):
    with OpenAIStub([stub_error(502, "bad gateway")] * 3) as stub:
        done, url = _real(tmp_path, stub), stub.base_url
    errors = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"{url}/chat/completions answered HTTP 502 after 3 attempts" in errors[0]
    assert "bad gateway" in errors[0]
    assert "retrying (2 of 2 retries)" in done.stderr
    assert _stored(tmp_path, "s").messages == []


def test_a_malformed_response_is_named_as_such(tmp_path):
    with OpenAIStub([stub_raw("<html>proxy says hi</html>")]) as stub:
        done, url = _real(tmp_path, stub), stub.base_url
    assert "sent a malformed response (not an OpenAI chat completion)" in done.stderr
    assert url in done.stderr
    assert "No generations found" not in done.stderr


def test_an_unreachable_server_is_named(tmp_path):
    done = _pipe_chat(
        tmp_path,
        "hello\n",
        *("--session", "s", "--model", "m"),
        OPENAI_BASE_URL="http://user:hunter2@127.0.0.1:9/v1",
    )
    assert "cannot reach the model server at http://user:***@127.0.0.1:9/v1" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout


def test_demo_with_a_failing_server_is_one_line_naming_it(tmp_path):
    with OpenAIStub([stub_error(500, "boom")] * 3) as stub:
        done = run(tmp_path, "demo", "--model", "m", OPENAI_BASE_URL=stub.base_url)
        url = stub.base_url
    errors = [x for x in done.stderr.splitlines() if not x.endswith("retries)")]
    assert done.returncode == 1 and len(errors) == 1, done.stderr
    assert errors[0].startswith(f"swarmgraph: error: the model server at {url}/chat/completions")
    assert "answered HTTP 500 after 3 attempts; boom" in errors[0]
