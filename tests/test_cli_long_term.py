"""The third kind on the command line: ``swarmgraph history`` shows a session's long-term facts
beside its messages and context, and ``swarmgraph chat --user ID`` keeps them (``/memories``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import LongTermMemory, Session
from test_cli import SWARMGRAPH, _env, run

pytestmark = pytest.mark.slow


def _url(cwd: Path) -> str:
    return f"sqlite:///{cwd / '.swarmgraph' / 'swarmgraph.db'}"


def _remembering_turn(cwd: Path) -> None:
    """Conversation s1 of user ming: the agent remembers a fact and a note of its own."""
    agent = Agent(name="Triage", memory_tools=True)
    model = ScriptedChatModel(
        [
            scripted_tool_call("remember", {"key": "dog_name", "value": "Rex"}),
            scripted_tool_call("remember", {"key": "tone", "value": "brief", "scope": "agent"}),
            "Noted.",
        ]
    )
    Session("s1", url=_url(cwd), user_id="ming", long_term=True).run(
        Swarm(chat_model=model), agent, "My dog is Rex; keep it brief."
    )


def test_history_shows_the_sessions_long_term_facts_beside_messages_and_context(tmp_path):
    _remembering_turn(tmp_path)
    done = run(tmp_path, "history", "--session", "s1", "--no-color")
    assert done.returncode == 0, done.stderr
    assert "My dog is Rex" in done.stdout and "context_variables" in done.stdout
    assert "long-term memory of 'ming'" in done.stdout
    assert "- dog_name: Rex" in done.stdout and "- tone: brief (Triage's note)" in done.stdout
    other = run(tmp_path, "history", "--session", "s1", "--user", "ana", "--no-color")
    assert "long-term memory of 'ana'" in other.stdout and "(nothing remembered)" in other.stdout
    assert "- dog_name: Rex" not in other.stdout


def test_chat_with_a_user_shows_their_memories_and_without_one_says_it_is_off(tmp_path):
    _remembering_turn(tmp_path)
    LongTermMemory(_url(tmp_path), user_id="ming").remember("home_city", "Lyon")

    def chat(*args: str) -> str:
        done = subprocess.run(
            [str(SWARMGRAPH), "chat", "--session", "s2", "--no-color", *args],
            cwd=tmp_path,
            env=_env(),
            input="/memories\n/quit\n",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = chat("--user", "ming")
    assert "long-term memory of user 'ming', as Triage sees it:" in shown
    assert "- dog_name: Rex" in shown and "- home_city: Lyon" in shown
    assert "- tone: brief (Triage's note)" in shown  # notes belong to an agent's name
    assert "long-term memory is off" in chat()
