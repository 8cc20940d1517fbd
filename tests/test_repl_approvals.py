"""``swarmgraph chat --approve TOOL``: the REPL asks before a marked tool runs, and a turn left
waiting is asked about again when the chat starts in a new process."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from test_repl import _pipe_chat

from swarmgraph import effect
from swarmgraph.app.repl import LineReader, chat_loop

pytestmark = pytest.mark.slow
ASK = "approve process_refund()? [y/N/reason]"


def _stored(cwd: Path, session: str) -> Session:
    return Session(session, url=f"sqlite:///{cwd / '.swarmgraph' / 'swarmgraph.db'}")


def test_the_repl_asks_before_a_marked_tool_runs(tmp_path):
    lines = "I'm Ada, refund order 12\ny\n/context\n"
    done = _pipe_chat(tmp_path, lines, "--session", "ask", "--approve", "process_refund",
                      NO_COLOR="1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert ASK in done.stdout
    assert "the refund for order 12 is approved" in done.stdout
    assert '"refund_status": "approved"' in done.stdout
    assert _stored(tmp_path, "ask").pending == []


def test_a_turn_left_waiting_is_asked_again_after_a_restart_and_a_reason_denies(tmp_path):
    first = _pipe_chat(tmp_path, "I'm Ada, refund order 12\n", "--session", "later",
                       "--approve", "process_refund", NO_COLOR="1")  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert ASK in first.stdout and "left waiting" in first.stdout
    assert [p.tool for p in _stored(tmp_path, "later").pending] == ["process_refund"]

    second = _pipe_chat(tmp_path, "not without a receipt\n", "--session", "later",
                        "--approve", "process_refund", NO_COLOR="1")  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert second.stdout.count(ASK) == 1  # asked at start, before any new line
    session = _stored(tmp_path, "later")
    assert session.pending == []
    tools = [m.content for m in session.messages if m.type == "tool"]
    assert "Error: denied: not without a receipt" in tools
    assert "refund_status" not in session.context_variables


def test_approve_names_an_unknown_tool(tmp_path):
    done = _pipe_chat(tmp_path, "", "--session", "x", "--approve", "nope")
    assert done.returncode != 0 and "no tool named nope" in done.stderr


def test_the_repl_asks_whether_a_call_in_doubt_happened_and_never_reruns_it_on_yes(
    tmp_path, monkeypatch
):
    """A chat whose process died while an effect tool ran: the next REPL retries that turn
    first and asks "did pay(order_id=7) happen?"; "y" answers the model, nothing runs again."""

    class Crash(BaseException):
        pass

    paid: list[int] = []

    @effect
    def pay(order_id: int) -> Result:
        """Pay out a refund."""
        paid.append(order_id)
        if len(paid) == 1:
            raise Crash("the process died right after paying")
        return Result(value="paid")

    agent = Agent(name="Cashier", functions=[pay])
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    with pytest.raises(Crash):
        Session("c", url=url).run(
            Swarm(chat_model=ScriptedChatModel([scripted_tool_call("pay", {"order_id": 7})])),
            agent,
            "refund order 7",
        )
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    out = io.StringIO()
    swarm = Swarm(chat_model=ScriptedChatModel(["Refund done."]))
    assert chat_loop(agent, Session("c", url=url), swarm, out=out, reader=LineReader(out=out)) == 0
    assert "did pay(order_id=7) happen? [y/n/result]" in out.getvalue()
    assert paid == [7]  # asked, answered "yes": never run again
    stored = Session("c", url=url)
    assert [m.content for m in stored.messages][-2:] == [
        "pay(order_id=7) happened (confirmed by the user).",
        "Refund done.",
    ]
    assert stored.pending == [] and stored.unfinished == []


def test_ctrl_d_at_the_question_then_a_chat_without_approve_asks_again_and_resumes(tmp_path):
    """Under a pty: Ctrl-D at the approval question leaves the call waiting; a later chat
    opened *without* ``--approve`` asks about it again before anything else (the waiting
    tool is marked for that chat), and the answer resumes the turn: no loop of refusals."""
    import pexpect
    from test_cli import PROMPT, chat

    first = chat(tmp_path, "--session", "later", "--approve", "process_refund", NO_COLOR="1")
    first.expect(PROMPT)
    first.sendline("I'm Ada, refund order 12")
    first.expect(r"\[y/N/reason\]")
    first.sendeof()
    first.expect("left waiting")
    first.expect(pexpect.EOF)
    first.close()
    assert first.exitstatus == 0
    assert [p.tool for p in _stored(tmp_path, "later").pending] == ["process_refund"]

    second = chat(tmp_path, "--session", "later", NO_COLOR="1")
    second.expect(r"note: process_refund\(\) waits for your decision from an earlier chat")
    second.expect(r"approve process_refund\(\)\? \[y/N/reason\]")
    second.sendline("y")
    second.expect("Refunds › Done, Ada: the refund for order 12 is approved")
    second.expect(PROMPT)
    second.sendline("did my refund go through?")
    second.expect("Refunds › Refund for order 12: approved.")
    second.expect(PROMPT)
    second.sendline("/quit")
    second.expect(pexpect.EOF)
    output = second.before
    second.close()
    assert second.exitstatus == 0
    assert "session.run(" not in output and "error:" not in output
    assert _stored(tmp_path, "later").pending == []


def test_a_message_while_a_call_waits_is_answered_in_the_repls_words(tmp_path, monkeypatch):
    """When the waiting call cannot be resumed in this chat (its tool is not marked for
    approval here), a typed message is not refused with advice written for Python: the REPL
    says what waits and asks again, and Ctrl-D leaves it waiting."""

    from swarmgraph.app.cli import _mark_for_approval

    def process_refund() -> str:
        """Refund."""
        return "refunded"

    url = f"sqlite:///{tmp_path / 'chat.db'}"
    asking = Agent(name="Refunds", functions=[process_refund])
    _mark_for_approval([asking], ["process_refund"])  # a marked copy, as --approve makes
    Session("c", url=url).run(
        Swarm(chat_model=ScriptedChatModel([scripted_tool_call("process_refund")])),
        asking,
        "refund it",
    )
    unmarked = Agent(name="Refunds", functions=[process_refund])
    monkeypatch.setattr("sys.stdin", io.StringIO("y\nhello\n"))
    out = io.StringIO()
    swarm = Swarm(chat_model=ScriptedChatModel(["unused"]))
    assert (
        chat_loop(unmarked, Session("c", url=url), swarm, out=out, reader=LineReader(out=out)) == 0
    )
    said = out.getvalue()
    assert "process_refund() waits for your decision first: answer y, n or a reason" in said
    assert said.count(ASK) == 2  # asked at start, and again after the message
    assert "session.run(" not in said
    assert [p.tool for p in Session("c", url=url).pending] == ["process_refund"]


def test_the_demo_under_a_pty_keeps_each_orders_refund_and_says_a_denial_as_one(tmp_path):
    """Issue 30, as a newcomer meets it: ``swarmgraph chat --approve process_refund``,
    approve order 7, deny order 8; right after the denial the demo says so (it does not ask
    which order), and asked about the refund it reports order 8 as not filed, not approved."""
    import re

    import pexpect
    from test_cli import PROMPT, chat

    repl = chat(tmp_path, "--session", "two-orders", "--approve", "process_refund", NO_COLOR="1")
    repl.expect(PROMPT)
    said = []
    for message, decision in [
        ("I'm Ming, refund order 7", "y"),
        ("Please refund order 8 too", "already refunded by phone"),
        ("did my refund go through?", None),
    ]:
        repl.sendline(message)
        if decision is not None:
            repl.expect(r"\[y/N/reason\]")
            repl.sendline(decision)
        repl.expect(r"Refunds › ([^\r\n]*)[\r\n]")  # the turn's answer, then the prompt
        said.append(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", repl.match.group(1)).strip())
        repl.expect(PROMPT)
    repl.sendline("/quit")
    repl.expect(pexpect.EOF)
    repl.close()
    assert repl.exitstatus == 0
    assert "refund for order 7 is approved" in said[0]
    assert "not filed the refund for order 8" in said[1] and "denied" in said[1]
    assert "Which order" not in said[1]
    assert said[2].startswith("No refund filed for order 8.") and "approved" not in said[2]
    assert _stored(tmp_path, "two-orders").context_variables["refunds"] == {"7": "approved"}
