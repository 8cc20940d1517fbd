"""``python -m graph`` runs the ``swarmgraph`` command line."""

import sys

from graph.cli import main

sys.exit(main())
