"""The long-term memory benchmark's data: seeded multi-session dialogues with planted facts.

:func:`generate` builds, from one seed, ``users`` users who each talk to the assistant over
``sessions`` conversations. Each user has ``facts_per_user`` facts (their dog's name, their
city, their employer, ...), told once (*planted*) in an early session, then:

* **updated**: some are said again with a new value in a later session; the old value is
  *superseded* ("I moved to Porto");
* **deleted**: some are withdrawn in a later session ("Please forget my phone number");
* **restated**: some are said again, same value, in other words (a paraphrase);
* **distractors**: near misses about *other people* ("My sister's dog is called Bruno"),
  and small talk that touches the same topics without stating a fact.

Users 0 and 1 are *twins*: both have a dog called Rex, with different vets, so a policy
that mixes users up shows the other user's vet (cross-user leakage), while "Rex" itself can
never count as a leak.

Every statement of a fact has a *phrasing* that decides which extractor can read it:

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

At the end each user is asked one question per fact (:class:`Question`), with the gold
answer, the status (``current``, ``updated``, ``deleted``), the values that would be stale,
the other users' values that would be a leak, and the distractor values.

Example:
    >>> data = generate(seed=7, users=3, sessions=4)
    >>> counts = data.counts()
    >>> counts["planted"], counts["updated"], counts["deleted"], counts["restated"]
    (18, 6, 3, 3)
    >>> q = data.questions[0]
    >>> q.qid, q.text, q.status in ("current", "updated", "deleted")
    ('u0:dog_name', 'What is my dog called?', True)
    >>> generate(seed=7, users=3, sessions=4) == data      # the seed decides everything
    True
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

Phrasing = Literal["canonical", "paraphrase", "casual"]
Kind = Literal["plant", "update", "delete", "restate", "distractor", "chatter"]
Status = Literal["current", "updated", "deleted"]
PHRASINGS: tuple[Phrasing, ...] = ("canonical", "paraphrase", "casual")
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
    distractors carry the other person's value and the slot it imitates.
    """

    text: str
    reply: str
    kind: Kind
    key: str | None = None
    value: str | None = None
    phrasing: Phrasing | None = None


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


@dataclass(frozen=True)
class Dataset:
    """Everything :func:`generate` makes, in order: conversations per user, oldest first."""

    seed: int
    users: tuple[str, ...]
    conversations: tuple[Conversation, ...]
    facts: tuple[GoldFact, ...]
    questions: tuple[Question, ...]
    config: tuple[tuple[str, float], ...] = field(default=())

    def conversations_of(self, user_id: str) -> list[Conversation]:
        return [c for c in self.conversations if c.user_id == user_id]

    def turns(self) -> list[tuple[Conversation, Turn]]:
        return [(c, t) for c in self.conversations for t in c.turns]

    def counts(self) -> dict[str, int]:
        """How many of each thing the data holds (the generator's tests check them).

        Example:
            >>> sorted(generate(seed=1, users=2, sessions=3).counts())[:4]
            ['canonical', 'casual', 'chatter', 'conversations']
        """
        turns = [t for _, t in self.turns()]
        counts = {kind: sum(t.kind == kind for t in turns) for kind in get_args(Kind)}
        out = {
            "users": len(self.users),
            "conversations": len(self.conversations),
            "turns": len(turns),
            "planted": counts["plant"],
            "updated": counts["update"],
            "deleted": counts["delete"],
            "restated": counts["restate"],
            "distractors": counts["distractor"],
            "chatter": counts["chatter"],
            "questions": len(self.questions),
        }
        for phrasing in PHRASINGS:  # statements of a value: plants, updates, restatements
            out[phrasing] = sum(
                t.phrasing == phrasing and t.kind in ("plant", "update", "restate") for t in turns
            )
        out["forget_paraphrase"] = sum(
            t.kind == "delete" and t.phrasing == "paraphrase" for t in turns
        )
        for status in ("current", "updated", "deleted"):
            out[f"questions_{status}"] = sum(q.status == status for q in self.questions)
        return out


def _shares(n: int, shares: Sequence[tuple[Phrasing, float]], rng: random.Random) -> list[Phrasing]:
    """``n`` phrasings in the given shares (rounded half up, the rest canonical), shuffled."""
    out: list[Phrasing] = []
    for phrasing, share in shares:
        out += [phrasing] * int(n * share + 0.5)
    out = out[:n] + ["canonical"] * max(n - len(out), 0)
    rng.shuffle(out)
    return out


def _say(template: str, value: str) -> str:
    return template.format(v=value, lv=value.lower())


def update_text(prefix: str, template: str, value: str) -> str:
    """An update: ``prefix`` + the statement, its first word in lower case unless it is
    the value or "I" ("Actually, my dog is...", "Actually, Rex is...", "Actually, I live...").

    Example:
        >>> update_text("Actually, ", "My car is a {v}.", "Saab")
        'Actually, my car is a Saab.'
        >>> update_text("So: ", "{v} hired me.", "Hooli")
        'So: Hooli hired me.'
    """
    said = _say(template, value)
    if template.startswith("{") or said.startswith(("I ", "I'")):
        return prefix + said
    return prefix + said[:1].lower() + said[1:]


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
    users: int = 6,
    sessions: int = 5,
    facts_per_user: int = 6,
    updates_per_user: int = 2,
    deletions_per_user: int = 1,
    restatements_per_user: int = 1,
    distractors_per_user: int = 2,
    chatter_per_session: int = 4,
    paraphrase_share: float = 0.3,
    casual_share: float = 0.15,
    forget_paraphrase_share: float = 0.5,
) -> Dataset:
    """A seeded dataset (see the module docstring). Same arguments, same dataset.

    Shares are of each user's value statements (plants and updates; restatements are
    always phrased differently from the statement they repeat); counts are per user.
    Raises ``ValueError`` when the numbers cannot fit (more facts than kinds of fact, more
    updates than updatable facts, too few sessions, pools too small for the users).
    """
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
    plans: dict[str, list[tuple[int, Turn]]] = {}
    for u, user in enumerate(user_ids):
        twin = twins and u < 2
        plan, gold = _plan_user(
            rng,
            pools,
            twin=twin,
            sessions=sessions,
            facts=facts_per_user,
            updates=updates_per_user,
            deletions=deletions_per_user,
            restatements=restatements_per_user,
            distractors=distractors_per_user,
            chatter=chatter_per_session,
            shares=(("paraphrase", paraphrase_share), ("casual", casual_share)),
            forget_share=forget_paraphrase_share,
        )
        plans[user] = plan
        facts += [GoldFact(user, key, tuple(values), status) for key, values, status in gold]
        for index in range(sessions):
            turns = tuple(turn for s, turn in plan if s == index)
            conversations.append(Conversation(user, index, f"{user}-s{index}", turns))
    questions = _questions(user_ids, facts, conversations)
    config = tuple(
        sorted(
            {
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
            }.items()
        )
    )
    return Dataset(seed, user_ids, tuple(conversations), tuple(facts), questions, config)


def _plan_user(
    rng: random.Random,
    pools: dict[str, list[str]],
    *,
    twin: bool,
    sessions: int,
    facts: int,
    updates: int,
    deletions: int,
    restatements: int,
    distractors: int,
    chatter: int,
    shares: Sequence[tuple[Phrasing, float]],
    forget_share: float,
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
    statements = len(chosen) + len(updated)
    phrasings = iter(_shares(statements, shares, rng))
    plan: list[tuple[int, float, Turn]] = []  # (session, order within session, turn)

    def add(session: int, turn: Turn) -> None:
        plan.append((session, rng.random(), turn))

    planted_in: dict[str, int] = {}
    planted_as: dict[str, Phrasing] = {}
    for k in chosen:
        slot = SLOT_BY_KEY[k]
        session = rng.randrange(0, sessions - 1)
        phrasing = next(phrasings)
        planted_in[k], planted_as[k] = session, phrasing
        text = _say(rng.choice(slot.templates(phrasing)), values[k][0])
        add(session, Turn(text, rng.choice(REPLIES), "plant", k, values[k][0], phrasing))
    for k in updated:
        slot = SLOT_BY_KEY[k]
        phrasing = next(phrasings)
        template = rng.choice(slot.templates(phrasing))
        text = update_text(rng.choice(UPDATE_PREFIXES), template, values[k][1])
        session = rng.randrange(planted_in[k] + 1, sessions)
        add(session, Turn(text, rng.choice(REPLIES), "update", k, values[k][1], phrasing))
    forget_phrasings = _shares(len(deleted), (("paraphrase", forget_share),), rng)
    for k, phrasing in zip(deleted, forget_phrasings, strict=True):
        slot = SLOT_BY_KEY[k]
        if phrasing == "canonical":
            text = FORGET_CANONICAL.format(topic=slot.topic)
        else:
            text = rng.choice(slot.forget_paraphrase)
        session = rng.randrange(planted_in[k] + 1, sessions)
        add(session, Turn(text, "Done, I have removed it.", "delete", k, values[k][0], phrasing))
    for k in restated:
        slot = SLOT_BY_KEY[k]
        # The same value in another phrasing than the plant's: "said differently".
        phrasing = "canonical" if planted_as[k] == "paraphrase" else "paraphrase"
        text = _say(rng.choice(slot.templates(phrasing)), values[k][0])
        session = rng.randrange(planted_in[k] + 1, sessions)
        add(session, Turn(text, rng.choice(REPLIES), "restate", k, values[k][0], phrasing))
    for _ in range(distractors):
        slot = rng.choice([s for s in SLOTS if s.key in chosen])
        other = rng.choice(slot.others)
        text = _say(rng.choice(slot.distractor), other)
        add(
            rng.randrange(0, sessions),
            Turn(text, rng.choice(REPLIES), "distractor", slot.key, other),
        )
    for session in range(sessions):
        for text in rng.sample(CHATTER, chatter):
            add(session, Turn(text, CHATTER_REPLY, "chatter"))
    plan.sort(key=lambda entry: (entry[0], entry[1]))
    status: dict[str, Status] = {k: "current" for k in chosen}
    status.update({k: "updated" for k in updated})
    status.update({k: "deleted" for k in deleted})
    gold = [(k, values[k], status[k]) for k in chosen]
    return [(session, turn) for session, _, turn in plan], gold


def _questions(
    user_ids: Sequence[str], facts: Sequence[GoldFact], conversations: Sequence[Conversation]
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
    questions = []
    for fact in facts:
        user = fact.user_id
        foreign = sorted(
            {
                v
                for other in user_ids
                if other != user
                for v in values_of[other]
                if v not in values_of[user] and not mentions(said[user], v)
            }
        )
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
                text=SLOT_BY_KEY[fact.key].question,
                status=fact.status,
                answer=fact.current,
                stale=tuple(stale),
                foreign=tuple(foreign),
                distractors=tuple(distractors),
            )
        )
    return tuple(questions)
