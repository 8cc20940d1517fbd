# Cells of notebooks/05_one_to_one.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 05 · OneToOne: two agents, one shared conversation
#
# ## What you will learn
#
# * the **OneToOne** pattern: two agents take turns on one shared conversation, `max_loops`
#   exchanges long;
# * the **role-aware view** each agent reads: its own turns as `assistant`, the peer's as
#   `user` turns prefixed with the peer's name;
# * `OneToOne` (reusable) and `one_to_one` (one call), and the output formats a history can be
#   returned in, each shown once;
# * the pair as a two-node LangGraph graph.
#
# **A word on names.** OneToOne comes from **swarms**
# ([kyegomez/swarms](https://github.com/kyegomez/swarms)), a multi-agent framework that is
# *not* OpenAI Swarm (`openai/swarm`, whose `Agent`, handoffs and `context_variables`
# notebooks 01–03 follow). swarmgraph takes the pattern and its output
# formats from swarms and runs it with swarmgraph's own `Agent`s.
#
# In swarms' OneToOne two agents take turns on one
# shared conversation. The task opens it; the *sender* answers; the *receiver* answers the
# sender; and the pair repeats that exchange `max_loops` times, so the history reads
# `User, Sender, Receiver, Sender, Receiver, ...`.
#
# The interesting part is how each agent *reads* the shared conversation. A chat model only
# knows two speakers, "me" (`assistant`) and "the other side" (`user`). So each agent gets a
# **role-aware view**: its own earlier turns come back as `assistant` turns, and the peer's
# turns arrive as `user` turns prefixed with the peer's name (`"Editor: ..."`). The model can
# tell its own words from the other agent's, and the request grows by appending only, which
# keeps a stable prefix for provider prompt caches.
#
# swarmgraph runs the pair as a two-node LangGraph graph. The agents here are ordinary
# `swarmgraph.Agent`s whose models are offline stand-ins, rule-based `ScriptedChatModel`s,
# so the exchange is deterministic and still reacts to what the other agent said. Each `✓`
# line is a claim of the text, checked as the notebook runs (`notebooks/checks.py`).
# %%
import re
import tempfile
from pathlib import Path
from pprint import pprint

from checks import check
from IPython.display import Image, display

from swarmgraph.graph import (
    Agent,
    OneToOne,
    ScriptedChatModel,
    Swarm,
    format_history,
    messages_for,
    one_to_one,
    split_last_turn,
)
from swarmgraph.graph.onetoone import OUTPUT_TYPES
from swarmgraph.app.drawing import agent_colour, draw_png, layout_graph

# %% [markdown]
# ## Writer and Editor
#
# The writer drafts product taglines; the editor wants six words or fewer. Both "models" are
# offline stand-ins, small rule sets that read the request they were sent:
#
# * the writer's n-th reply is its n-th draft (it counts its own `assistant` turns, which it
#   can only do because the view marks them as its own);
# * the editor counts the words of the draft in the newest `Writer: ...` turn and either asks
#   for a cut or approves.
# %%
DRAFTS = [
    "Never forget a password again: one vault keeps every login safe and synced.",
    "Every password, one safe vault.",
    "One vault. Every password.",
]


def writer_rules(messages):
    drafts_so_far = sum(m.type == "ai" for m in messages)
    return f"Draft {drafts_so_far + 1}: {DRAFTS[min(drafts_so_far, len(DRAFTS) - 1)]}"


def editor_rules(messages):
    newest = messages[-1].content
    tagline = re.sub(r"^Writer: Draft \d+: ", "", newest)
    words = len(tagline.split())
    if words > 6:
        return f"Too long ({words} words). Cut it to six words or fewer; keep 'vault'."
    return f"Approved: '{tagline}' ({words} words)."


writer_model = ScriptedChatModel(respond=writer_rules)
editor_model = ScriptedChatModel(respond=editor_rules)
models = {"writer-model": writer_model, "editor-model": editor_model}
swarm = Swarm(chat_model=lambda name: models[name])

writer = Agent(
    name="Writer",
    model="writer-model",
    instructions="You write short product taglines. Reply with one tagline.",
)
editor = Agent(
    name="Editor",
    model="editor-model",
    instructions="You are a strict editor. Make the tagline shorter and punchier.",
)

pair = OneToOne(
    sender=writer,
    receiver=editor,
    name="Tagline-Pair",
    description="A writer drafts, an editor tightens.",
    output_type="dict",
    swarm=swarm,
)
history = pair.run("Write a tagline for a password manager.", max_loops=2)
for message in history:
    print(f"[{message['role']}] {message['content']}")
print()
check(
    "with max_loops=2 the history reads",
    [m["role"] for m in history],
    ["User", "Writer", "Editor", "Writer", "Editor"],
)
check(
    "the writer's n-th reply is its n-th draft",
    [m["content"][:8] for m in history if m["role"] == "Writer"],
    ["Draft 1:", "Draft 2:"],
)
check(
    "the editor asked for a cut, then approved",
    [m["content"].split()[0] for m in history if m["role"] == "Editor"],
    ["Too", "Approved:"],
)

# %% [markdown]
# `OneToOne` is the reusable form: it keeps the pair and its settings, and every `run` starts
# a brand-new conversation (nothing carries over between tasks):
# %%
again = pair.run("Write a tagline for a bicycle lock.")
check(
    "the new run is one exchange on the new task",
    [(m["role"], m["content"] if m["role"] == "User" else "...") for m in again],
    [("User", "Write a tagline for a bicycle lock."), ("Writer", "..."), ("Editor", "...")],
)
check(
    "and the writer's model was sent only the new task",
    [m.content for m in writer_model.calls[-1][1:]],
    ["Write a tagline for a bicycle lock."],
)

# %% [markdown]
# ## What each agent actually received
#
# `messages_for(name, history)` is the view an agent reads. The same five entries, seen by
# the writer and by the editor:
# %%
for name in ("Writer", "Editor"):
    print(f"--- as {name} sees it")
    for turn in messages_for(name, history):
        print(f"  {turn['role']:9} | {turn['content']}")
print()
for name in ("Writer", "Editor"):
    view = messages_for(name, history)[1:]  # after the task
    own = [t["role"] == "assistant" for t in view]
    check(
        f"{name} reads its own turns as assistant, the peer's as user turns named after it",
        [(t["role"], t["content"].split(":")[0]) for t in view if t["role"] == "user"]
        == [("user", "Editor" if name == "Writer" else "Writer")] * own.count(False)
        and own.count(True) == 2,
    )

# %% [markdown]
# Before its turn an agent's view is split into the earlier turns and the newest one, which
# becomes its task (`split_last_turn`). So the editor answers the writer's latest draft, not
# the original task. These are the real requests the writer's model got in loop 1 and loop
# 2: the system prompt is the writer's instructions, then its view.
# %%
prior, task = split_last_turn(messages_for("Editor", history[:2]))
print("the editor's first task:", repr(task))
for loop, call in enumerate(writer_model.calls[:2], start=1):
    print(f"\nwriter's model call in loop {loop}:")
    for m in call:
        print(f"  [{m.type}] {m.content}")
print()
check("the editor's first task is the writer's draft", task, f"Writer: {history[1]['content']}")
loop_1, loop_2 = ([m.content for m in call] for call in writer_model.calls[:2])
check(
    "each call opens with the writer's instructions", loop_1[0] == loop_2[0] == writer.instructions
)
check(
    "then its view",
    loop_2[1:] == [t["content"] for t in messages_for("Writer", history[:3])],
)
check(
    "loop 2's request only appended to loop 1's (a stable prefix)", loop_2[: len(loop_1)] == loop_1
)

# %% [markdown]
# ## Analyst and Skeptic, the one-shot function
#
# `one_to_one(sender, receiver, task, max_loops=1, output_type=...)` is the same exchange
# as a single call. The analyst summarises a company's position in two sentences; the skeptic
# names the single biggest risk in *the analyst's* summary.
# %%
RISKS = {
    "long-haul": "Long-haul needs wide-body jets and hub traffic; a fuel spike "
    "or a slow first year on new routes would hit cash hardest.",
    "expanding": "Expansion stretches crews and maintenance before revenue arrives.",
}


def analyst_rules(messages):
    task = messages[-1].content
    subject = task.removeprefix("Assess ").rstrip(".")
    return (
        f"{subject[0].upper() + subject[1:]} is betting on higher-yield routes to grow beyond "
        "its regional base. The move can lift revenue per seat if it fills the new planes."
    )


def skeptic_rules(messages):
    summary = messages[-1].content.lower()
    for keyword, risk in RISKS.items():
        if keyword in summary or keyword in messages[1].content.lower():
            return f"Biggest risk: {risk}"
    return "Biggest risk: the summary names no concrete numbers to check."


models.update(
    {
        "analyst-model": ScriptedChatModel(respond=analyst_rules),
        "skeptic-model": ScriptedChatModel(respond=skeptic_rules),
    }
)
analyst = Agent(
    name="Analyst",
    model="analyst-model",
    instructions="You summarise a company's position in two sentences.",
)
skeptic = Agent(
    name="Skeptic",
    model="skeptic-model",
    instructions="You point out the single biggest risk in the analyst's summary.",
)
result = one_to_one(
    sender=analyst,
    receiver=skeptic,
    task="Assess a mid-size airline expanding into long-haul routes.",
    max_loops=1,
    output_type="str",
    swarm=swarm,
)
print(result)
check(
    "the skeptic named the risk of the analyst's long-haul move",
    "Skeptic: Biggest risk: Long-haul" in result,
)

# %% [markdown]
# ## Every output format, once
#
# The history can be returned in any of swarms' output types (`output_type=` on `OneToOne`
# or `one_to_one`, or `format_history` on a history you already have). Several names are
# aliases that give the same result; the first line below lists them, then each distinct
# format of the writer/editor history is shown once, under its first name:
# %%
formats = {}  # rendered output -> the names that give it
for output_type in OUTPUT_TYPES:
    rendered = format_history(history, output_type)
    formats.setdefault((type(rendered).__name__, repr(rendered)), []).append(output_type)
aliases = [names for names in formats.values() if len(names) > 1]
print("aliases:", "; ".join(" = ".join(names) for names in aliases))
print()
for names in formats.values():
    rendered = format_history(history, names[0])
    print(f"===== {names[0]!r} -> {type(rendered).__name__}")
    if isinstance(rendered, str):
        print(rendered)
    else:
        pprint(rendered, width=100)
    print()
check(
    "every output type is shown or listed as an alias",
    sorted(name for names in formats.values() for name in names) == sorted(OUTPUT_TYPES),
)
check(
    "the aliases",
    aliases,
    [["dict", "dictionary"], ["string", "str", "all"], ["final", "last"]],
)

# %% [markdown]
# `dict-all-except-first` and `str-all-except-first` leave out **two** entries, not one:
# the task and the first reply. That is swarms' own definition, kept for parity:
# `Conversation.return_all_except_first()` returns `conversation_history[2:]` although its
# docstring says "all messages except the first one". In a swarms `Agent`'s conversation
# the first two entries are the system prompt and the task, so `[2:]` leaves just the
# agent's work. A one-to-one history has no system prompt (it starts with the task), so the
# same slice also drops the sender's first reply. For every reply use `dict` and skip the
# task yourself (`history[1:]`):
# %%
dropped = history[: len(history) - len(format_history(history, "dict-all-except-first"))]
print("dict-all-except-first leaves out:", [f"{m['role']}: {m['content'][:30]}" for m in dropped])
print()
check("it leaves out two entries: the task and the first reply", dropped == history[:2])
check(
    "str-all-except-first leaves out the same two (its lines are the rest's contents)",
    format_history(history, "str-all-except-first") == "\n".join(m["content"] for m in history[2:]),
)
check(
    "every reply, without the task",
    [m["role"] for m in format_history(history, "dict")[1:]],
    ["Writer", "Editor", "Writer", "Editor"],
)

# %% [markdown]
# An unknown format is rejected before any agent runs:
# %%
calls_before = len(writer_model.calls)
try:
    one_to_one(writer, editor, "Write a tagline.", output_type="html", swarm=swarm)
except ValueError as exc:
    print("ValueError:", exc)
    rejected = True
check("'html' was rejected with a ValueError", rejected)
check("before any agent ran (no new model call)", len(writer_model.calls), calls_before)

# %% [markdown]
# ## The pair as a graph
#
# Two nodes named after the agents, each in its own colour (the same in every picture).
# Sender -> receiver is a plain (solid) edge; receiver -> sender is conditional (dashed): it is
# taken while fewer than `max_loops` exchanges are done, after which the graph ends. A pair
# graph is not a swarm, so its edge labels are given here:
# %%
app = pair.graph().compile()
labels = {
    ("start", "Writer"): "the task",
    ("Writer", "Editor"): "replies",
    ("Editor", "Writer"): "loop < max_loops",
    ("Editor", "end"): "max_loops done",
}
png = draw_png(
    app, Path(tempfile.mkdtemp()) / "pair.png", title="Tagline-Pair", edge_labels=labels, dpi=110
)
display(Image(filename=str(png)))
mermaid = app.get_graph().draw_mermaid()
print(mermaid)
drawn = layout_graph(app, edge_labels=labels)
edges = {(s, t): (conditional, label) for s, t, _, conditional, label in drawn.edges}
check("the nodes", sorted(n for n in drawn.boxes if not n.startswith("__")), ["Editor", "Writer"])
check("Writer -> Editor is plain", edges[("Writer", "Editor")], (False, "replies"))
check("Editor -> Writer is conditional", edges[("Editor", "Writer")], (True, "loop < max_loops"))
check("after max_loops the graph ends", edges[("Editor", "__end__")], (True, "max_loops done"))
check(
    "the Mermaid text says the same",
    "Writer --> Editor;" in mermaid and "Editor -.-> Writer;" in mermaid,
)
check(
    "each agent's colour comes from its name",
    [drawn.colours[n] for n in ("Writer", "Editor")],
    [agent_colour("Writer"), agent_colour("Editor")],
)

# %% [markdown]
# ## What you saw
#
# * With `max_loops=2` the writer drafted twice and the editor cut, then approved: `User,
#   Writer, Editor, Writer, Editor`. A second `run` started from the new task alone.
# * Each agent read its own turns as `assistant` and the other's as `user` turns named
#   after it; the editor's task was the writer's draft; the writer's loop-2 request only
#   appended to its loop-1 request.
# * `one_to_one` did the same in one call: the skeptic named the long-haul risk.
# * Every output type was shown once, with `dict = dictionary`, `string = str = all` and
#   `final = last` as aliases; `dict-all-except-first` dropped the task *and* the first reply;
#   an unknown format was rejected before any model call.
# * The pair's graph: Writer → Editor plain, Editor → Writer conditional, Editor → end after
#   `max_loops`.
