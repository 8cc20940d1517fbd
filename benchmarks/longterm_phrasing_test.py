"""The long-term benchmark's **test** split: phrasing families written apart from ``dev``'s.

This module is the held-out half of :mod:`benchmarks.longterm_data`. It was written before
any offline stand-in (rule extractor, scripted model extractor, answering stand-in) was
touched for the larger data, and those stand-ins may be tuned against the ``dev`` split
only: never against this module's text or the test split's results. The gap between the
two splits is the measure of how far an offline stand-in generalises. It imports nothing
from the dev phrasing (the kinds of fact are named by key; their values are shared).

Per kind of fact (:class:`HeldOutPhrasing`), with ``{v}`` the value, ``{lv}`` the value in
lower case, ``{old}`` the value it replaces and ``{who}`` another person ("my mum"):

============  ============================================================================
``state``     statements in several styles (plain, chatty, inverted, a clause in passing)
``no_cue``    the fact without the word that names it ("Rain again in Lyon, as every day
              since I got here") -- a reader must infer the kind of fact
``correct``   a correction that names the old value ("my vet isn't Dr A, it's Dr B")
``relative``  an update said relative to the last one ("moved again -- Porto now")
``negate``    a deletion said as a negation ("no car for me anymore")
``other``     a fact of another person, by a relation dev's distractors never use
``questions`` at least two wordings of the question, none of them dev's
============  ============================================================================

:data:`JOINERS` put several facts in one message; :data:`RELATIONS` are the other people;
:data:`SMALL_TALK` is the test split's own chatter.

Example:
    >>> TEST_PHRASING["home_city"].correct[0].format(v="Porto", old="Lyon")
    "Not Lyon anymore, I'm in Porto now."
    >>> all(len(p.questions) >= 2 for p in TEST_PHRASING.values())
    True
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeldOutPhrasing:
    """How the test split says, corrects, withdraws and asks for one kind of fact."""

    state: tuple[str, ...]
    no_cue: tuple[str, ...]
    correct: tuple[str, ...]
    relative: tuple[str, ...]
    negate: tuple[str, ...]
    other: tuple[str, ...]
    questions: tuple[str, ...]


#: Other people the test split's distractors talk about (dev uses sister, brother, friend,
#: cousin, neighbour; none of those appear here).
RELATIONS = (
    "my mum", "my dad", "my roommate", "my flatmate", "my grandad", "my uncle", "my aunt",
    "my niece", "my ex", "my manager", "my old teammate", "my landlord",
)  # fmt: skip

#: Ways to put two statements in one message ({a}, {b}: two statements, the second in lower
#: case at its start unless it starts with a name or "I").
JOINERS = ("{a} Oh and {b}", "{a} Also {b}", "Two things. {a} And {b}", "{a} Plus {b}")

#: The test split's small talk (no fact, but the topics' words).
SMALL_TALK = (
    "Honestly the weather has been grim all week, any cheerful film to recommend?",
    "What's a decent way to keep houseplants alive while travelling?",
    "Can you explain the offside rule in simple words?",
    "I keep forgetting to drink water at my desk, tips?",
    "How do people even choose a paint colour for a hallway?",
    "What's the trick to a crispy roast potato?",
    "Is it weird to take a nap at lunch?",
    "Give me a fun fact about octopuses.",
    "How do I politely leave a group chat?",
    "What should I read on a long train ride?",
    "Why do pets sleep so much?",
    "Is learning to code at forty realistic?",
)

TEST_PHRASING: dict[str, HeldOutPhrasing] = {
    "dog_name": HeldOutPhrasing(
        state=("Our pooch answers to {v}.", "{v}, my little terrier, chewed a shoe today.",
               "the dog? {lv}. best boy"),
        no_cue=("Took {v} for a long walk, he would not stop chasing squirrels.",),
        correct=("His name isn't {old}, it's {v}.",),
        relative=("We renamed him again, he's {v} now.",),
        negate=("The dog's gone to live with family, no dog for me anymore.",),
        other=("Funny, {who} named their dog {v}.",),
        questions=("Remind me, what's the name of my dog?", "What do we call our pooch?"),
    ),
    "dog_vet": HeldOutPhrasing(
        state=("The clinic we use for the dog is run by {v}.", "{v} treats our dog."),
        no_cue=("{v} gave the pooch his jabs yesterday and said he's in great shape.",),
        correct=("My vet isn't {old}, it's {v}.", "Correction: {v}, not {old}, sees our dog."),
        relative=("Switched vets again, {v} this time.",),
        negate=("We don't have a vet at the moment, the old practice closed.",),
        other=("{who} swears by a vet called {v}.",),
        questions=("Which vet looks after my dog?", "Who do I take the dog to when he's ill?"),
    ),
    "home_city": HeldOutPhrasing(
        state=("I'm living in {v} at the moment.", "{v} is where I rent my flat.",
               "been in {lv} for a while now"),
        no_cue=("Rain again in {v}, as every day since I got here.",),
        correct=("Not {old} anymore, I'm in {v} now.", "I don't live in {old}, I live in {v}."),
        relative=("Moved again, {v} this time.", "Packed up once more, now it's {v}."),
        negate=("I gave up my flat, no fixed address for now.",),
        other=("{who} is thinking of moving to {v}.",),
        questions=("Where am I living these days?", "What city is home for me?"),
    ),
    "work_company": HeldOutPhrasing(
        state=("I'm on the payroll at {v}.", "{v} pays my salary.", "office life at {lv}, yay"),
        no_cue=("Big all-hands at {v} today, free pizza for everyone.",),
        correct=("I'm not at {old}, I'm at {v}.",),
        relative=("Changed jobs again, {v} now.",),
        negate=("I quit, so no employer for me right now.",),
        other=("{who} just got an offer from {v}.",),
        questions=("Who's my employer?", "Which firm am I with at the moment?"),
    ),
    "phone_number": HeldOutPhrasing(
        state=("Best number for me: {v}.", "Ring {v} if you need me."),
        no_cue=("{v} is the one that works, the other is dead.",),
        correct=("My number isn't {old}, it's {v}.",),
        relative=("New SIM again, {v} now.",),
        negate=("I've cancelled my phone contract, no number for now.",),
        other=("{who} can be reached on {v}.",),
        questions=("What number should you call me on?", "Which number is mine?"),
    ),
    "birthday": HeldOutPhrasing(
        state=("I celebrate on {v} each year.", "{v} is my big day."),
        no_cue=("Cake on {v} every year, that's the day I arrived.",),
        correct=("My birthday isn't {old}, it's {v}.",),
        relative=("Turns out my papers were wrong, I was actually born on {v}.",),
        negate=("I don't celebrate a birthday, drop the date.",),
        other=("{who} has a birthday on {v}.",),
        questions=("What's the date of my birthday?", "On what day do I turn a year older?"),
    ),
    "partner_name": HeldOutPhrasing(
        state=("My other half is {v}.", "{v} is my wife.", "me and {lv} are going strong"),
        no_cue=("{v} made dinner for the two of us, we've shared a home for years.",),
        correct=("My partner isn't {old}, it's {v}.",),
        relative=("New relationship: I'm with {v} now.",),
        negate=("We broke up, I'm single now.",),
        other=("{who} is dating someone called {v}.",),
        questions=("Who is my other half?", "What's my partner called?"),
    ),
    "car_model": HeldOutPhrasing(
        state=("I get around in a {v}.", "My wheels are a {v}.", "the old {lv} still runs"),
        no_cue=("Filled up the {v} this morning, it eats petrol.",),
        correct=("It's not a {old}, I have a {v}.",),
        relative=("Traded it in again, a {v} now.",),
        negate=("Sold my car, no car for me anymore.",),
        other=("{who} drives a {v}.",),
        questions=("What do I drive?", "Which make is my car?"),
    ),
    "cat_name": HeldOutPhrasing(
        state=("Our kitty goes by {v}.", "{v}, my tabby, sleeps all day."),
        no_cue=("{v} knocked a glass off the table again and purred about it.",),
        correct=("The cat isn't {old}, she's {v}.",),
        relative=("We gave her a new name, {v}.",),
        negate=("The cat passed away, no cat now.",),
        other=("{who} has a cat called {v}.",),
        questions=("What's my cat's name?", "What do we call the kitty?"),
    ),
    "hometown": HeldOutPhrasing(
        state=("Grew up in {v}, went to school there.", "{v} is where I spent my childhood."),
        no_cue=("Whenever I visit {v} I still know every street from when I was small.",),
        correct=("I wasn't raised in {old}, it was {v}.",),
        relative=("Actually my earliest years were in {v}, not where I said.",),
        negate=("Forget where I grew up, I'd rather not say.",),
        other=("{who} grew up in {v}.",),
        questions=("Which town did I grow up in?", "Where was I raised?"),
    ),
    "university": HeldOutPhrasing(
        state=("I studied at {v}.", "{v} is where I got my degree."),
        no_cue=("My graduation gown from {v} is still in the wardrobe.",),
        correct=("I didn't study at {old}, it was {v}.",),
        relative=("I transferred, so my degree is from {v} in the end.",),
        negate=("I never finished uni, drop that.",),
        other=("{who} studied at {v}.",),
        questions=("Where did I study?", "Which uni did I graduate from?"),
    ),
    "job_title": HeldOutPhrasing(
        state=("I'm a {lv} by trade.", "These days I earn my living as a {lv}."),
        no_cue=("Long shift today, I'm a {lv} and it was a busy one.",),
        correct=("I'm not a {lv_old}, I'm a {lv}.",),
        relative=("Retrained again, now I'm a {lv}.",),
        negate=("I'm between jobs, no job title now.",),
        other=("{who} works as a {lv}.",),
        questions=("What do I do for a living?", "What's my profession?"),
    ),
    "child_name": HeldOutPhrasing(
        state=("My little girl is called {v}.", "{v}, my daughter, starts school soon."),
        no_cue=("Picked {v} up from nursery, she drew me a horse.",),
        correct=("My daughter isn't {old}, she's {v}.",),
        relative=("She insists on her middle name now, so call her {v}.",),
        negate=("Please don't keep anything about my daughter.",),
        other=("{who} has a daughter called {v}.",),
        questions=("What's my daughter called?", "What is my little girl's name?"),
    ),
    "allergy": HeldOutPhrasing(
        state=("I react badly to {lv}.", "{v} gives me hives."),
        no_cue=("Had to carry my epipen again because of {lv} at lunch.",),
        correct=("It isn't {lv_old} I'm allergic to, it's {lv}.",),
        relative=("New test results: it's {lv} that I react to now.",),
        negate=("I'm not allergic to anything after all.",),
        other=("{who} is allergic to {lv}.",),
        questions=("Which allergy do I have?", "What gives me an allergic reaction?"),
    ),
    "language": HeldOutPhrasing(
        state=("I'm taking {v} lessons.", "Practising my {v} every evening."),
        no_cue=("Did twenty minutes of {v} flashcards on the bus.",),
        correct=("I'm not studying {old}, it's {v}.",),
        relative=("Dropped the old course, {v} is my new language project.",),
        negate=("I've stopped learning languages.",),
        other=("{who} is learning {v}.",),
        questions=("Which language am I studying?", "What language do I practise?"),
    ),
    "doctor_name": HeldOutPhrasing(
        state=("My GP is {v}.", "I'm registered with {v} at the surgery."),
        no_cue=("Saw {v} about my knee, she booked a scan.",),
        correct=("My doctor isn't {old}, it's {v}.",),
        relative=("I changed surgeries again, {v} now.",),
        negate=("I'm not registered with any doctor now.",),
        other=("{who} sees a doctor called {v}.",),
        questions=("Who's my GP?", "Which doctor am I registered with?"),
    ),
    "sport": HeldOutPhrasing(
        state=("I play {lv} at the weekends.", "{v} is my sport."),
        no_cue=("Sore legs after {lv} training, we won the match though.",),
        correct=("I don't play {lv_old}, I play {lv}.",),
        relative=("Switched sports again, {lv} now.",),
        negate=("I've given up sport altogether.",),
        other=("{who} plays {lv}.",),
        questions=("What sport do I do?", "Which sport am I into?"),
    ),
    "instrument": HeldOutPhrasing(
        state=("I play the {lv}.", "The {lv} is my instrument."),
        no_cue=("Practised scales on the {lv} for an hour, the neighbours love me.",),
        correct=("It's not the {lv_old}, I play the {lv}.",),
        relative=("Picked up a new one again, the {lv} now.",),
        negate=("I sold my instrument, I don't play anymore.",),
        other=("{who} plays the {lv}.",),
        questions=("What instrument do I play?", "Which instrument is mine?"),
    ),
    "favourite_food": HeldOutPhrasing(
        state=("Nothing beats {lv} for me.", "{v} is my go-to comfort dish."),
        no_cue=("Had {lv} three nights in a row, could eat it forever.",),
        correct=("My favourite isn't {lv_old}, it's {lv}.",),
        relative=("New obsession: {lv}, it's my favourite now.",),
        negate=("I don't really have a favourite food anymore.",),
        other=("{who} loves {lv}.",),
        questions=("What's my favourite dish?", "Which food do I love most?"),
    ),
    "bank": HeldOutPhrasing(
        state=("I bank with {v}.", "My current account is at {v}."),
        no_cue=("{v} froze my card again for no reason.",),
        correct=("I'm not with {old}, I'm with {v}.",),
        relative=("Switched accounts again, {v} now.",),
        negate=("I closed my account, no bank for now.",),
        other=("{who} banks with {v}.",),
        questions=("Who do I bank with?", "Where do I keep my current account?"),
    ),
}  # fmt: skip


def say(template: str, value: str, old: str | None = None, who: str = "") -> str:
    """``template`` filled in (``{lv_old}``: the old value in lower case).

    Example:
        >>> say(TEST_PHRASING["job_title"].correct[0], "Nurse", old="Pilot")
        "I'm not a pilot, I'm a nurse."
    """
    return template.format(
        v=value, lv=value.lower(), old=old or "", lv_old=(old or "").lower(), who=who
    )
