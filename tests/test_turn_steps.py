"""Session's public turn steps (memory/turn_steps.py): ``begin_turn`` + ``finish_turn`` store
the same turn as ``Session.run``; a retried finish writes nothing; and no module outside
memory/ reaches into a Session's private attributes (issue 29 item 5)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, Response, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.store import Window

URL_BACKENDS = ("sqlite", "postgres")
ROOT = Path(__file__).resolve().parent.parent


def _desk() -> tuple[Agent, list]:
    """Triage notes an order in the context and hands off to Refunds, which answers."""

    refunds = Agent(name="Refunds", instructions="Refund.")

    def note_order(order_id: int):
        """Note the order the user means."""
        return Result(value="noted", context_variables={"order_id": order_id})

    def transfer_to_refunds():
        """Hand the user to refunds."""
        return refunds

    triage = Agent(name="Triage", functions=[note_order, transfer_to_refunds])
    script = [
        scripted_tool_call("note_order", {"order_id": 7}),
        scripted_tool_call("transfer_to_refunds", {}),
        "Refunded order 7.",
    ]
    return triage, script


def _stored(url: str, cid: str) -> tuple:
    """What a fresh Session reads of the conversation, message ids and run metadata aside."""
    later = Session(cid, url=url)
    snapshot = later.store.load(cid, window=Window())
    said = [(m.type, m.content, getattr(m, "tool_calls", None) or None) for m in later.messages]
    turns = snapshot.meta.get("turn_index", snapshot.meta.get("turns"))
    return said, later.context_variables, snapshot.active_agent, snapshot.version, turns is None


def _both(url: str, caller: dict | None = None) -> tuple[tuple, tuple]:
    """One turn through Session.run and the same turn through the two steps, each on its own
    conversation: what each stored."""
    ran_id, steps_id = fresh_id("run"), fresh_id("steps")
    triage, script = _desk()
    Session(ran_id, url=url).run(
        Swarm(chat_model=ScriptedChatModel(list(script))), triage, "refund 7", caller, turn_id="t"
    )
    swarm = Swarm(chat_model=ScriptedChatModel(list(script)))
    session = Session(steps_id, url=url)
    plan = session.begin_turn(swarm, triage, "refund 7", caller, turn_id="t")
    assert plan.stored is None and plan.start is triage
    session.finish_turn(plan, swarm.run(**plan.run_kwargs))
    return _stored(url, ran_id), _stored(url, steps_id)


def test_the_two_steps_store_what_session_run_stores(url):
    by_run, by_steps = _both(url, {"user": "Ming"})
    said, context, agent, version, _ = by_steps
    assert [kind for kind, _, _ in said] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert context == {"user": "Ming", "order_id": 7} and agent == "Refunds" and version == 1
    assert by_steps == by_run


def test_a_second_turn_through_the_steps_starts_with_the_stored_agent_and_context(url):
    cid = fresh_id("again")
    triage, script = _desk()
    Session(cid, url=url).run(Swarm(chat_model=ScriptedChatModel(script)), triage, "refund 7")
    swarm = Swarm(chat_model=ScriptedChatModel(["Anything else?"]))
    session = Session(cid, url=url)
    plan = session.begin_turn(swarm, triage, "thanks", {"mood": "glad"}, turn_id="t2")
    assert plan.start is not None and plan.start.name == "Refunds"  # found by handoff
    assert plan.given == {"order_id": 7, "mood": "glad"} and plan.version == 1
    assert [m.content for m in plan.run_kwargs["messages"]][-1] == "thanks"
    session.finish_turn(plan, swarm.run(**plan.run_kwargs))
    assert Session(cid, url=url).messages[-1].content == "Anything else?"


def test_a_retried_finish_writes_nothing_and_a_stored_turn_id_is_replayed(url):
    cid = fresh_id("retry")
    swarm = Swarm(chat_model=ScriptedChatModel(["Hi!", "never sent"]))
    session, doc = Session(cid, url=url), Agent(name="Doc")
    plan = session.begin_turn(swarm, doc, "hey", turn_id="t1")
    response = swarm.run(**plan.run_kwargs)
    session.finish_turn(plan, response)
    once = _stored(url, cid)
    session.finish_turn(plan, response)  # a retry of the same save (same turn id)
    assert _stored(url, cid) == once and once[3] == 1
    # in another process: the save rebuilt from what the begin kept finds its turn id stored
    kept = {"version": plan.version, "base": plan.base, "state": plan.folded.state}
    other = Session(cid, url=url)
    assert other.reopen_turn(swarm, doc, plan.turn_id, plan.new, **kept) is None
    again = other.begin_turn(swarm, doc, "hey", turn_id="t1")
    assert again.stored is not None and again.run_kwargs == {}
    assert again.stored.messages[-1]["content"] == "Hi!"
    with pytest.raises(ValueError, match="stored before"):
        other.finish_turn(again, again.stored)
    assert _stored(url, cid) == once


def test_a_reopened_plan_saves_once_and_rebases_on_a_turn_saved_meanwhile(url):
    cid = fresh_id("reopen")
    doc = Agent(name="Doc")
    first = Session(cid, url=url).begin_turn(Swarm(), doc, "one", turn_id="w1")
    # another writer saves a turn between this turn's begin and its save
    Session(cid, url=url).run(
        Swarm(chat_model=ScriptedChatModel(["two?"])), doc, "two", {"b": 2}, turn_id="w2"
    )
    kept = {"version": first.version, "base": first.base, "state": first.folded.state}
    worker = Session(cid, url=url)
    plan = worker.reopen_turn(Swarm(), doc, first.turn_id, first.new, **kept)
    assert plan is not None
    ran = Response(
        messages=[{"role": "assistant", "content": "one!", "sender": "Doc"}],
        agent=doc,
        context_variables={"c": 3},
    )
    worker.finish_turn(plan, ran)
    said, context, _, version, _ = _stored(url, cid)
    assert [content for _, content, _ in said] == ["two", "two?", "one", "one!"]
    assert context == {"b": 2, "c": 3} and version == 2  # merged key by key
    assert worker.reopen_turn(Swarm(), doc, first.turn_id, first.new, **kept) is None


def test_begin_turn_makes_session_runs_checks_before_any_io(tmp_path):
    session = Session("checks", url=f"sqlite:///{tmp_path / 'never.db'}")
    with pytest.raises(TypeError, match="context_variables must be a dict"):
        session.begin_turn(Swarm(), Agent(), "hi", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="builds 'messages' itself"):
        session.begin_turn(Swarm(), Agent(), "hi", messages=[])
    assert session.store.load("checks").version == 0


# -- no private Session attribute used outside memory/ ----------------------------------------
def private_session_uses(source: str) -> list[str]:
    """``session._x`` / ``self.session._x`` / ``<anything>_session._x`` in ``source``: a
    private attribute of what is, by its name, a memory/ Session object."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if name.lower().endswith("session"):
            found.append((node.lineno, f"{node.lineno}: {name}.{node.attr}"))
    return [text for _, text in sorted(found)]


def test_the_scan_finds_what_session_turn_did_before_the_public_steps():
    before = (
        "turn = session._open(new, where['turn_id'], {}, caller)\n"
        "turn.snapshot = session._load(turn.turn_id)\n"
        "side = self.session._long_term\n"
        "ok = session.begin_turn(swarm, agent), session.__class__, other._x\n"
    )
    assert private_session_uses(before) == [
        "1: session._open",
        "2: session._load",
        "3: session._long_term",
    ]


@pytest.mark.parametrize("folder", ["graph", "swarmgraph"])
def test_no_module_outside_memory_uses_a_private_session_attribute(folder):
    uses = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (found := private_session_uses(path.read_text()))
    }
    assert uses == {}
