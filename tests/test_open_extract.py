"""Open extraction (``OpenFactExtractor``) in a Session with long-term memory, on memory://,
SQLite and Postgres: a kind of fact no schema names is stored and recalled; two wordings of
one kind land on one key and the later supersedes the earlier (history keeps it); the
user's keys are offered to the model; an unstorable fact is refused with a warning while
the message's other facts are stored and every later turn works.

The extraction model is a ScriptedChatModel whose structured reply depends on what it was
sent, so each test also sees the request the extractor made."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
from langchain_core.messages import BaseMessage
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import LongTermMemory, OpenFactExtractor
from swarmgraph.memory.errors import UnstorableFactWarning
from swarmgraph.memory.fact_extract import Forget, Remember
from swarmgraph.memory.open_extract import normalise_key

from benchmarks.longterm_data import SLOTS
from swarmgraph import Session

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
Facts = dict[str, list[dict]]


def extraction_model(replies: dict[str, list[dict]]) -> ScriptedChatModel:
    """A structured-output stand-in: for a message containing a word in ``replies``, the
    facts listed there; else none."""

    def respond(messages: list[BaseMessage]):
        said = str(messages[-1].content)
        facts = next((f for word, f in replies.items() if word in said), [])
        return scripted_tool_call("OpenFacts", {"facts": facts})

    return ScriptedChatModel(respond=respond)


def run_turns(url: str, extract: Callable, *said: str) -> tuple[str, ScriptedChatModel]:
    user = fresh_id("ming")
    session = Session(fresh_id("conv"), url=url, user_id=user, long_term=True, extract=extract)
    chat = ScriptedChatModel(["Noted."] * len(said))
    swarm, agent = Swarm(chat_model=chat), Agent(name="Helper")
    for text in said:
        assert session.run(swarm, agent, text).messages[-1]["content"] == "Noted."
    return user, chat


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_kind_of_fact_no_schema_names_is_stored_and_recalled(backend_url):
    assert "houseplant" not in {slot.key for slot in SLOTS}  # not among the generator's kinds
    model = extraction_model({"fern": [{"key": "Houseplants", "value": "a fern called Frond"}]})
    user, chat = run_turns(
        backend_url,
        OpenFactExtractor(model),
        "I keep a fern called Frond on my desk.",
        "Which houseplant do I have?",
    )
    memory = LongTermMemory(backend_url, user_id=user)
    assert [(f.key, f.value) for f in memory.facts()] == [("houseplant", "a fern called Frond")]
    # The second turn's prompt recalled it (the agent's system message carries the block).
    assert "a fern called Frond" in str(chat.calls[1][0].content)


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_two_wordings_of_one_kind_meet_and_the_later_supersedes(backend_url):
    model = extraction_model({
        "Lyon": [{"key": "city of residence", "value": "Lyon"}],
        "Porto": [{"key": "Home Cities", "value": "Porto"}],
    })  # fmt: skip
    user, _ = run_turns(
        backend_url, OpenFactExtractor(model), "I live in Lyon.", "I moved to Porto."
    )
    memory = LongTermMemory(backend_url, user_id=user)
    assert [(f.key, f.value) for f in memory.facts()] == [("home_city", "Porto")]
    assert [f.value for f in memory.history("home_city")] == ["Lyon", "Porto"]
    # The second request offered the key the first stored, for the model to reuse.
    first, second = (str(call[0].content) for call in model.calls)
    assert "home_city" not in first
    assert "Keys already in this user's memory" in second and "home_city" in second


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_model_key_meeting_a_stored_key_is_stored_under_the_stored_key(backend_url):
    user = fresh_id("ming")
    LongTermMemory(backend_url, user_id=user).remember("dogName", "Rex")
    model = extraction_model({"Bruno": [{"key": "name of dog", "value": "Bruno"}]})
    session = Session(
        fresh_id("conv"), url=backend_url, user_id=user, long_term=True,
        extract=OpenFactExtractor(model),
    )  # fmt: skip
    session.run(Swarm(chat_model=ScriptedChatModel(["Noted."])), Agent(name="H"), "Bruno now.")
    memory = LongTermMemory(backend_url, user_id=user)
    assert [(f.key, f.value) for f in memory.facts()] == [("dogName", "Bruno")]
    assert [f.value for f in memory.history("dogName")] == ["Rex", "Bruno"]


@pytest.mark.parametrize(
    "bad",
    [
        {"key": "note", "value": "a\x00b"},
        {"key": "note", "value": "a" * (70 * 1024)},
        {"key": "note", "value": ""},
        {"key": "dog\x00name", "value": "Bruno"},
        {"key": "k" * 300, "value": "v"},
        {"key": "?!", "value": "v"},
        {"key": "note", "value": "a\udc80b"},
    ],
    ids=["value-NUL", "value-70KiB", "value-empty", "key-NUL", "key-300-bytes", "key-no-word",
         "value-surrogate"],
)  # fmt: skip
@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_an_unstorable_open_fact_is_refused_and_the_others_are_stored(backend_url, bad):
    model = extraction_model({"Rex": [bad, {"key": "dog name", "value": "Rex"}]})
    with pytest.warns(UnstorableFactWarning) as caught:
        user, chat = run_turns(
            backend_url, OpenFactExtractor(model), "My dog is Rex.", "What is my dog called?",
            "Thanks!",
        )  # fmt: skip
    shown = repr(bad["key"])[:40]
    assert any(shown in str(w.message) for w in caught)  # the warning names it
    memory = LongTermMemory(backend_url, user_id=user)
    assert [(f.key, f.value) for f in memory.facts()] == [("dog_name", "Rex")]
    assert '- dog_name: "Rex"' in str(chat.calls[1][0].content)  # later turns work and recall


def test_forget_by_another_wording_forgets_the_stored_key():
    model = extraction_model({"forget": [{"key": "Home-City", "op": "forget"}]})
    changes = OpenFactExtractor(model)("Please forget where I live.", known_keys=["home_city"])
    assert changes == [Forget("home_city", "Please forget where I live.")]


def test_the_offered_keys_are_capped_at_max_known_keys():
    model = extraction_model({})
    extract = OpenFactExtractor(model, max_known_keys=2)
    extract("hello", known_keys=["first", "second", "first", "third"])
    system = str(model.calls[0][0].content)
    assert system.endswith(": first, second") and "third" not in system


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_user_with_more_keys_than_offered_gets_the_keys_nearest_the_message(backend_url):
    """Past ``max_known_keys`` stored facts the Session offers the keys of the facts recall
    finds for the message (not the first ones listed: those would be ``aa_0``...)."""
    user = fresh_id("ming")
    memory = LongTermMemory(backend_url, user_id=user)
    for n in range(8):
        memory.remember(f"aa_{n}", f"filler value {n}")
    memory.remember("zz_dog_name", "Rex")
    model = extraction_model({})
    session = Session(
        fresh_id("conv"), url=backend_url, user_id=user, long_term=True,
        extract=OpenFactExtractor(model, max_known_keys=3),
    )  # fmt: skip
    session.run(Swarm(chat_model=ScriptedChatModel(["Noted."])), Agent(name="H"), "Rex barks.")
    system = str(model.calls[0][0].content)
    assert "zz_dog_name" in system and "aa_0" not in system


def test_a_bad_max_known_keys_is_a_clear_error():
    with pytest.raises(ValueError, match="max_known_keys"):
        OpenFactExtractor(ScriptedChatModel([]), max_known_keys=-1)
    with pytest.raises(ValueError, match="chat model"):
        OpenFactExtractor(None)


def test_the_structured_call_is_made_once():
    model = extraction_model({"Rex": [{"key": "dog_name", "value": "Rex"}]})
    extract = OpenFactExtractor(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert extract("Rex") == extract("Rex") == [Remember("dog_name", "Rex", "Rex")]
    assert extract._asks is not None and extract._structured() is extract._asks


@pytest.mark.parametrize(
    ("wordings", "key"),
    [
        (["home city", "Home_City", "homeCity", "city of residence", "home cities"], "home_city"),
        (["dog's name", "Name of the dog", "dog names", "DOG-NAME"], "dog_name"),
        (["date of birth", "birth date", "Birthdate"], "birthday"),
        (["favorite colour", "Favourite colors"], "favourite_colour"),
    ],
)
def test_wordings_of_one_kind_normalise_to_one_key(wordings, key):
    assert {normalise_key(w) for w in wordings} == {key}
