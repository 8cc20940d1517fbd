"""Count visits in one conversation's context through Session turns, concurrently with other
processes: ``visit_worker.py URL CONVERSATION N add|none``. Each turn's tool adds one to
``visits`` (read from its own context, written back: Swarm's usual read-modify-write);
``add`` gives the Session ``merge={"visits": operator.add}``. Prints the conflicts reported,
and the increments they say were overwritten (``stored - base`` of each ``visits`` conflict:
what the stored count held beyond the count this turn started from)."""

import json
import operator
import sys
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
merge = {"visits": operator.add} if rule == "add" else None
session = Session(cid, url=url, merge=merge, window=4)
swarm = Swarm(chat_model=ScriptedChatModel(respond=respond))
agent = Agent(name="Counter", functions=[visit])
reported = warned = overwritten = 0
for i in range(times):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = session.run(swarm, agent, f"visit {i}")
    reported += len(response.context_conflicts)
    overwritten += sum(
        c["stored"] - (c["base"] or 0) for c in response.context_conflicts if c["key"] == "visits"
    )
    warned += sum(issubclass(w.category, ContextConflictWarning) for w in caught)
print(json.dumps({"reported": reported, "warned": warned, "overwritten": overwritten}))
