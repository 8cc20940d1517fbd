"""Put one record if absent, racing other processes, or die inside the save.

``record_racer.py URL CONVERSATION WRITER START_AT [READY_FILE]``

Waits until the wall clock reaches ``START_AT`` (so racers start together after their
imports), then saves the writer's name as one message and as record ``approval:call_1``,
put-if-absent, and prints ``{"writer", "won", "stored"}`` as JSON. With ``READY_FILE``, the
save stops once every statement of it ran (SQLite, Postgres: inside the transaction, before
the commit; Redis: writes queued, before EXEC), touches the file and sleeps, to be killed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from langchain_core.messages import HumanMessage
from swarmgraph.memory import open_store
from swarmgraph.memory.errors import RecordExists
from swarmgraph.memory.store import Record, TurnWrite


def hang_inside_saves(store: object, ready: str) -> None:
    name = "_queue_save" if type(store).__name__ == "RedisStore" else "_write"
    original = getattr(type(store), name)

    def hanging(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        Path(ready).write_text("inside the save")
        time.sleep(120)
        return result

    setattr(type(store), name, hanging)


def main(url: str, cid: str, writer: str, start_at: float, ready: str | None) -> None:
    store = open_store(url)
    if ready:
        hang_inside_saves(store, ready)
    write = TurnWrite(
        [HumanMessage(writer)],
        context={"writer": writer},
        records=[Record("approval", "call_1", writer, if_absent=True)],
    )
    time.sleep(max(start_at - time.time(), 0))
    try:
        store.save(cid, write, expected_version=None)
        print(json.dumps({"writer": writer, "won": True, "stored": writer}))
    except RecordExists as lost:
        print(json.dumps({"writer": writer, "won": False, "stored": lost.stored}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), (sys.argv[5:] or [None])[0])
