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
