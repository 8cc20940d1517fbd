"""Run numbered Session turns on one conversation, for concurrency and kill -9 tests.

``session_worker.py URL CONVERSATION WRITER TURNS [HANG_AT_TURN READY_FILE]``

Each turn is four messages (user "W:i", an AI tool call, the tool result, AI "W:i done") and
its tool writes ``context_variables[W] = i``. With ``HANG_AT_TURN`` (SQLite), that turn's
save stops inside its transaction, after every statement of it (context, messages) ran and
before the commit, touches ``READY_FILE`` and sleeps (the parent then kills the process).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from langchain_core.messages import HumanMessage, ToolMessage
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.backends.sqlite.store import SQLiteStore


def record(writer: str, i: int) -> Result:
    """Record that writer reached turn i."""
    return Result(value=f"{writer}:{i} recorded", context_variables={writer: i})


def rules(messages):
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return last.content.replace("recorded", "done")
    human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    w, i = human.content.split(":")
    return scripted_tool_call("record", {"writer": w, "i": int(i)}, id=f"c-{w}-{i}")


def run_turns(url: str, cid: str, writer: str, turns: int, hang_at: int = -1, ready=None) -> None:
    agent = Agent(name="Worker", functions=[record])
    swarm = Swarm(chat_model=ScriptedChatModel(respond=rules))
    session = Session(cid, url=url, window=8)
    for i in range(turns):
        if i == hang_at:
            original_write = SQLiteStore._write

            def hanging_write(self, *args, _write=original_write, **kwargs):
                version = _write(self, *args, **kwargs)  # every statement of the save ran
                Path(ready).write_text("inside the transaction")
                time.sleep(120)
                return version

            SQLiteStore._write = hanging_write
        session.run(swarm, agent, f"{writer}:{i}")


if __name__ == "__main__":
    url, cid, writer, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    hang_at = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    ready = sys.argv[6] if len(sys.argv) > 6 else None
    run_turns(url, cid, writer, turns, hang_at, ready)
