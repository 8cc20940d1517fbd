"""``session_worker.py``'s numbered turns for any storage URL (Postgres, Redis, SQLite):
``pg_session_worker.py URL CONVERSATION WRITER TURNS``."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "session_worker", Path(__file__).with_name("session_worker.py")
)
session_worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(session_worker)

if __name__ == "__main__":
    url, cid, writer, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    session_worker.run_turns(url, cid, writer, turns)
