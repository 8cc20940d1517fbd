"""``python -m benchmarks.seams`` measures the turn it says it measures: a steady handoff
(A hands off to B, B answers) with no graph compiled inside it, through Swarm.run and
through a Session, and reports each figure beside issue 29's target."""

from __future__ import annotations

import doctest

from benchmarks import seams


def test_each_measured_turn_is_a_steady_handoff_that_compiles_nothing():
    calls = seams.count_calls()
    for label in ("Swarm.run", "Swarm.run typed", "Session.run"):
        assert calls[label]["agent"] == "B", (label, calls[label])
        assert calls[label]["compiles"] == 0, (label, calls[label])
    # The Session turn is the Swarm.run turn plus storage: it walks more of our code.
    assert calls["Session.run"]["functions"] > calls["Swarm.run"]["functions"]
    session = calls["Session.run"]
    assert session["memory"]["functions"] + session["graph"]["functions"] <= session["functions"]
    assert "memory" not in calls["Swarm.run"]  # a plain run never enters memory/
    assert calls["Swarm.run typed"]["functions"] > calls["Swarm.run"]["functions"]


def test_the_first_turn_of_a_new_swarm_does_compile():
    # The compile counter sees a compile when there is one (so 0 above means none).
    from swarmgraph.graph import Swarm

    from benchmarks.handoff import make_model

    a, _, _ = seams._handoff_parts()
    swarm = Swarm(chat_model=make_model())
    first = seams._profiled(
        lambda: swarm.run(a, [{"role": "user", "content": "ping"}]), seams._ours
    )
    assert first["compiles"] >= 1 and first["agent"] == "B"


def test_targets_and_the_module_count():
    modules = seams.modules_imported()
    assert 5 < modules < 200  # swarmgraph's own modules, counted in a fresh process
    report = seams.against_targets({"Swarm.run": {"functions": 40, "files": 11}}, modules)
    assert report["Swarm.run"]["met"] is False  # 11 files > 10
    assert report["modules imported"]["modules"] == modules
    assert doctest.testmod(seams, verbose=False).failed == 0
