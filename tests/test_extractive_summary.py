"""The generic extractive summariser: it works on any text, keeps what is rare rather than
what looks like "my X is Y", respects its budget, and plugs into SummaryMemory."""

from __future__ import annotations

import asyncio
import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from swarmgraph.memory import SummaryMemory
from swarmgraph.memory.extractive_summary import ExtractiveSummaryModel, sentences, summarise

ASTRONOMY = (
    "The Moon orbits the Earth roughly every twenty-seven days. "
    "Its orbit is slightly elliptical, so its distance from the Earth varies. "
    "Tides on the Earth are raised mostly by the Moon. "
    "In 1969 Apollo 11 landed two astronauts in the Sea of Tranquility. "
    "The Moon orbits the Earth and the Earth orbits the Sun."
)


def words(text: str) -> int:
    return len(text.split())


def test_it_summarises_arbitrary_prose_with_sentences_copied_verbatim():
    summary = summarise(ASTRONOMY, max_words=25)
    assert summary and words(summary) <= 25
    kept = sentences(summary)
    assert kept and all(s in ASTRONOMY for s in kept)  # extractive: nothing invented
    # The sentence of rare words (a year, a name, a place) beats the ones that repeat
    # "Moon", "orbits", "Earth".
    assert "Apollo 11 landed two astronauts" in summary
    assert "The Moon orbits the Earth and the Earth orbits the Sun." not in summary


def test_it_does_not_favour_my_x_is_y_sentences():
    boilerplate = " ".join(f"My order {i} is fine and my order is on time." for i in range(8))
    text = boilerplate + " A hailstorm flattened the greenhouse in Tromsø yesterday."
    summary = summarise(text, max_words=12)
    assert summary == "A hailstorm flattened the greenhouse in Tromsø yesterday."
    # And a "my X is Y" fact said in common words loses to rarer small talk when the budget
    # is tight: the summariser has no idea which sentence a test will ask about.
    text = (
        "My name is Ann. Ann said the name of the name list is the name. "
        "Quokkas photobomb tourists on Rottnest island."
    )
    assert summarise(text, max_words=7) == "Quokkas photobomb tourists on Rottnest island."


def test_the_budget_the_order_and_duplicates():
    text = "Alpha beta gamma one. Delta epsilon zeta two. Alpha beta gamma one. Eta theta iota."
    summary = summarise(text, max_words=100)
    assert summary == "Alpha beta gamma one. Delta epsilon zeta two. Eta theta iota."
    for budget in range(1, 15):
        assert words(summarise(text, max_words=budget)) <= budget
    # Nothing fits: the best sentence, cut to the budget, never an empty summary.
    assert summarise("Supercalifragilistic words everywhere today", max_words=2) == (
        "Supercalifragilistic words"
    )
    assert summarise("ok. hi.", max_words=10) == ""  # no sentence of three words
    with pytest.raises(ValueError):
        summarise(text, max_words=0)


def test_it_is_deterministic_and_reads_only_the_last_human_message():
    model = ExtractiveSummaryModel(max_words=20)
    request = [
        SystemMessage("Keep names, ids and numbers. Answer with the summary only."),
        HumanMessage("An older request that must be ignored entirely here."),
        HumanMessage(ASTRONOMY),
    ]
    first = model.invoke(request).content
    assert first == model.invoke(request).content
    assert "ignored" not in first and "Keep names" not in first
    assert asyncio.run(model.ainvoke(request)).content == first


def test_summary_memory_runs_on_it_and_keeps_a_rare_fact_out_of_many_turns():
    chat = []
    for i in range(30):
        chat += [
            HumanMessage(f"Is the parcel for order {i} still pending? It says pending again."),
            AIMessage("It is on its way and should arrive within two days."),
        ]
    chat[10] = HumanMessage("My grandmother Odile breeds Shetland ponies in Normandy.")
    policy = SummaryMemory(ExtractiveSummaryModel(max_words=40), keep_last=4)
    shown = policy.select(chat)
    assert isinstance(shown[0], SystemMessage)
    summary = str(shown[0].content)
    assert summary.startswith("Summary of the earlier conversation: ")
    assert "Odile breeds Shetland ponies" in summary
    assert [m.content for m in shown[1:]] == [m.content for m in chat[-4:]]
    # What was sent to it was SummaryMemory's usual request: the model is the only change.
    assert policy.state.summarized == len(chat) - 4
    assert words(re.sub("^Summary of the earlier conversation: ", "", summary)) <= 40
