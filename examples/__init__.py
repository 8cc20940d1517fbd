"""Our versions of the example programs OpenAI Swarm users know; ``python -m examples.NAME``."""
