# Cells of notebooks/01_agents_and_handoffs.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 01 · Agents and handoffs
#
# ## What you will learn
#
# * an **Agent is passive configuration**: the framework reads its instructions, model and
#   functions; the agent never acts and remembers nothing between runs;
# * **instruction functions** (called by the framework, they become the system prompt) and
#   **tool functions** (chosen by the model, their result becomes a tool message) are two
#   different roads;
# * the **model** is whatever the active agent names: it changes only when the agent does;
# * a **handoff** has three owners: the model decides *whether*, the programmer decided
#   *where*, the framework *switches*;
# * in the graph, agents are nodes and handoffs are conditional edges, and how to read the
#   picture.
#
# Every model here is an **offline stand-in**: `ScriptedChatModel` replays replies written in
# this notebook and records each request it received (`.calls`) and the tools it was offered
# (`.bound_tools`). So the *replies* are ours; what the notebook shows and checks is what the
# *framework* did with them. Each `✓` line below is a claim of the text, checked while the
# notebook runs (`check` lives in `notebooks/checks.py`): if one did not hold, the notebook
# would stop there and quote it.
# %%
import json
import tempfile
from pathlib import Path

import matplotlib.text
from checks import check
from IPython.display import Image, display

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call
from swarmgraph.app.demo import DEMO_CONVERSATION, demo_agents, demo_model
from swarmgraph.app.drawing import agent_colour, draw_figure, draw_png, layout_graph


def show(messages):
    """Print what a model call received, one line per message."""
    for m in messages:
        label = m.type + (f" {m.name}" if getattr(m, "name", None) else "")
        parts = [m.content] if m.content else []
        parts += [f"-> calls {c['name']}({c['args']})" for c in getattr(m, "tool_calls", [])]
        print(f"  [{label}] {' '.join(parts)}")


def user(text):
    return [{"role": "user", "content": text}]


# %% [markdown]
# ## 1. An Agent does nothing; it is read
#
# An `Agent` holds what the framework needs: a name, instructions, a model name and a list of
# functions. It has no methods that talk to a model and keeps no record of any conversation.
# On every turn the framework *pulls* `agent.instructions`, `agent.model` and
# `agent.functions` out of it; the agent never pushes anything.
#
# Because it holds no state, one agent can be created once and reused for any number of
# conversations. Below, the same `support` object serves two unrelated runs: its fields are
# identical before and after, and the second run's model call carries nothing of the first.
# %%
def lookup_order(order_id: int) -> str:
    """Look up the delivery status of an order."""
    return f"Order {order_id} shipped yesterday."


support = Agent(
    name="Support",
    model="gpt-4o-mini",
    instructions="You are Support. Be brief.",
    functions=[lookup_order],
)
before = support.model_dump()

model = ScriptedChatModel(  # offline stand-in: these three replies are scripted
    [
        scripted_tool_call("lookup_order", {"order_id": 7}),
        "Order 7 shipped yesterday.",
        "Hello Li, how can I help?",
    ]
)
swarm = Swarm(chat_model=model)
first = swarm.run(agent=support, messages=user("Where is order 7?"))
second = swarm.run(agent=support, messages=user("Hi, I'm Li."))

print(support)
print("run 1 -> (scripted)", first.messages[-1]["content"])
print("run 2 -> (scripted)", second.messages[-1]["content"])
print()
check("the agent's fields are unchanged after two runs", support.model_dump() == before)
check(
    "the system prompt of the first call is agent.instructions",
    model.calls[0][0].content,
    support.instructions,
)
check(
    "the tools offered are agent.functions",
    [t["function"]["name"] for t in model.bound_tools[0]],
    [f.__name__ for f in support.functions],
)
check(
    "run 2's model call carries nothing of run 1 (system prompt + its own message)",
    [m.content for m in model.calls[2]],
    ["You are Support. Be brief.", "Hi, I'm Li."],
)

# %% [markdown]
# ## 2. Instruction functions and tool functions are two roads
#
# Both are Python functions you write, but they are called by different parties and their
# results go to different places:
#
# | | instruction function | tool function |
# |---|---|---|
# | who calls it | the **framework**, before each model call | the **model** (framework runs it) |
# | it gets | `context_variables` | the model's arguments (+ `context_variables` if declared) |
# | its result becomes | the **system prompt** | a **tool message** in the conversation |
#
# So an instruction function only *describes* the situation (no database, no API calls);
# real work belongs in tools. We record every call of the instruction function and then
# look at the two model calls of one run.
# %%
instruction_calls = []


def support_instructions(context_variables):
    instruction_calls.append(dict(context_variables))
    tone = "warm, VIP" if context_variables.get("vip") else "professional"
    return f"You are Support for {context_variables.get('name', 'a customer')}. Tone: {tone}."


support_fn = Agent(name="Support", instructions=support_instructions, functions=[lookup_order])
model = ScriptedChatModel(  # offline stand-in
    [scripted_tool_call("lookup_order", {"order_id": 7}), "Good news: order 7 shipped yesterday."]
)
response = Swarm(chat_model=model).run(
    agent=support_fn,
    messages=user("Where is order 7?"),
    context_variables={"name": "Li", "vip": True},
)

for i, call in enumerate(model.calls):
    print(f"model call {i} received:")
    show(call)
print("the conversation the run returned (roles):", [m["role"] for m in response.messages])
print()
check(
    "the framework called the instruction function once per model call",
    len(instruction_calls) == len(model.calls) == 2,
)
check(
    "each time with the run's context_variables",
    instruction_calls,
    [{"name": "Li", "vip": True}] * 2,
)

# %% [markdown]
# The instruction function's text arrived as the `system` message of each call and is not
# part of the returned conversation. The tool's return value came back as a `tool` message
# that the model read on its second call, and it *is* part of the conversation.
# %%
prompt = "You are Support for Li. Tone: warm, VIP."
check(
    "each call opened with the instruction function's text as its system message",
    [(call[0].type, call[0].content) for call in model.calls],
    [("system", prompt)] * 2,
)
check(
    "no system message in the returned conversation",
    "system" not in [m["role"] for m in response.messages],
)
check(
    "the second call ended with the tool's result as a tool message",
    (model.calls[1][-1].type, model.calls[1][-1].content),
    ("tool", lookup_order(7)),
)
check(
    "that tool message is part of the returned conversation",
    (response.messages[1]["role"], response.messages[1]["content"]),
    ("tool", lookup_order(7)),
)

# %% [markdown]
# ## 3. The model is the agent's choice
#
# The framework does not pick a model: it reads `agent.model` and asks for that name. With
# `Swarm(chat_model=resolver)` where `resolver` is a function `model name -> chat model`, we
# can watch which name each call asked for. A cheap triage agent hands off to an expert
# agent that names a bigger model; the model changes exactly when the agent changes.
# %%
served = []  # (model name, agent system prompt) per call, in call order


def replies(model_name, *answers):
    """A scripted (offline) model whose replies also log which model served which agent."""

    def reply(answer):
        def respond(messages):
            served.append((model_name, messages[0].content))
            return answer

        return respond

    return ScriptedChatModel([reply(a) for a in answers])


models = {
    "small-model": replies("small-model", scripted_tool_call("transfer_to_expert")),
    "large-model": replies("large-model", "Here is the detailed answer about your contract."),
}
expert = Agent(name="Expert", model="large-model", instructions="You are Expert.")
triage = Agent(
    name="Triage", model="small-model", instructions="You are Triage.", handoffs=[expert]
)
response = Swarm(chat_model=lambda name: models[name]).run(
    agent=triage, messages=user("Explain clause 4.2 of my contract.")
)
for model_name, system_prompt in served:
    print(f"{model_name:12} served: {system_prompt}")
print()
check(
    "Triage's call went to small-model, Expert's to large-model",
    served,
    [("small-model", "You are Triage."), ("large-model", "You are Expert.")],
)
check("the run ended with the Expert agent", response.agent.name, "Expert")

# %% [markdown]
# `model_override="..."` on `run` replaces every agent's model name for that run; that is
# the one place the caller, not the agent, chooses:
# %%
served.clear()
models["large-model"] = replies(
    "large-model", scripted_tool_call("transfer_to_expert"), "The detailed answer, again."
)
Swarm(chat_model=lambda name: models[name]).run(
    agent=triage, messages=user("Explain clause 4.2."), model_override="large-model"
)
check(
    "with model_override both agents' calls went to large-model",
    [name for name, _ in served],
    ["large-model", "large-model"],
)

# %% [markdown]
# ## 4. A handoff has three owners
#
# * **The model decides whether.** It sees a tool named `transfer_to_refunds` with a
#   description, nothing more: it cannot see which agent is behind it.
# * **The programmer decided where.** The transfer function's body returns an `Agent`. You
#   can write it yourself (Swarm style) or list the agent in `handoffs=[...]` and let the
#   framework generate `transfer_to_<name>`.
# * **The framework switches.** When a tool returns an `Agent`, the framework makes it the
#   active agent; the next model call uses *its* instructions, model and tools.
# %%
refunds = Agent(name="Refunds", instructions="You are Refunds. Refund orders.")
sales = Agent(name="Sales", instructions="You are Sales. Sell upgrades.")


def transfer_to_refunds():
    """Hand the customer to the refunds team when they want money back."""
    return refunds  # where: decided here, in code the model never sees


triage = Agent(
    name="Triage",
    instructions="You are Triage. Route the customer.",
    functions=[transfer_to_refunds],  # hand-written, Swarm style
    handoffs=[sales],  # generated: transfer_to_sales
)
model = ScriptedChatModel(  # offline stand-in: the script decides to hand off
    [scripted_tool_call("transfer_to_refunds"), "Refunds here: order 7 is refunded."]
)
response = Swarm(chat_model=model).run(agent=triage, messages=user("I want my money back."))

print("what the model knew about the handoff tools (its whole view):")
for tool in model.bound_tools[0]:
    fn = tool["function"]
    print(f"  {fn['name']}: {fn['description']!r}, parameters {fn['parameters']['properties']}")
print()
offered = json.dumps(model.bound_tools[0])
check(
    "the model is offered a hand-written and a generated transfer tool",
    [t["function"]["name"] for t in model.bound_tools[0]],
    ["transfer_to_refunds", "transfer_to_sales"],
)
check(
    "nothing of the agents behind them reaches the model (no instructions in the tools)",
    "You are Refunds" not in offered and "You are Sales" not in offered,
)
check(
    "whether: the model called",
    response.messages[0]["tool_calls"][0]["function"]["name"],
    "transfer_to_refunds",
)
check("where: that function returns the Refunds agent", transfer_to_refunds() is refunds)
check(
    "switch: the senders of the turns",
    [m.get("sender") for m in response.messages],
    ["Triage", None, "Refunds"],
)
check(
    "switch: the next call's system prompt is Refunds' instructions",
    model.calls[1][0].content,
    refunds.instructions,
)
check("switch: response.agent is Refunds", response.agent is refunds)

# %% [markdown]
# If the programmer wrote no transfer function, the model has no way to hand off: there is
# nothing in its tool list to call. When this script makes the model call a transfer that
# does not exist, the framework answers with an error the model can read and the agent stays
# where it was.
# %%
lonely = Agent(name="Lonely", instructions="You are Lonely.")
model = ScriptedChatModel([scripted_tool_call("transfer_to_refunds"), "I'll help you myself."])
response = Swarm(chat_model=model).run(agent=lonely, messages=user("I want my money back."))
response_lonely = response.messages
check("Lonely's model was offered no tools at all", model.bound_tools[0], None)
check(
    "the framework answered the bad call with an error the model can read",
    response.messages[1]["content"],
    "Error: Tool transfer_to_refunds not found.",
)
check("the agent stayed where it was", response.agent.name, "Lonely")

# %% [markdown]
# ## 5. The graph: agents are nodes, handoffs are conditional edges
#
# `build_swarm_graph` turns the agents into a LangGraph `StateGraph`. Every agent reachable
# through a handoff becomes a node, found from the tools before anything runs; every possible
# handoff is a dashed (conditional) edge. The picture is rendered offline by
# `swarmgraph.app.drawing.draw_png` (grandalf layout, matplotlib drawing). How to read it:
#
# * each agent has **its own colour, computed from its name**: Triage, Sales and Refunds look
#   the same in every picture of every notebook; the legend on the right names them;
# * every edge says what it is: `handoff`; `answers` (the agent replied without a tool call,
#   so the run ends); `tool ran` on an agent's loop (a tool answered and the same agent speaks
#   again);
# * out of `start`: `entry` goes to the agent a new conversation starts with; `resume` goes to
#   the others, because a checkpointed conversation continues with whichever agent held it;
#   `max_turns=0` goes straight to `end`: a run allowed no turn at all ends before any agent.
#
# `draw_png` saves the figure `draw_figure` returns; we keep the figure to check its legend,
# and `layout_graph` (what both draw from) to check its nodes, edges and colours.
# %%
app = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile()
pictures = Path(tempfile.mkdtemp())
picture = draw_png(
    app, pictures / "triage.png", title="Triage swarm", exclude=["dynamic_handoff"], dpi=110
)
display(Image(filename=str(picture)))
drawn = layout_graph(app, exclude=["dynamic_handoff"])
edge_label = {(s, t): label for s, t, _, _, label in drawn.edges}
legend = draw_figure(app, exclude=["dynamic_handoff"]).legends[0]
check(
    "the agents drawn, found before anything ran",
    sorted(drawn.labels[n] for n in drawn.agent_nodes),
    ["Refunds", "Sales", "Triage"],
)
check(
    "the legend names them",
    [t.get_text() for t in legend.get_texts()][:3],
    ["Triage", "Refunds", "Sales"],
)
check(
    "Triage's two handoffs are dashed (conditional) edges labelled 'handoff'",
    [(t, c, label) for s, t, _, c, label in drawn.edges if s == "Triage" and t != "__end__"],
    [("Refunds", True, "handoff"), ("Sales", True, "handoff")],
)
check(
    "out of start: entry, resume, resume, max_turns=0",
    [edge_label[("__start__", t)] for t in ("Triage", "Refunds", "Sales", "__end__")],
    ["entry", "resume", "resume", "max_turns=0"],
)
check(
    "each agent's edge to end is labelled 'answers'",
    [edge_label[(n, "__end__")] for n in ("Triage", "Refunds", "Sales")],
    ["answers"] * 3,
)
check(
    "each agent's colour is the one computed from its name",
    all(drawn.colours[n] == agent_colour(drawn.labels[n]) for n in drawn.agent_nodes),
)

# %% [markdown]
# The `max_turns=0` edge, run: `Swarm.run(..., max_turns=0)` returns at once, with no message
# and without calling the model.
# %%
idle = ScriptedChatModel(["never sent"])
nothing = Swarm(chat_model=idle).run(agent=triage, messages=user("hi"), max_turns=0)
check("no new message", nothing.messages, [])
check("no model call", len(idle.calls), 0)

# %% [markdown]
# Refunds and Sales have no tools and Triage's tools all hand off, yet each has a loop. The
# loop is taken whenever a tool message was answered and no handoff happened. An agent with
# tools of its own (Sales' `quote_price` in the demo below) takes it after each of them. An
# agent without any takes it only after a bad call: a model can call a tool it was never
# offered, as the Lonely agent's model did in section 4; the framework answers
# `Error: Tool ... not found.` and the same agent speaks again. Models do that, so the graph
# keeps the edge for every agent; here all three loops mean "only after a bad call":
# %%
for member in (triage, refunds, sales):
    tools = [f.__name__ for f in member.tools]
    own = [name for name in tools if not name.startswith("transfer_to_")]
    when = "after each of its own tools" if own else "only after a bad call"
    print(f"{member.name:8} tools: {', '.join(tools) or '(none)':40} loop: {when}")
print()
check(
    "each of the three agents has a loop labelled 'tool ran'",
    sorted((drawn.labels[n], label) for n, _, label in drawn.loops),
    [("Refunds", "tool ran"), ("Sales", "tool ran"), ("Triage", "tool ran")],
)
check(
    "none of them has a tool of its own",
    [f.__name__ for m in (triage, refunds, sales) for f in m.tools if "transfer" not in f.__name__],
    [],
)
check(
    "section 4's tool-less agent looped: its turns went",
    " → ".join(m.get("sender") or m["role"] for m in response_lonely),
    "Lonely → tool → Lonely",
)

# %% [markdown]
# The compiled graph has one more node, `dynamic_handoff`, hidden above to keep the picture
# readable: it catches a transfer to an agent nobody could name in advance (a tool that
# builds a new `Agent` at run time). Here is every node and edge, its text enlarged
# (`font_scale`) so that the labels stay readable when the wide picture is shrunk to the page:
# %%
display(Image(filename=str(draw_png(app, pictures / "full.png", title="every node", dpi=80, font_scale=1.8))))
every = draw_figure(app, font_scale=1.8)
shown_px = min(t.get_fontsize() for t in every.findobj(matplotlib.text.Text) if t.get_text()) * 900 / (
    every.get_figwidth() * 72
)
check("its smallest label is still 6 px tall when the picture is shown 900 px wide", bool(shown_px >= 6))
full = layout_graph(app)
check("the only node hidden above", sorted(set(full.boxes) - set(drawn.boxes)), ["dynamic_handoff"])

# %% [markdown]
# The same graph as Mermaid text (paste it into any Mermaid viewer, or a GitHub markdown
# block); it has the same handoff edges:
# %%
mermaid = app.get_graph().draw_mermaid()
print(mermaid)
check(
    "the Mermaid text has both of Triage's handoffs as dotted edges",
    "Triage -.-> Refunds;" in mermaid and "Triage -.-> Sales;" in mermaid,
)

# %% [markdown]
# ## 6. All of it together: the demo swarm
#
# `swarmgraph demo` plays a short customer-service conversation on three agents from
# `swarmgraph.app.demo`: Triage writes the customer's name and order into the context and hands
# off; Sales and Refunds read those fields in their tools and can hand back to Triage. The
# model is an offline stand-in, the rule-based demo model (`demo_model()`): its replies are
# rules, its tool calls are real and run by the framework. Between turns we carry the messages
# and the context forward ourselves (a run forgets both) and continue with the agent that
# ended the turn.
# %%
demo_triage, demo_sales, demo_refunds = demo_agents()
demo_swarm = Swarm(chat_model=demo_model())
agent, messages, context = demo_triage, [], {}
handoffs, tool_results, spoke = [], {}, []
for text in DEMO_CONVERSATION:
    print(f"user: {text}")
    messages.append({"role": "user", "content": text})
    response = demo_swarm.run(agent=agent, messages=messages, context_variables=context)
    speaker = agent.name
    for m in response.messages:
        spoke.append(m.get("sender") or m.get("tool_name"))
        if m["role"] == "assistant" and m["tool_calls"]:
            for call in m["tool_calls"]:
                fn = call["function"]
                print(f"  {m['sender']}: calls {fn['name']}({fn['arguments']})")
        elif m["role"] == "tool" and m["tool_name"].startswith("transfer_to_"):
            print(f"  -> handoff: {m['content']}")
            target = json.loads(m["content"])["assistant"]
            handoffs.append(f"{speaker} → {target}")
            speaker = target
        elif m["role"] == "tool":
            tool_results[m["tool_name"]] = m["content"]
        elif m["role"] == "assistant":
            print(f"  {m['sender']} (rule-based): {m['content']}")
    messages += response.messages
    agent, context = response.agent, response.context_variables
print("\ncontext at the end:", context)
print()
check(
    "Triage wrote the name and the order into the context",
    {k: context.get(k) for k in ("name", "order_id")},
    {"name": "Ming", "order_id": 7},
)
check(
    "the handoffs, in order",
    handoffs,
    [
        "Triage → Refunds",
        "Refunds → Triage",
        "Triage → Sales",
        "Sales → Triage",
        "Triage → Refunds",
    ],
)
check(
    "Sales' quote_price read the name from the context (the model never passed it)",
    tool_results["quote_price"],
    "Quote for Ming: one hive costs $120.",
)
after_quote = spoke[spoke.index("quote_price") + 1]
check("after its own tool, quote_price, Sales spoke again (its loop)", after_quote, "Sales")
check(
    "Refunds' refund_status read the order from the context",
    tool_results["refund_status"],
    "Refund for order 7: approved.",
)

# %% [markdown]
# The demo swarm's graph. Triage, Sales and Refunds keep the colours they had in section 5;
# here Sales and Refunds can also hand back to Triage.
# %%
demo_app = build_swarm_graph([demo_triage], chat_model=demo_model()).compile()
demo_png = draw_png(
    demo_app, pictures / "demo.png", title="swarmgraph demo", exclude=["dynamic_handoff"], dpi=110
)
display(Image(filename=str(demo_png)))
demo_drawn = layout_graph(demo_app, exclude=["dynamic_handoff"])
check(
    "each agent has the same colour as in section 5",
    all(demo_drawn.colours[name] == drawn.colours[name] for name in ("Triage", "Sales", "Refunds")),
)
check(
    "Sales and Refunds hand back to Triage",
    sorted(s for s, t, *_ in demo_drawn.edges if t == "Triage" and s != "__start__"),
    ["Refunds", "Sales"],
)

# %% [markdown]
# ## What you saw
#
# * One `Agent` object served two unrelated runs; its fields did not change and the second
#   run's model call carried nothing of the first: the framework *reads* the agent.
# * The instruction function ran once per model call with the run's `context_variables`; its
#   text was each call's `system` message and never entered the conversation, while the
#   tool's result was a `tool` message the model read on its next call and stayed in it.
# * The model followed the agent: small-model for Triage, large-model for Expert, and only
#   `model_override` changed that.
# * A handoff: the model *called* `transfer_to_refunds` (seeing only a name and a
#   description), the function *returned* Refunds, and the framework *switched*: new sender,
#   new system prompt, `response.agent` is Refunds. Without a transfer tool, the call got
#   `Error: Tool transfer_to_refunds not found.` and Lonely stayed.
# * In the picture every agent is a node in its own colour (the same in every figure), every
#   handoff a dashed edge labelled `handoff`; `start` enters at `entry` or `resume`s, and
#   `max_turns=0` ends a run before any agent (no message, no model call).
# * The demo swarm handed off five times and its tools read the name and order from the
#   context, never from the model.
