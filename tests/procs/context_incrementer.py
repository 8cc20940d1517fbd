"""Increment a counter in one conversation's context N times, each a read and a write on
the version read (a lost race reads again): ``context_incrementer.py URL CONVERSATION N``."""

import sys

from swarmgraph.memory import ContextVersionConflict, open_context_store

url, cid, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_context_store(url)
for _ in range(times):
    while True:
        record = store.load(cid)
        try:
            store.save(cid, {"counter": record.context.get("counter", 0) + 1},
                       expected_version=record.version)  # fmt: skip
            break
        except ContextVersionConflict:
            continue
