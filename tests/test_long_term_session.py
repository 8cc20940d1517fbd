"""Long-term memory in use: ``Session(user_id=, long_term=)`` recall in the prompt, the memory
tools of ``Agent(memory_tools=True)``, extraction, the outbox that commits a turn's memories
with the turn (kill -9 at three points), and the compiled graph with ``store=`` and a user id
in its config.

Every store is real (InMemoryStore, a SQLite file, the throwaway Postgres); users are fresh per
test (the Postgres database lives for the whole run). What the model was shown is read off
``ScriptedChatModel.calls``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call
from swarmgraph.memory import FactExtractor, LongTermMemory, Session, long_term_hooks
from swarmgraph.memory.long_term_turn import OUTBOX, PENDING, RECALL_HEADER

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).parent / "procs" / "long_term_session_worker.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
FILE_STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class UserFacts(BaseModel):
    home_city: str | None = None
    dog_name: str | None = None


RULES = {"home_city": r"(?:live in|moved to) (?P<value>[A-Z]\w+)", "dog_name": r"dog is (\w+)"}


def extractor() -> FactExtractor:
    return FactExtractor(UserFacts, rules=RULES)


def system_prompts(model: ScriptedChatModel) -> list[str]:
    """The system prompt of every call the model got, in order."""
    return [str(call[0].content) for call in model.calls]


def session(url: str, user: str, conversation: str | None = None, **kwargs) -> Session:
    return Session(
        conversation or fresh_id("conv"), url=url, user_id=user, long_term=True, **kwargs
    )


def remember_call(key: str, value: str, **more) -> object:
    return scripted_tool_call("remember", {"key": key, "value": value, **more})


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_fact_from_conversation_a_is_in_the_prompt_of_conversation_b_for_that_user_only(
    backend_url,
):
    ming, ana = fresh_id("ming"), fresh_id("ana")
    agent = Agent(name="Triage", memory_tools=True)
    model = ScriptedChatModel([remember_call("dog_name", "Rex"), "Noted.", "Hi!", "Hi!"])
    swarm = Swarm(chat_model=model)
    session(backend_url, ming, "conv-a").run(swarm, agent, "My dog is called Rex, remember it.")
    assert "dog_name" not in system_prompts(model)[0]  # nothing was known before

    session(backend_url, ming, "conv-b").run(swarm, agent, "How is my dog doing?")
    assert system_prompts(model)[-1].endswith(f'{RECALL_HEADER}\n- dog_name: "Rex"\n</memory>')
    session(backend_url, ana, "conv-c").run(swarm, agent, "How is my dog doing?")
    assert "Rex" not in system_prompts(model)[-1]  # another user: nothing of ming's

    [fact] = LongTermMemory(backend_url, user_id=ming).facts()
    assert (fact.conversation_id, fact.source_agent, fact.scope) == ("conv-a", "Triage", "user")
    assert fact.text == "My dog is called Rex, remember it."  # the turn's user text
    assert fact.turn_id is not None


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_an_agent_note_is_seen_by_that_agent_only_also_after_a_handoff(backend_url):
    user = fresh_id("u")
    sales = Agent(name="Sales", memory_tools=True)
    triage = Agent(name="Triage", memory_tools=True, handoffs=[sales])
    model = ScriptedChatModel(
        [
            remember_call("tone", "brief", scope="agent"),
            "Noted.",
            scripted_tool_call("transfer_to_sales"),
            "Sales here.",
        ]
    )
    swarm = Swarm(chat_model=model)
    session(backend_url, user).run(swarm, triage, "keep your answers brief")
    response = session(backend_url, user).run(swarm, triage, "keep it brief and sell me bees")
    assert response.agent.name == "Sales"
    triage_prompt, sales_prompt = system_prompts(model)[-2:]
    assert '- tone: "brief" (your own note)' in triage_prompt
    assert "tone" not in sales_prompt  # the handoff changed the agent, and so the scopes
    memory = LongTermMemory(backend_url, user_id=user)
    assert [f.key for f in memory.facts("Triage")] == ["tone"]
    assert memory.facts("Sales") == [] and memory.facts() == []


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_superseded_fact_is_never_recalled_as_current(backend_url):
    user = fresh_id("u")
    agent = Agent(name="Assistant")
    model = ScriptedChatModel(respond=lambda messages: "OK.")
    swarm = Swarm(chat_model=model)
    session(backend_url, user, extract=extractor()).run(swarm, agent, "I live in Lyon.")
    session(backend_url, user, extract=extractor()).run(swarm, agent, "I moved to Porto.")
    session(backend_url, user).run(swarm, agent, "Which city do I live in?")
    prompt = system_prompts(model)[-1]
    assert '- home_city: "Porto"' in prompt and "Lyon" not in prompt
    history = LongTermMemory(backend_url, user_id=user).history("home_city")
    assert [f.value for f in history] == ["Lyon", "Porto"]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_forget_removes_a_fact_from_recall(backend_url):
    user = fresh_id("u")
    agent = Agent(name="Assistant", memory_tools=True)
    model = ScriptedChatModel(
        [
            "OK.",
            scripted_tool_call("forget", {"key": "home_city"}),
            "Forgotten.",
            scripted_tool_call("forget", {"key": "home_city"}),
            "Nothing to forget.",
            "Sorry, I do not know.",
        ]
    )
    swarm = Swarm(chat_model=model)
    session(backend_url, user, extract=extractor()).run(swarm, agent, "I live in Lyon.")
    first = session(backend_url, user).run(swarm, agent, "Please forget the city I live in.")
    assert '- home_city: "Lyon"' in system_prompts(model)[1]  # recalled before the forget
    assert first.messages[1]["content"] == "Forgot home_city."
    again = session(backend_url, user).run(swarm, agent, "Forget my city again.")
    assert again.messages[1]["content"].startswith("Error: nothing is remembered under home_city")
    session(backend_url, user).run(swarm, agent, "Which city do I live in?")
    assert "home_city" not in system_prompts(model)[-1]
    memory = LongTermMemory(backend_url, user_id=user)
    assert memory.facts() == [] and [f.forgotten for f in memory.history("home_city")] == [
        False,
        True,
    ]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_model_supplied_user_id_is_rejected_and_changes_no_one(backend_url):
    victim, attacker = fresh_id("victim"), fresh_id("attacker")
    LongTermMemory(backend_url, user_id=victim).remember("pin", "1234")
    agent = Agent(name="Assistant", memory_tools=True)
    model = ScriptedChatModel(
        [
            remember_call("pin", "0000", user_id=victim),
            scripted_tool_call("recall", {"query": "pin", "user_id": victim}),
            scripted_tool_call("recall", {"query": "pin", "long_term": {"user_id": victim}}),
            "Done.",
        ]
    )
    response = session(backend_url, attacker).run(Swarm(chat_model=model), agent, "hi")
    answers = [m["content"] for m in response.messages if m["role"] == "tool"]
    assert answers[0].startswith("Error: remember: unknown argument 'user_id'")
    assert answers[1].startswith("Error: recall: unknown argument 'user_id'")
    assert answers[2] == "Nothing remembered about that."  # a forged long_term is dropped
    assert [(f.key, f.value) for f in LongTermMemory(backend_url, user_id=victim).facts()] == [
        ("pin", "1234")
    ]
    assert LongTermMemory(backend_url, user_id=attacker).facts() == []
    sent = json.dumps(model.bound_tools[0])  # what the model was told about the tools
    assert "remember" in sent and "user_id" not in sent and "long_term" not in sent


def test_memory_tools_offer_no_user_id_and_no_shared_scope():
    from swarmgraph.graph.core.schema import tool_spec
    from swarmgraph.graph.features.memory_tools import MEMORY_TOOLS

    for tool in MEMORY_TOOLS:
        spec = tool_spec(tool)
        assert "user_id" not in json.dumps(spec.schema) and "long_term" not in json.dumps(
            spec.schema
        )
        properties = spec.schema["function"]["parameters"]["properties"]
        if "scope" in properties:
            assert properties["scope"]["enum"] == ["user", "agent"]


def test_shared_scope_from_a_tool_is_refused(tmp_path):
    url, user = f"sqlite:///{tmp_path / 'm.db'}", "ming"
    agent = Agent(name="Assistant", memory_tools=True)
    model = ScriptedChatModel([remember_call("motto", "be kind", scope="shared"), "ok"])
    trusted = LongTermMemory(url, user_id=user, trusted=True)  # even a trusted Session memory
    response = Session("c", url=url, long_term=trusted).run(Swarm(chat_model=model), agent, "hi")
    assert response.messages[1]["content"].startswith("Error: remember: argument 'scope'")
    assert trusted.facts() == []


def test_memory_tools_without_long_term_memory_answer_an_error(tmp_path):
    agent = Agent(name="Assistant", memory_tools=True)
    model = ScriptedChatModel([remember_call("city", "Lyon"), "ok"])
    response = Session("c", url=f"sqlite:///{tmp_path / 'm.db'}").run(
        Swarm(chat_model=model), agent, "hi"
    )
    assert response.messages[1]["content"].startswith("Error: remember needs 'long_term'")
    plain = Swarm(chat_model=ScriptedChatModel([remember_call("city", "Lyon"), "ok"]))
    out = plain.run(agent, [{"role": "user", "content": "hi"}])
    assert out.messages[1]["content"].startswith("Error: remember needs 'long_term'")


def test_recall_zero_keeps_the_prompt_clean_but_the_tools_work(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    LongTermMemory(url, user_id="u").remember("city", "Lyon")
    agent = Agent(name="Assistant", memory_tools=True)
    model = ScriptedChatModel([scripted_tool_call("recall", {"query": "city"}), "Lyon."])
    response = session(url, "u", recall=0).run(Swarm(chat_model=model), agent, "my city?")
    assert "city" not in system_prompts(model)[0]
    assert response.messages[1]["content"] == '- city: "Lyon"'


def test_a_write_staged_in_a_turn_is_recalled_at_once_but_stored_only_with_the_turn(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    agent = Agent(name="Assistant", memory_tools=True)
    seen = {}

    def respond(messages):
        if messages[-1].type == "human":
            return remember_call("city", "Lyon")
        seen["during"] = LongTermMemory(url, user_id="u").facts()
        return "Noted."

    model = ScriptedChatModel(respond=respond)
    chat = session(url, "u", "c1")
    chat.run(Swarm(chat_model=model), agent, "I live in Lyon")
    assert seen["during"] == []  # staged: not in the store while the turn ran
    assert '- city: "Lyon"' in system_prompts(model)[1]  # yet recalled in that turn's next call
    record = chat.store.records("c1", OUTBOX)
    [(turn_id, outbox)] = record.items()
    assert outbox["user_id"] == "u" and outbox["changes"][0]["key"] == "city"
    assert [f.value for f in LongTermMemory(url, user_id="u").facts()] == ["Lyon"]
    assert chat.store.load("c1").meta[PENDING] == [turn_id]  # until the next save says done
    chat.run(Swarm(chat_model=ScriptedChatModel(["hi"])), agent, "hello")
    assert PENDING not in chat.store.load("c1").meta


def test_a_run_that_raises_writes_no_memory(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    agent = Agent(name="Assistant", memory_tools=True)

    def respond(messages):
        if messages[-1].type == "human":
            return remember_call("city", "Lyon")
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        session(url, "u", extract=extractor()).run(
            Swarm(chat_model=ScriptedChatModel(respond=respond)), agent, "I live in Lyon"
        )
    assert LongTermMemory(url, user_id="u").facts() == []


def test_the_callers_prompt_context_and_tool_inputs_are_kept(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    LongTermMemory(url, user_id="u").remember("city", "Lyon")
    model = ScriptedChatModel(["ok"])
    session(url, "u").run(
        Swarm(chat_model=model),
        Agent(name="A"),
        "my city?",
        prompt_context=lambda agent, messages: f"Today is Monday for {agent.name}.",
    )
    prompt = system_prompts(model)[0]
    assert prompt.index("Today is Monday for A.") < prompt.index('- city: "Lyon"')


def test_arun_recalls_extracts_and_delivers(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    agent = Agent(name="A")
    model = ScriptedChatModel(respond=lambda messages: "ok")

    async def main():
        await session(url, "u", extract=extractor()).arun(
            Swarm(chat_model=model), agent, "I live in Lyon"
        )
        await session(url, "u").arun(Swarm(chat_model=model), agent, "where do I live?")

    asyncio.run(main())
    assert '- home_city: "Lyon"' in system_prompts(model)[-1]


def test_session_arguments_are_checked(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with pytest.raises(ValueError, match="belongs to a user"):
        Session("c", url=url, long_term=True)
    with pytest.raises(ValueError, match="leaves out 'long_term'"):
        Session("c", url=url, user_id="u", long_term=True, persist=("messages",))
    with pytest.raises(ValueError, match="recall must be an int"):
        session(url, "u", recall=-1)
    with pytest.raises(ValueError, match="pass long_term=True too"):
        Session("c", url=url, extract=extractor())
    with pytest.raises(ValueError, match="long-term memory needs"):
        Session("c", url="redis://127.0.0.1:1/0", user_id="u", long_term=True)
    only = Session("c", url=url, user_id="u", persist=("long_term",))
    assert only.persist == ("long_term",) and only.long_term is not None
    given = LongTermMemory(url, user_id="someone")
    assert Session("c", url=url, long_term=given).long_term is given
    assert Session("c", url=url, long_term=given, user_id="u").long_term.user_id == "u"
    with pytest.warns(UserWarning, match="keeps no long-term memory without long_term=True"):
        assert Session("c", url=url, user_id="u").long_term is None  # a user id alone: off


def test_persist_long_term_alone_keeps_no_text_and_no_context_but_the_facts(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    agent = Agent(name="A")
    model = ScriptedChatModel(respond=lambda messages: "ok")
    kwargs = {"user_id": "u", "persist": ("long_term",), "extract": extractor()}
    Session("c", url=url, **kwargs).run(Swarm(chat_model=model), agent, "I live in Lyon")
    later = Session("c", url=url, **kwargs)
    later.run(Swarm(chat_model=model), agent, "where do I live?")
    assert later.messages == [] and later.context_variables == {}
    assert [m.type for m in model.calls[-1]] == ["system", "human"]  # no earlier text
    assert '- home_city: "Lyon"' in system_prompts(model)[-1]


# -- the outbox: kill -9 at three points of a turn ------------------------------------------


def worker(url: str, user: str, cid: str, turn: str, message: str, kill: str | None = None):
    done = subprocess.run(
        [sys.executable, str(WORKER), url, user, cid, turn, message, *([kill] if kill else [])],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if kill is None:
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == -9, done.stderr[-3000:]
    return None


@pytest.mark.slow  # subprocesses killed with SIGKILL
@pytest.mark.parametrize("backend_url", FILE_STORES, indirect=True)
def test_kill_9_in_the_run_leaves_neither_the_turn_nor_its_memories(backend_url):
    user, cid = fresh_id("u"), fresh_id("c")
    worker(backend_url, user, cid, "t1", "I live in Lyon, keep it brief", kill="in-run")
    chat = Session(cid, url=backend_url, user_id=user, long_term=True)
    assert chat.messages == [] and chat.store.records(cid, OUTBOX) == {}
    assert LongTermMemory(backend_url, user_id=user).facts("Triage") == []
    # The caller retries the turn: it runs once, and its memories are written once.
    facts = worker(backend_url, user, cid, "t1", "I live in Lyon, keep it brief")
    assert facts == [["tone", "brief"], ["home_city", "Lyon"]]
    memory = LongTermMemory(backend_url, user_id=user)
    assert len(memory.history("home_city")) == 1
    assert len(memory.history("tone", "agent", agent="Triage")) == 1


@pytest.mark.slow  # subprocesses killed with SIGKILL
@pytest.mark.parametrize("backend_url", FILE_STORES, indirect=True)
@pytest.mark.parametrize("point", ["after-save", "mid-apply"])
def test_kill_9_after_the_save_leaves_an_outbox_that_the_next_process_applies_once(
    backend_url, point
):
    user, cid = fresh_id("u"), fresh_id("c")
    worker(backend_url, user, cid, "t1", "I live in Lyon, keep it brief", kill=point)
    chat = Session(cid, url=backend_url, user_id=user, long_term=True)
    assert [m.type for m in chat.messages] == ["human", "ai", "tool", "ai"]  # the turn is whole
    [outbox] = chat.store.records(cid, OUTBOX).values()
    assert {c["key"] for c in outbox["changes"]} == {"tone", "home_city"}
    memory = LongTermMemory(backend_url, user_id=user)
    applied = {f.key for f in memory.facts("Triage")}
    assert applied == (set() if point == "after-save" else {"tone"})  # one write, not half of one
    # A retry of the same turn (a new process) replays it and applies what waited.
    facts = worker(backend_url, user, cid, "t1", "I live in Lyon, keep it brief")
    assert facts == [["tone", "brief"], ["home_city", "Lyon"]]
    assert len(chat.messages) == 4  # replayed, not run again
    # A later turn in yet another process applies nothing twice.
    worker(backend_url, user, cid, "t2", "I live in Porto now")
    assert [f.value for f in memory.history("home_city")] == ["Lyon", "Porto"]
    assert len(memory.history("tone", "agent", agent="Triage")) == 1


@pytest.mark.slow  # subprocesses killed with SIGKILL
@pytest.mark.parametrize("backend_url", FILE_STORES, indirect=True)
def test_an_undelivered_outbox_is_applied_by_the_next_turn_not_only_a_replay(backend_url):
    user, cid = fresh_id("u"), fresh_id("c")
    worker(backend_url, user, cid, "t1", "my dog is called Rex", kill="after-save")
    facts = worker(backend_url, user, cid, "t2", "hello again")
    assert facts == [["dog_name", "Rex"]]


# -- the compiled graph: store= and config["configurable"]["user_id"] -------------------------


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_compiled_graph_recalls_from_its_store_for_the_configured_user(backend_url):
    ming, ana = fresh_id("ming"), fresh_id("ana")
    memory = LongTermMemory(backend_url, user_id=ming)
    memory.remember("dog_name", "Rex")
    sales = Agent(name="Sales", memory_tools=True)
    triage = Agent(name="Triage", memory_tools=True, handoffs=[sales])
    model = ScriptedChatModel(
        [
            remember_call("tone", "brief", scope="agent"),
            scripted_tool_call("transfer_to_sales"),
            "Sales here.",
            "Hello.",
            "Hello again.",
        ]
    )
    app = build_swarm_graph([triage], chat_model=model, **long_term_hooks(recall=3)).compile(
        store=memory.store
    )
    question = {"messages": [HumanMessage("Tell me about my dog, keep it brief.")]}
    app.invoke(question, {"configurable": {"user_id": ming, "thread_id": "t-1"}})
    prompts = system_prompts(model)
    assert '- dog_name: "Rex"' in prompts[0] and "tone" not in prompts[0]
    assert '- tone: "brief" (your own note)' in prompts[1]  # written at once, then recalled
    assert '- dog_name: "Rex"' in prompts[2] and "tone" not in prompts[2]  # Sales: not its note
    [note] = memory.facts("Triage")[:1]
    assert (note.key, note.conversation_id, note.source_agent) == ("tone", "t-1", "Triage")
    app.invoke(question, {"configurable": {"user_id": ana}})
    assert "Rex" not in system_prompts(model)[-1]
    app.invoke(question)  # no user: nothing recalled, nothing fails
    assert RECALL_HEADER not in system_prompts(model)[-1]


def test_a_compiled_graph_without_a_store_recalls_nothing():
    model = ScriptedChatModel(["hi"])
    app = build_swarm_graph([Agent()], chat_model=model, **long_term_hooks()).compile()
    app.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"user_id": "u"}})
    assert system_prompts(model) == ["You are a helpful agent."]
    other = LongTermMemory.from_store(InMemoryStore(), user_id="u")
    assert other.facts() == []


# -- what the outbox relies on, and what the CLI shows -----------------------------------------


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_turn_applied_again_after_a_later_change_never_undoes_it(backend_url):
    """An outbox may be applied again long after (the next turn of a conversation in a new
    process): a write of that turn that changed nothing then must change nothing now either."""
    memory = LongTermMemory(backend_url, user_id=fresh_id("u"))
    memory.remember("city", "Lyon", conversation_id="c0", turn_id="t0")

    def turn_1() -> None:  # the value is current already; there is nothing to forget
        memory.remember("city", "Lyon", conversation_id="c1", turn_id="t1")
        memory.forget("car", conversation_id="c1", turn_id="t1")

    turn_1()
    memory.remember("city", "Porto", conversation_id="c2", turn_id="t2")
    memory.remember("car", "Saab", conversation_id="c2", turn_id="t2")
    turn_1()  # applied again
    assert [(f.key, f.value) for f in memory.facts()] == [("car", "Saab"), ("city", "Porto")]
    assert [f.value for f in memory.history("city")] == ["Lyon", "Porto"]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_all_facts_lists_every_agents_notes_of_that_user_only(backend_url):
    bob = fresh_id("bob")
    mine, evil = (
        LongTermMemory(backend_url, user_id=bob),
        LongTermMemory(backend_url, user_id=bob + ".evil"),
    )  # a user id whose namespace label starts with bob's
    mine.remember("tone", "brief", "agent", agent="Sales")
    mine.remember("x", "1", "agent", agent="A.b")
    mine.remember("city", "Lyon")
    evil.remember("secret", "s", "agent", agent="Sales")
    assert [(f.key, f.agent) for f in mine.all_facts()] == [
        ("x", "A.b"),
        ("tone", "Sales"),
        ("city", None),
    ]
    assert [(f.key, f.agent) for f in evil.all_facts()] == [("secret", "Sales")]
