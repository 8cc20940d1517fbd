"""``swarmgraph chat/graph SPEC``: finding the user's agent from a file path or a module name."""

from __future__ import annotations

import sys

import pytest

from swarmgraph.app.loading import AgentSpecError, load_agent

DESK = """
from swarmgraph import Agent
from helpers import GREETING      # a neighbour module, imported as `python desk.py` would

sales = Agent(name="Sales", instructions=GREETING)
triage = Agent(name="Triage", handoffs=[sales])
number = 7
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text("GREETING = 'Sell bikes.'\n")
    (tmp_path / "desk.py").write_text(DESK)
    pkg = tmp_path / "shop" / "agents"
    pkg.mkdir(parents=True)
    (tmp_path / "shop" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from swarmgraph import Agent\nfront = Agent(name='Front')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m.split(".")[0] in ("shop", "helpers")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path


def test_a_file_path_with_a_name(project):
    triage = load_agent(f"{project}/desk.py:triage")
    assert triage.name == "Triage" and triage.handoffs[0].instructions == "Sell bikes."
    assert load_agent("desk.py:sales").name == "Sales"  # relative to the working directory


def test_a_module_name_from_the_working_directory(project):
    assert load_agent("shop.agents:front").name == "Front"
    assert load_agent("shop.agents").name == "Front"  # the only Agent there


def test_an_installed_module_and_a_dotted_attribute():
    assert load_agent("examples.airline.agents:triage").name == "Triage"
    assert load_agent("examples.airline:agents.flight_cancel").name == "Flight Cancel"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope.py:triage", "no such file: nope.py"),
        ("desk.py:triag", "desk.py has no 'triag' (agents there: sales, triage)"),
        ("desk.py:number", "desk.py:number is a int, not an Agent"),
        ("desk.py", "desk.py holds 2 agents (sales, triage): name one, e.g. desk.py:sales"),
        ("no_such_pkg.agents:x", "no module named 'no_such_pkg.agents'"),
        (":triage", "':triage': expected path/to/file.py:agent or package.module:agent"),
    ],
)
def test_mistakes_say_what_is_there(project, spec, message):
    with pytest.raises(AgentSpecError) as caught:
        load_agent(spec)
    assert str(caught.value).startswith(message)


def test_an_error_inside_the_users_module_is_not_hidden(project):
    (project / "broken.py").write_text("import not_installed_anywhere\n")
    with pytest.raises(ModuleNotFoundError, match="not_installed_anywhere"):
        load_agent("broken.py:x")
