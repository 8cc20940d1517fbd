"""Append N three-message turns to one history: ``history_writer.py URL SESSION NAME N``."""

import sys

from langchain_core.messages import AIMessage, HumanMessage
from swarmgraph.memory import open_history

url, session_id, name, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
history = open_history(url, session_id)
for i in range(turns):
    history.add_messages(
        [HumanMessage(f"{name}:{i}:q"), AIMessage(f"{name}:{i}:a"), AIMessage(f"{name}:{i}:z")]
    )
