# Cells of notebooks/08_parallel.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 08 · Parallel handoffs: fan out, join, merge
#
# ## What you will learn
#
# * a tool that returns **`Parallel(a, b, c)`** hands the conversation to several agents at
#   once: each runs in its own **branch**, at the same time as the others;
# * the **join** answers the tool call with every branch's answer **in the order the agents
#   were given**, whatever order they finished in, and the agent that fanned out speaks next;
# * each branch starts from a **copy of the context**; the join **merges** their changes, with
#   a **merge rule** where several branches write one key, and a **`ContextConflict`** where
#   they disagree and no rule says how to combine them;
# * what the graph looks like (`Send` to a branch node, a join node), a **timeline** of the
#   branches from the run's trajectory, and where each branch's own messages are kept;
# * the same run as an **OpenTelemetry trace**: the branches are sibling spans under the agent
#   that fanned out, drawn as a timeline from the exported spans.
#
# OpenAI Swarm, like most Swarm-style frameworks, keeps only one handoff of a reply (the last). A
# LangGraph state machine has what fan-out needs: `Send` starts one task per branch, a join node
# waits for all of them. Our example is a **research desk**: an Editor asks an Economist, a
# Historian and a Scientist the same question at once, and writes the brief from their answers.
#
# Every model is an offline, rule-based stand-in (`swarmgraph.app.research_desk`): the
# specialists' models wait 0.3, 0.5 and 0.4 seconds per call, as a network call would. Each `✓`
# line is a claim of the text, checked as the notebook runs (`notebooks/checks.py`).
# %%
import json
import operator
import tempfile
import time
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
from checks import check
from IPython.display import Image, display

from swarmgraph import (
    Agent,
    ContextConflict,
    Parallel,
    Result,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    scripted_tool_call,
)
from swarmgraph.app.drawing import agent_colour, draw_png, layout_graph
from swarmgraph.app.research_desk import LATENCY, research_desk, research_model
from swarmgraph.graph import scripted_tool_calls

QUESTION = [{"role": "user", "content": "Why did the bee population fall?"}]

# %% [markdown]
# ## 1. The research desk
#
# The Editor has one tool. It returns `Parallel`: a mapping gives each specialist its own task
# (here the same question, as its only message), and `merge` says how to combine what several
# branches write to one context key. The specialists each `cite` a source (a one-item list in
# `sources`) and answer in a sentence.
#
# ```python
# def ask_specialists(question: str) -> Parallel:
#     """Ask the economist, the historian and the scientist the question, all at once."""
#     return Parallel(dict.fromkeys(specialists, question), merge={"sources": operator.add})
# ```
#
# In the graph, the Editor's node returns `Command(goto=[Send("parallel_branch", ...), ...])`,
# one `Send` per specialist; each branch is a small swarm run of its own (its agent's tools run,
# it may even hand off) until an agent answers; `parallel_join` waits for every branch, then
# hands the turn back to the Editor. The picture draws exactly that.
# %%
editor, specialists = research_desk()
app = build_swarm_graph([editor], chat_model=research_model(), fixed_entry=True).compile()
pictures = Path(tempfile.mkdtemp())
display(Image(filename=str(draw_png(app, pictures / "desk.png", exclude=["dynamic_handoff"]))))
drawn = layout_graph(app, exclude=["dynamic_handoff"])
edges = {(source, target): label for source, target, _, _, label in drawn.edges}
check("the Editor fans out to the branch node", edges[("Editor", "parallel_branch")], "fan out")
check(
    "a branch may run each specialist",
    sorted(t for (s, t), label in edges.items() if s == "parallel_branch"),
    ["Economist", "Historian", "Scientist"],
)
check("each specialist's answer goes to the join", edges[("Historian", "parallel_join")], "answered")
check("the join hands the turn back to the Editor", edges[("parallel_join", "Editor")], "joined")
check("no specialist is a plain handoff of the Editor", ("Editor", "Economist") not in edges)

# %% [markdown]
# ## 2. One question, three specialists at once
#
# `Swarm.run` as always. The run adds three messages to the conversation: the Editor's call,
# **one** tool answer holding every branch's answer (a JSON object, in the order the specialists
# were given), and the brief. The `sources` each specialist cited are concatenated by the merge rule, in the
# same order.
# %%
swarm = Swarm(chat_model=research_model())
started = time.perf_counter()
response = swarm.run(editor, QUESTION)
wall = time.perf_counter() - started
for message in response.messages:
    calls = [f"⚙ {c['function']['name']}({c['function']['arguments']})" for c in message.get("tool_calls") or []]
    print(f"{message['role']:>9} {message.get('sender') or '':<7} {message['content'] or ' '.join(calls)}")
print()
joined = json.loads(response.messages[1]["content"])
check("the run added three messages to the conversation", len(response.messages), 3)
check("the join lists the answers in the order given", list(joined), ["Economist", "Historian", "Scientist"])
check(
    "the merge rule concatenated the sources in that order",
    response.context_variables["sources"],
    ["FAO honey market report", "Beekeeping records 1900-2000", "Pesticide field studies"],
)
check("the Editor spoke next and holds the conversation", response.agent.name, "Editor")

# %% [markdown]
# ## 3. A timeline of the branches
#
# The run's `trajectory` lists every step; inside a branch each step carries `branch`, and each
# branch ends with a `"branch"` step holding its start and end (seconds since the run began).
# Each specialist calls its model twice (to cite, then to answer), so its branch takes about
# twice its model's wait: 0.6 s, 1.0 s and 0.8 s. They run side by side, so the Historian
# finishes last, yet the join above still lists it second. Each bar has its agent's colour,
# the one the graph pictures give it.
# %%
spans = {s["branch"]: (s["start"], s["end"]) for s in response.trajectory if s["kind"] == "branch"}
given = [branch["branch"] for branch in response.branches]  # the order the agents were given
fig, ax = plt.subplots(figsize=(7, 2.2))
for row, label in enumerate(given):
    start, end = spans[label]
    ax.barh(row, end - start, left=start, color=agent_colour(label), edgecolor="#333344")
    ax.text(end + 0.02, row, f"{label} ({LATENCY[label]} s a call)", va="center", fontsize=9)
ax.set_yticks([])
ax.invert_yaxis()
ax.set_xlabel("seconds since the run began")
ax.set_title("the research desk's branches, as the trajectory recorded them")
ax.set_xlim(0, max(end for _, end in spans.values()) + 0.7)
plt.tight_layout()
bar_colours = [matplotlib.colors.to_hex(bar.get_facecolor()) for bar in ax.patches]
check(
    "each bar has its agent's colour, as in the graph pictures",
    bar_colours,
    [matplotlib.colors.to_hex(agent_colour(label)) for label in given],
)
fig.savefig(pictures / "timeline.png", dpi=100)  # (drawing the graph set matplotlib to files)
plt.close(fig)
display(Image(filename=str(pictures / "timeline.png")))
order = [label for label, _ in sorted(spans.items(), key=lambda item: item[1][1])]
check("the branches finished in another order than they were given", order, ["Economist", "Scientist", "Historian"])
check("all three ran at the same time", max(s for s, _ in spans.values()) < min(e for _, e in spans.values()))
branch_time = sum(end - start for start, end in spans.values())
check("the whole run took less than the branches' times added up", wall < branch_time)
steps = [s for s in response.trajectory if s.get("branch") == "Scientist"]
check("each step inside a branch names its branch", [s["kind"] for s in steps], ["model", "tool", "model", "branch"])
check(
    "usage is counted per agent, branches included",
    {name: counts["model_calls"] for name, counts in sorted(response.usage["by_agent"].items())},
    {"Economist": 2, "Editor": 2, "Historian": 2, "Scientist": 2},
)

# %% [markdown]
# ## 4. Where each branch's own messages are
#
# A branch's own messages (its tool calls, their answers, its reply) are not in the main
# conversation, which only gets the joined answer. They are in `response.branches`, one entry
# per branch in the order given, and travel with the joined answer's message, so a `Session`
# stores them with the turn (`swarmgraph history` and the REPL's `/history` show them).
# %%
for branch in response.branches:
    said = [m.get("content") or f"⚙ {m['tool_calls'][0]['function']['name']}" for m in branch["messages"]]
    print(f"{branch['branch']:<10} {branch['status']:<9} {said}")
print()
check("response.branches keeps every branch, in the order given", [b["branch"] for b in response.branches], ["Economist", "Historian", "Scientist"])
check("each kept its three messages", [len(b["messages"]) for b in response.branches], [3, 3, 3])
kept = response.langchain_messages[1].additional_kwargs["swarmgraph_branches"]
check("the joined answer carries them too", [b["branch"] for b in kept], ["Economist", "Historian", "Scientist"])

# %% [markdown]
# ## 5. When branches disagree: `ContextConflict`
#
# Each branch starts from a copy of the context at the fan-out; the join merges the changes in
# the order the agents were given. Two branches that write one key with different values, and
# no merge rule for it, are a conflict: the run stops with `ContextConflict` (a `SwarmError`).
# Nothing is dropped silently: `.conflicts` names every key and each branch's value, and
# `.response` holds the run so far, the fan-out call answered, every other key merged.
# %%
def verdict(value):
    def give_verdict(context_variables: dict) -> str:
        """Record your verdict."""
        context_variables["verdict"] = value
        context_variables[f"{value}_notes"] = "written"
        return "noted"

    return give_verdict


optimist = Agent(name="Optimist", model="optimist", functions=[verdict("recovering")])
pessimist = Agent(name="Pessimist", model="pessimist", functions=[verdict("declining")])


def ask_both() -> Parallel:
    """Ask both at once."""
    return Parallel(optimist, pessimist)


chair = Agent(name="Chair", model="chair", functions=[ask_both])
models = {
    "chair": ScriptedChatModel([scripted_tool_call("ask_both"), "Decided."]),
    "optimist": ScriptedChatModel([scripted_tool_call("give_verdict"), "It recovers."]),
    "pessimist": ScriptedChatModel([scripted_tool_call("give_verdict"), "It declines."]),
}
try:
    Swarm(chat_model=models.__getitem__).run(chair, QUESTION, context_variables={"verdict": None})
except ContextConflict as conflict:
    print(conflict)
    print()
    check("the conflict names the key and each branch's value", conflict.conflicts, {"verdict": {"Optimist": "recovering", "Pessimist": "declining"}})
    check(
        "the keys that did not conflict are merged",
        conflict.response.context_variables,
        {"verdict": None, "recovering_notes": "written", "declining_notes": "written"},
    )
    check("the fan-out call is answered", json.loads(conflict.response.messages[1]["content"]), {"Optimist": "It recovers.", "Pessimist": "It declines."})

# %% [markdown]
# A **merge rule** resolves it: `Parallel(..., merge={"verdict": rule})`, where `rule(old,
# new)` is folded over the branches' values, starting from the value at the fan-out. With a
# rule, a branch's value is its *contribution*: `operator.add` on lists (as the research desk's
# `sources`) collects every branch's items; here a rule keeps both verdicts.
# %%
def both_verdicts(old, new):
    return f"{old} / {new}" if old else new


def ask_both_merged() -> Parallel:
    """Ask both at once."""
    return Parallel(optimist, pessimist, merge={"verdict": both_verdicts})


chair = Agent(name="Chair", model="chair", functions=[ask_both_merged])
for model in models.values():
    model.reset()
models["chair"] = ScriptedChatModel([scripted_tool_call("ask_both_merged"), "Decided."])
merged = Swarm(chat_model=models.__getitem__).run(chair, QUESTION, context_variables={"verdict": None})
check("the rule combined both verdicts, in the order given", merged.context_variables["verdict"], "recovering / declining")

# %% [markdown]
# A **typed context's reducers are merge rules too.** With `Swarm(context_schema=Ledger)`, a key
# declared `lookups: Annotated[int, operator.add]` needs no `merge=`. Each branch reports its
# *final* context, in which its own `Result(context_variables={"lookups": 1})` was already added
# to the value at the fan-out; so an additive reducer merges what each branch **added**, not
# what it ended with. From 2, with both branches adding one, the join says 4 (folding `+` over
# the final values, 3 and 3, would say 8).
# %%
from typing import Annotated

from pydantic import BaseModel


class Ledger(BaseModel):
    lookups: Annotated[int, operator.add] = 0
    seen_by: Annotated[list[str], operator.add] = []


def looked_up(name):
    def look_up() -> Result:
        """Look it up."""
        return Result(value="found", context_variables={"lookups": 1, "seen_by": [name]})

    return look_up


finders = [Agent(name=n, model=n.lower(), functions=[looked_up(n)]) for n in ("Optimist", "Pessimist")]


def ask_finders() -> Parallel:
    """Ask both at once."""
    return Parallel(*finders)


typed_models = {
    "chair": ScriptedChatModel([scripted_tool_call("ask_finders"), "Decided."]),
    "optimist": ScriptedChatModel([scripted_tool_call("look_up"), "Found it."]),
    "pessimist": ScriptedChatModel([scripted_tool_call("look_up"), "Found it too."]),
}
chair = Agent(name="Chair", model="chair", functions=[ask_finders])
typed = Swarm(chat_model=typed_models.__getitem__, context_schema=Ledger).run(
    chair, QUESTION, context_variables={"lookups": 2, "seen_by": ["Chair"]}
)
ended = [branch["context_variables"]["lookups"] for branch in typed.branches]
print("each branch ended with lookups =", ended)
print("joined:", typed.context_variables)
print()
check("each branch ended with its own +1 on the 2 at the fan-out", ended, [3, 3])
check("the join added what each branch added", typed.context_variables["lookups"], 4)
check("the list reducer joined each branch's items, in the order given", typed.context_variables["seen_by"], ["Chair", "Optimist", "Pessimist"])

# %% [markdown]
# ## 6. Streaming the branches
#
# With `stream=True` the branches' replies arrive interleaved, as they are produced. One
# `{"delim": "start"}` / `{"delim": "end"}` pair wraps the fan-out, and every delta of a branch
# carries `sender` and `branch`, so a reader can put each one's words back together.
# %%
events = list(Swarm(chat_model=research_model(latency=0.05)).run(editor, QUESTION, stream=True))
said = {}
for event in events:
    if "branch" in event and event.get("content"):
        said[event["branch"]] = said.get(event["branch"], "") + event["content"]
for label, text in sorted(said.items()):
    print(f"{label:<10} {text}")
print()
check("every branch's words came back whole", sorted(said), ["Economist", "Historian", "Scientist"])
check("the stream ends with the same join", json.loads(events[-1]["response"].messages[1]["content"]), joined)

# %% [markdown]
# ## 7. When the model calls several transfers at once
#
# Without `Parallel`, a model may still call two transfer tools in one reply. Swarm runs both and
# keeps the last (and so do we by default: `Swarm(parallel_handoffs="last")`);
# `parallel_handoffs="first"` keeps the first and does not run the second. With
# `parallel_handoffs="all"`, every target runs as a branch, and each transfer call is answered
# with its own branch's answer.
# %%
sales, refunds = Agent(name="Sales", model="sales"), Agent(name="Refunds", model="refunds")
triage = Agent(name="Triage", model="triage", handoffs=[sales, refunds])


def two_teams():
    both = scripted_tool_calls([("transfer_to_sales", {}), ("transfer_to_refunds", {})])
    return {
        "triage": ScriptedChatModel([both, "Sales and Refunds both answered."]),
        "sales": ScriptedChatModel(["A new hive is $120."]),
        "refunds": ScriptedChatModel(["Order 7 is refunded."]),
    }


ask = [{"role": "user", "content": "Refund order 7 and quote me a hive"}]
last = Swarm(chat_model=two_teams().__getitem__).run(triage, ask)
first = Swarm(chat_model=two_teams().__getitem__, parallel_handoffs="first").run(triage, ask)
every = Swarm(chat_model=two_teams().__getitem__, parallel_handoffs="all").run(triage, ask)
print("last: ", [m["content"] for m in last.messages[1:]])
print("first:", [m["content"] for m in first.messages[1:]])
print("all:  ", [m["content"] for m in every.messages[1:]])
print()
check("'last' (Swarm's rule) hands off to Refunds, the last transfer", last.agent.name, "Refunds")
check("'first' hands off to Sales only", first.agent.name, "Sales")
check(
    "'first' does not run the second transfer",
    first.messages[2]["content"].startswith("Error: transfer_to_refunds was not run"),
)
check("'all' answers each transfer with its branch", [m["content"] for m in every.messages[1:3]], ["A new hive is $120.", "Order 7 is refunded."])

# %% [markdown]
# ## 8. The fan-out as a trace
#
# With an OpenTelemetry tracer provider configured, every run is a trace in the GenAI
# conventions (docs/tracing.md): an `invoke_agent` span per agent turn, `chat` per model call,
# `execute_tool` per tool call, and a `branch` span per branch of a fan-out. Here the spans go
# to the SDK's in-memory exporter (a real program sends them to a collector), and the picture
# is drawn from what it exported: one row per span, indented under its parent. The three
# branches are siblings under the Editor's turn, side by side in time, each holding its
# specialist's turn and its two model calls. No message text is in any span: content is
# recorded only when asked for.
# %%
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swarmgraph.graph.features.tracing import use_tracer_provider

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
use_tracer_provider(provider)  # swarmgraph's runs only (trace.set_tracer_provider: everything)
try:
    traced = Swarm(chat_model=research_model()).run(editor, QUESTION)
finally:
    use_tracer_provider(None)
finished = exporter.get_finished_spans()
by_id = {span.context.span_id: span for span in finished}
parent = {span.name: by_id[span.parent.span_id].name for span in finished if span.parent is not None}
root = next(span for span in finished if span.parent is None)


def depth(span):
    return 0 if span.parent is None else 1 + depth(by_id[span.parent.span_id])


def rows_under(span):
    """The span, then its children's rows (branches in the order given, the rest as they began)."""
    kids = [s for s in finished if s.parent is not None and s.parent.span_id == span.context.span_id]
    fanned = min((s.start_time for s in kids if s.name.startswith("branch ")), default=0)

    def when(s):  # the branches together, as they fanned out, in the order given
        return (fanned, given.index(s.name[7:])) if s.name.startswith("branch ") else (s.start_time, -1)

    kids.sort(key=when)
    return [span] + [row for kid in kids for row in rows_under(kid)]


rows = rows_under(root)
fig, ax = plt.subplots(figsize=(8, 4.6))
for row, span in enumerate(rows):
    start, end = [(t - root.start_time) / 1e9 for t in (span.start_time, span.end_time)]
    agent = span.attributes.get("gen_ai.agent.name", "Editor")
    ax.barh(row, max(end - start, 0.004), left=start, color=agent_colour(agent), edgecolor="#333344")
    ax.text(end + 0.02, row, "  " * depth(span) + span.name, va="center", fontsize=8)
ax.set_yticks([])
ax.invert_yaxis()
ax.set_xlabel("seconds since the run began")
ax.set_title("the research desk's run, as OpenTelemetry spans")
ax.set_xlim(0, (root.end_time - root.start_time) / 1e9 + 1.2)
plt.tight_layout()
fig.savefig(pictures / "trace.png", dpi=100)
plt.close(fig)
display(Image(filename=str(pictures / "trace.png")))
for label in given:
    print(f"{'branch ' + label:<18} under {parent['branch ' + label]!r}")
print()
branches = [span for span in finished if span.name.startswith("branch ")]
check("one run is one trace", len({span.context.trace_id for span in finished}), 1)
check("the branches are siblings under the Editor's turn", {parent[s.name] for s in branches}, {"invoke_agent Editor"})


def kinds_under(name):
    [owner] = [span for span in finished if span.name == name]
    return [s.name.split()[0] for s in finished if s.parent is not None and s.parent.span_id == owner.context.span_id]


check(
    "each branch holds its specialist's turn, and that turn its two model calls",
    {label: (parent[f"invoke_agent {label}"], kinds_under(f"invoke_agent {label}").count("chat")) for label in given},
    {label: (f"branch {label}", 2) for label in given},
)
check("the branch spans ran at the same time", max(s.start_time for s in branches) < min(s.end_time for s in branches))
check(
    "no message text is in any span",
    not any(QUESTION[0]["content"] in str(value) for span in finished for value in (span.attributes or {}).values()),
)

# %% [markdown]
# ## What you saw
#
# * `Parallel(...)` returned by a tool ran three specialists **at the same time**; the run took
#   about as long as the slowest branch, not as long as all three added up.
# * The **join** answered the call with every answer **in the order given**, although the
#   branches finished in another order, and the Editor spoke next.
# * Each branch's context changes were **merged**: a merge rule concatenated the `sources`;
#   two different `verdict`s without a rule stopped the run with a **`ContextConflict`** that
#   named every conflicting write, and a rule combined them instead. A typed context's
#   **reducers** merged without `merge=`: an additive one added what each branch added (2 + 1 +
#   1 = 4, not 3 + 3 + 2).
# * The **graph** draws the fan-out (`parallel_branch`) and the join (`parallel_join`); the
#   **trajectory** says which branch took each step, and when each branch ran.
# * Each branch's own messages are in **`response.branches`** (and stored with the joined
#   answer), the main conversation gets one joined answer; with `stream=True` every delta names
#   its branch; `parallel_handoffs="all"` fans out a reply that calls several transfers.
# * With a tracer provider configured, the run was **one OpenTelemetry trace**: the branches
#   were sibling spans under the Editor's turn, running side by side, with no message text.
