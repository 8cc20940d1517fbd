"""Increment a counter in one conversation's context N times under write transactions:
``context_incrementer.py URL CONVERSATION N``."""

import sys

from swarmgraph.memory import open_context_store

url, cid, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_context_store(url)
for _ in range(times):
    with store.begin_write() as conn:
        record = store.load(cid, connection=conn)
        counter = record.context.get("counter", 0) + 1
        store.save(cid, {"counter": counter}, expected_version=record.version, connection=conn)
