"""The application on top of the library: the ``swarmgraph`` command line, its terminal
rendering, the offline demo swarm and model, and the offline graph drawing.

The engine (:mod:`swarmgraph.graph`) never imports this package.
"""
