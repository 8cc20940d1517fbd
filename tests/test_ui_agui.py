"""``swarmgraph ui``'s wire: ``POST /agui`` answers with AG-UI events that ``ag_ui.core``'s
models parse, in the protocol's order, with ``context_variables`` and the active agent in the
state events, and the turn saved by its Session."""

from __future__ import annotations

import httpx
import pytest
from swarmgraph.memory import Session

from swarmgraph import scripted_tool_call
from tests.ui_helpers import EVENT, apply_state, handoff_script, post_run, run_input, served, sse


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'ui.db'}"


def test_a_handoff_turn_streams_every_event_kind_in_order(url: str) -> None:
    with served(handoff_script(), url) as server:
        events = post_run(server.url, run_input("c1", "refund order 7", run_id="r1"))
    ids = [number for number, _ in events]
    assert ids == list(range(1, len(ids) + 1))  # numbered, no gap
    parsed = [EVENT.validate_python(event) for _, event in events]  # every one a model
    kinds = [e.type.value for e in parsed]
    assert kinds[:3] == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]
    assert kinds[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    steps = [e.step_name for e in parsed if e.type.value == "STEP_STARTED"]
    assert steps == ["Triage", "Triage", "Sales"]
    assert kinds.count("STEP_FINISHED") == 3
    for kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"):
        assert kind in kinds
    assert kinds.index("STATE_SNAPSHOT") < kinds.index("STATE_DELTA")
    text = "".join(e.delta for e in parsed if e.type.value == "TEXT_MESSAGE_CONTENT")
    assert text == "Sales here: order 7 it is."
    raw = [event for _, event in events]
    state = apply_state(raw)
    assert state["context_variables"] == {"order_id": 7}
    assert state["active_agent"] == "Sales"
    # the step that ran set_order changed order_id, and the delta says which tool did
    first_delta = next(e for e in raw if e["type"] == "STATE_DELTA")
    seen = apply_state(raw[: raw.index(first_delta) + 1])
    assert seen["last_step"]["changed"] == {"order_id": "set_order"}
    assert seen["active_agent"] == "Triage"
    # the step deltas come before each step's STEP_FINISHED
    assert kinds.index("STATE_DELTA") < kinds.index("STEP_FINISHED")
    window = [e for e in parsed if e.type.value == "CUSTOM"]
    assert [e.name for e in window] == ["swarmgraph.memory_window"]
    final = parsed[-2].messages
    assert [m.role for m in final] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert all(m.metadata["swarmgraph"]["stored"] for m in final)
    stored = Session("c1", url=url)
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert stored.context_variables == {"order_id": 7}


def test_a_denied_or_approved_call_resumes_the_turn(url: str) -> None:
    script = [
        scripted_tool_call("transfer_to_sales"),
        scripted_tool_call("refund", {"order_id": 7}),
        "Refunded order 7.",
    ]
    with served(script, url) as server:
        events = post_run(server.url, run_input("c3", "refund order 7"))
        finished = EVENT.validate_python(events[-1][1])
        assert finished.outcome is not None and finished.outcome.type == "interrupt"
        (waiting,) = finished.outcome.interrupts
        assert waiting.metadata["swarmgraph"]["tool"] == "refund"
        view = httpx.get(server.url + "api/view", params={"thread": "c3"}).json()
        assert [i["id"] for i in view["interrupts"]] == [waiting.id]
        body = run_input("c3", "")
        body["messages"] = []
        body["resume"] = [{"interruptId": waiting.id, "status": "resolved"}]
        resumed = post_run(server.url, body)
    kinds = [EVENT.validate_python(e).type.value for _, e in resumed]
    assert kinds[-1] == "RUN_FINISHED"
    results = [e["content"] for _, e in resumed if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ["refunded 7"]
    assert Session("c3", url=url).pending == []


def test_a_bad_input_is_a_clear_400_and_nothing_runs(url: str) -> None:
    with served(handoff_script(), url) as server:
        answer = httpx.post(server.url + "agui", json={"threadId": "c4"})
        assert answer.status_code == 400 and "runId" in answer.json()["error"]
        form = httpx.post(
            server.url + "agui",
            content=b"x=1",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415
        forged = httpx.get(server.url + "api/graph", headers={"Host": "evil.example:80"})
        assert forged.status_code == 403
    assert Session("c4", url=url).messages == []


def test_another_host_needs_the_token_on_every_request(url: str) -> None:
    from swarmgraph import Agent, ScriptedChatModel, Swarm
    from swarmgraph.app.ui.server import UiServer
    from swarmgraph.app.ui.service import UiService

    service = UiService(Swarm(chat_model=ScriptedChatModel([])), Agent(), url=url)
    with pytest.raises(ValueError, match="token"):
        UiServer(("0.0.0.0", 0), service)
    server = UiServer(("0.0.0.0", 0), service, token="s3cret")
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        base = f"http://127.0.0.1:{port}/"
        host = {"Host": f"0.0.0.0:{port}"}
        assert httpx.get(base, headers=host).status_code == 401
        assert httpx.get(base + "api/graph", headers=host).status_code == 401
        ok = httpx.get(base + "api/graph", headers={**host, "Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["nodes"]
    finally:
        server.shutdown()
        server.server_close()


def test_the_graph_names_agents_and_handoffs(url: str) -> None:
    with served([], url) as server:
        graph = httpx.get(server.url + "api/graph").json()
    agents = {n["id"]: n["agent"] for n in graph["nodes"]}
    assert sorted(agents.values()) == ["Sales", "Triage"]
    edges = {(agents[e["from"]], agents[e["to"]]) for e in graph["edges"]}
    assert ("Triage", "Sales") in edges


def test_a_failing_run_ends_with_run_error_and_saves_nothing(url: str) -> None:
    with served([], url) as server:  # the scripted model has no reply to give
        events = post_run(server.url, run_input("c5", "hello"))
    last = EVENT.validate_python(events[-1][1])
    assert last.type.value == "RUN_ERROR" and last.message
    assert Session("c5", url=url).messages == []


def test_stop_ends_the_run_cancelled_and_nothing_of_the_turn_is_saved(url: str) -> None:
    import threading

    release = threading.Event()
    with served(handoff_script(), url, gate=release) as server:
        body = run_input("c6", "refund order 7", run_id="stop-1")
        with httpx.stream("POST", server.url + "agui", json=body, timeout=60) as response:
            seen = []
            for _, event in sse(response.iter_lines()):
                seen.append(event)
                if event["type"] == "TOOL_CALL_START":  # the run is about to wait in set_order
                    stopped = httpx.post(server.url + "api/stop", json={"run": "stop-1"})
                    assert stopped.json() == {"stopping": True}
                    release.set()
        last = EVENT.validate_python(seen[-1])
    assert last.type.value == "RUN_FINISHED" and last.outcome.type == "cancelled"
    session = Session("c6", url=url)
    assert session.messages == [] and session.context_variables == {}


def test_each_key_is_credited_to_the_tool_whose_result_set_it(url: str) -> None:
    """The demo's first step runs two tools (set_name, record_order): each key names its own."""
    import threading

    from swarmgraph import Swarm
    from swarmgraph.app.demo import demo_agents, demo_model
    from swarmgraph.app.ui.server import make_server
    from swarmgraph.app.ui.service import UiService

    triage, sales, refunds = demo_agents()
    service = UiService(Swarm(chat_model=demo_model()), triage, url=url, agents=[sales, refunds])
    server = make_server(service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        events = post_run(server.url, run_input("c7", "Hi, I'm Ming. Please refund order 7."))
    finally:
        server.shutdown()
        server.server_close()
    raw = [event for _, event in events]
    first_delta = next(e for e in raw if e["type"] == "STATE_DELTA")
    step = apply_state(raw[: raw.index(first_delta) + 1])["last_step"]
    assert step["tools"] == ["set_name", "record_order"]
    assert step["changed"] == {"name": "set_name", "order_id": "record_order"}


def test_messages_say_which_the_memory_model_put_in_the_prompt(url: str) -> None:
    with served(["one", "two", "three"], url, memory="window:2") as server:
        for text in ("a", "b"):
            post_run(server.url, run_input("c8", text))
        events = post_run(server.url, run_input("c8", "c"))
    parsed = [EVENT.validate_python(event) for _, event in events]
    (window,) = [e.value for e in parsed if e.type.value == "CUSTOM"]
    assert window["policy"] == "WindowMemory(2)" and window["stored"] == 4
    final = parsed[-2].messages
    marks = [(m.content, m.metadata["swarmgraph"]["in_prompt"]) for m in final]
    assert marks == [
        ("a", False),
        ("one", False),
        ("b", True),
        ("two", True),
        ("c", True),
        ("three", False),  # said after the last model call: no prompt held it yet
    ]
    assert [e for e in final if e.metadata["swarmgraph"]["this_turn"]] == final[-2:]
    assert len(window["in_prompt"]) == 2
