"""A weather agent with two tools: look up the weather, send an email."""
