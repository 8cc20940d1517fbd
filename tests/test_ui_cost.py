"""What the page does less of when nobody watches, and that it still tells the same: a step's
``STATE_DELTA`` built from what the step changed is the patch between the two states; the
final ``MESSAGES_SNAPSHOT`` built from the messages the save wrote is the stored conversation
(and is read from the store when another writer saved meanwhile); ``plain``'s one-pass copy of
a flat context is the copy the long way makes."""

from __future__ import annotations

import random
from typing import Any

import jsonpatch
from swarmgraph.memory import Session

from swarmgraph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.app.ui.events import AguiTurn, state_patch
from swarmgraph.app.ui.service import UiService
from swarmgraph.app.ui.steps import plain


def _state(rng: random.Random) -> dict[str, Any]:
    keys = ["a", "b/c", "d~e", "f"]
    return {k: rng.choice([1, 2, "x", None, [1], {"n": 1}]) for k in keys if rng.random() < 0.6}


def test_a_steps_delta_is_the_patch_between_the_states_before_and_after() -> None:
    rng = random.Random(41)
    for _ in range(300):
        start = {
            "conversation_id": "c",
            "persist": ["messages"],
            "context_variables": _state(rng),
            "active_agent": "A",
            "last_step": None,
            "changed_this_turn": {},
        }
        out: list[dict[str, Any]] = []
        turn = AguiTurn(out.append, start, ids="r")
        client = plain(start)
        for agent in rng.choices(["A", "B"], k=4):
            before = plain(turn.state)
            turn.step_started(agent, {"context_variables": _state(rng), "active_agent": agent})
            deltas = [e["delta"] for e in out if e["type"] == "STATE_DELTA"]
            out.clear()
            for delta in deltas:  # what a client does with it, and the diff of the states
                assert delta == state_patch(before, turn.state)
                client = jsonpatch.apply_patch(client, delta)
            assert client == turn.state


def test_plain_copies_a_flat_context_as_the_long_way_does() -> None:
    class Odd(dict):
        pass

    flat = {"a": 1, "b": "x", "c": None, "d": True, "e": 1.5, 7: "key"}
    copied = plain(flat)
    assert copied == {"a": 1, "b": "x", "c": None, "d": True, "e": 1.5, "7": "key"}
    assert copied is not flat
    nested = plain({"n": {"m": (1, object)}, "s": Odd(k=[2])})
    assert nested["n"]["m"][0] == 1 and isinstance(nested["n"]["m"][1], str)
    assert nested["s"] == {"k": [2]} and type(nested["s"]) is dict


def _final_snapshot(log: Any) -> list[dict[str, Any]]:
    events = [event for _, event in log.follow()]
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events[-2]["messages"]


def test_the_final_snapshot_is_the_stored_conversation() -> None:
    def transfer() -> Agent:
        """Hand off."""
        return sales

    sales = Agent(name="Sales")
    triage = Agent(name="Triage", functions=[transfer])
    model = ScriptedChatModel([scripted_tool_call("transfer"), "Sales here."] * 2)
    service = UiService(Swarm(chat_model=model), triage, url="memory://ui-cost-final")
    for number in (1, 2):  # the second turn starts from a stored conversation
        body = {
            "threadId": "t",
            "runId": f"r{number}",
            "messages": [{"id": f"u{number}", "role": "user", "content": f"hi {number}"}],
        }
        final = _final_snapshot(service.start(body))
        stored = Session("t", url="memory://ui-cost-final").messages
        assert [(m["id"], m["role"], m.get("content")) for m in final] == [
            (s.id, {"human": "user", "ai": "assistant", "tool": "tool"}[s.type], s.content or None)
            for s in stored
        ]
        assert all(m["metadata"]["swarmgraph"]["stored"] for m in final)
        mine = [m["id"] for m in final if m["metadata"]["swarmgraph"]["this_turn"]]
        assert mine == [s.id for s in stored[-4:]] and mine[0] == f"u{number}"


def test_the_final_snapshot_reads_the_store_when_another_writer_saved_meanwhile() -> None:
    url = "memory://ui-cost-other"

    def interject() -> Result:
        """Another writer saves a turn of this conversation while this one runs."""
        other = Swarm(chat_model=ScriptedChatModel(["other answer"]))
        Session("t", url=url).run(other, Agent(name="Other"), "meanwhile")
        return Result(value="done")

    triage = Agent(name="Triage", functions=[interject])
    model = ScriptedChatModel([scripted_tool_call("interject"), "Mine."])
    service = UiService(Swarm(chat_model=model), triage, url=url)
    body = {"threadId": "t", "runId": "r1", "messages": [{"id": "u1", "role": "user",
                                                         "content": "go"}]}  # fmt: skip
    final = _final_snapshot(service.start(body))
    stored = Session("t", url=url).messages
    assert [m.content for m in stored][:2] == ["meanwhile", "other answer"]
    assert [m["id"] for m in final] == [s.id for s in stored]
    assert [m.get("content") for m in final] == [s.content or None for s in stored]


def test_long_term_recall_is_told_only_by_a_session_that_has_long_term_memory() -> None:
    from swarmgraph.memory import LongTermMemory

    from swarmgraph.app.ui.events import RECALL_EVENT

    url = "memory://ui-cost-recall"
    LongTermMemory(url, user_id="ming").remember("dog_name", "Rex")
    agent = Agent(name="Triage")
    body = {"threadId": "t", "runId": "r1", "messages": [{"id": "u1", "role": "user",
                                                         "content": "how is my dog?"}]}  # fmt: skip
    remembering = UiService(
        Swarm(chat_model=ScriptedChatModel(["Fine."])),
        agent,
        url=url,
        user_id="ming",
        long_term=True,
    )
    events = [event for _, event in remembering.start(body).follow()]
    recalled = [e["value"] for e in events if e.get("name") == RECALL_EVENT]
    assert len(recalled) == 1 and recalled[0]["agent"] == "Triage"
    assert any('dog_name: "Rex"' in line for line in recalled[0]["lines"])
    plain_page = UiService(Swarm(chat_model=ScriptedChatModel(["Fine."])), agent, url=url)
    body = {**body, "threadId": "t2", "runId": "r2"}
    events = [event for _, event in plain_page.start(body).follow()]
    assert [e for e in events if e.get("name") == RECALL_EVENT] == []
    assert events[-1]["type"] == "RUN_FINISHED"


def _told(kind: type, script: list[Any], *, approvals: bool = False) -> list[dict[str, Any]]:
    """The events one run tells through the page's middleware ``kind``."""
    from swarmgraph.graph.core.run_control import RunHooks

    from swarmgraph.app.demo import demo_agents, demo_model
    from tests.ui_helpers import swarm_agents

    out: list[dict[str, Any]] = []
    turn = AguiTurn(out.append, {"context_variables": {}, "active_agent": "Triage"}, ids="r")
    if script:
        triage, _sales = swarm_agents()
        swarm = Swarm(chat_model=ScriptedChatModel(script))
        text = "refund order 7"
    else:  # the demo: two tools in its first step, then a handoff
        triage, *_ = demo_agents()
        swarm = Swarm(chat_model=demo_model())
        text = "Hi, I'm Ming. Please refund order 7."
    page = kind(turn)
    response = swarm.run(
        triage, [{"role": "user", "content": text}], hooks=RunHooks(middleware=[page])
    )
    page.ended(response._langchain_messages)
    turn.end({"context_variables": dict(response.context_variables), "active_agent": None})
    assert bool(response.pending) == approvals
    for event in out:  # a tool answer's message id is a random one, given by the graph
        if event["type"] == "TOOL_CALL_RESULT":
            event["messageId"] = "answer"
    return out


def test_a_turn_nobody_streams_tells_the_same_events_without_wrap_model_call() -> None:
    """``UiQuietMiddleware`` (a reply told when its calls are admitted, or at its step's end)
    tells what ``UiMiddleware`` (each reply as the model returns it) tells, in order: a
    handoff after a tool that changes context, a reply whose call waits for approval, and
    the demo's step of two tools."""
    from swarmgraph.app.ui.steps import UiMiddleware, UiQuietMiddleware
    from tests.ui_helpers import handoff_script

    refund = [
        scripted_tool_call("transfer_to_sales"),
        scripted_tool_call("refund", {"order_id": 7}),
    ]
    for script, waits in ((handoff_script(), False), (refund, True), ([], False)):
        quiet = _told(UiQuietMiddleware, script, approvals=waits)
        assert quiet == _told(UiMiddleware, script, approvals=waits)
        kinds = [e["type"] for e in quiet]
        assert kinds.index("TOOL_CALL_START") < kinds.index("TOOL_CALL_RESULT")
        assert "TEXT_MESSAGE_CONTENT" in kinds or waits


def test_a_turn_nobody_streams_stops_before_its_calls_run() -> None:
    """The quiet middleware sees the page's stop once a reply is in, before its calls run:
    asked while the model answers, the tool does not run, the run ends cancelled, and
    nothing of it is saved."""
    from langchain.agents.middleware import before_model
    from langchain_core.messages import HumanMessage

    from swarmgraph.app.ui.turn import TurnRequest, start_turn
    from tests.ui_helpers import handoff_script, swarm_agents

    ran: list[int] = []
    triage, sales = swarm_agents(gate=lambda: ran.append(1) or True)
    url = "memory://ui-cost-stop"
    service = UiService(Swarm(chat_model=ScriptedChatModel(handoff_script())), triage,
                        url=url, agents=[sales])  # fmt: skip
    log = service.runs.open("r1", "t", url)

    @before_model
    def press_stop(state: Any, runtime: Any) -> None:  # the step started: the button is pressed
        log.stop_requested.set()

    triage.middleware = [press_stop]
    request = TurnRequest("t", "r1", HumanMessage("go", id="u1"))
    start_turn(service.session("t"), service.swarm, triage, request, log, tokens=False)
    assert log.wait(30)
    events = [event for _, event in log.follow()]
    assert events[-1]["outcome"] == {"type": "cancelled"}
    assert "TOOL_CALL_START" in [e["type"] for e in events]  # told, then refused
    assert ran == []
    assert Session("t", url=url).messages == []


def test_a_resumed_turn_nobody_streams_does_not_tell_the_paused_reply_again() -> None:
    """A turn resumed with a decision carries the paused turn's reply (its call waited): the
    quiet middleware, which tells replies from the run's messages, tells what the streaming
    one tells, and not that reply a second time."""
    from tests.ui_helpers import swarm_agents

    seen = {}
    for tokens in (False, True):
        triage, sales = swarm_agents()
        script = [scripted_tool_call("transfer_to_sales"),
                  scripted_tool_call("refund", {"order_id": 7}), "Refunded."]  # fmt: skip
        service = UiService(Swarm(chat_model=ScriptedChatModel(script)), triage,
                            url=f"memory://ui-cost-resume-{tokens}", agents=[sales])  # fmt: skip
        body = {"threadId": "t", "runId": "r1",
                "messages": [{"id": "u1", "role": "user", "content": "refund 7"}]}  # fmt: skip
        paused = [event for _, event in service.start(body, tokens=tokens).follow()]
        waiting = paused[-1]["outcome"]["interrupts"][0]["id"]
        resume = {"threadId": "t", "runId": "r2", "messages": [],
                  "resume": [{"interruptId": waiting, "status": "resolved"}]}  # fmt: skip
        events = [event for _, event in service.start(resume, tokens=tokens).follow()]
        assert [e for e in events if e["type"] == "TOOL_CALL_START"] == []  # told in r1
        assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["refunded 7"]
        seen[tokens] = [e["type"] for e in events]
    assert seen[False] == seen[True]


def test_a_callers_message_is_copied_whole() -> None:
    """Session.run keeps the caller's LangChain message as its own copy (the page's user
    message is one): a plain text message, content blocks, filled dicts; what is stored and
    sent is the message as given, whatever the caller changes in its object afterwards."""
    from langchain_core.messages import HumanMessage

    given = [
        HumanMessage("plain", id="u-plain"),
        HumanMessage([{"type": "text", "text": "parts"}], id="u-parts"),
        HumanMessage("kw", id="u-kw", additional_kwargs={"tag": ["a"]}),
    ]
    for number, message in enumerate(given):
        expected = message.model_copy(deep=True)
        session = Session(f"copy-{number}", url="memory://ui-cost-copy")
        session.run(Swarm(chat_model=ScriptedChatModel(["ok"])), Agent(name="A"), message)
        message.additional_kwargs.setdefault("tag", []).append("changed")
        message.response_metadata["changed"] = True
        if isinstance(message.content, list):
            message.content.append({"type": "text", "text": "changed"})
        stored = Session(f"copy-{number}", url="memory://ui-cost-copy").messages[0]
        assert stored == expected, number
        assert session.last_sent[0] == expected and session.last_sent[0] is not message
