"""``langgraph dev`` serves the demo swarm from langgraph.json, offline and in memory, and a
thread runs through ``langgraph-sdk``: handoffs in the streamed updates, the swarm's keys in
the thread's state, the next run resuming with the agent that held the conversation."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "langgraph.json"

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    yield from _serve(CONFIG, tmp_path_factory)


@pytest.fixture(scope="module")
def research_server(tmp_path_factory) -> Iterator[str]:
    """``langgraph dev`` serving the research desk (parallel handoffs), as the docs say."""
    config = tmp_path_factory.mktemp("research-config") / "langgraph.json"
    graphs = {"research_desk": "swarmgraph.app.served:research_graph"}
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": graphs, "env": {}}))
    yield from _serve(config, tmp_path_factory)


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory) -> Iterator[str]:
    """``langgraph dev`` serving a swarm whose input guardrail trips (tests/procs)."""
    config = tmp_path_factory.mktemp("guarded-config") / "langgraph.json"
    graphs = {"guarded": str(ROOT / "tests" / "procs" / "served_guarded.py") + ":graph"}
    config.write_text(json.dumps({"dependencies": [str(ROOT)], "graphs": graphs, "env": {}}))
    yield from _serve(config, tmp_path_factory)


def _serve(config: Path, tmp_path_factory) -> Iterator[str]:
    pytest.importorskip("langgraph_api", reason="needs the dev extra: langgraph-cli[inmem]")
    port = _free_port()
    workdir = tmp_path_factory.mktemp("langgraph-dev")  # its .langgraph_api/ lands here
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "LANGSMITH"))}
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false")
    log = (workdir / "server.log").open("w")
    command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser",
               "--no-reload", "--host", "127.0.0.1", "--port", str(port),
               "--config", str(config)]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, workdir / "server.log")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and its worker, nothing else
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _wait_until_up(url: str, proc: subprocess.Popen, log: Path) -> None:
    import httpx

    for _ in range(240):  # bounded: about two minutes on a busy machine
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited: {log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"langgraph dev did not come up: {log.read_text()[-3000:]}")


def test_langgraph_json_serves_the_demo_swarm_by_module():
    config = json.loads(CONFIG.read_text())
    assert config["graphs"] == {"demo_swarm": "swarmgraph.app.served:graph"}


def test_a_thread_runs_through_the_sdk_with_handoffs_and_swarm_state(server):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server)
    assert [a["graph_id"] for a in client.assistants.search()] == ["demo_swarm"]
    thread = client.threads.create()["thread_id"]
    updates = [
        part.data
        for part in client.runs.stream(
            thread,
            "demo_swarm",
            input={"messages": [{"role": "user", "content": "I'm Ming, please refund order 7"}]},
            stream_mode="updates",
        )
        if part.event == "updates"
    ]
    nodes = [node for update in updates for node in update]
    assert nodes[0] == "Triage" and nodes[-1] == "Refunds"
    handoffs = [u[n]["active_agent"] for u in updates for n in u if "active_agent" in u[n]]
    assert handoffs == ["Refunds"]  # the handoff, visible in the streamed updates

    state = client.threads.get_state(thread)["values"]
    assert state["active_agent"] == "Refunds"
    assert state["context_variables"] == {"name": "Ming", "order_id": 7,
                                          "refunds": {"7": "approved"},
                                          "refund_status": "approved"}  # fmt: skip
    assert state["messages"][-1]["name"] == "Refunds"

    # the server's checkpointer keeps the thread: the next run starts at Refunds
    client.runs.wait(
        thread,
        "demo_swarm",
        input={"messages": [{"role": "user", "content": "Did my refund go through?"}]},
    )
    state = client.threads.get_state(thread)["values"]
    last = state["messages"][-1]
    assert last["name"] == "Refunds" and "approved" in last["content"]
    later_senders = [m.get("name") for m in state["messages"][-3:] if m["type"] == "ai"]
    assert "Triage" not in later_senders


def test_a_fan_out_runs_through_the_sdk_with_each_branch_in_the_updates(research_server):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=research_server)
    thread = client.threads.create()["thread_id"]
    updates = [
        part.data
        for part in client.runs.stream(
            thread,
            "research_desk",
            input={"messages": [{"role": "user", "content": "Why did the bees decline?"}]},
            stream_mode="updates",
        )
        if part.event == "updates"
    ]
    nodes = [node for update in updates for node in update]
    assert nodes.count("parallel_branch") == 3  # one update per branch
    assert nodes[0] == "Editor" and nodes[-2:] == ["parallel_join", "Editor"]
    labels = [u["parallel_branch"]["parallel_results"][0]["label"] for u in updates
              if "parallel_branch" in u]  # fmt: skip
    assert sorted(labels) == ["Economist", "Historian", "Scientist"]

    state = client.threads.get_state(thread)["values"]
    joined = json.loads(state["messages"][2]["content"])
    assert list(joined) == ["Economist", "Historian", "Scientist"]  # the order given
    assert state["context_variables"]["sources"] == [
        "FAO honey market report", "Beekeeping records 1900-2000", "Pesticide field studies"
    ]  # fmt: skip
    assert state["messages"][-1]["content"].startswith("Brief: Why did the bees decline?")


def test_a_guardrail_trip_reaches_the_sdk_client_with_its_reason(guarded_server):
    """The served graph's error reaches ``langgraph-sdk`` as its name and message (it read
    ``Exception: None: None`` while the error was a dataclass: orjson wrote its fields)."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=guarded_server)
    thread = client.threads.create()["thread_id"]
    with pytest.raises(Exception) as raised:
        client.runs.wait(
            thread,
            "guarded",
            input={"messages": [{"role": "user", "content": "a refund, please"}]},
            raise_error=True,
        )
    assert str(raised.value).startswith(
        "GuardrailTripped: Guardrail no_refunds of Desk tripped (input): "
        "refunds are handled by phone."
    )
