# Cells of notebooks/01_agents_and_handoffs.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 01 · Agents and handoffs
#
# Four ideas from OpenAI Swarm, each shown by running it and looking at what the model was
# actually sent:
#
# 1. an **Agent is passive configuration**: the framework reads it, it never acts;
# 2. **instruction functions** and **tool functions** are two different roads;
# 3. the **model** is whatever the active agent names: it changes only when the agent does;
# 4. a **handoff** has three owners: the model decides *whether*, the programmer decided
#    *where*, the framework *switches*. In the graph, agents are nodes and handoffs are
#    conditional edges; the last section draws it.
#
# Everything runs offline on `ScriptedChatModel`, a chat model that replays the replies we
# script and records each request it received (`.calls`) and the tools it was offered
# (`.bound_tools`).
# %%
import tempfile
from pathlib import Path

from IPython.display import Image, display

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call
from swarmgraph.app.demo import DEMO_CONVERSATION, demo_agents, demo_model
from swarmgraph.app.drawing import draw_png


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
# An `Agent` holds four things the framework needs: a name, instructions, a model name and
# a list of functions. It has no methods that talk to a model and keeps no record of any
# conversation. On every turn the framework *pulls* `agent.instructions`, `agent.model` and
# `agent.functions` out of it; the agent never pushes anything.
#
# Because it holds no state, one agent can be created once and reused for any number of
# conversations. Below, the same `support` object serves two unrelated runs, and its fields
# are identical before and after.
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

model = ScriptedChatModel(
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
print("fields unchanged after two runs:", support.model_dump() == before)
print("run 1 ->", first.messages[-1]["content"])
print("run 2 ->", second.messages[-1]["content"])
print()
print("what the framework read from the agent for the first model call:")
print("  system prompt :", repr(model.calls[0][0].content))
print("  tools offered :", [t["function"]["name"] for t in model.bound_tools[0]])

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
model = ScriptedChatModel(
    [scripted_tool_call("lookup_order", {"order_id": 7}), "Good news: order 7 shipped yesterday."]
)
response = Swarm(chat_model=model).run(
    agent=support_fn,
    messages=user("Where is order 7?"),
    context_variables={"name": "Li", "vip": True},
)

print(f"the framework called the instruction function {len(instruction_calls)} times,")
print(f"with {instruction_calls[0]}")
for i, call in enumerate(model.calls):
    print(f"\nmodel call {i} received:")
    show(call)
print("\nthe conversation the run returned (roles):", [m["role"] for m in response.messages])

# %% [markdown]
# The instruction function's text arrived as the `system` message of each call and is not
# part of the returned conversation. The tool's return value came back as a `tool` message
# that the model read on its second call, and it *is* part of the conversation.
#
# ## 3. The model is the agent's choice
#
# The framework does not pick a model: it reads `agent.model` and asks for that name. With
# `Swarm(chat_model=resolver)` where `resolver` is a function `model name -> chat model`, we
# can watch which name each call asked for. A cheap triage agent hands off to an expert
# agent that names a bigger model; the model changes exactly when the agent changes.
# %%
served = []  # (model name, agent system prompt) per call, in call order


def replies(model_name, *answers):
    """A scripted model whose replies also log which model served which agent."""

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
print("final agent:", response.agent.name)

# %% [markdown]
# (`model_override="..."` on `run` replaces every agent's model name for that run; that is
# the one place the caller, not the agent, chooses.)
#
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
model = ScriptedChatModel(
    [scripted_tool_call("transfer_to_refunds"), "Refunds here: order 7 is refunded."]
)
response = Swarm(chat_model=model).run(agent=triage, messages=user("I want my money back."))

print("what the model knew about the handoff tools (its whole view):")
for tool in model.bound_tools[0]:
    fn = tool["function"]
    print(f"  {fn['name']}: {fn['description']!r}")
print("\nwhether: the model called", response.messages[0]["tool_calls"][0]["function"]["name"])
print("where:   that function returned the agent", transfer_to_refunds().name)
print("switch:  senders of the turns:", [m.get("sender") for m in response.messages])
print("         system prompt of the next call:", repr(model.calls[1][0].content))
print("         response.agent:", response.agent.name)

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
print("tools offered:", model.bound_tools[0])
print("tool message :", response.messages[1]["content"])
print("final agent  :", response.agent.name)

# %% [markdown]
# ## 5. The graph: agents are nodes, handoffs are conditional edges
#
# `build_swarm_graph` turns the agents into a LangGraph `StateGraph`. Every agent reachable
# through a handoff becomes a node; every possible handoff is a dashed (conditional) edge;
# an agent's loop edge means "a tool answered, the same agent speaks again" (why agents
# without tools have one too is explained under the picture). The picture is rendered
# offline by `swarmgraph.app.drawing.draw_png` (grandalf layout, matplotlib drawing).
#
# Triage reaches Refunds and Sales, found from its tools before anything runs. `start` may
# enter at any agent because a resumed conversation continues with whichever agent held it.
# %%
app = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile()
pictures = Path(tempfile.mkdtemp())
picture = draw_png(
    app, pictures / "triage.png", title="Triage swarm", exclude=["dynamic_handoff"], dpi=110
)
display(Image(filename=str(picture)))

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
turns = " → ".join(m.get("sender") or m["role"] for m in response_lonely)
print(f"section 4, a tool-less agent looping: {turns}")

# %% [markdown]
# The compiled graph has one more node, `dynamic_handoff`, hidden above to keep the picture
# readable: it catches a transfer to an agent nobody could name in advance (a tool that
# builds a new `Agent` at run time). Here is every node and edge:
# %%
display(Image(filename=str(draw_png(app, pictures / "full.png", dpi=80))))

# %% [markdown]
# The same graph as Mermaid text (paste it into any Mermaid viewer, or a GitHub markdown
# block):
# %%
print(app.get_graph().draw_mermaid())

# %% [markdown]
# ## 6. All of it together: the demo swarm
#
# `swarmgraph demo` plays a short customer-service conversation on three agents from
# `swarmgraph.app.demo`: Triage writes the customer's name and order into the context and hands off;
# Sales and Refunds read those fields in their tools and can hand back to Triage. The model is
# the offline, rule-based demo model. Between turns we carry the messages and the context
# forward ourselves (a run forgets both) and continue with the agent that ended the turn.
# %%
demo_triage, demo_sales, demo_refunds = demo_agents()
demo_swarm = Swarm(chat_model=demo_model())
agent, messages, context = demo_triage, [], {}
for text in DEMO_CONVERSATION:
    print(f"user: {text}")
    messages.append({"role": "user", "content": text})
    response = demo_swarm.run(agent=agent, messages=messages, context_variables=context)
    for m in response.messages:
        if m["role"] == "assistant" and m["tool_calls"]:
            for call in m["tool_calls"]:
                fn = call["function"]
                print(f"  {m['sender']}: calls {fn['name']}({fn['arguments']})")
        elif m["role"] == "tool" and m["tool_name"].startswith("transfer_to_"):
            print(f"  -> handoff: {m['content']}")
        elif m["role"] == "assistant":
            print(f"  {m['sender']}: {m['content']}")
    messages += response.messages
    agent, context = response.agent, response.context_variables
print("\ncontext at the end:", context)

# %%
demo_app = build_swarm_graph([demo_triage], chat_model=demo_model()).compile()
demo_png = draw_png(
    demo_app, pictures / "demo.png", title="swarmgraph demo", exclude=["dynamic_handoff"], dpi=110
)
display(Image(filename=str(demo_png)))
