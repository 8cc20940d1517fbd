"""Each feature of the engine, attached to the core loop through its middleware interface."""
