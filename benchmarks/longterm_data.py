"""The long-term memory benchmark's data: seeded multi-session dialogues with planted facts.

:func:`generate` builds, from one seed, ``users`` users who each talk to the assistant over
``sessions`` conversations (default 6 users x 10 conversations). Each user has
``facts_per_user`` facts (default 20 of the 20 kinds in :data:`SLOTS`: their dog's name,
their city, their employer, their GP, ...), told once (*planted*) in an early session, then:

* **updated**: some are said again with a new value in a later session; the old value is
  *superseded* ("I moved to Porto");
* **deleted**: some are withdrawn in a later session ("Please forget my phone number");
* **restated**: some are said again, same value, in other words (a paraphrase);
* **distractors**: near misses about *other people* ("My sister's dog is called Bruno"),
  and small talk that touches the same topics without stating a fact.

Users 0 and 1 are *twins*: both have a dog called Rex, with different vets, so a policy
that mixes users up shows the other user's vet (cross-user leakage), while "Rex" itself can
never count as a leak.

**Two splits.** ``split="dev"`` words everything with this module's templates (the
:class:`Slot` fields); ``split="test"`` with :mod:`benchmarks.longterm_phrasing_test`, a
module written separately and first: other statement styles, facts without a cue word,
two facts in one message, corrections that name the old value, relative updates,
deletions by negation, distractors about other relations, reworded questions. The offline
stand-ins (extractors, answering stand-in) are written against ``dev`` only; the gap
between the splits measures how far they generalise.

In ``dev`` every statement of a fact has a *phrasing* that decides which extractor can
read it:

=============  =======================================  ========  ===============  =========
phrasing       example                                  rules     scripted model   raw text
=============  =======================================  ========  ===============  =========
canonical      "My dog is called Rex."                  yes       yes              yes
paraphrase     "We named our puppy Rex."                no        yes              yes
casual         "walked the dog. rex rolled in mud lol"  no        no               yes
=============  =======================================  ========  ===============  =========

(``benchmarks.longterm_extract`` holds both extractors; the table is its tests' contract.)
Casual phrasings are how people type: lower case, or the value in another sentence than
the word that names the fact, so only a policy that keeps or retrieves the raw text finds
them. Distractors are phrased so that the rules, which are naive, take them for the user's
own facts; the scripted model skips sentences about someone else.

Every turn carries its ground truth (:attr:`Turn.writes`): what a perfect extractor writes
for it, the benchmark's ``gold`` extractor (:meth:`Dataset.gold_writes`).

At the end each user is asked one question per fact (:class:`Question`), with the gold
answer, the status (``current``, ``updated``, ``deleted``), the values that would be stale,
the other users' values that would be a leak, and the distractor values.

Example:
    >>> data = generate(seed=7, users=3, sessions=4, facts_per_user=6, updates_per_user=2,
    ...                 deletions_per_user=1, restatements_per_user=1)
    >>> counts = data.counts()
    >>> counts["planted"], counts["updated"], counts["deleted"], counts["restated"]
    (18, 6, 3, 3)
    >>> q = data.questions[0]
    >>> q.qid, q.text, q.status in ("current", "updated", "deleted")
    ('u0:dog_name', 'What is my dog called?', True)
    >>> test = generate(seed=7, split="test", users=3, sessions=4)
    >>> test.questions[0].text in TEST_PHRASING["dog_name"].questions
    True
    >>> generate(seed=7, users=3, sessions=4) == generate(seed=7, users=3, sessions=4)
    True
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, cast, get_args

from benchmarks.longterm_phrasing_test import (
    JOINERS,
    RELATIONS,
    SMALL_TALK,
    TEST_PHRASING,
    say,
)

Split = Literal["dev", "test"]
Phrasing = Literal["canonical", "paraphrase", "casual"]
Kind = Literal["plant", "update", "delete", "restate", "distractor", "chatter"]
Status = Literal["current", "updated", "deleted"]
#: ``fact``: the value a fact has now (one per fact, both splits); the dev split adds
#: ``temporal`` ("Which city did I live in before Porto?"), ``aggregate`` ("How many cities
#: have I lived in?") and ``abstain`` (a fact the user never mentioned).
QuestionKind = Literal["fact", "temporal", "aggregate", "abstain"]
PHRASINGS: tuple[Phrasing, ...] = ("canonical", "paraphrase", "casual")
#: The test split's statement phrasings (:mod:`benchmarks.longterm_phrasing_test`).
TEST_STATEMENTS = ("state", "no_cue", "multi", "correct", "relative")
TWIN_DOG = "Rex"


@dataclass(frozen=True)
class Slot:
    """One kind of fact: its key, the question that asks for it, its values and phrasings.

    Templates take ``{v}`` (the value) or ``{lv}`` (the value in lower case, as typed in a
    hurry). ``others`` are values that belong to other people (distractors only).
    """

    key: str
    question: str
    values: tuple[str, ...]
    others: tuple[str, ...]
    canonical: tuple[str, ...]
    paraphrase: tuple[str, ...]
    casual: tuple[str, ...]
    distractor: tuple[str, ...]
    topic: str  # "Please forget my <topic>."
    forget_paraphrase: tuple[str, ...]
    updatable: bool = True
    deletable: bool = True

    def templates(self, phrasing: Phrasing) -> tuple[str, ...]:
        return {"canonical": self.canonical, "paraphrase": self.paraphrase, "casual": self.casual}[
            phrasing
        ]


def _phones(first: int, count: int) -> tuple[str, ...]:
    return tuple(f"555-{n:04d}" for n in range(first, first + count))


_MONTHS = ("January", "March", "April", "June", "August", "September", "October", "November")

SLOTS: tuple[Slot, ...] = (
    Slot(
        key="dog_name",
        question="What is my dog called?",
        values=(
            "Biscuit", "Pepper", "Mochi", "Juniper", "Ziggy", "Nala", "Otis", "Waffles",
            "Tango", "Basil", "Comet", "Pixel", "Marble", "Clover", "Fennel", "Noodle",
        ),
        others=("Bruno", "Luna", "Rocky", "Coco"),
        canonical=("My dog is called {v}.", "My dog's name is {v}."),
        paraphrase=("{v} is the name of my dog.", "We named our puppy {v}."),
        casual=("walked the dog at dawn. {lv} rolled in the mud again lol",),
        distractor=("My sister's dog is called {v}.", "Our neighbour's dog is called {v}."),
        topic="dog's name",
        forget_paraphrase=("Delete what you know about my dog's name, please.",),
        updatable=False,
        deletable=False,
    ),
    Slot(
        key="dog_vet",
        question="Who is my dog's vet?",
        values=(
            "Dr Moreau", "Dr Haddad", "Dr Okafor", "Dr Lindqvist", "Dr Varga", "Dr Petit",
            "Dr Nakamura", "Dr Serrano", "Dr Adeyemi", "Dr Kowalski", "Dr Brennan",
            "Dr Ferreira", "Dr Halvorsen", "Dr Castillo", "Dr Mbeki", "Dr Rossi",
        ),
        others=("Dr Weiss", "Dr Novak", "Dr Quinn"),
        canonical=("My dog's vet is {v}.", "Our vet is {v}."),
        paraphrase=(
            "We take the dog to {v} for check-ups.",
            "{v} has looked after the dog for years as our vet.",
        ),
        casual=("vet visit went fine today. {lv} was lovely with the dog",),
        distractor=("My friend's vet is {v}.",),
        topic="vet",
        forget_paraphrase=("Delete the vet details I gave you.",),
    ),
    Slot(
        key="home_city",
        question="Which city do I live in?",
        values=(
            "Lyon", "Porto", "Ghent", "Bergen", "Tartu", "Bologna", "Malmo", "Leeds", "Graz",
            "Utrecht", "Bilbao", "Lille", "Aarhus", "Brno", "Cork", "Turin", "Nantes", "Basel",
        ),
        others=("Dundee", "Oulu", "Split"),
        canonical=("I live in {v}.", "I moved to {v}."),
        paraphrase=("Home is {v} these days.", "These days I'm based in {v}."),
        casual=("new flat in {lv}, still unpacking boxes. the city is lovely",),
        distractor=("My cousin wants to live in {v}.",),
        topic="city",
        forget_paraphrase=("Erase the city I live in from your notes.",),
    ),
    Slot(
        key="work_company",
        question="Which company do I work for?",
        values=(
            "Globex", "Initech", "Vandelay", "Hooli", "Wonka", "Cyberdyne", "Tyrell", "Nakatomi",
            "Aperture", "Oscorp", "Soylent", "Zorin", "Gekko", "Dharma", "Prestige", "Sirius",
        ),
        others=("Virtucon", "Massive", "Gringotts"),
        canonical=("I work at {v}.", "I work at {v} now."),
        paraphrase=("My employer is {v}.", "{v} hired me as an analyst."),
        casual=("long week at work. {lv} keeps us busy",),
        distractor=("My brother works at {v}.",),
        topic="employer",
        forget_paraphrase=("Remove my employer details from your notes.",),
    ),
    Slot(
        key="phone_number",
        question="What is my phone number?",
        values=_phones(142, 16),
        others=_phones(901, 4),
        canonical=("My phone number is {v}.",),
        paraphrase=("You can reach me on {v}.", "Text me at {v} if anything changes."),
        casual=("got a new phone. {v} from now on",),
        distractor=("My brother's phone number is {v}.",),
        topic="phone number",
        forget_paraphrase=("Delete the phone number I gave you.",),
    ),
    Slot(
        key="birthday",
        question="When is my birthday?",
        values=tuple(f"{day} {month}" for month in _MONTHS for day in (3, 17)),
        others=("9 May", "21 July", "30 December"),
        canonical=("My birthday is {v}.",),
        paraphrase=("I was born on {v}.", "Every {v} I turn a year older."),
        casual=("birthday soon! {v}, same as every year",),
        distractor=("My sister's birthday is {v}.",),
        topic="birthday",
        forget_paraphrase=("Delete my birthday from your notes.",),
        updatable=False,
    ),
    Slot(
        key="partner_name",
        question="What is my partner's name?",
        values=(
            "Amara", "Teodor", "Ingrid", "Rafael", "Soraya", "Mateo", "Elif", "Kenji", "Leila",
            "Tobias", "Yasmin", "Oskar", "Priya", "Dario", "Freya", "Hugo",
        ),
        others=("Nadia", "Felix", "Ines"),
        canonical=("My partner is called {v}.",),
        paraphrase=("I'm married to {v}.", "{v} and I have been together for ten years."),
        casual=("date night with {lv} tonight, my partner picked the place",),
        distractor=("My friend's partner is called {v}.",),
        topic="partner's name",
        forget_paraphrase=("Delete my partner's name from your notes.",),
    ),
    Slot(
        key="car_model",
        question="What car do I drive?",
        values=(
            "Volvo", "Skoda", "Fiat", "Subaru", "Mazda", "Saab", "Lancia", "Dacia", "Citroen",
            "Peugeot", "Opel", "Lada", "Tesla", "Renault", "Alfa", "Cupra",
        ),
        others=("Jaguar", "Rover", "Trabant"),
        canonical=("I drive a {v}.",),
        paraphrase=("My car is a {v}.", "I bought a {v} last year and it is my daily car."),
        casual=("the car is in the garage again. typical {lv}",),
        distractor=("My neighbour drives a {v}.",),
        topic="car",
        forget_paraphrase=("Remove my car details from your notes.",),
    ),
    Slot(
        key="cat_name",
        question="What is my cat called?",
        values=(
            "Miso", "Pumpkin", "Saffron", "Tofu", "Olive", "Pickles", "Velvet", "Cinder",
            "Poppy", "Truffle", "Maple", "Smudge", "Nimbus", "Zephyr", "Biscotti", "Quince",
        ),
        others=("Tiger", "Shadow", "Oreo"),
        canonical=("My cat is called {v}.", "My cat's name is {v}."),
        paraphrase=("We named our kitten {v}.", "{v} is the name of my cat."),
        casual=("fed the cat twice by mistake. {lv} is not complaining",),
        distractor=("My sister's cat is called {v}.",),
        topic="cat's name",
        forget_paraphrase=("Delete what you know about my cat, please.",),
        updatable=False,
    ),
    Slot(
        key="hometown",
        question="Where did I grow up?",
        values=(
            "Galway", "Krakow", "Tampere", "Coimbra", "Varna", "Ljubljana", "Kaunas", "Perugia",
            "Szeged", "Lucerne", "Odense", "Tromso", "Plovdiv", "Zadar", "Innsbruck", "Ostrava",
        ),
        others=("Riga", "Vigo", "Derry"),
        canonical=("I grew up in {v}.", "My hometown is {v}."),
        paraphrase=("I was raised in {v}.", "{v} is my hometown."),
        casual=("childhood memories today. {lv} in winter was the best",),
        distractor=("My friend grew up in {v}.",),
        topic="hometown",
        forget_paraphrase=("Erase my hometown from your notes.",),
        updatable=False,
    ),
    Slot(
        key="university",
        question="Which university did I go to?",
        values=(
            "Leiden", "Uppsala", "Heidelberg", "Bocconi", "Aalto", "Sorbonne", "Edinburgh",
            "Trinity", "Salamanca", "Padua", "Groningen", "Durham", "Lund", "Exeter", "Konstanz",
            "Maastricht",
        ),
        others=("Oxford", "Cambridge", "Yale"),
        canonical=("I went to university at {v}.", "My university was {v}."),
        paraphrase=("I graduated from {v}.", "{v} is where I did my degree at university."),
        casual=("found my old student card. {lv} days, wild times",),
        distractor=("My cousin went to university at {v}.",),
        topic="university",
        forget_paraphrase=("Remove my university from your notes.",),
        updatable=False,
    ),
    Slot(
        key="job_title",
        question="What is my job title?",
        values=(
            "Nurse", "Architect", "Pharmacist", "Surveyor", "Librarian", "Electrician",
            "Paramedic", "Translator", "Actuary", "Radiographer", "Carpenter", "Dietitian",
            "Geologist", "Locksmith", "Midwife", "Optician",
        ),
        others=("Plumber", "Pilot", "Dentist"),
        canonical=("My job title is {v}.",),
        paraphrase=("I am employed as a {v}.", "{v} is my job title these days."),
        casual=("another shift done. {lv} life is tiring",),
        distractor=("My brother's job title is {v}.",),
        topic="job title",
        forget_paraphrase=("Delete my job title from your notes.",),
    ),
    Slot(
        key="child_name",
        question="What is my daughter called?",
        values=(
            "Isla", "Maya", "Zoe", "Ava", "Nora", "Lila", "Ella", "Mila", "Ada", "Iris", "Ruby",
            "Alba", "Cleo", "Esme", "Ivy", "Thea",
        ),
        others=("Emma", "Sofia", "Chloe"),
        canonical=("My daughter is called {v}.", "My daughter's name is {v}."),
        paraphrase=("We named our daughter {v}.", "{v} is the name of my daughter."),
        casual=("school run done. {lv} forgot her lunch again",),
        distractor=("My neighbour's daughter is called {v}.",),
        topic="daughter's name",
        forget_paraphrase=("Delete my daughter's name from your notes.",),
        updatable=False,
    ),
    Slot(
        key="allergy",
        question="What am I allergic to?",
        values=(
            "Penicillin", "Peanuts", "Shellfish", "Latex", "Pollen", "Sesame", "Gluten",
            "Ibuprofen", "Aspirin", "Walnuts", "Kiwi", "Soy", "Mustard", "Celery", "Lupin",
            "Sulphites",
        ),
        others=("Dust", "Wasps", "Eggs"),
        canonical=("I am allergic to {v}.", "My allergy is {v}."),
        paraphrase=("{v} is my allergy, so keep it away from me.", "I cannot have {v}, allergic."),
        casual=("itchy all day. {lv} again probably",),
        distractor=("My friend is allergic to {v}.",),
        topic="allergy",
        forget_paraphrase=("Delete the allergy I mentioned.",),
        updatable=False,
    ),
    Slot(
        key="language",
        question="Which language am I learning?",
        values=(
            "Spanish", "Japanese", "Korean", "Swahili", "Portuguese", "Hungarian", "Finnish",
            "Greek", "Turkish", "Polish", "Icelandic", "Welsh", "Dutch", "Czech", "Hindi",
            "Arabic",
        ),
        others=("German", "Russian", "Latin"),
        canonical=("I am learning {v}.", "The language I am learning is {v}."),
        paraphrase=(
            "I study {v} every evening as my new language.",
            "{v} is the language I study.",
        ),
        casual=("duolingo streak day 40. {lv} verbs are hard",),
        distractor=("My sister is learning {v}.",),
        topic="language",
        forget_paraphrase=("Remove the language I am learning from your notes.",),
    ),
    Slot(
        key="doctor_name",
        question="Who is my doctor?",
        values=(
            "Dr Alvarez", "Dr Bianchi", "Dr Chen", "Dr Dubois", "Dr Eriksen", "Dr Fischer",
            "Dr Gallo", "Dr Horvat", "Dr Iqbal", "Dr Jansen", "Dr Keller", "Dr Laine",
            "Dr Marsh", "Dr Nilsen", "Dr Ortiz", "Dr Park",
        ),
        others=("Dr Young", "Dr Zimmer", "Dr Vogel"),
        canonical=("My doctor is {v}.",),
        paraphrase=("I see {v} as my doctor.", "{v} has been my family doctor for years."),
        casual=("checkup this morning. {lv} says all good",),
        distractor=("My brother's doctor is {v}.",),
        topic="doctor",
        forget_paraphrase=("Delete the doctor I told you about.",),
    ),
    Slot(
        key="sport",
        question="Which sport do I play?",
        values=(
            "Tennis", "Rugby", "Hockey", "Fencing", "Rowing", "Badminton", "Squash", "Handball",
            "Climbing", "Judo", "Cricket", "Netball", "Volleyball", "Lacrosse", "Curling",
            "Archery",
        ),
        others=("Golf", "Boxing", "Polo"),
        canonical=("The sport I play is {v}.", "My sport is {v}."),
        paraphrase=("I play {v} with a club as my sport.", "{v} is the sport I play."),
        casual=("training tonight, {lv} season starts soon",),
        distractor=("My cousin's sport is {v}.",),
        topic="sport",
        forget_paraphrase=("Remove my sport from your notes.",),
    ),
    Slot(
        key="instrument",
        question="Which instrument do I play?",
        values=(
            "Cello", "Violin", "Clarinet", "Trumpet", "Banjo", "Ukulele", "Oboe", "Harp",
            "Trombone", "Saxophone", "Mandolin", "Accordion", "Flute", "Bassoon", "Piano",
            "Marimba",
        ),
        others=("Drums", "Guitar", "Tuba"),
        canonical=("The instrument I play is the {v}.", "My instrument is the {v}."),
        paraphrase=("I practise the {v} every day as my instrument.", "{v} is my instrument."),
        casual=("band practice later. my {lv} needs new strings",),
        distractor=("My friend's instrument is the {v}.",),
        topic="instrument",
        forget_paraphrase=("Delete my instrument from your notes.",),
    ),
    Slot(
        key="favourite_food",
        question="What is my favourite food?",
        values=(
            "Lasagne", "Ramen", "Paella", "Risotto", "Dumplings", "Tacos", "Moussaka", "Goulash",
            "Falafel", "Pierogi", "Curry", "Gnocchi", "Pho", "Burritos", "Tagine", "Bibimbap",
        ),
        others=("Pizza", "Kebab", "Sushi"),
        canonical=("My favourite food is {v}.",),
        paraphrase=("{v} is my favourite food.", "I love {v} more than any other food."),
        casual=("dinner was {lv} again, no regrets",),
        distractor=("My sister's favourite food is {v}.",),
        topic="favourite food",
        forget_paraphrase=("Remove my favourite food from your notes.",),
    ),
    Slot(
        key="bank",
        question="Which bank am I with?",
        values=(
            "Monzo", "Barclays", "Santander", "Revolut", "Nordea", "Rabobank", "Triodos",
            "Nationwide", "Lloyds", "Starling", "Halifax", "Natwest", "Danske", "Handelsbanken",
            "Bunq", "Raiffeisen",
        ),
        others=("Chase", "Citibank", "Monese"),
        canonical=("My bank is {v}.", "My bank account is with {v}."),
        paraphrase=("My account is at {v}, my bank.", "{v} is the bank I use."),
        casual=("card declined at lunch. {lv} app was down again",),
        distractor=("My brother's bank is {v}.",),
        topic="bank",
        forget_paraphrase=("Delete my bank details from your notes.",),
    ),
)  # fmt: skip
SLOT_BY_KEY = {slot.key: slot for slot in SLOTS}
UPDATE_PREFIXES = ("Actually, ", "Quick update: ", "Small change: ")
FORGET_CANONICAL = "Please forget my {topic}."

#: Small talk: no fact, but the words of the topics (dogs, cities, work, phones...) so
#: retrieval over raw messages has something to confuse them with.
CHATTER = (
    "Can you recommend a good book about the history of maps?",
    "What is a quick vegetarian recipe for a weeknight dinner?",
    "Dogs are such good company, are they not?",
    "Is it expensive to live in a big city these days?",
    "How do I ask for a day off work without sounding lazy?",
    "My phone battery drains fast; any tips to make it last?",
    "What are some fun things to do on a rainy weekend?",
    "How long should I boil an egg for a soft yolk?",
    "Which is better for a beginner, running or cycling?",
    "Can you explain how compound interest works?",
    "What should I pack for a three-day hiking trip?",
    "How often should a car get its oil changed?",
    "Any ideas for a birthday present for a colleague?",
    "What is the difference between a latte and a flat white?",
    "How do I stop procrastinating on emails?",
    "Is it worth learning a second language as an adult?",
    "What is a good stretch routine after sitting all day?",
    "How do vets usually calm down a nervous dog?",
)
REPLIES = ("Thanks, noted.", "Got it.", "Understood, thank you.", "Okay, I will keep that in mind.")
CHATTER_REPLY = (
    "Here are a few ideas: start small, keep it regular, and adjust as you go. "
    "If you tell me more about what you need, I can suggest something more specific."
)


@dataclass(frozen=True)
class Turn:
    """One user message and the assistant's reply, with what the message carries.

    ``key``/``value``: the fact stated, updated or deleted (``None`` for chatter);
    distractors carry the other person's value and the slot it imitates. ``writes``: the
    generator's ground truth of what a perfect extractor writes for this message,
    ``(key, value)`` per fact, ``(key, None)`` for a withdrawal (several for a message that
    states several facts; none for chatter and distractors).
    """

    text: str
    reply: str
    kind: Kind
    key: str | None = None
    value: str | None = None
    phrasing: str | None = None
    writes: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class Conversation:
    """One session of one user: ``conversation_id`` is ``"<user>-s<index>"``."""

    user_id: str
    index: int
    conversation_id: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class GoldFact:
    """A user's fact over time: ``values`` oldest first; ``current`` is ``None`` once deleted."""

    user_id: str
    key: str
    values: tuple[str, ...]
    status: Status

    @property
    def current(self) -> str | None:
        return None if self.status == "deleted" else self.values[-1]


@dataclass(frozen=True)
class Question:
    """A question asked at the end, in a new conversation of ``user_id``.

    ``answer``: the current value (``None`` for a deleted fact: nothing should be shown).
    ``stale``: values that must not be shown as the answer (superseded, or deleted).
    ``foreign``: other users' values for any fact, minus anything this user ever said:
    showing one is cross-user leakage. ``distractors``: other people's values this user
    mentioned for the same kind of fact.
    """

    qid: str
    user_id: str
    key: str
    text: str
    status: Status
    answer: str | None
    stale: tuple[str, ...]
    foreign: tuple[str, ...]
    distractors: tuple[str, ...] = ()
    kind: QuestionKind = "fact"
    #: Values the prompt must hold for this question (``temporal``: the earlier value;
    #: ``aggregate``: every value the fact had); empty for the other kinds.
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """Everything :func:`generate` makes, in order: conversations per user, oldest first."""

    seed: int
    users: tuple[str, ...]
    conversations: tuple[Conversation, ...]
    facts: tuple[GoldFact, ...]
    questions: tuple[Question, ...]
    config: tuple[tuple[str, float | str], ...] = field(default=())
    split: Split = "dev"
    #: The dev split's other question kinds (:data:`QuestionKind`; none on test): asked
    #: like :attr:`questions`, scored apart (:func:`benchmarks.longterm_score.score_kinds`).
    extra_questions: tuple[Question, ...] = ()

    def all_questions(self) -> tuple[Question, ...]:
        """Every question asked at the end: one per fact, then the other kinds."""
        return self.questions + self.extra_questions

    def conversations_of(self, user_id: str) -> list[Conversation]:
        return [c for c in self.conversations if c.user_id == user_id]

    def turns(self) -> list[tuple[Conversation, Turn]]:
        return [(c, t) for c in self.conversations for t in c.turns]

    def gold_writes(self) -> dict[str, tuple[tuple[str, str | None], ...]]:
        """Message text -> what a perfect extractor writes for it (the ``gold`` extractor).

        Raises ``ValueError`` if one text would need two different writes (it never does:
        every statement carries its value, every withdrawal its kind of fact).

        Example:
            >>> data = generate(seed=1, split="test", users=2, sessions=3)
            >>> gold = data.gold_writes()
            >>> plant = next(t for _, t in data.turns() if t.kind == "plant")
            >>> gold[plant.text] == plant.writes
            True
        """
        out: dict[str, tuple[tuple[str, str | None], ...]] = {}
        for _, turn in self.turns():
            if out.setdefault(turn.text, turn.writes) != turn.writes:
                raise ValueError(f"two different gold writes for {turn.text!r}")
        return out

    def counts(self) -> dict[str, int]:
        """How many of each thing the data holds (the generator's tests check them).

        ``planted``/``updated``/``deleted``/``restated`` count facts (a message may state
        several); ``multi_fact`` counts messages that state more than one.

        Example:
            >>> sorted(generate(seed=1, users=2, sessions=3).counts())[:4]
            ['canonical', 'casual', 'chatter', 'conversations']
        """
        turns = [t for _, t in self.turns()]
        facts = {
            kind: sum(len(t.writes) for t in turns if t.kind == kind) for kind in get_args(Kind)
        }
        out = {
            "users": len(self.users),
            "conversations": len(self.conversations),
            "turns": len(turns),
            "planted": facts["plant"],
            "updated": facts["update"],
            "deleted": facts["delete"],
            "restated": facts["restate"],
            "distractors": sum(t.kind == "distractor" for t in turns),
            "chatter": sum(t.kind == "chatter" for t in turns),
            "multi_fact": sum(len(t.writes) > 1 for t in turns),
            "questions": len(self.questions),
        }
        for phrasing in PHRASINGS if self.split == "dev" else TEST_STATEMENTS:
            out[phrasing] = sum(
                t.phrasing == phrasing and t.kind in ("plant", "update", "restate") for t in turns
            )
        out["forget_paraphrase"] = sum(
            t.kind == "delete" and t.phrasing == "paraphrase" for t in turns
        )
        for status in ("current", "updated", "deleted"):
            out[f"questions_{status}"] = sum(q.status == status for q in self.questions)
        for kind in ("temporal", "aggregate", "abstain"):
            out[f"questions_{kind}"] = sum(q.kind == kind for q in self.extra_questions)
        return out


def _shares(
    n: int, shares: Sequence[tuple[str, float]], rng: random.Random, rest: str = "canonical"
) -> list[str]:
    """``n`` phrasings in the given shares (rounded half up, the rest ``rest``), shuffled."""
    out: list[str] = []
    for phrasing, share in shares:
        out += [phrasing] * int(n * share + 0.5)
    out = out[:n] + [rest] * max(n - len(out), 0)
    rng.shuffle(out)
    return out


def _say(template: str, value: str) -> str:
    return template.format(v=value, lv=value.lower())


def _lower_start(said: str, template: str) -> str:
    if template.startswith("{") or said.startswith(("I ", "I'")):
        return said
    return said[:1].lower() + said[1:]


def update_text(prefix: str, template: str, value: str) -> str:
    """An update: ``prefix`` + the statement, its first word in lower case unless it is
    the value or "I" ("Actually, my dog is...", "Actually, Rex is...", "Actually, I live...").

    Example:
        >>> update_text("Actually, ", "My car is a {v}.", "Saab")
        'Actually, my car is a Saab.'
        >>> update_text("So: ", "{v} hired me.", "Hooli")
        'So: Hooli hired me.'
    """
    return prefix + _lower_start(_say(template, value), template)


def mentions(text: str, value: str) -> bool:
    """True when ``value`` appears in ``text`` as whole words, ignoring case and spacing.

    Example:
        >>> mentions("my dog REX is muddy", "Rex"), mentions("Rexford", "Rex")
        (True, False)
    """
    norm = " ".join(text.casefold().split())
    return (
        re.search(r"(?<!\w)" + re.escape(" ".join(value.casefold().split())) + r"(?!\w)", norm)
        is not None
    )


def generate(
    seed: int = 0,
    *,
    split: Split = "dev",
    users: int = 6,
    sessions: int = 10,
    facts_per_user: int = 20,
    updates_per_user: int = 4,
    deletions_per_user: int = 2,
    restatements_per_user: int = 2,
    distractors_per_user: int = 4,
    chatter_per_session: int = 2,
    paraphrase_share: float = 0.3,
    casual_share: float = 0.15,
    forget_paraphrase_share: float = 0.5,
    no_cue_share: float = 0.25,
    multi_fact_share: float = 0.3,
) -> Dataset:
    """A seeded dataset (see the module docstring). Same arguments, same dataset.

    ``split="dev"`` phrases facts with this module's templates (shares: ``paraphrase_share``,
    ``casual_share``, ``forget_paraphrase_share``); ``split="test"`` with
    :mod:`benchmarks.longterm_phrasing_test`'s (``no_cue_share`` of statements without a
    cue word, updates as corrections naming the old value or relative updates, deletions
    by negation, ``multi_fact_share`` of plants merged two to a message, reworded
    questions). Shares are of each user's value statements; counts are per user.
    Raises ``ValueError`` when the numbers cannot fit (more facts than kinds of fact, more
    updates than updatable facts, too few sessions, pools too small for the users).
    """
    if split not in get_args(Split):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    if users < 1 or sessions < 2:
        raise ValueError("need at least 1 user and 2 sessions (changes come after plants)")
    if not 1 <= facts_per_user <= len(SLOTS):
        raise ValueError(f"facts_per_user must be 1..{len(SLOTS)}, got {facts_per_user}")
    if updates_per_user + deletions_per_user + restatements_per_user > facts_per_user - 1:
        raise ValueError("updates + deletions + restatements must leave one fact untouched")
    twins = users >= 2
    if twins and facts_per_user < 2:
        raise ValueError("the twin users need at least 2 facts each (dog name and vet)")
    for slot in SLOTS:
        if len(slot.values) < users * (2 if slot.updatable and updates_per_user else 1):
            raise ValueError(f"{users} users need more {slot.key} values than the pool holds")
    rng = random.Random(seed)
    pools = {slot.key: list(slot.values) for slot in SLOTS}
    for pool in pools.values():
        rng.shuffle(pool)
    user_ids = tuple(f"u{i}" for i in range(users))
    conversations: list[Conversation] = []
    facts: list[GoldFact] = []
    phraser = _DevPhraser(paraphrase_share, casual_share, forget_paraphrase_share)
    if split == "test":
        phraser = _TestPhraser(no_cue_share, multi_fact_share)
    for u, user in enumerate(user_ids):
        twin = twins and u < 2
        plan, gold = _plan_user(
            rng,
            pools,
            phraser,
            twin=twin,
            sessions=sessions,
            facts=facts_per_user,
            updates=updates_per_user,
            deletions=deletions_per_user,
            restatements=restatements_per_user,
            distractors=distractors_per_user,
            chatter=chatter_per_session,
        )
        facts += [GoldFact(user, key, tuple(values), status) for key, values, status in gold]
        for index in range(sessions):
            turns = tuple(turn for s, turn in plan if s == index)
            conversations.append(Conversation(user, index, f"{user}-s{index}", turns))
    questions = _questions(user_ids, facts, conversations, phraser, rng)
    # Drawn last, so the rest of the dataset is the same as before these kinds existed.
    extra = _extra_questions(questions, facts, rng) if split == "dev" else ()
    config = tuple(
        sorted(
            {
                "split": split,
                "users": users,
                "sessions": sessions,
                "facts_per_user": facts_per_user,
                "updates_per_user": updates_per_user,
                "deletions_per_user": deletions_per_user,
                "restatements_per_user": restatements_per_user,
                "distractors_per_user": distractors_per_user,
                "chatter_per_session": chatter_per_session,
                "paraphrase_share": paraphrase_share,
                "casual_share": casual_share,
                "forget_paraphrase_share": forget_paraphrase_share,
                "no_cue_share": no_cue_share,
                "multi_fact_share": multi_fact_share,
            }.items()
        )
    )
    return Dataset(
        seed, user_ids, tuple(conversations), tuple(facts), questions, config, split, extra
    )


class _DevPhraser:
    """The dev split's wording: this module's templates (see the module docstring)."""

    def __init__(self, paraphrase: float, casual: float, forget_paraphrase: float) -> None:
        self.statement_shares = (("paraphrase", paraphrase), ("casual", casual))
        self.forget_share = forget_paraphrase
        self.chatter = CHATTER
        self.multi_fact_share = 0.0

    def statements(self, n: int, rng: random.Random) -> list[str]:
        return _shares(n, self.statement_shares, rng)

    def state(self, key: str, phrasing: str, value: str, rng: random.Random) -> str:
        return _say(rng.choice(SLOT_BY_KEY[key].templates(cast(Phrasing, phrasing))), value)

    def restate_phrasing(self, planted_as: str) -> str:
        return "canonical" if planted_as == "paraphrase" else "paraphrase"

    def updates(self, n: int, rng: random.Random) -> list[str]:
        return self.statements(n, rng)

    def update(self, key: str, phrasing: str, old: str, new: str, rng: random.Random) -> str:
        template = rng.choice(SLOT_BY_KEY[key].templates(cast(Phrasing, phrasing)))
        return update_text(rng.choice(UPDATE_PREFIXES), template, new)

    def deletes(self, n: int, rng: random.Random) -> list[str]:
        return _shares(n, (("paraphrase", self.forget_share),), rng)

    def delete(self, key: str, phrasing: str, rng: random.Random) -> str:
        slot = SLOT_BY_KEY[key]
        if phrasing == "canonical":
            return FORGET_CANONICAL.format(topic=slot.topic)
        return rng.choice(slot.forget_paraphrase)

    def distractor(self, key: str, other: str, rng: random.Random) -> str:
        return _say(rng.choice(SLOT_BY_KEY[key].distractor), other)

    def question(self, key: str, rng: random.Random) -> str:
        return SLOT_BY_KEY[key].question


class _TestPhraser:
    """The test split's wording: :mod:`benchmarks.longterm_phrasing_test` only."""

    def __init__(self, no_cue: float, multi_fact: float) -> None:
        self.no_cue = no_cue
        self.multi_fact_share = multi_fact
        self.chatter = SMALL_TALK

    def statements(self, n: int, rng: random.Random) -> list[str]:
        return _shares(n, (("no_cue", self.no_cue),), rng, rest="state")

    def state(self, key: str, phrasing: str, value: str, rng: random.Random) -> str:
        family = TEST_PHRASING[key].no_cue if phrasing == "no_cue" else TEST_PHRASING[key].state
        return say(rng.choice(family), value)

    def restate_phrasing(self, planted_as: str) -> str:
        return "state" if planted_as == "no_cue" else "no_cue"

    def updates(self, n: int, rng: random.Random) -> list[str]:
        return _shares(n, (("correct", 0.5), ("relative", 0.25)), rng, rest="state")

    def update(self, key: str, phrasing: str, old: str, new: str, rng: random.Random) -> str:
        p = TEST_PHRASING[key]
        family = {"correct": p.correct, "relative": p.relative}.get(phrasing, p.state)
        return say(rng.choice(family), new, old=old)

    def deletes(self, n: int, rng: random.Random) -> list[str]:
        return ["negate"] * n

    def delete(self, key: str, phrasing: str, rng: random.Random) -> str:
        return rng.choice(TEST_PHRASING[key].negate)

    def distractor(self, key: str, other: str, rng: random.Random) -> str:
        said = say(rng.choice(TEST_PHRASING[key].other), other, who=rng.choice(RELATIONS))
        return said[:1].upper() + said[1:]

    def question(self, key: str, rng: random.Random) -> str:
        return rng.choice(TEST_PHRASING[key].questions)


_Phraser = _DevPhraser | _TestPhraser


def _plan_user(
    rng: random.Random,
    pools: dict[str, list[str]],
    phraser: _Phraser,
    *,
    twin: bool,
    sessions: int,
    facts: int,
    updates: int,
    deletions: int,
    restatements: int,
    distractors: int,
    chatter: int,
) -> tuple[list[tuple[int, Turn]], list[tuple[str, list[str], Status]]]:
    """One user's turns as ``(session, turn)`` in order, and their gold facts."""
    keys = [s.key for s in SLOTS]
    required = ["dog_name", "dog_vet"] if twin else []
    chosen = required + rng.sample([k for k in keys if k not in required], facts - len(required))
    chosen.sort(key=keys.index)
    # Roles: the twins' dog name and vet stay (so a leak of the other twin's vet shows).
    free = [k for k in chosen if k not in required]
    updatable = [k for k in chosen if SLOT_BY_KEY[k].updatable and (k != "dog_vet" or not twin)]
    if len(updatable) < updates:
        raise ValueError(f"not enough updatable facts among {chosen} for {updates} updates")
    updated = rng.sample(updatable, updates)
    deletable = [k for k in free if k not in updated and SLOT_BY_KEY[k].deletable]
    if len(deletable) < deletions:
        raise ValueError(f"not enough deletable facts among {chosen} for {deletions} deletions")
    deleted = rng.sample(deletable, deletions)
    untouched = [k for k in chosen if k not in updated and k not in deleted]
    restated = rng.sample(untouched, restatements)
    values = {k: [TWIN_DOG] if twin and k == "dog_name" else [pools[k].pop()] for k in chosen}
    for k in updated:
        values[k].append(pools[k].pop())
    plant_phrasings = iter(phraser.statements(len(chosen), rng))
    update_phrasings = iter(phraser.updates(len(updated), rng))
    plan: list[tuple[int, float, Turn]] = []  # (session, order within session, turn)

    def add(session: int, turn: Turn) -> None:
        plan.append((session, rng.random(), turn))

    planted_in: dict[str, int] = {}
    planted_as: dict[str, str] = {}
    for k in chosen:
        session = rng.randrange(0, sessions - 1)
        phrasing = next(plant_phrasings)
        planted_in[k], planted_as[k] = session, phrasing
        text = phraser.state(k, phrasing, values[k][0], rng)
        v = values[k][0]
        add(session, Turn(text, rng.choice(REPLIES), "plant", k, v, phrasing, ((k, v),)))
    for k in updated:
        phrasing = next(update_phrasings)
        old, new = values[k]
        text = phraser.update(k, phrasing, old, new, rng)
        session = rng.randrange(planted_in[k] + 1, sessions)
        add(session, Turn(text, rng.choice(REPLIES), "update", k, new, phrasing, ((k, new),)))
    for k, phrasing in zip(deleted, phraser.deletes(len(deleted), rng), strict=True):
        text = phraser.delete(k, phrasing, rng)
        session = rng.randrange(planted_in[k] + 1, sessions)
        v = values[k][0]
        turn = Turn(text, "Done, I have removed it.", "delete", k, v, phrasing, ((k, None),))
        add(session, turn)
    for k in restated:
        # The same value in another phrasing than the plant's: "said differently".
        phrasing = phraser.restate_phrasing(planted_as[k])
        text = phraser.state(k, phrasing, values[k][0], rng)
        session = rng.randrange(planted_in[k] + 1, sessions)
        v = values[k][0]
        add(session, Turn(text, rng.choice(REPLIES), "restate", k, v, phrasing, ((k, v),)))
    for _ in range(distractors):
        slot = rng.choice([s for s in SLOTS if s.key in chosen])
        other = rng.choice(slot.others)
        text = phraser.distractor(slot.key, other, rng)
        add(
            rng.randrange(0, sessions),
            Turn(text, rng.choice(REPLIES), "distractor", slot.key, other),
        )
    for session in range(sessions):
        for text in rng.sample(phraser.chatter, chatter):
            add(session, Turn(text, CHATTER_REPLY, "chatter"))
    plan.sort(key=lambda entry: (entry[0], entry[1]))
    if phraser.multi_fact_share:
        plan = _merge_plants(plan, phraser.multi_fact_share, rng)
    status: dict[str, Status] = {k: "current" for k in chosen}
    status.update({k: "updated" for k in updated})
    status.update({k: "deleted" for k in deleted})
    gold = [(k, values[k], status[k]) for k in chosen]
    return [(session, turn) for session, _, turn in plan], gold


def _merge_plants(
    plan: list[tuple[int, float, Turn]], share: float, rng: random.Random
) -> list[tuple[int, float, Turn]]:
    """``share`` of the plants merged two to a message, with the next plant of the same
    session (the test split's "several facts in one message")."""
    out: list[tuple[int, float, Turn]] = []
    waiting: tuple[int, float, Turn] | None = None
    for entry in plan:
        session, _, turn = entry
        if turn.kind != "plant":
            out.append(entry)
            continue
        if waiting is not None and waiting[0] == session:
            first = waiting[2]
            second = _lower_start(turn.text, "{" if turn.text.startswith(turn.value or "") else "")
            text = rng.choice(JOINERS).format(a=first.text, b=second)
            merged = Turn(
                text, first.reply, "plant", first.key, first.value, "multi",
                first.writes + turn.writes,
            )  # fmt: skip
            out[out.index(waiting)] = (waiting[0], waiting[1], merged)
            waiting = None
            continue
        out.append(entry)
        waiting = entry if rng.random() < share else None
    return out


def _questions(
    user_ids: Sequence[str],
    facts: Sequence[GoldFact],
    conversations: Sequence[Conversation],
    phraser: _Phraser,
    rng: random.Random,
) -> tuple[Question, ...]:
    said = {
        user: " ".join(
            t.text + " " + t.reply for c in conversations if c.user_id == user for t in c.turns
        )
        for user in user_ids
    }
    values_of = {
        user: {v for f in facts if f.user_id == user for v in f.values} for user in user_ids
    }
    foreign_of = {  # another user's value this user never had nor said: showing it leaks
        user: sorted(
            {
                v
                for other in user_ids
                if other != user
                for v in values_of[other]
                if v not in values_of[user] and not mentions(said[user], v)
            }
        )
        for user in user_ids
    }
    questions = []
    for fact in facts:
        user = fact.user_id
        foreign = foreign_of[user]
        distractors = sorted(
            {
                t.value
                for c in conversations
                if c.user_id == user
                for t in c.turns
                if t.kind == "distractor" and t.key == fact.key and t.value
            }
        )
        stale = fact.values[:-1] if fact.status == "updated" else ()
        if fact.status == "deleted":
            stale = fact.values
        questions.append(
            Question(
                qid=f"{user}:{fact.key}",
                user_id=user,
                key=fact.key,
                text=phraser.question(fact.key, rng),
                status=fact.status,
                answer=fact.current,
                stale=tuple(stale),
                foreign=tuple(foreign),
                distractors=tuple(distractors),
            )
        )
    return tuple(questions)


#: Dev only: a past-value question per updatable kind of fact, ``{v}`` the current value.
BEFORE: dict[str, str] = {
    "dog_vet": "Who was my dog's vet before {v}?",
    "home_city": "Which city did I live in before {v}?",
    "work_company": "Which company did I work for before {v}?",
    "phone_number": "What was my phone number before {v}?",
    "partner_name": "What was my partner's name before {v}?",
    "car_model": "What car did I drive before the {v}?",
    "job_title": "What was my job title before {v}?",
    "language": "Which language was I learning before {v}?",
    "doctor_name": "Who was my doctor before {v}?",
    "sport": "Which sport did I play before {v}?",
    "instrument": "Which instrument did I play before the {v}?",
    "favourite_food": "What was my favourite food before {v}?",
    "bank": "Which bank was I with before {v}?",
}
#: Dev only: how many values a kind of fact has had, over every session.
HOW_MANY: dict[str, str] = {
    "home_city": "How many cities have I lived in?",
    "work_company": "How many companies have I worked for?",
    "car_model": "How many cars have I driven?",
    "job_title": "How many job titles have I had?",
    "bank": "How many banks have I been with?",
}
#: Dev only: facts no user ever mentions, some worded like a kind that is there (a city, a
#: car, a dog) but about someone the dialogue never names: the right answer is "I don't know".
NEVER_SAID: tuple[str, ...] = (
    "Which city does my grandmother live in?",
    "What car does my boss drive?",
    "What is my nephew's dog called?",
    "Which gym do I go to?",
    "What is my blood type?",
    "What is my horse called?",
)
ABSTAIN_PER_USER = 2


def _extra_questions(
    questions: Sequence[Question], facts: Sequence[GoldFact], rng: random.Random
) -> tuple[Question, ...]:
    """The dev split's other kinds of question, per user: one ``temporal`` per updated fact
    (the value before the current one), one ``aggregate`` per :data:`HOW_MANY` kind the user
    has (the count of distinct values it had), :data:`ABSTAIN_PER_USER` ``abstain``.

    Example:
        >>> data = generate(seed=3, users=2, sessions=3, facts_per_user=8, updates_per_user=2)
        >>> [q.kind for q in data.extra_questions if q.user_id == "u0"].count("temporal")
        2
        >>> t = next(q for q in data.extra_questions if q.kind == "temporal")
        >>> fact = next(f for f in data.facts if (f.user_id, f.key) == (t.user_id, t.key))
        >>> t.text == BEFORE[t.key].format(v=fact.values[-1]), t.answer == fact.values[-2]
        (True, True)
    """
    foreign = {q.user_id: q.foreign for q in questions}
    out: list[Question] = []
    for user in dict.fromkeys(q.user_id for q in questions):
        mine = [f for f in facts if f.user_id == user]
        for fact in mine:
            if fact.status == "updated" and fact.key in BEFORE:
                before = fact.values[-2]
                out.append(
                    Question(
                        qid=f"{user}:before:{fact.key}", user_id=user, key=fact.key,
                        text=BEFORE[fact.key].format(v=fact.values[-1]), status="updated",
                        answer=before, stale=(), foreign=foreign[user], kind="temporal",
                        needs=(before,),
                    )
                )  # fmt: skip
        for fact in mine:
            if fact.key in HOW_MANY and fact.status != "deleted":
                values = tuple(dict.fromkeys(fact.values))
                out.append(
                    Question(
                        qid=f"{user}:how_many:{fact.key}", user_id=user, key=fact.key,
                        text=HOW_MANY[fact.key], status=fact.status, answer=str(len(values)),
                        stale=(), foreign=foreign[user], kind="aggregate", needs=values,
                    )
                )  # fmt: skip
        for n, text in enumerate(rng.sample(NEVER_SAID, ABSTAIN_PER_USER)):
            out.append(
                Question(
                    qid=f"{user}:never:{n}", user_id=user, key="", text=text, status="deleted",
                    answer=None, stale=(), foreign=foreign[user], kind="abstain",
                )
            )  # fmt: skip
    return tuple(out)
