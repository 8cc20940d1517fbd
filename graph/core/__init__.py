"""The Swarm loop and nothing else: agent config, state, messages, tool schemas, one agent step,
the graph builder."""
