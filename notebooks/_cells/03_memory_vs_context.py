# Cells of notebooks/03_memory_vs_context.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 03 · Memory vs context: two halves of what an agent "remembers"
#
# ## What you will learn
#
# * messages ("memory": what was said, read by the model) and `context_variables` (a few
#   key fields, read by your code) are two halves with different owners, sizes and lifetimes;
# * after a refresh, what each of the four `persist` choices brings back, measured: the model
#   can only *read* restored text, a tool can only *use* a restored field;
# * why keeping only the messages can cost more tokens and bytes than keeping both;
# * what belongs in the context (only what code needs) and how to fill it (`extract_context`);
# * `Session` or a LangGraph checkpointer: same answers, different bookkeeping.
#
# People often summarise the difference as "LangChain memory stores, Swarm's context passes".
# That is catchy and a bit wrong: both hold data, and neither survives a restart unless
# *you* store it. The useful distinction is **what** each holds, **who** reads it, and
# **how long** it lives:
#
# | | messages ("memory") | `context_variables` |
# |---|---|---|
# | holds | what was said, as free text | a few key fields (`user_id`, `order_id`) |
# | read by | the model | instruction functions and tools (the model never sees the dict) |
# | size | grows every turn | small (kilobytes), fixed by your design |
# | lives | as long as a chat-history backend keeps it | one run, unless you save and pass it back |
#
# So after a page refresh (a new process, a new `Session` object) there are four choices:
# keep both halves, only the messages, only the context, or nothing. This notebook runs all
# four on the same two-turn scenario and measures what survives. Each `✓` line is a claim
# of the text, checked as the notebook runs (`notebooks/checks.py`).
# %%
import json
import tempfile

from checks import check

from langchain_core.messages.utils import count_tokens_approximately
from pydantic import BaseModel

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.compare import TURN_1, TURN_2, compare_persistence, format_table
from swarmgraph.memory.extract import extract_context

# %% [markdown]
# ## The scenario
#
# * **Turn 1**: the user writes the first line below. The Triage agent's tool stores `name`
#   and `order_id` in the context (through `Result`) and hands off to Refunds.
# * **Refresh**: a brand-new `Session` object on the same database, as after a page reload.
# * **Turn 2**: the user asks the second line. Answering well needs the earlier *text*
#   (who is asking, which order) and the *field* (Refunds' `refund_status` tool reads
#   `context_variables["order_id"]`).
#
# `compare_persistence` runs this once per `persist` choice and measures every cell from the
# run itself: what the chat model was sent in turn 2, what the tool received, which agent
# answered, the tokens sent, and the bytes stored. The model is an offline rule-based
# stand-in (`swarmgraph.memory.compare.refund_rules`): it answers from what it was sent, so
# the replies below are its rules at work, and "tokens sent" is an approximate count
# (`count_tokens_approximately`) of what it was sent, not a real model's bill.
# %%
print("turn 1:", TURN_1)
print("turn 2:", TURN_2)
workdir = tempfile.mkdtemp()  # one throwaway SQLite file per choice, never in the repo
rows = compare_persistence(workdir)
by = {row["persist"]: row for row in rows}
print()
print(format_table(rows))
print()
check(
    "(model saw earlier text, tool saw field) per choice",
    [(r["persist"], r["model_saw_earlier_text"], r["tool_saw_field"]) for r in rows],
    [
        ("messages+context", True, True),
        ("messages", True, False),
        ("context", False, True),
        ("none", False, False),
    ],
)
check("keeping nothing stores nothing", by["none"]["bytes_stored"], 0)

# %% [markdown]
# Each row in words, generated from the measurements above (not written by hand); the
# replies are the rule-based stand-in's:
# %%
for row in rows:
    text = "could" if row["model_saw_earlier_text"] else "could NOT"
    field = "received" if row["tool_saw_field"] else "did NOT receive"
    print(
        f"persist={row['persist']!r:22} the model {text} read turn 1; the tool {field} "
        f"order_id; {row['agent_turn_2']} answered:\n{'':31}{row['reply_turn_2']!r}"
    )
print()
check(
    "only a choice that kept the context could answer about the refund",
    {r["persist"]: "approved" in r["reply_turn_2"] for r in rows},
    {"messages+context": True, "messages": False, "context": True, "none": False},
)

# %% [markdown]
# Two rows are worth a second look:
#
# * **messages only**: the model can *read* "order 7" in the restored text, but reading is
#   not restoring. `context_variables` starts empty, so the tool, which trusts only the
#   context, has nothing to look up; and the conversation restarts at the agent you pass in.
# * **context only**: the tool gets its field and the stored active agent takes over, but the
#   model sees no earlier text: it cannot tell whom it is talking to unless a tool or the
#   instructions say so.
# %%
check(
    "messages only: the model read turn 1, the tool got no order_id",
    (by["messages"]["model_saw_earlier_text"], by["messages"]["tool_saw_field"]),
    (True, False),
)
check(
    "messages only: turn 2 restarted at Triage, so it took three model calls",
    by["messages"]["model_calls_turn_2"],
    3,
)
check(
    "context only: the tool got its field, the model saw no earlier text",
    (by["context"]["tool_saw_field"], by["context"]["model_saw_earlier_text"]),
    (True, False),
)
check(
    "context only: the stored active agent, Refunds, took over without a handoff",
    (by["context"]["agent_turn_2"], by["context"]["model_calls_turn_2"]),
    ("Refunds", 2),
)
check(
    "context only: the reply does not know whom it is talking to",
    "Xiaoming" not in by["context"]["reply_turn_2"],
)

# %% [markdown]
# ## Two numbers that look backwards
#
# `none` sends more tokens than `context`, and `messages` stores more bytes than
# `messages+context`. Both come from the same place: **the active agent is saved with the
# context**. Without the context, turn 2 restarts at the agent passed to `run` (Triage),
# which hands off to Refunds all over again. That extra handoff is one more model call, and
# every call resends the history, so `none` sends more than `context` (which starts right
# at Refunds). It also stores two more messages (the transfer call and its result), which
# weigh more than the few bytes of a context row, so `messages` stores more than
# `messages+context`. Measured:
# %%
for row in rows:
    print(
        f"{row['persist']:17} turn 2 made {row['model_calls_turn_2']} model calls, "
        f"sent {row['tokens_sent']:>3} tokens, {row['bytes_stored']:>4} bytes stored in all"
    )
print()
check(
    "without the context turn 2 makes one model call more (the handoff again)",
    (by["none"]["model_calls_turn_2"], by["context"]["model_calls_turn_2"]),
    (3, 2),
)
check(
    f"so `none` sends more tokens than `context` ({by['none']['tokens_sent']} > "
    f"{by['context']['tokens_sent']})",
    by["none"]["tokens_sent"] > by["context"]["tokens_sent"],
)
check(
    f"and `messages` stores more bytes than `messages+context` "
    f"({by['messages']['bytes_stored']} > {by['messages+context']['bytes_stored']})",
    by["messages"]["bytes_stored"] > by["messages+context"]["bytes_stored"],
)

# %% [markdown]
# ## What each choice left in the database
#
# A new `Session` is exactly what a refreshed page creates. Opening one per choice, on the
# database and conversation id each row reports (`row["url"]`, `row["conversation_id"]`),
# shows what was stored after both turns:
# %%
print(f"{'persist':17} | {'stored messages':>15} | stored context")
stored = {}
for row in rows:
    # the "refresh": a new object on the same file and conversation
    later = Session(row["conversation_id"], url=row["url"])
    stored[row["persist"]] = (len(later.messages), later.context_variables)
    print(f"{row['persist']:17} | {len(later.messages):>15} | {later.context_variables}")
print()
customer = {"name": "Xiaoming", "order_id": 7}
check(
    "the context is there exactly where it was kept",
    {label: context for label, (_, context) in stored.items()},
    {"messages+context": customer, "messages": {}, "context": customer, "none": {}},
)
check(
    "messages are there exactly where they were kept",
    {label: count > 0 for label, (count, _) in stored.items()},
    {"messages+context": True, "messages": True, "context": False, "none": False},
)
check(
    "`messages` holds two messages more than `messages+context` (the transfer call and its "
    "result: its turn 2 began at Triage again)",
    stored["messages"][0] - stored["messages+context"][0],
    2,
)

# %% [markdown]
# ## What belongs in messages, what belongs in context
#
# Suppose the user writes one long, free-form message:
# %%
said = (
    "Hi, I'm Xiaoming. I go to A High School, this weekend I'm going on a date with Xiaomei, "
    "and tonight I still have homework, so please find me a good restaurant nearby that "
    "won't take long."
)
print(said)


# %% [markdown]
# What should go into `context_variables`? **Not the text.** Give the model the whole
# message and it reads everything itself: the name, the school, the date, the homework, the
# hurry. None of that needs to be structured in advance.
#
# A field goes into the context only when some *code* needs it explicitly, across agents or
# in a tool: here the restaurant search needs a location (the school) and the booking needs
# a name. Everything else stays in the messages.
#
# And the extraction is **your** job. The framework never picks fields out of text; it only
# carries the dict you give it through the run, and merges what tools write back. You can
# fill it in three ways: rules you write, one structured-extraction call to a model, or a
# tool returning `Result(context_variables=...)` (notebook 02).
# `swarmgraph.memory.extract.extract_context` does the first two:
# %%
class Diner(BaseModel):
    name: str | None = None
    school: str | None = None


rules = {"name": r"I'm (\w+)", "school": r"go to ([A-Z]\w* High School)"}
by_rules = extract_context(said, Diner, rules=rules)
check("with rules", by_rules, {"name": "Xiaoming", "school": "A High School"})

# %% [markdown]
# Rules are cheap and predictable but brittle ("I am Xiaoming" would slip through):
# %%
check(
    "the same rules find nothing in 'I am Xiaoming, at A high school'",
    extract_context("I am Xiaoming, at A high school.", Diner, rules=rules),
    {},
)

# %% [markdown]
# With a model, one structured-output call fills the fields. The model here is an offline
# stand-in (scripted), so its answer is fixed; what matters is the request: the schema
# becomes the one tool the model is offered, and only what the user said is sent.
# %%
extractor = ScriptedChatModel(
    [scripted_tool_call("Diner", {"name": "Xiaoming", "school": "A High School"})]
)
by_model = extract_context(said, Diner, model=extractor)
print("with a model:", by_model)
print("the extraction request:")
for m in extractor.calls[0]:
    print(f"  [{m.type}] {m.content}")
print()
check(
    "the one tool offered is the schema",
    [
        (t["function"]["name"], sorted(t["function"]["parameters"]["properties"]))
        for t in extractor.bound_tools[0]
    ],
    [("Diner", ["name", "school"])],
)
check(
    "the only text sent besides the system prompt is what the user said",
    [m.content for m in extractor.calls[0][1:]] == [f"User: {said}"],
)

# %% [markdown]
# Now the run. The instruction function greets by the name from the context; the tool reads
# the school from the context; the model reads the whole message, so its answer can respect
# the homework and the hurry even though neither is a field (the reply here is scripted: it
# shows what a model *could* do with the whole message; the checks are about what it was sent).
# %%
searched = []


def concierge_instructions(context_variables):
    return f"You are Concierge. You are helping {context_variables.get('name', 'a guest')}."


def find_restaurant(cuisine: str, context_variables: dict) -> str:
    """Find a restaurant of the given cuisine near the user."""
    near = context_variables.get("school", "the city centre")
    searched.append(near)
    return f"Noodle Corner ({cuisine}), a 5-minute walk from {near}, serves in 15 minutes."


concierge = Agent(
    name="Concierge", instructions=concierge_instructions, functions=[find_restaurant]
)
model = ScriptedChatModel(  # offline stand-in
    [
        scripted_tool_call("find_restaurant", {"cuisine": "noodles"}),
        "Xiaoming, try Noodle Corner near A High School: quick enough to be home for "
        "homework. Have a great date with Xiaomei this weekend!",
    ]
)
response = Swarm(chat_model=model).run(
    agent=concierge,
    messages=[{"role": "user", "content": said}],
    context_variables=by_rules,
)
print("reply (scripted):", response.messages[-1]["content"])
print()
message_tokens = count_tokens_approximately(model.calls[0][1:])
print(f"the message the model read: {message_tokens} tokens")
print(f"the context the code used:  {len(json.dumps(by_rules))} bytes of JSON: {by_rules}")
print()
check(
    "the instruction function greeted by the name from the context",
    model.calls[0][0].content,
    "You are Concierge. You are helping Xiaoming.",
)
check("the tool searched near the school from the context", searched[-1], "A High School")
check(
    "the framework picked no field out of the text: the context ends as it was passed in",
    response.context_variables,
    by_rules,
)
check(
    "the model was sent the whole message, homework and hurry included",
    model.calls[0][1].content == said,
)

# %% [markdown]
# ## Session or a LangGraph checkpointer?
#
# Both keep a conversation between runs. They store different things, so they suit
# different apps. Here is the same swarm (the demo's Triage → Sales / Refunds, on the offline
# demo model) kept both ways, for the same two turns.
#
# **`Session`** stores the two halves separately: the messages in a chat-history table, the
# context (plus the active agent) in a small versioned row. You call it with Swarm's API.
# %%
import os
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver

from swarmgraph import build_swarm_graph
from swarmgraph.app.demo import demo_agents, demo_model

triage, sales, refunds = demo_agents()
swarm = Swarm(chat_model=demo_model())
turns = ["Hi, I'm Ming. Please refund order 7.", "Did my refund go through?"]

session_db = os.path.join(workdir, "session.db")
for text in turns:
    Session("ming", url=f"sqlite:///{session_db}", window=20).run(swarm, triage, text)

later = Session("ming", url=f"sqlite:///{session_db}", window=20)  # a refresh
session_view = (later.active_agent_name, later.context_variables, len(later.messages))
print("Session:      agent", later.active_agent_name, "| context", later.context_variables)
print("              messages stored:", len(later.messages))

# %% [markdown]
# **A checkpointer** stores the whole graph state after every step, under a `thread_id`. You
# compile `build_swarm_graph` with it and drive the LangGraph app yourself (`invoke`,
# `stream`, `langgraph dev`, Studio):
# %%
checkpoint_db = os.path.join(workdir, "checkpoints.db")
saver = SqliteSaver(sqlite3.connect(checkpoint_db, check_same_thread=False))
app = build_swarm_graph([triage], chat_model=demo_model()).compile(checkpointer=saver)
thread = {"configurable": {"thread_id": "ming"}}
for text in turns:
    app.invoke({"messages": [("user", text)]}, thread)

state = app.get_state(thread).values
checkpoints = len(list(app.get_state_history(thread)))
print("checkpointer: agent", state["active_agent"], "| context", state["context_variables"])
print("              messages stored:", len(state["messages"]))
print("              checkpoints kept:", checkpoints)
print()
check(
    "the same agent, context and number of messages as the Session",
    (state["active_agent"], state["context_variables"], len(state["messages"])),
    session_view,
)
check(
    f"a checkpoint per step: {checkpoints} for {len(turns)} turns",
    checkpoints > len(turns),
)


# %% [markdown]
# Same answers, different bookkeeping. What each wrote to disk for these two turns:
# %%
def stored_bytes(path):
    """Bytes of every value in every table (text as UTF-8, blobs as they are)."""

    def size(value):
        if isinstance(value, bytes):
            return len(value)
        return len(str(value).encode()) if value is not None else 0

    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    total = sum(size(v) for t in tables for row in db.execute(f'SELECT * FROM "{t}"') for v in row)
    db.close()
    return total


# Rounded to kB: a checkpoint holds timestamps and ids whose encoded size varies a little.
session_bytes, checkpoint_bytes = stored_bytes(session_db), stored_bytes(checkpoint_db)
print(f"Session:      about {session_bytes / 1000:>3.0f} kB")
print(f"checkpointer: about {checkpoint_bytes / 1000:>3.0f} kB")
print()
check(
    "the checkpointer wrote more than five times the Session's bytes",
    checkpoint_bytes > 5 * session_bytes,
)

# %% [markdown]
# **Use `Session` when** the two halves have different owners and lifetimes (keep the
# context of a customer for months, drop old messages after 30 days; or persist only one
# half, as in the table at the top), when conversations get long (`window=20` reads 20 rows
# however long the history is, and a turn stores only its new messages), when several
# workers share one Postgres or Redis (a turn is one transaction), or when your code already
# speaks Swarm's `run(agent, messages, context_variables)`.
#
# **Use a checkpointer when** you run the compiled graph as a LangGraph app: LangGraph's
# server and Studio (`langgraph.json`), human-in-the-loop interrupts, time travel through
# `get_state_history`, or resuming a run that crashed mid-way (every step is saved). The
# whole state is one unit there: messages, `context_variables` and `active_agent` are
# saved and restored together, every step adds a checkpoint, and each turn loads the full
# history.
#
# The state a checkpointer keeps has one more key, `handoff_trail`: the agents that handed
# off in a row without anyone answering, which the engine uses to stop handoff loops
# (`HandoffLoopError`). It is bookkeeping: it is `[]` again as soon as an agent answers, and
# you can ignore it in streamed updates and thread state.
# %%
check("handoff_trail after the run (an agent answered)", state["handoff_trail"], [])
# %% [markdown]
# ## Where each tool is weak
#
# **Context variables** are not extracted for you, suit processes whose fields you know in
# advance (support desks, bookings, account lookups), do not understand open text, are gone
# after the run, and should stay small: the whole dict is handed to every instruction
# function and every tool that asks for it.
#
# **Message memory** needs a backend to persist, is not a way to share structured state
# between agents or tools, grows with the conversation (tokens, latency; see notebook 04 for
# window, trim and summary), and records *what was said*, not *what the key fields are*: a
# reliable `user_id` still has to be pulled out and kept as a field.
#
# They are complements, not substitutes. A real app loads both, passes the fields as
# `context_variables` and the history as `messages`, and saves both when the run ends, which
# is what `Session(persist=("messages", "context"))` does.

# %% [markdown]
# ## What you saw
#
# * After a refresh, `messages+context` brought back both halves and answered "approved";
#   `messages` let the model read turn 1 but gave the tool no `order_id`; `context` gave the
#   tool its field but the model no earlier text; `none` brought back nothing and stored 0 bytes.
# * Without the context (which holds the active agent), turn 2 restarted at Triage: three
#   model calls instead of two, so `none` sent more tokens than `context`, and `messages`
#   stored two messages (and more bytes) more than `messages+context`.
# * Opened again on each row's own conversation, the database held messages and context
#   exactly where they were kept.
# * Rules extracted `{'name': 'Xiaoming', 'school': 'A High School'}` and missed "I am
#   Xiaoming"; a model extraction offered one tool, the schema, and sent only what the user said.
# * In the run, the prompt named Xiaoming from the context, the tool searched near the school
#   from the context, and the model was sent the whole message.
# * `Session` and a checkpointer ended with the same agent, context and messages; the
#   checkpointer kept a checkpoint per step and wrote more than five times the bytes.
