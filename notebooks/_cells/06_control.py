# Cells of notebooks/06_control.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 06 · Control of a running swarm
#
# A swarm that runs on its own needs a few handles: a **human approving** a risky tool call,
# **hard budgets** instead of a runaway loop, a **handoff back** to whoever called, handoffs
# decided by the **state** instead of the model, and control over **what the receiving agent
# sees**. LangGraph has the parts (interrupts, conditional edges, checkpointers); swarmgraph puts
# them behind Swarm's simple API.
#
# Everything runs offline on `ScriptedChatModel`, which returns the replies it was given and
# records what it was sent.
# %%
import tempfile
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from swarmgraph import (
    CALLER,
    Agent,
    Budget,
    BudgetExceeded,
    Result,
    Route,
    ScriptedChatModel,
    Swarm,
    build_swarm_graph,
    needs_approval,
    scripted_tool_call,
)
from swarmgraph.graph import scripted_tool_calls
from swarmgraph.history import since_handoff


def user(text):
    return {"role": "user", "content": text}


# %% [markdown]
# ## 1. Approvals: the run stops before a marked tool
#
# `@needs_approval` marks a tool. When the model calls it, the run returns *before* running it:
# `response.pending` lists the call, the assistant message that asked for it is in
# `response.messages` (with no answer yet), and the reply's other calls have already run.
# %%
REFUNDED = []


@needs_approval
def process_refund(order_id: int) -> str:
    """Refund an order."""
    REFUNDED.append(order_id)
    return f"Refunded order {order_id}."


def lookup_order(order_id: int) -> str:
    """Look an order up."""
    return f"Order {order_id}: 2 jars of honey, paid."


refunds = Agent(
    name="Refunds", instructions="You handle refunds.", functions=[lookup_order, process_refund]
)
triage = Agent(name="Triage", instructions="Route the customer.", handoffs=[refunds])


def refund_script():
    return [
        scripted_tool_call("transfer_to_refunds", id="t1"),
        scripted_tool_calls(
            [("lookup_order", {"order_id": 7}, "c1"), ("process_refund", {"order_id": 7}, "c2")]
        ),
        "Your refund for order 7 is on its way.",
    ]


swarm = Swarm(chat_model=ScriptedChatModel(refund_script()))
history = [user("Please refund order 7")]
response = swarm.run(agent=triage, messages=history)
for p in response.pending:
    print(f"waiting: {p.agent} wants {p.describe()} (id {p.id})")
print("ran already:", response.messages[-1]["content"])
print("refunded so far:", REFUNDED)

# %% [markdown]
# Resuming is **stateless**, as Swarm is: pass the messages back, with a decision per id:
# `True` runs the call, `False` or a reason string denies it (the model reads
# `Error: denied...` and goes on). Without a decision the run stops again with the same pending.
# %%
again = swarm.run(response.agent, history + response.messages, response.context_variables)
print("no decision -> pending again:", [p.id for p in again.pending], again.messages)

done = swarm.run(
    response.agent, history + response.messages, response.context_variables, approvals={"c2": True}
)
for m in done.messages:
    print(f"{m['role']:9} {m.get('sender') or m.get('tool_name')}: {m['content']}")
print("refunded:", REFUNDED)

# %% [markdown]
# ### In the compiled graph, across a restart
#
# `build_swarm_graph` gives you the LangGraph graph. There the node calls LangGraph's
# `interrupt()` with the pending list, and you resume with `Command(resume={id: decision})`
# under any checkpointer. Below, the "restart" is a brand-new graph and a new `SqliteSaver`
# on the same file: the thread resumes where it stopped, and no model call is repeated.
# %%
REFUNDED.clear()
db = str(Path(tempfile.mkdtemp()) / "threads.sqlite")
thread = {"configurable": {"thread_id": "order-7"}}

with SqliteSaver.from_conn_string(db) as saver:
    app = build_swarm_graph([triage], chat_model=ScriptedChatModel(refund_script()))
    state = app.compile(checkpointer=saver).invoke({"messages": [("user", "refund 7")]}, thread)
    print("interrupted with:", state["__interrupt__"][0].value)

# ... the process ends; later, another one picks the thread up:
with SqliteSaver.from_conn_string(db) as saver:
    model = ScriptedChatModel(["Refund sent."])
    app = build_swarm_graph([triage], chat_model=model).compile(checkpointer=saver)
    state = app.invoke(Command(resume={"c2": "order 7 was already refunded by phone"}), thread)
print([m.content for m in state["messages"][-3:]])
print("refunded:", REFUNDED, "| model calls after the restart:", len(model.calls))

# %% [markdown]
# ## 2. Budgets, usage per agent, and the trajectory
#
# Two agents that keep handing the conversation to each other would run until the handoff-loop
# guard fires. A `Budget` is checked **before** every model call, tool call and handoff; the step
# that would pass a limit is not taken, and `BudgetExceeded` carries everything produced so far,
# with every tool call answered, so the history can be stored or shown as it is.
# %%
ping = Agent(name="Ping", instructions="You are Ping.")
pong = Agent(name="Pong", instructions="You are Pong.", handoffs=[ping])
ping.handoffs.append(pong)
bouncy = ScriptedChatModel(
    [],
    respond=lambda msgs: scripted_tool_call(
        "transfer_to_pong" if "Ping" in msgs[0].content else "transfer_to_ping"
    ),
)

try:
    Swarm(chat_model=bouncy).run(ping, [user("go")], budget=Budget(max_handoffs=3))
except BudgetExceeded as stop:
    print(stop)
    partial = stop.response
    asked = [c["id"] for m in partial.messages if m["role"] == "assistant" for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in partial.messages if m["role"] == "tool"]
    print("every tool call answered:", sorted(asked) == sorted(answered))
    print("last answer:", partial.messages[-1]["content"][:60], "...")

# %% [markdown]
# `response.usage["by_agent"]` splits model calls, tokens, tool calls and handoffs per agent
# (they sum to the totals), and `response.trajectory` lists every step in order, ready for an
# eval that checks *how* the swarm got to its answer.
# %%
model = ScriptedChatModel(
    [
        scripted_tool_call("transfer_to_refunds"),
        scripted_tool_call("lookup_order", {"order_id": 7}),
        "Order 7 holds 2 jars of honey.",
    ]
)
answer = Swarm(chat_model=model).run(triage, history, budget=Budget(max_model_calls=10))
usage = answer.usage
rows = [f"{'agent':8} | model_calls | tool_calls | handoffs"]
for name, mine in [*usage["by_agent"].items(), ("total", usage)]:
    rows.append(
        f"{name:8} | {mine['model_calls']:11} | {mine['tool_calls']:10} | {mine['handoffs']}"
    )
print("\n".join(rows))
print()
for step in answer.trajectory:
    print(step["agent"], step["kind"], step["name"])


# %% [markdown]
# ## 3. Routes: handoffs decided by the state
#
# Some switches need no model: "once the refund is approved, go back to triage". A `Route`
# is checked after the agent's tools ran, on the current `context_variables`; the first whose
# condition holds switches the agent *without a model call*. In the graph, routes are conditional
# edges labelled with their name.
# %%
def approve_refund(context_variables: dict) -> Result:
    """Approve the refund."""
    return Result(value="approved", context_variables={"refund_status": "approved"})


desk = Agent(name="Desk", instructions="You are the front desk.")
approver = Agent(
    name="Approver",
    instructions="You approve refunds.",
    functions=[approve_refund],
    routes=[
        Route(
            when=lambda ctx: ctx.get("refund_status") == "approved", to=desk, name="refund approved"
        )
    ],
)
model = ScriptedChatModel([scripted_tool_call("approve_refund"), "Anything else I can do?"])
routed = Swarm(chat_model=model).run(approver, [user("approve my refund")])
print("model calls by:", [call[0].content for call in model.calls])
print(
    "ended with:",
    routed.agent.name,
    "| steps:",
    [(s["kind"], s["name"]) for s in routed.trajectory],
)
print(build_swarm_graph([approver]).compile().get_graph().draw_mermaid())


# %% [markdown]
# ## 4. Handing back to the caller
#
# A tool returning `CALLER` (or `Result(agent=CALLER)`) gives the conversation back to the agent
# that handed it to the current one; `Agent(can_return=True)` generates a `transfer_back` tool.
# Nested handoffs unwind one level each. The stack is read from the conversation (who spoke
# after whom), so it survives a stateless `Swarm.run`.
# %%
def done_here():
    """Give the conversation back."""
    return Result(value="back to you", agent=CALLER)


billing = Agent(name="Billing", functions=[done_here])
support = Agent(name="Support", handoffs=[billing], can_return=True)
front = Agent(name="Front", handoffs=[support])
model = ScriptedChatModel(
    [
        scripted_tool_call("transfer_to_support"),
        scripted_tool_call("transfer_to_billing"),
        scripted_tool_call("done_here"),
        scripted_tool_call("transfer_back"),
        "Front again: all set.",
    ]
)
deep = Swarm(chat_model=model).run(front, [user("a billing question")])
print(" -> ".join(m["sender"] for m in deep.messages if m["role"] == "assistant"))

# %% [markdown]
# ## 5. What the receiving agent sees
#
# By default every agent reads the whole conversation. `Agent(history=...)` applies a view just
# before that agent's model call (the stored conversation stays whole). `since_handoff` shows
# what happened since the conversation came to this agent, plus the last user message;
# `without_tool_calls` drops other agents' tool traffic; `last(n)` keeps the newest messages.
# %%
focused = Agent(name="Refunds", instructions="You handle refunds.", history=since_handoff)
greeter = Agent(name="Greeter", instructions="Greet, then route.", handoffs=[focused])
model = ScriptedChatModel(
    ["Hi! How can I help?", scripted_tool_call("transfer_to_refunds"), "Which order?"]
)
swarm = Swarm(chat_model=model)
chat = [user("hello")]
chat += swarm.run(greeter, chat).messages
chat.append(user("I want a refund"))
swarm.run(greeter, chat)
print("Greeter's last call saw:", [m.type for m in model.calls[1]])
print("Refunds' call saw:      ", [(m.type, m.content) for m in model.calls[2]])
