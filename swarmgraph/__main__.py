"""``python -m swarmgraph`` runs the ``swarmgraph`` command line."""

import sys

from .app.cli import main

sys.exit(main())
