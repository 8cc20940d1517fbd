"""The REPL as a person uses it, on a pseudo-terminal: tool results shown as they come, /agent
NAME, a second client's turns, an approval question left with Ctrl-D; and ``swarmgraph
sessions`` / ``history`` without ``--session`` listing what is stored."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest
from openai_stub import OpenAIStub, stub_text
from swarmgraph.memory import Session
from test_cli import PROMPT, _chat, quit_chat, run
from test_cli_user_agents import DESK
from test_cli_user_agents import chat as chat_user_agent
from test_repl import _pipe_chat

pytestmark = pytest.mark.slow
ASK = r"approve process_refund\(\)\? \[y/N/reason\]"


def _stored(cwd: Path, session: str) -> Session:
    return Session(session, url=f"sqlite:///{cwd / '.swarmgraph' / 'swarmgraph.db'}")


def test_live_chat_shows_tool_results_as_history_does(tmp_path):
    child = _chat(tmp_path, "live", NO_COLOR="1")
    child.expect(PROMPT)
    child.sendline("Hi, I'm Ada, order 12 needs a refund")
    child.expect(r'set_name\(name="Ada"\)')
    child.expect("↳ Name saved: Ada.")  # the tool's answer, under its call, before the handoff
    child.expect("Triage → Refunds")
    child.expect("process_refund()")
    child.expect("↳ Refund for order 12 approved.")
    child.expect("Refunds › Done, Ada")
    live = child.before
    assert '{"assistant"' not in live  # a handoff's answer is the arrow, not a ↳ line
    quit_chat(child)


def test_agent_name_switches_to_a_reachable_agent_or_says_it_cannot(tmp_path):
    child = _chat(tmp_path, "switch", NO_COLOR="1")
    child.expect(PROMPT)
    child.sendline("/agent Sales")
    child.expect(r"active agent: Sales \(answers your next message\)")
    child.expect(PROMPT)
    child.sendline("/agent")
    child.expect("active agent: Sales")
    child.expect(PROMPT)
    child.sendline("/agent Tech")
    child.expect("cannot switch: no agent named 'Tech' here; agents: Triage, Sales, Refunds")
    child.expect(PROMPT)
    child.sendline("How much is a hive?")
    child.expect(r"Sales › ")  # Sales answered, with no handoff from Triage
    child.expect(PROMPT)
    assert "Triage →" not in child.before
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert _stored(tmp_path, "switch").active_agent_name == "Sales"


def test_a_second_client_sees_the_first_ones_turns(tmp_path):
    second = _chat(tmp_path, "shared", NO_COLOR="1")
    second.expect(PROMPT)
    first = _pipe_chat(tmp_path, "I'm Ada, refund order 12\n", "--session", "shared",
                       NO_COLOR="1")  # fmt: skip
    assert first.returncode == 0, first.stderr
    stored = len(_stored(tmp_path, "shared").messages)
    second.sendline("/context")
    second.expect(r"\((\d+) new messages from another client\)")
    assert int(second.match.group(1)) == stored
    second.expect("you › I'm Ada, refund order 12")
    second.expect("Triage → Refunds")
    second.expect(r'context_variables: \{"name": "Ada", "order_id": 12')
    second.expect(PROMPT)
    second.sendline("/context")  # shown once: nothing new the second time
    second.expect("context_variables")
    assert "new message" not in second.before
    second.expect(PROMPT)
    second.sendline("Did my refund go through?")  # its own turn is not "another client's"
    second.expect("Refund for order 12: approved")
    second.expect(PROMPT)
    second.sendline("/context")
    second.expect("context_variables")
    assert "new message" not in second.before
    quit_chat(second)


def test_ctrl_d_at_an_approval_question_leaves_cleanly_and_ctrl_c_asks_again(tmp_path):
    child = _chat(tmp_path, "ask", "--approve", "process_refund", NO_COLOR="1")
    child.expect(PROMPT)
    child.sendline("I'm Ada, refund order 12")
    child.expect(ASK)
    child.sendcontrol("c")  # drops what was typed and asks again
    child.expect(ASK)
    # The question is on screen a moment before the prompt reads the terminal again; a Ctrl-D
    # typed in that moment reaches no reader (a person is never that fast): press it again.
    left = r"left waiting: process_refund\(\) is asked about again when session 'ask'"
    for _ in range(5):
        child.sendeof()
        if child.expect([left, pexpect.TIMEOUT], timeout=5) == 0:
            break
    else:
        pytest.fail("Ctrl-D at the approval question never left the REPL")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "resume it first" not in (child.before or "")
    assert [p.tool for p in _stored(tmp_path, "ask").pending] == ["process_refund"]

    child = _chat(tmp_path, "ask", "--approve", "process_refund", NO_COLOR="1")
    child.expect(ASK)  # before anything else
    child.sendline("y")
    child.expect("the refund for order 12 is approved")
    quit_chat(child)
    assert _stored(tmp_path, "ask").pending == []


def test_sessions_and_history_without_a_session_list_the_stored_conversations(tmp_path):
    empty = run(tmp_path, "sessions")
    assert empty.returncode == 0 and "no stored conversations" in empty.stdout
    assert not (tmp_path / ".swarmgraph").exists()  # listing created nothing
    for text, session in (("I'm Ada, refund order 12", "ada"), ("hello", "bo")):
        assert _pipe_chat(tmp_path, text + "\n", "--session", session).returncode == 0
    done = run(tmp_path, "sessions", "--no-color")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 conversations in .swarmgraph/swarmgraph.db, the last changed first:"
    assert lines[1].split() == ["conversation", "agent", "messages", "last", "change"]
    rows = [line.split() for line in lines[2:]]
    assert [row[0] for row in rows] == ["bo", "ada"]  # the last changed first
    assert rows[1][1:3] == ["Refunds", str(len(_stored(tmp_path, "ada").messages))]
    assert rows[0][1] == "Triage" and re.fullmatch(r"\d{4}-\d\d-\d\d", rows[0][3])
    listed = run(tmp_path, "history", "--no-color")
    assert listed.returncode == 0 and listed.stdout.startswith(done.stdout)
    assert re.search(r"show one with: \S*swarmgraph history --session ID", listed.stdout)


def test_the_banner_names_the_model_every_request_asks_for(tmp_path):
    (tmp_path / "desk.py").write_text(DESK)  # agents that ask for "shop-model"
    with OpenAIStub([stub_text("Hello from the shop.")]) as stub:
        env = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
        child = chat_user_agent(tmp_path, "desk.py:triage", **env)
        child.expect(r"model: (\S+) at")
        shown = child.match.group(1)
        child.expect(PROMPT)
        child.sendline("hi")
        child.expect("Hello from the shop.")
        quit_chat(child)
        asked = {request["model"] for request in stub.requests}
    assert asked == {"shop-model"} and shown == "shop-model"
