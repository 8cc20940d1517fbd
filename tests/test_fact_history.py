"""Facts keep their history, and recall can use it (issue 39 item 2): a superseded value
stays queryable with when it held; a question about the past gets the earlier values into
the recall block; the ``history`` memory tool reads them.
"""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.messages import BaseMessage
from pydantic import BaseModel
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.fact_extract import FactExtractor

from swarmgraph import Session

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


class Home(BaseModel):
    home_city: str | None = None


EXTRACT = FactExtractor(Home, rules={"home_city": r"(?:live in|moved to) (?P<value>[A-Z]\w+)"})


def memory_lines(messages: list[BaseMessage]) -> list[str]:
    """The recall block's fact lines in the system prompt."""
    prompt = str(messages[0].content)
    block = prompt.partition("<memory>")[2].partition("</memory>")[0]
    return [line for line in block.splitlines() if line.startswith("- ")]


def reader(messages: list[BaseMessage]) -> str:
    """A stand-in model that answers only from the recall block: for a question about the
    past, the first earlier value; else the first value."""
    lines = memory_lines(messages)
    question = str(messages[-1].content)
    if "before" in question:
        lines = [line for line in lines if "(earlier value" in line]
    if not lines:
        return "I don't know."
    return json.loads(re.search(r': ("(?:[^"\\]|\\.)*")', lines[0]).group(1))


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_superseded_value_keeps_when_it_held(backend_url):
    memory = LongTermMemory(backend_url, user_id=fresh_id("ming"))
    memory.remember("home_city", "Lyon")
    memory.remember("home_city", "Porto")
    memory.forget("home_city")
    lyon, porto, tombstone = memory.history("home_city")
    assert (lyon.value, porto.value, tombstone.forgotten) == ("Lyon", "Porto", True)
    assert lyon.superseded_at == porto.created_at  # Lyon held until Porto was said
    assert porto.superseded_at == tombstone.created_at
    assert tombstone.superseded_at is None


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_question_about_the_past_is_answered_from_long_term_memory(backend_url):
    user = fresh_id("ming")
    swarm = Swarm(chat_model=ScriptedChatModel(respond=reader))
    agent = Agent(name="Concierge")

    def session() -> Session:  # a new conversation each time: no message holds the answer
        return Session(fresh_id("c"), url=backend_url, user_id=user, long_term=True,
                       extract=EXTRACT)  # fmt: skip

    session().run(swarm, agent, "I live in Lyon.")
    session().run(swarm, agent, "I moved to Porto last month.")
    now = session().run(swarm, agent, "Which city is my home city?")
    assert now.messages[-1]["content"] == "Porto"
    before = session().run(swarm, agent, "Where did I live before Porto?")
    assert before.messages[-1]["content"] == "Lyon"


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_only_a_question_about_the_past_shows_earlier_values(backend_url):
    user = fresh_id("ming")
    memory = LongTermMemory(backend_url, user_id=user)
    memory.remember("home_city", "Lyon", text="I live in Lyon.")
    memory.remember("home_city", "Porto", text="I moved to Porto.")
    memory.remember("car", "a blue Fiat", text="I drive a blue Fiat.")
    memory.forget("car")
    model = ScriptedChatModel(["ok"] * 3)
    for question in ("Which city is my home city?", "Which city did I use to live in?"):
        Session(fresh_id("c"), url=backend_url, user_id=user, long_term=True).run(
            Swarm(chat_model=model), Agent(name="Concierge"), question
        )
    Session(fresh_id("c"), url=backend_url, user_id=user, long_term=True).run(
        Swarm(chat_model=model), Agent(name="Concierge"), "What car did I drive before?"
    )
    now, past, car = (memory_lines(call) for call in model.calls)
    assert now == ['- home_city: "Porto"']
    assert past[0] == '- home_city: "Porto"'
    assert past[1].startswith('- home_city: "Lyon" (earlier value, held from ')
    assert not any("Fiat" in line for line in car)  # forgotten: its past is not recalled


@pytest.mark.parametrize("backend_url", STORES[:2], indirect=True)
def test_a_how_many_question_gets_every_value_the_fact_had(backend_url):
    # "How many cities have I lived in?" (the benchmark's aggregation kind) needs Lyon too
    user = fresh_id("ming")
    memory = LongTermMemory(backend_url, user_id=user)
    memory.remember("home_city", "Lyon", text="I live in Lyon.")
    memory.remember("home_city", "Porto", text="I moved to Porto.")
    model = ScriptedChatModel(["ok"] * 2)
    for question in ("Which city do I live in?", "How many cities have I lived in?"):
        Session(fresh_id("c"), url=backend_url, user_id=user, long_term=True).run(
            Swarm(chat_model=model), Agent(name="Concierge"), question
        )
    now, counted = (memory_lines(call) for call in model.calls)
    assert now == ['- home_city: "Porto"']
    assert counted[0] == '- home_city: "Porto"'
    assert counted[1].startswith('- home_city: "Lyon" (earlier value, held from ')


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_the_history_tool_shows_every_value_with_when_it_held(backend_url):
    user = fresh_id("ming")
    memory = LongTermMemory(backend_url, user_id=user)
    memory.remember("home_city", "Lyon")
    memory.remember("home_city", "Porto")
    model = ScriptedChatModel([scripted_tool_call("history", {"key": "home_city"}), "ok"])
    response = Session(fresh_id("c"), url=backend_url, user_id=user, long_term=True).run(
        Swarm(chat_model=model), Agent(name="Concierge", memory_tools=True), "Where before?"
    )
    answer = next(m["content"] for m in response.messages if m["role"] == "tool")
    lyon, porto = answer.splitlines()
    assert lyon.startswith('- home_city: "Lyon" (earlier value, held from ')
    assert porto == '- home_city: "Porto" (current)'
