"""A fact the long-term store cannot hold is refused at extraction (issue 39 item 3): a value
over 64 KiB, a NUL, a key over 256 bytes, an empty key, a lone surrogate. It is named in a
warning and never queued in the turn's outbox, the turn's other facts are stored, and the
next turns work, on memory://, SQLite and Postgres.
"""

from __future__ import annotations

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.errors import UnstorableFactWarning
from swarmgraph.memory.fact_extract import Remember

from swarmgraph import Session

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
SHAPES = {
    "value-70KiB": ("note", "a" * (70 * 1024)),
    "value-NUL": ("note", "a\x00b"),
    "key-300-bytes": ("k" * 300, "v"),
    "key-empty": ("", "v"),
    "value-lone-surrogate": ("note", "a\udc80b"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_an_unstorable_fact_is_refused_and_the_turn_and_the_next_three_work(backend_url, shape):
    key, value = SHAPES[shape]

    def extract(text: str) -> list[Remember]:
        if "Rex" not in text:
            return []
        return [Remember(key, value, text), Remember("dog_name", "Rex", text)]

    user = fresh_id("ming")
    model = ScriptedChatModel(["Noted."] * 4)
    swarm, agent = Swarm(chat_model=model), Agent(name="Vet")
    session = Session(
        fresh_id("conv"), url=backend_url, user_id=user, long_term=True, extract=extract
    )
    with pytest.warns(UnstorableFactWarning) as caught:
        first = session.run(swarm, agent, "My dog is Rex.")
    assert first.messages[-1]["content"] == "Noted."
    assert any(repr(key)[:40] in str(w.message) for w in caught)  # the warning names it

    memory = LongTermMemory(backend_url, user_id=user)
    assert [(f.key, f.value) for f in memory.facts()] == [("dog_name", "Rex")]
    for question in ("How is my dog?", "What is my dog called?", "Thanks!"):
        assert session.run(swarm, agent, question).messages[-1]["content"] == "Noted."
    assert '- dog_name: "Rex"' in str(model.calls[2][0].content)  # recalled into the prompt
    assert [(f.key, f.value) for f in memory.facts()] == [("dog_name", "Rex")]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_fact_stated_in_an_oversized_message_is_stored_with_its_text_cut(backend_url):
    # The fact is fine; the message it came from (its provenance) is over 64 KiB.
    said = "My dog is Rex. " + "x" * (70 * 1024)
    user = fresh_id("ming")
    session = Session(
        fresh_id("conv"),
        url=backend_url,
        user_id=user,
        long_term=True,
        extract=lambda text: [Remember("dog_name", "Rex", text)] if "Rex" in text else [],
    )
    swarm = Swarm(chat_model=ScriptedChatModel(["Noted."] * 2))
    session.run(swarm, Agent(name="Vet"), said)
    session.run(swarm, Agent(name="Vet"), "Hello again")
    (fact,) = LongTermMemory(backend_url, user_id=user).facts()
    assert (fact.key, fact.value) == ("dog_name", "Rex")
    assert fact.text is not None and said.startswith(fact.text) and len(fact.text) < len(said)
