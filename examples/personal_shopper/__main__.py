"""``python -m examples.personal_shopper [--offline] [--model NAME] [--chat] [--db PATH]``

The shop database is created afresh at ``--db`` (default: ``.swarmgraph/shop.db``).
"""

import sys
from pathlib import Path

from .._support import run_main
from .agents import triage
from .database import create_database
from .offline import rules

SCRIPT = (
    "Hi, I'd like to return the water bottle I bought.",
    "Thanks! Now I want to order a head torch. Text me when it's done.",
)

if __name__ == "__main__":
    argv = sys.argv[1:]
    db = Path(".swarmgraph/shop.db")
    if "--db" in argv:
        at = argv.index("--db")
        db = Path(argv[at + 1])
        del argv[at : at + 2]
    db.parent.mkdir(parents=True, exist_ok=True)
    create_database(db)
    context = {"customer_id": 1, "db_path": str(db)}
    sys.exit(run_main("Personal shopper (customer 1, Ana)", rules, triage, SCRIPT, context, argv))
