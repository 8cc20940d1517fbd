"""One long-term memory operation in a fresh process, its result as JSON on the last line.

``long_term_worker.py URL USER remember KEY VALUE CONVERSATION TURN [kill]``: remember (with
provenance), then, with ``kill``, SIGKILL this process at once (no clean shutdown).
``long_term_worker.py URL USER recall QUERY``: the recalled facts as ``[[key, value], ...]``.
``long_term_worker.py URL USER open``: open the store (runs its migrations), print ``ok``.
"""

import json
import os
import signal
import sys

from swarmgraph.memory import LongTermMemory

url, user, action = sys.argv[1], sys.argv[2], sys.argv[3]
memory = LongTermMemory(url, user_id=user)
if action == "remember":
    key, value, conversation, turn = sys.argv[4:8]
    memory.remember(key, value, conversation_id=conversation, turn_id=turn, text=value)
    if sys.argv[8:] == ["kill"]:
        os.kill(os.getpid(), signal.SIGKILL)
    print(json.dumps("ok"))
elif action == "recall":
    print(json.dumps([[f.key, f.value] for f in memory.recall(sys.argv[4])]))
elif action == "open":
    print(json.dumps("ok"))
else:
    raise SystemExit(f"unknown action {action!r}")
