# Cells of notebooks/04_memory_models.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 04 · Memory models: what the model is shown as a conversation grows
#
# Storing every message is easy; *sending* every message on every turn is what costs tokens
# and eventually overflows the context window. A **memory policy** decides which part of the
# stored conversation the model is shown on the next turn. `swarmgraph.Session` supports four:
#
# | policy | shows the model |
# |---|---|
# | `BufferMemory()` | everything ever said |
# | `WindowMemory(k)` | the last `k` messages |
# | `TokenTrimMemory(n)` | the newest messages that fit in `n` tokens (starting on a user turn) |
# | `SummaryMemory(model, k)` | the last `k` messages, plus a running summary of all older ones |
#
# The experiment: a 64-turn conversation. In turn 1 the user mentions a fact ("my locker
# code is 4711"); 62 turns of unrelated chat follow; in the last turn the user asks for the
# code. The same scripted conversation runs under each policy. For every turn we look at the
# request the chat model actually received (`ScriptedChatModel.calls`) and record
#
# * how many tokens it was sent (approximate count, the summariser's tokens included), and
# * whether the early fact was anywhere in what it was sent, i.e. whether it *could* recall it.
#
# Nothing here is estimated from the policy's definition: both numbers are read off the
# recorded requests.
# %%
import re
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from langchain_core.messages.utils import count_tokens_approximately

from swarmgraph import Agent, ScriptedChatModel, Swarm
from swarmgraph.memory import BufferMemory, Session, SummaryMemory, TokenTrimMemory, WindowMemory

# %% [markdown]
# ## The scripted conversation
#
# The user's side is fixed text. The assistant's side is a rule-based model: for the final
# question it searches *what it was sent* for the code and answers only if it finds it.
# %%
FACT = "4711"
TOPICS = [
    ("a weekend hike", "the trail map"),
    ("a birthday dinner", "the reservation"),
    ("my running plan", "the rest days"),
    ("a trip to Lisbon", "the tram tickets"),
    ("learning the guitar", "the chord changes"),
    ("repainting the kitchen", "the primer"),
    ("a job interview", "the questions to ask"),
    ("a camping weekend", "the tent pegs"),
]
N_FILLER = 62

user_turns = [f"Hi! Something to keep in mind: my locker code is {FACT}. Now, about my week."]
for i in range(N_FILLER):
    topic, detail = TOPICS[i % len(TOPICS)]
    evenings = ["one evening", "two evenings", "three evenings"][i % 3]
    user_turns.append(
        f"Turn {i + 2}: I'm thinking about {topic} again. What should I do about {detail} "
        f"if I only have {evenings} free this week?"
    )
user_turns.append("What was my locker code again?")


def assistant_rules(messages):
    question = messages[-1].content
    if "locker code again" in question:
        seen = " ".join(str(m.content) for m in messages)
        found = re.search(r"locker code is (\d+)", seen)
        if found:
            return f"Your locker code is {found[1]}."
        return "Sorry, I don't know your locker code."
    detail = re.search(r"do about (.+?) if", question)
    return f"For {detail[1] if detail else 'that'}, start small and do one step per evening."


def summariser_rules(messages):
    """Extend the summary: keep every 'my X is Y' fact, count the lines summarised."""
    body = messages[-1].content
    existing, new_lines = body.split("\n\nNew lines:\n", 1)
    previous = existing.removeprefix("Existing summary:\n")
    facts = [line for line in previous.splitlines() if line.startswith("- ")]
    count = re.search(r"Lines summarised: (\d+)", previous)
    total = (int(count[1]) if count else 0) + len(new_lines.splitlines())
    for line in new_lines.splitlines():
        if line.startswith("User:"):
            for what, value in re.findall(r"\bmy ([a-z ]+?) is (\w+)", line):
                fact = f"- The user's {what} is {value}."
                if fact not in facts:
                    facts.append(fact)
    return "\n".join([*facts, f"Lines summarised: {total} (small talk about plans)."])


print(len(user_turns), "user turns; the first one:", repr(user_turns[0]))
print("a filler turn:", repr(user_turns[1]))

# %% [markdown]
# ## Run it under each policy
#
# Each policy gets its own conversation in a throwaway SQLite file, its own `Session`, and
# its own scripted model. Each turn is one `Session.run`: load what the policy shows, run the
# agent, store the new messages.
# %%
workdir = Path(tempfile.mkdtemp())
url = f"sqlite:///{workdir / 'memory-models.db'}"
summariser = ScriptedChatModel(respond=summariser_rules)
policies = {
    "buffer": BufferMemory(),
    "window (10 msgs)": WindowMemory(10),
    "token trim (500)": TokenTrimMemory(500),
    "summary (keep 10)": SummaryMemory(summariser, keep_last=10),
}
agent = Agent(name="Assistant", instructions="You are a helpful assistant.")

runs = {}
for label, policy in policies.items():
    model = ScriptedChatModel(respond=assistant_rules)
    swarm = Swarm(chat_model=model)
    session = Session(f"locker-{label}", url=url, persist=("messages",), memory=policy)
    tokens, visible = [], []
    for text in user_turns:
        before = len(summariser.calls) if label.startswith("summary") else 0
        calls_before = len(model.calls)
        response = session.run(swarm, agent, text)
        sent = [m for call in model.calls[calls_before:] for m in call]
        extra = summariser.calls[before:] if label.startswith("summary") else []
        tokens.append(
            sum(count_tokens_approximately(c) for c in model.calls[calls_before:])
            + sum(count_tokens_approximately(c) for c in extra)
        )
        visible.append(any(FACT in str(m.content) for m in sent))
    runs[label] = {
        "tokens": tokens,
        "visible": visible,
        "answer": response.messages[-1]["content"],
        "stored": len(session.messages),
        "last_request": model.calls[-1],
    }
print("done:", {label: len(r["tokens"]) for label, r in runs.items()}, "turns each")

# %% [markdown]
# ## Tokens sent per turn, and whether the early fact was still visible
#
# Once the window is full, three policies send about the same number of tokens, so on one
# chart their lines lie on top of each other. One small chart per policy instead: the
# policy in colour on its own scale, the other three in grey for comparison (buffer's grey
# line runs off the top of the others' charts).
# %%
turns = range(1, len(user_turns) + 1)
colours = dict(zip(runs, ["tab:blue", "tab:orange", "tab:purple", "tab:green"], strict=True))
fig = plt.figure(figsize=(10, 8))
grid = fig.add_gridspec(3, 2, height_ratios=[2, 2, 1.5])
panels = [fig.add_subplot(grid[i // 2, i % 2]) for i in range(len(runs))]
for ax in panels[1:]:
    ax.sharex(panels[0])
for ax, (label, run) in zip(panels, runs.items(), strict=True):
    for other, other_run in runs.items():
        if other != label:
            ax.plot(turns, other_run["tokens"], color="0.8", linewidth=1)
    ax.plot(turns, run["tokens"], color=colours[label], linewidth=2)
    ax.set_ylim(0, max(run["tokens"]) * 1.25)
    ax.set_title(label, color=colours[label], fontsize=10)
    ax.grid(alpha=0.3)
for ax in panels[0::2]:
    ax.set_ylabel("tokens sent")
fig.suptitle("What each memory policy sends, turn by turn (grey: the other policies)")

ax_seen = fig.add_subplot(grid[2, :], sharex=panels[0])
for row, run in enumerate(runs.values()):
    seen = [t for t, v in zip(turns, run["visible"], strict=True) if v]
    unseen = [t for t, v in zip(turns, run["visible"], strict=True) if not v]
    ax_seen.scatter(seen, [row] * len(seen), marker="s", s=14, color="tab:green")
    ax_seen.scatter(unseen, [row] * len(unseen), marker="x", s=14, color="tab:red")
ax_seen.set_yticks(range(len(runs)), list(runs))
ax_seen.set_ylim(-0.6, len(runs) - 0.4)
ax_seen.invert_yaxis()
ax_seen.set_xlabel("turn")
ax_seen.set_title(f"was '{FACT}' (said in turn 1) in the request?  ■ yes   × no", fontsize=10)
fig.tight_layout()
plt.show()
print("one chart per policy:", ", ".join(ax.get_title() for ax in panels))

# %% [markdown]
# ## The numbers behind the plot
# %%
header = (
    f"{'policy':18} | {'tokens, all turns':>17} | {'tokens, last turn':>17} | "
    f"{'fact seen until turn':>20} | answer to the last question"
)
print(header)
print("-" * len(header))
for label, run in runs.items():
    last_seen = max((t for t, v in zip(turns, run["visible"], strict=True) if v), default=0)
    seen_at_end = "yes" if run["visible"][-1] else "no"
    print(
        f"{label:18} | {sum(run['tokens']):>17} | {run['tokens'][-1]:>17} | "
        f"{last_seen if seen_at_end == 'no' else 'the end':>20} | {run['answer']}"
    )

# %% [markdown]
# Reading the plot and the table:
#
# * **buffer** never forgets, and pays for it: the request grows with every turn, so the
#   total cost grows with the square of the conversation length.
# * **window** and **token trim** are flat and cheap, but the fact falls out of view a few
#   turns after it was said; at the end they cannot answer.
# * **summary** is flat too (each turn adds a small summariser call for the two messages
#   that just left the window), and the fact survives because the summariser was asked to
#   keep names and numbers. A summary is only as good as its summariser: a real model may
#   drop the one detail you need, and it costs an extra model call.
#
# What the summary policy actually sent on the final turn: the summary as a system message,
# then the last ten messages.
# %%
for m in runs["summary (keep 10)"]["last_request"][:4]:
    print(f"[{m.type}] {m.content}")
print("...")

# %% [markdown]
# The store keeps every message regardless of the policy (the policy only chooses what is
# *shown*), so switching policy later loses nothing:
# %%
for label, run in runs.items():
    print(f"{label:18} stored messages: {run['stored']}")

# %% [markdown]
# ## Ten facts, 200 turns: tokens against what is remembered
#
# One fact is a toy. `benchmarks/recall.py` (part of `make bench`) states **ten** facts in the
# first ten turns (name, order number, city, phone, email, ...), chats for 180 turns, then asks
# about each fact in the last ten. For every policy it counts all tokens sent over the
# conversation and how many of the facts were in the prompt on the turn that asked for them.
#
# It adds a fifth policy that is not a history policy at all, **context-backed**:
# `extract_context` pulls the facts out of what the user said into `context_variables`
# (regex rules, no model call), the agent's instructions show them, and the history the model
# sees is only a 4-message window. The summary policy here uses a lossy scripted summariser
# with a fixed word budget, as a real summary of bounded size forgets older details.
# %%
import sys

from IPython.display import Image, display

sys.path.insert(0, str(Path.cwd().parent))  # the repository root, where benchmarks/ lives
from benchmarks.recall import pareto_front, plot_pareto, run_recall

recall = run_recall(turns=200)
print(f"{'policy':18} {'total tokens':>12} {'of buffer':>9} {'facts kept':>10}")
for name, row in recall["policies"].items():
    share = f"{row['share_of_buffer']:.1%}"
    kept = f"{row['facts_kept']} / {recall['facts']}"
    print(f"{name:18} {row['total_tokens']:>12,} {share:>9} {kept:>10}")
print("Pareto front:", ", ".join(pareto_front(recall["policies"])))

with tempfile.TemporaryDirectory() as folder:
    chart = Path(folder) / "pareto.png"
    plot_pareto(recall["policies"], str(chart))
    display(Image(filename=str(chart)))

# %% [markdown]
# Only **context-backed** is on the Pareto front (green). **Buffer** keeps every fact too,
# but pays for the whole transcript on every turn; context-backed keeps them for a small
# fraction of that, because the key fields travel as a few dozen tokens of instructions
# instead of as old messages. Windows, token trims and a bounded summary are cheaper than
# buffer but lose the facts that were said early. Notebook 03's lesson, in numbers: put what
# must be remembered into context, and let the history the model reads be short.
