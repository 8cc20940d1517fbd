# Cells of notebooks/05_one_to_one.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 05 · OneToOne: two agents, one shared conversation
#
# The swarms framework has a small pattern called **OneToOne**: two agents take turns on one
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
# `swarmgraph.Agent`s whose models are rule-based `ScriptedChatModel`s, so the exchange is offline,
# deterministic, and still reacts to what the other agent said.
# %%
import re
import tempfile
from pathlib import Path
from pprint import pprint

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
from swarmgraph.app.drawing import draw_png

# %% [markdown]
# ## Writer and Editor
#
# The writer drafts product taglines; the editor wants six words or fewer. Both "models" are
# small rule sets that read the request they were sent:
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

# %% [markdown]
# `OneToOne` is the reusable form: it keeps the pair and its settings, and every `run` starts
# a brand-new conversation (nothing carries over between tasks):
# %%
again = pair.run("Write a tagline for a bicycle lock.")
print([m["role"] for m in again])
print(again[0]["content"])

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

# %% [markdown]
# ## Every output format
#
# The history can be returned in any of swarms' output types (`output_type=` on `OneToOne`
# or `one_to_one`, or `format_history` on a history you already have). Here is the
# writer/editor history in each of them:
# %%
for output_type in OUTPUT_TYPES:
    rendered = format_history(history, output_type)
    print(f"===== {output_type!r} -> {type(rendered).__name__}")
    if isinstance(rendered, str):
        print(rendered)
    else:
        pprint(rendered, width=100)
    print()

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
print("every reply, without the task:    ", [m["role"] for m in format_history(history, "dict")[1:]])

# %% [markdown]
# An unknown format is rejected before any agent runs:
# %%
try:
    one_to_one(writer, editor, "Write a tagline.", output_type="html", swarm=swarm)
except ValueError as exc:
    print("ValueError:", exc)

# %% [markdown]
# ## The pair as a graph
#
# Two nodes named after the agents. Sender -> receiver is a plain edge; receiver -> sender is
# conditional (dashed): it is taken while fewer than `max_loops` exchanges are done, after
# which the graph ends.
# %%
app = pair.graph().compile()
png = draw_png(app, Path(tempfile.mkdtemp()) / "pair.png", title="Tagline-Pair", dpi=110)
display(Image(filename=str(png)))
print(app.get_graph().draw_mermaid())
