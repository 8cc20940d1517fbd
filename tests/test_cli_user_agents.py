"""Your own agents in the CLI and in ``run_demo_loop``: ``swarmgraph chat path/to/file.py:triage``,
``swarmgraph chat package.module:triage``, ``swarmgraph graph ...``, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest
from openai_stub import OpenAIStub, stub_text, stub_tool_call
from test_cli import PROMPT, _env
from test_cli import chat as spawn_chat
from test_cli import run as run_cli

pytestmark = pytest.mark.slow
# No colours, and no cursor-position query that a pipe or pexpect would never answer.
PLAIN = {"NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"}

DESK = """
from swarmgraph import Agent


def quote(item: str) -> str:
    '''Price of an item.'''
    return f"{item}: 12 EUR"


sales = Agent(name="Sales", model="shop-model", instructions="You sell.", functions=[quote])
triage = Agent(name="Triage", model="shop-model", instructions="Route.", handoffs=[sales])
sales.handoffs.append(triage)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "desk.py").write_text(DESK)
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("from desk import triage as front\n")
    return tmp_path


def chat(cwd: Path, *args: str, **env: str) -> pexpect.spawn:
    return spawn_chat(cwd, *args, **PLAIN, **env)


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return run_cli(cwd, *args, **PLAIN, **env)


def test_chat_with_agents_from_a_file_on_a_real_model_streams_hands_off_and_resumes(project):
    replies = [stub_tool_call("transfer_to_sales"), stub_tool_call("quote", {"item": "hive"}),
               stub_text("A hive is 12 EUR."), stub_text("Still 12 EUR.")]  # fmt: skip
    with OpenAIStub(replies) as stub:
        env = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
        child = chat(project, "desk.py:triage", "--model", "stub-model", **env)
        child.expect("session 'triage'")
        child.expect(r"agents: Triage, Sales \(from desk.py:triage\)")
        child.expect("model: stub-model at")
        child.expect(PROMPT)
        child.sendline("How much is a hive?")
        child.expect("Triage → Sales")
        child.expect(r'quote\(item="hive"\)')
        child.expect("Sales › A hive is 12 EUR.")
        child.expect(PROMPT)
        child.sendline("/agent")
        child.expect("active agent: Sales")
        child.expect(PROMPT)
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        # --model overrode the agents' own model name; the tools were the file's
        assert {r["model"] for r in stub.requests} == {"stub-model"}
        assert [t["function"]["name"] for t in stub.requests[0]["tools"]] == ["transfer_to_sales"]
        assert stub.requests[0]["stream"] is True

        child = chat(project, "desk.py:triage", "--model", "stub-model", **env)
        child.expect("resuming: 6 stored messages, talking to Sales")
        child.expect(PROMPT)
        child.sendline("and now?")
        child.expect("Sales › Still 12 EUR.")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        assert stub.requests[-1]["messages"][0]["content"] == "You sell."  # Sales' prompt


def test_chat_with_a_module_name_offline_says_which_model_answers(project):
    child = chat(project, "shop:front", "--session", "s1")
    child.expect("session 's1'")
    child.expect("note: no OPENAI_API_KEY: the offline demo model answers")
    child.expect(PROMPT)
    child.sendline("/help")
    child.expect("/context")
    child.expect(PROMPT)
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_graph_draws_the_users_swarm_as_mermaid_and_png(project):
    done = run(project, "graph", "desk.py:triage")
    assert done.returncode == 0, done.stderr
    assert "Triage -.-> Sales" in done.stdout and "Sales -.-> Triage" in done.stdout
    done = run(project, "graph", "shop:front", "--format", "png", "--output", "desk.png")
    assert done.returncode == 0, done.stderr
    assert (project / "desk.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = run(project, "graph", "desk.py:triage", "--format", "png")
    assert (project / ".swarmgraph" / "triage_graph.png").exists(), done.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["chat", "nope.py:triage"], "no such file: nope.py"),
        (["chat", "desk.py:triag"], "desk.py has no 'triag' (agents there: sales, triage)"),
        (["graph", "no_such_module:x"], "no module named 'no_such_module'"),
    ],
)
def test_a_bad_agent_spec_is_one_line_on_stderr(project, args, needle):
    done = run(project, *args)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"swarmgraph: error: {needle}"), line


def test_the_demo_chat_still_needs_a_session(project):
    done = run(project, "chat")
    assert done.returncode == 2 and "--session" in done.stderr


LOOP_SCRIPT = """
    from swarmgraph import Agent, ScriptedChatModel, Swarm, run_demo_loop, scripted_tool_call
    from swarmgraph import Result


    def remember(city: str) -> Result:
        '''Remember the city.'''
        return Result(value="ok", context_variables={"city": city})


    agent = Agent(name="Guide", functions=[remember],
                  instructions=lambda ctx: f"Guide {ctx['user']} in {ctx['city'] or '?'}.")
    model = ScriptedChatModel([scripted_tool_call("remember", {"city": "Porto"}), "Noted!",
                               "Enjoy Porto."])
    run_demo_loop(agent, context_variables={"user": "Ada"}, stream=STREAM, debug=DEBUG,
                  session=SESSION, swarm=Swarm(chat_model=model))
    print("prompts:", [calls[0].content for calls in model.calls])
"""


@pytest.mark.parametrize("stream", [True, False])
def test_run_demo_loop_keeps_swarms_arguments_and_the_conversation(tmp_path, stream):
    code = textwrap.dedent(LOOP_SCRIPT).replace("STREAM", str(stream))
    code = code.replace("DEBUG", "False").replace("SESSION", "None")
    done = subprocess.run(
        [sys.executable, "-c", code], input="I'm going to Porto\n/context\nthanks\n",
        cwd=tmp_path, env=_env(**PLAIN), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'remember(city="Porto")' in out and "Guide › Noted!" in out
    assert 'context_variables: {"city": "Porto", "user": "Ada"}' in out
    assert "Guide › Enjoy Porto." in out
    # the initial context filled the prompt; what the tool wrote was there on turn two
    assert "prompts: ['Guide Ada in ?.', 'Guide Ada in Porto.', 'Guide Ada in Porto.']" in out


def test_run_demo_loop_with_a_session_id_stores_in_the_default_store_and_debug_prints(tmp_path):
    code = textwrap.dedent(LOOP_SCRIPT).replace("STREAM", "True").replace("DEBUG", "True")
    code = code.replace("SESSION", "'trip'")
    db = tmp_path / "loop.db"
    done = subprocess.run(
        [sys.executable, "-c", code], input="I'm going to Porto\n", cwd=tmp_path,
        env=_env(**PLAIN, SWARMGRAPH_DB=f"sqlite:///{db}"), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Processing tool call: remember" in done.stdout  # Swarm's debug lines
    from swarmgraph.memory import Session

    stored = Session("trip", url=f"sqlite:///{db}")
    assert stored.context_variables == {"city": "Porto", "user": "Ada"}
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai"]
