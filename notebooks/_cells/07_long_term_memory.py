# Cells of notebooks/07_long_term_memory.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 07 · Long-term memory: the third kind, and a benchmark of every memory policy
#
# ## What you will learn
#
# * **long-term memory** is the third kind beside messages and `context_variables`: facts
#   about a *user* that outlive every conversation, with scopes that say **which agent may
#   read which memory** (the user's facts, one agent's own notes, shared facts);
# * how agents use it through `Session(..., user_id=..., long_term=True)`: recall into each
#   system prompt (per model call and per agent, so a handoff changes what is recalled),
#   `remember` / `recall` / `forget` tools whose user the model cannot choose, and
#   extraction after each turn, committed with the turn;
# * how every memory policy (buffer, window, summary, context, long-term with rules or a
#   model, retrieval over raw messages, a hybrid) does on one seeded multi-session
#   benchmark: recall, stale answers, leakage between users, tokens, time per turn; and
#   **where each one fails**.
#
# Notebooks 03 and 04 compared the two halves of one conversation: what was said, and the key
# fields. Neither survives into the user's *next* conversation. Long-term memory does: it
# lives in LangGraph's own `Store` (`InMemoryStore`, `SqliteStore`, `PostgresStore`) under
# one namespace per user, so one user's facts are never even searched for another.
#
# Models: the first part uses a `ScriptedChatModel` that plays the agents (it decides which
# tool to call from what it is sent), always, because it demonstrates the plumbing. The
# benchmark uses offline stand-ins, each labelled where it is used, unless `OPENAI_API_KEY`
# is set: then the same cells let a real model extract facts and answer the questions, and
# say so. Each `✓` line is a claim of the text, checked as the notebook runs
# (`notebooks/checks.py`).
# %%
import os
import sys
import tempfile
from pathlib import Path

from checks import check
from IPython.display import Image, Markdown, display
from langchain_core.messages import ToolMessage
from pydantic import BaseModel

from swarmgraph import Agent, ScriptedChatModel, Session, Swarm, scripted_tool_call
from swarmgraph.memory import FactExtractor, LongTermMemory

sys.path.insert(0, str(Path.cwd().parent))  # the repository's benchmarks/ folder
from benchmarks.longterm import POLICIES, format_rows, run_longterm
from benchmarks.longterm_data import generate

REAL = bool(os.environ.get("OPENAI_API_KEY"))
if REAL:
    from langchain_openai import ChatOpenAI

    real_model = ChatOpenAI(model=os.environ.get("SWARMGRAPH_MODEL", "gpt-4o-mini"), temperature=0)
    print(
        f"OPENAI_API_KEY is set: the benchmark's extraction and answers use {real_model.model_name}"
    )
else:
    real_model = None
    print("no OPENAI_API_KEY: every model below is an offline stand-in, labelled where it is used")
check("the benchmark knows eight policies", len(POLICIES), 8)

# %% [markdown]
# ## Part 1: one user, two agents, several conversations
#
# Triage and Sales both have `memory_tools=True`: each gets `remember`, `recall` and `forget`
# tools. The Session of each conversation is opened with the user's id and `long_term=True`
# (a `LongTermMemory` in the same SQLite file as the conversations) and an extractor: two
# `extract_context` rules, the same tool notebook 03 used to fill `context_variables`.
#
# The stand-in that plays the agents reads what it is sent: asked to keep answers short, it
# calls `remember(..., scope="agent")` (a note only that agent will see); asked to forget
# where the user lives, it calls `forget`; asked about honey, Triage hands over to Sales.
# %%
workdir = Path(tempfile.mkdtemp())
url = f"sqlite:///{workdir / 'memory.db'}"


class UserFacts(BaseModel):
    dog_name: str | None = None
    home_city: str | None = None


extract = FactExtractor(
    UserFacts,
    rules={
        "dog_name": r"dog is called (?P<value>[A-Z]\w+)",
        "home_city": r"(?:live in|moved to) (?P<value>[A-Z]\w+)",
    },
)
sales = Agent(name="Sales", instructions="You are Sales. You sell honey.", memory_tools=True)
triage = Agent(name="Triage", instructions="You are Triage.", memory_tools=True, handoffs=[sales])


def plays_the_agents(messages):
    """The offline stand-in: one rule per situation (it never sees who the user is)."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        if last.name == "transfer_to_sales":
            return "Sales here: yes, a little honey is fine for dogs."
        return f"({last.content})"
    said = str(last.content)
    if "keep your answers short" in said:
        return scripted_tool_call("remember", {"key": "tone", "value": "short", "scope": "agent"})
    if "forget where I live" in said:
        return scripted_tool_call("forget", {"key": "home_city"})
    if "honey" in said and "You are Triage" in str(messages[0].content):
        return scripted_tool_call("transfer_to_sales")
    if "other users" in said:  # a model tricked into naming another user
        return scripted_tool_call("recall", {"query": "dog", "user_id": "ana"})
    return "OK."


model = ScriptedChatModel(respond=plays_the_agents)
swarm = Swarm(chat_model=model)


def turn(conversation, text, user="ming"):
    """One turn in conversation ``conversation`` of ``user``; the system prompts it sent."""
    before = len(model.calls)
    session = Session(conversation, url=url, user_id=user, long_term=True, extract=extract)
    response = session.run(swarm, triage, text)
    return response, [str(call[0].content) for call in model.calls[before:]]


response, prompts = turn(
    "ming-1", "Hi! My dog is called Rex and I live in Lyon. Please keep your answers short."
)
print(prompts[0])
check(
    "the first conversation's prompt recalls nothing: nothing was known",
    "remember" not in prompts[0],
)
memory = LongTermMemory(url, user_id="ming")
for fact in memory.all_facts():
    print(
        f"{fact.scope:5} {fact.key:9} = {fact.value:6} from {fact.conversation_id}, "
        f"by {fact.source_agent}, said: {fact.text!r}"
    )
check(
    "after the turn: two facts extracted, one note Triage wrote with its tool",
    sorted((f.scope, f.key, f.value) for f in memory.all_facts()),
    [("agent", "tone", "short"), ("user", "dog_name", "Rex"), ("user", "home_city", "Lyon")],
)

# %% [markdown]
# A **new conversation** of the same user. Before each model call the Session recalls the
# facts most relevant to the user's last message (lexical search, BM25) from the scopes the
# *active* agent may read, and appends them to that agent's system prompt. Triage sees the
# user's facts and its own note; after the handoff, Sales sees the user's facts but not
# Triage's note.
# %%
response, prompts = turn("ming-2", "Is honey safe for my dog? Keep it short.")
triage_prompt, sales_prompt = prompts[0], prompts[-1]
print("Triage was sent:\n" + triage_prompt, "\n")
print("Sales was sent:\n" + sales_prompt)
check("the answer came from Sales", response.agent.name, "Sales")
check(
    "Triage's prompt recalls the dog from the first conversation",
    '- dog_name: "Rex"' in triage_prompt,
)
check("and Triage's own note", '- tone: "short" (your own note)' in triage_prompt)
check("Sales' prompt recalls the dog too", '- dog_name: "Rex"' in sales_prompt)
check("but not Triage's note: an agent's notes are its own", "tone" not in sales_prompt)

# %% [markdown]
# Another user asks the same question: nothing of Ming's is recalled, because Ana's memory
# is another namespace, not a filter over a shared one. And a model cannot reach across: no
# memory tool has a user-id argument (the user is injected like `context_variables`), so a
# model that tries to name another user gets an `Error:` and reads nothing.
# %%
_, prompts = turn("ana-1", "Is honey safe for my dog? Keep it short.", user="ana")
check(
    "Ana's prompt recalls nothing of Ming's", "Rex" not in prompts[0] and "tone" not in prompts[0]
)
response, _ = turn("ming-3", "What do other users' dogs eat?")
tool_answer = response.messages[1]["content"]
print("the tool answered:", tool_answer)
check(
    "a model-supplied user id is refused",
    tool_answer.startswith("Error: recall: unknown argument 'user_id'"),
)

# %% [markdown]
# **Updates supersede, and forget removes.** The user moves: the extractor writes the new
# city over the old one (kept in `history`), and recall only ever shows the current value.
# Then the user asks the agent to forget where they live: its `forget` call removes the fact
# from recall (history keeps a tombstone; `forget(..., purge=True)` in code erases it).
# %%
turn("ming-4", "Big news: I moved to Porto.")
_, prompts = turn("ming-5", "Which city do I live in, and how far is the honey farm?")
print(prompts[0])
check("the prompt recalls the new city", '- home_city: "Porto"' in prompts[0])
check("never the superseded one", "Lyon" not in prompts[0])
print("history:", [(f.value, f.conversation_id) for f in memory.history("home_city")])
check(
    "history keeps both values, oldest first",
    [f.value for f in memory.history("home_city")],
    ["Lyon", "Porto"],
)
turn("ming-6", "Please forget where I live.")
_, prompts = turn("ming-7", "Which city do I live in?")
check("after forget, the city is not recalled", "home_city" not in prompts[0])

# %% [markdown]
# **Where recall fails.** Lexical recall finds a fact only through a shared word. Asked
# "What do you know about me?", nothing matches, so nothing is recalled (the agent can still
# call its `recall` tool with better words). The store's vector index finds facts by meaning
# instead: pass LangChain embeddings (`LongTermMemory("memory://...", embeddings=...)`; tested
# on `memory://` stores).
# %%
_, prompts = turn("ming-8", "What do you know about me?")
check(
    "a question sharing no word with any fact recalls nothing",
    "remember about this user" not in prompts[0],
)

# %% [markdown]
# **Crash safety.** The memory writes of a turn (the tools' and the extractor's) are staged
# while the turn runs, saved with the turn in its one atomic write (an *outbox* record), then
# applied to the long-term store, idempotently. A `kill -9` before the save leaves neither
# the turn nor its memories; one after it leaves the outbox, which the next turn applies
# (`tests/test_long_term_session.py` kills real processes at three points of a turn).
# Here, the conversation's record shows the outbox of its last turn:
# %%
from swarmgraph.memory.long_term_turn import OUTBOX

last = Session("ming-6", url=url, user_id="ming", long_term=True)
[outbox] = last.store.records("ming-6", OUTBOX).values()
print(outbox)
check("the forget was saved with its turn", [c["op"] for c in outbox["changes"]], ["forget"])

# %% [markdown]
# ## Part 2: every memory policy on one benchmark
#
# `benchmarks/longterm_data.py` generates, from one seed, six users who each talk to an
# assistant over five conversations: facts planted, some updated later ("Actually, I moved
# to Porto"), some withdrawn ("Please forget my phone number"), some restated in other
# words, facts about *other people* ("My sister's dog is called Bruno"), and chatter that
# shares the facts' words. Users 0 and 1 are twins whose dogs are both called Rex, with
# different vets: a policy that mixes users shows the other twin's vet. At the end each user
# is asked one question per fact, in a new conversation.
#
# Each statement has a phrasing: **canonical** ("My dog is called Rex."), **paraphrase**
# ("We named our puppy Rex.") or **casual** ("walked the dog at dawn. rex rolled in the mud
# again lol"). The phrasings are part of the data on purpose: the rules read only the
# canonical ones, the scripted extraction stand-in also reads paraphrases, and nothing
# offline reads casual typing.
# %%
data = generate(seed=0)
counts = data.counts()
print(
    {
        k: counts[k]
        for k in (
            "users",
            "conversations",
            "turns",
            "planted",
            "updated",
            "deleted",
            "restated",
            "distractors",
            "chatter",
            "questions",
        )
    }
)
print({k: counts[k] for k in ("canonical", "paraphrase", "casual")})
u0 = data.conversations_of("u0")
for conversation in u0[:2]:
    for t in conversation.turns:
        if t.kind != "chatter":
            print(f"{conversation.conversation_id}  {t.kind:10} {t.phrasing or '':10} {t.text}")
check("six users, five conversations each", (counts["users"], counts["conversations"]), (6, 30))
check(
    "36 questions, 30 of them about facts still true",
    (counts["questions"], counts["questions_current"] + counts["questions_updated"]),
    (36, 30),
)

# %% [markdown]
# Every policy runs through the real stack: `Session` turns over SQLite, the swarm engine,
# its prompt hook. The short-term policies (buffer, window, summary, context) get each user's
# five conversations as **one** thread, which favours them: over separate conversations they
# would see nothing at all. The long-term ones and raw retrieval use one conversation per
# session, as an application would.
#
# What is measured, per policy:
#
# * **recall**: the current value of a fact still true is in the prompt of the question;
# * **answered** and **stale answers**: what an answer built from that prompt says; an old
#   value counts stale (over the 18 updated or deleted facts). Offline, the answer comes from
#   an **answering stand-in** (`benchmarks/longterm_answer.py`): it reads the prompt with
#   the extraction stand-in's parser, a later statement replacing an earlier one, and trusts
#   memory lines over raw text. It never sees the gold answers;
# * **stale shown**: an old value anywhere in the prompt; **leakage**: another user's value
#   in the prompt or the answer (it must be 0);
# * **tokens per question** (the answering call's prompt) and **ms per turn** (a dialogue
#   turn: load, run, extraction, save, memory writes).
# %%
out = run_longterm(seed=0, answer_model=real_model, extract_model=real_model)
rows = out["policies"]
print(f"answers by: {out['answers_by']}; model extraction by: {out['extraction_by']}")
print()
print(format_rows(rows, timing=False))
check("every policy ran", list(rows), list(POLICIES))
check("no policy leaked another user's value", {row["leakage"] for row in rows.values()}, {0})

# %% [markdown]
# The time per turn depends on the machine, so it is shown here rather than printed (the
# figures above are the same on every run). The long-term policies pay for extraction and
# their memory writes on every turn; `benchmarks/RESULTS.md` (section 3c) has the figures of
# one whole benchmark run:
# %%
display(
    Markdown(
        "| policy | ms per dialogue turn |\n|---|---|\n"
        + "\n".join(f"| {n} | {r['ms_per_turn']:.1f} |" for n, r in rows.items())
    )
)
check(
    "every policy's dialogue turns were timed (no timing is checked here: benchmarks compare "
    "speed, tests and notebooks do not)",
    all(row["ms_per_turn"] > 0 for row in rows.values()),
)

# %% [markdown]
# ## Recall against tokens
#
# One point per policy; the Pareto front (no other policy has both more recall and fewer
# tokens) in green; the shaded corner is the target: at least 90% recall at no more than 20%
# of buffer's tokens.
# %%
from benchmarks.longterm import pareto_front, plot_recall_vs_tokens

chart = workdir / "recall_vs_tokens.png"
plot_recall_vs_tokens(rows, str(chart))
display(Image(filename=str(chart)))
front = pareto_front(rows)
print("Pareto front:", ", ".join(front))
if not REAL:
    check(
        "the front: buffer, long-term (model stand-in) and hybrid",
        front,
        ["buffer", "long-term (model stand-in)", "hybrid"],
    )

# %% [markdown]
# ## The target, honestly
#
# The target: some policy recalls at least 90% of current facts at no more than 20% of
# buffer's tokens, with no leakage and at most 5% stale answers. Offline, the **hybrid**
# (long-term memory with the scripted extraction stand-in, plus the three past messages BM25
# ranks highest) recalls 97% at 6% of buffer's tokens with no leakage: three of the four
# conditions. It misses the fourth: **11% stale answers** (2 of the 18 changed facts). Both
# are updates typed casually ("new flat in brno, still unpacking boxes"): the extraction
# stand-in cannot read them, so memory keeps the old city, and the answering stand-in, which
# cannot read them either, answers with it. Buffer answers the same two questions stale, for
# the same reason. A real model reads casual typing better than these parsers; with
# `OPENAI_API_KEY` set, the cells above measure how much. The data was not changed to make a
# policy win.
# %%
hybrid, model_only = rows["hybrid"], rows["long-term (model stand-in)"]
print(
    f"hybrid: recall {hybrid['recall']:.0%}, {hybrid['share_of_buffer']:.1%} of buffer's tokens, leakage {hybrid['leakage']}, stale answers {hybrid['stale_answers']:.0%}"
)
print("policies meeting the whole target:", out["meets_target"] or "none")
if not REAL:
    check("hybrid recalls at least 90% of current facts", hybrid["recall"] >= 0.9)
    check("at no more than 20% of buffer's tokens", hybrid["share_of_buffer"] <= 0.2)
    check("with no leakage", hybrid["leakage"], 0)
    check(
        f"but {hybrid['stale_answers']:.0%} stale answers, over the 5% target",
        hybrid["stale_answers"] > 0.05,
    )
    check("so offline no policy meets the whole target", out["meets_target"], [])
    stale = [f for f in out["failures"]["hybrid"] if "old value" in f["why"]]
    said = {
        (c.user_id, t.key): t for c in data.conversations for t in c.turns if t.kind == "update"
    }
    for f in stale:
        user, key = f["qid"].split(":")
        print(
            f"{f['qid']}: gold {f['gold']!r}, answered {f['answer']!r}; the update was: {said[(user, key)].text!r}"
        )
    check(
        "both stale answers come from casually typed updates",
        {said[tuple(f["qid"].split(":"))].phrasing for f in stale},
        {"casual"},
    )
    check(
        "buffer answers those two stale as well",
        {f["qid"] for f in out["failures"]["buffer"]} >= {f["qid"] for f in stale},
    )

# %% [markdown]
# ## Where each policy fails
#
# Recall by the most readable phrasing in which the current value was ever said (a fact said
# once casually and once canonically counts as canonical):
# %%
n = out["phrasing_counts"]
print(f"{'policy':28} " + " ".join(f"{p + f' ({n[p]})':>16}" for p in n))
for name, shares in out["by_phrasing"].items():
    print(
        f"{name:28} " + " ".join(f"{'-' if v is None else f'{v:.0%}':>16}" for v in shares.values())
    )
by = out["by_phrasing"]
if not REAL:
    check(
        "rules read no paraphrase: long-term (rules) recalls none of those facts",
        by["long-term (rules)"]["paraphrase"],
        0.0,
    )
    check(
        "context, filled by the same rules, fails the same way",
        by["context"],
        by["long-term (rules)"],
    )
    check(
        "the extraction stand-in reads paraphrases but no casual typing",
        (
            by["long-term (model stand-in)"]["paraphrase"],
            by["long-term (model stand-in)"]["casual"],
        ),
        (1.0, 0.0),
    )
    check("buffer shows everything, whatever the phrasing", set(by["buffer"].values()), {1.0})

# %% [markdown]
# And the questions each policy got wrong, with what it answered:
# %%
for name in POLICIES:
    failures = out["failures"][name]
    print(f"{name}: {len(failures)} wrong")
    for f in failures[:2]:
        print(
            f"    {f['qid']:16} {f['status']:8} gold {f['gold']!r:14} answered {f['answer']!r:18} ({f['why']})"
        )
if not REAL:
    check(
        "window: the early facts scrolled out (recall under half)",
        rows["window:20"]["recall"] < 0.5,
    )
    check("summary (generic extractive): under half too", rows["summary"]["recall"] < 0.5)
    check(
        "buffer shows every old value next to the new (stale shown 100%)",
        rows["buffer"]["stale_shown"],
        1.0,
    )
    check(
        "raw retrieval shows old values most of the time",
        rows["raw retrieval (BM25)"]["stale_shown"] > 0.5,
    )
    check(
        "the rules answer a deleted fact they could not read as deleted",
        rows["long-term (rules)"]["deleted_answered"] > 0,
    )
    check(
        "the rules take other people's facts for the user's (a friend's vet, in the prompt)",
        rows["long-term (rules)"]["distracted"] > 0,
    )
    check("the extraction stand-in skips them", model_only["distracted"], 0.0)
    check(
        "long-term with the model stand-in never answers a deleted value",
        model_only["deleted_answered"],
        0.0,
    )

# %% [markdown]
# ## What you saw
#
# * A fact extracted in one conversation (Rex, Lyon) was recalled into the system prompt of
#   the next conversation of the same user, never into another user's; Triage's own note was
#   recalled for Triage and, after the handoff, not for Sales.
# * A model that named another user got an `Error:` (no memory tool takes a user id); an
#   update superseded the old city (history kept both) and `forget` removed it from recall;
#   the turn's memory writes were saved with the turn, as its outbox.
# * Lexical recall found nothing for a question that shares no word with any fact.
# * On the benchmark, no policy leaked another user's value. Offline, the hybrid recalled
#   97% of current facts at 6% of buffer's tokens, but answered 11% of the changed facts
#   with an old value (two casually typed updates the stand-ins cannot read), so the target
#   is not met offline.
# * Each policy failed somewhere: rules (and context filled by them) on every paraphrase and
#   on other people's facts, the extraction stand-in on casual typing, window and the generic summary on early facts,
#   buffer and raw retrieval by showing old values beside new ones.
