"""One Session turn with long-term memory in a fresh process, optionally SIGKILLed at one point.

``long_term_session_worker.py URL USER CONVERSATION TURN MESSAGE [KILL]`` runs one turn of a
Triage agent with memory tools and rule extraction (``I live in X``, ``my dog is called X``);
the scripted model calls ``remember("tone", "brief", scope="agent")`` when the message says
"brief". ``KILL`` stops the process with SIGKILL (no clean shutdown) at one point:

* ``in-run``: inside the model call, before anything of the turn is saved;
* ``after-save``: after the turn's atomic save, before its outbox is applied;
* ``mid-apply``: while the outbox is applied, after its first memory write.

Prints the facts Triage may read as ``[[key, value], ...]`` on the last line.
"""

import json
import os
import signal
import sys

from pydantic import BaseModel
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import FactExtractor, LongTermMemory, Session, long_term_session


class UserFacts(BaseModel):
    home_city: str | None = None
    dog_name: str | None = None


RULES = {"home_city": r"live in (?P<value>[A-Z]\w+)", "dog_name": r"dog is called (\w+)"}
url, user, conversation, turn_id, message, *kill = sys.argv[1:]
point = kill[0] if kill else None


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def respond(messages):
    if point == "in-run":
        die()
    last = messages[-1]
    if last.type == "human" and "brief" in str(last.content):
        return scripted_tool_call("remember", {"key": "tone", "value": "brief", "scope": "agent"})
    return "Noted."


if point == "after-save":
    long_term_session.deliver_outbox = lambda *args: die()
    import swarmgraph.memory.session as session_module

    session_module.deliver_outbox = long_term_session.deliver_outbox
elif point == "mid-apply":
    original = LongTermMemory.remember
    calls = []

    def remember_then_die(self, *args, **kwargs):
        if calls:
            die()
        calls.append(args)
        return original(self, *args, **kwargs)

    LongTermMemory.remember = remember_then_die

triage = Agent(name="Triage", memory_tools=True)
session = Session(
    conversation,
    url=url,
    user_id=user,
    long_term=True,
    extract=FactExtractor(UserFacts, rules=RULES),
)
session.run(Swarm(chat_model=ScriptedChatModel(respond=respond)), triage, message, turn_id=turn_id)
facts = LongTermMemory(url, user_id=user).facts("Triage")
print(json.dumps([[f.key, f.value] for f in facts]))
