"""Count visits in one conversation's context through Session turns, concurrently with other
processes: ``visit_worker.py URL CONVERSATION N add|none [PROCS]``. Each turn's tool adds one
to ``visits`` (read from its own context, written back: Swarm's usual read-modify-write);
``add`` gives the Session ``merge={"visits": operator.add}``. Prints the conflicts reported,
and the increments they say were overwritten (``stored - base`` of each ``visits`` conflict:
what the stored count held beyond the count this turn started from) and how many of those
conflicts were equal writes (both turns wrote the same count), one JSON line.

With ``PROCS`` (default 1) the script imports swarmgraph once and forks that many children,
each running the N turns against its own store connection and printing its own line; it
exits non-zero when a child failed. Forked after the imports, the children start together
and do not each pay an interpreter start (about 1.3 s of CPU), so eight racing processes
cost little more than one."""

import json
import operator
import os
import sys
import traceback
import warnings

from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.errors import ContextConflictWarning


def visit(context_variables: dict) -> Result:
    """Count a visit."""
    return Result(
        value="counted", context_variables={"visits": context_variables.get("visits", 0) + 1}
    )


def respond(messages):
    return scripted_tool_call("visit") if messages[-1].type == "human" else "ok"


url, cid, times, rule = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
procs = int(sys.argv[5]) if len(sys.argv) > 5 else 1
merge = {"visits": operator.add} if rule == "add" else None
# Built before any fork: this loads LangGraph and LangChain once. No store is opened here,
# so no child inherits a connection or a pool.
swarm = Swarm(chat_model=ScriptedChatModel(respond=respond))
agent = Agent(name="Counter", functions=[visit])


def count() -> dict:
    session = Session(cid, url=url, merge=merge, window=4)
    reported = warned = overwritten = equal = 0
    for i in range(times):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            response = session.run(swarm, agent, f"visit {i}")
        reported += len(response.context_conflicts)
        overwritten += sum(
            c["stored"] - (c["base"] or 0)
            for c in response.context_conflicts
            if c["key"] == "visits"
        )
        equal += sum(
            c["stored"] == c["ours"] for c in response.context_conflicts if c["key"] == "visits"
        )
        warned += sum(issubclass(w.category, ContextConflictWarning) for w in caught)
    return {"reported": reported, "warned": warned, "overwritten": overwritten, "equal": equal}


if procs == 1:
    print(json.dumps(count()))
    sys.exit(0)
children = []
for _ in range(procs):
    pid = os.fork()
    if pid == 0:
        try:
            # One write of a short line: the children's lines never interleave on the pipe.
            os.write(1, (json.dumps(count()) + "\n").encode())
            code = 0
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stderr.flush()
        os._exit(code)
    children.append(pid)
failed = [pid for pid in children if os.waitpid(pid, 0)[1] != 0]
sys.exit(1 if failed else 0)
