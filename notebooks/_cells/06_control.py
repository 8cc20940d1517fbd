# Cells of notebooks/06_control.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 06 · Control of a running swarm
#
# ## What you will learn
#
# * **approvals**: a marked tool stops the run before it runs, and a decision per call
#   resumes it, statelessly with `Swarm.run` or across a restart with a checkpointer;
# * **budgets** that stop a runaway swarm with every tool call answered, **usage per agent**
#   and the **trajectory** of a run;
# * **routes**: handoffs decided by the state, without a model call, drawn as labelled edges;
# * **handing back** to the caller, one level at a time;
# * **views**: what the receiving agent is shown of the conversation;
# * **contracts on every way into an agent**: a typed context checked after every tool call,
#   guardrails that run whenever an agent takes the conversation (not only on the first
#   agent), and handoff preconditions the model reads and fixes.
#
# A swarm that runs on its own needs a few handles: a **human approving** a risky tool call,
# **hard budgets** instead of a runaway loop, a **handoff back** to whoever called, handoffs
# decided by the **state** instead of the model, and control over **what the receiving agent
# sees**. LangGraph has the parts (interrupts, conditional edges, checkpointers); swarmgraph puts
# them behind Swarm's simple API.
#
# Every model is an offline stand-in: `ScriptedChatModel` returns the replies written here
# (or computes them from what it was sent, where the story depends on it) and records what it
# was sent. Each `✓` line is a claim of the text, checked as the notebook runs
# (`notebooks/checks.py`).
# %%
import tempfile
from pathlib import Path

from checks import check
from IPython.display import Image, display
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
from swarmgraph.app.drawing import draw_png, layout_graph
from swarmgraph.graph import scripted_tool_calls
from swarmgraph.history import last, since_handoff, without_tool_calls


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


def after_the_decision(messages):
    """The stand-in's last reply follows what happened to the refund, as a model's would:
    it reads process_refund's answer (a result, or the denial) before it speaks."""
    outcome = next(m.content for m in reversed(messages) if m.type == "tool")
    if outcome.startswith("Error: denied"):
        reason = outcome.removeprefix("Error: denied: ")
        return f"I did not refund order 7: {reason}."
    return "Your refund for order 7 is on its way."


def refund_script():
    return [
        scripted_tool_call("transfer_to_refunds", id="t1"),
        scripted_tool_calls(
            [("lookup_order", {"order_id": 7}, "c1"), ("process_refund", {"order_id": 7}, "c2")]
        ),
        after_the_decision,
    ]


swarm = Swarm(chat_model=ScriptedChatModel(refund_script()))
history = [user("Please refund order 7")]
response = swarm.run(agent=triage, messages=history)
for p in response.pending:
    print(f"waiting: {p.agent} wants {p.describe()} (id {p.id})")
print()
check(
    "the run stopped before process_refund",
    [(p.agent, p.describe(), p.id) for p in response.pending],
    [("Refunds", "process_refund(order_id=7)", "c2")],
)
check("it did not run", REFUNDED, [])
asked = response.messages[-2]
check(
    "the assistant message that asked for it is in response.messages",
    [c["function"]["name"] for c in asked["tool_calls"]],
    ["lookup_order", "process_refund"],
)
check(
    "no answer to it yet; the reply's other call has run",
    [(m["tool_name"], m["content"]) for m in response.messages if m["role"] == "tool"][-1],
    ("lookup_order", "Order 7: 2 jars of honey, paid."),
)

# %% [markdown]
# Resuming is **stateless**, as Swarm is: pass the messages back, with a decision per id:
# `True` runs the call, `False` or a reason string denies it (the model reads
# `Error: denied...` and goes on). Without a decision the run stops again with the same pending.
# %%
again = swarm.run(response.agent, history + response.messages, response.context_variables)
check(
    "without a decision: pending again, nothing new",
    ([p.id for p in again.pending], again.messages),
    (["c2"], []),
)

done = swarm.run(
    response.agent, history + response.messages, response.context_variables, approvals={"c2": True}
)
for m in done.messages:
    print(f"{m['role']:9} {m.get('sender') or m.get('tool_name')}: {m['content']}")
print()
check("approved, the refund ran once", REFUNDED, [7])
check(
    "and the (stand-in) model's reply follows the decision",
    done.messages[-1]["content"],
    "Your refund for order 7 is on its way.",
)

# %% [markdown]
# ### In the compiled graph, across a restart
#
# `build_swarm_graph` gives you the LangGraph graph. There the node calls LangGraph's
# `interrupt()` with the pending list, and you resume with `Command(resume={id: decision})`
# under any checkpointer. Below, the "restart" is a brand-new graph and a new `SqliteSaver`
# on the same file: the thread resumes where it stopped, and no model call is repeated. This
# time the refund is denied (it was already refunded by phone), and the reply says so.
# %%
REFUNDED.clear()
db = str(Path(tempfile.mkdtemp()) / "threads.sqlite")
thread = {"configurable": {"thread_id": "order-7"}}

with SqliteSaver.from_conn_string(db) as saver:
    app = build_swarm_graph([triage], chat_model=ScriptedChatModel(refund_script()))
    state = app.compile(checkpointer=saver).invoke({"messages": [("user", "refund 7")]}, thread)
    interrupted = state["__interrupt__"][0].value
    print("interrupted with:", interrupted)

# ... the process ends; later, another one picks the thread up:
with SqliteSaver.from_conn_string(db) as saver:
    model = ScriptedChatModel([after_the_decision])  # only the reply after the decision is left
    app = build_swarm_graph([triage], chat_model=model).compile(checkpointer=saver)
    state = app.invoke(Command(resume={"c2": "order 7 was already refunded by phone"}), thread)
for m in state["messages"][-3:]:
    print(f"{m.type:5} {m.content}")
print()
check(
    "the interrupt carried the pending call",
    interrupted,
    [{"id": "c2", "agent": "Refunds", "tool": "process_refund", "arguments": {"order_id": 7}}],
)
check(
    "denied: the model read",
    state["messages"][-2].content,
    "Error: denied: order 7 was already refunded by phone",
)
check("nothing was refunded", REFUNDED, [])
check(
    "the reply says so",
    state["messages"][-1].content,
    "I did not refund order 7: order 7 was already refunded by phone.",
)
check("model calls after the restart (only that reply)", len(model.calls), 1)

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
print()
asked = [c["id"] for m in partial.messages if m["role"] == "assistant" for c in m["tool_calls"]]
answered = [m["tool_call_id"] for m in partial.messages if m["role"] == "tool"]
check("three handoffs were taken, the fourth was not", partial.usage["handoffs"], 3)
check("every tool call is answered", sorted(asked) == sorted(answered))
check(
    "the refused step's answer says why",
    partial.messages[-1]["content"].startswith("Error: Budget exceeded: max_handoffs=3"),
)

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
print()
by_agent = usage["by_agent"].values()
check(
    "per agent they sum to the totals",
    all(
        sum(mine[key] for mine in by_agent) == usage[key]
        for key in ("model_calls", "tool_calls", "handoffs")
    ),
)
check(
    "the trajectory, in order",
    [(s["agent"], s["kind"]) for s in answer.trajectory],
    [
        ("Triage", "model"),
        ("Triage", "tool"),
        ("Triage", "handoff"),
        ("Refunds", "model"),
        ("Refunds", "tool"),
        ("Refunds", "model"),
    ],
)


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
check(
    "the steps",
    [(s["kind"], s["name"]) for s in routed.trajectory],
    [
        ("model", "gpt-4o"),
        ("tool", "approve_refund"),
        ("route", "refund approved"),
        ("model", "gpt-4o"),
    ],
)
check(
    "the switch took no model call: the calls were Approver's, then Desk's",
    [call[0].content for call in model.calls],
    ["You approve refunds.", "You are the front desk."],
)
check("the run ended with", routed.agent.name, "Desk")

# %% [markdown]
# The route in the graph: a dashed edge from Approver to Desk, labelled with the route's name.
# %%
routes_app = build_swarm_graph([approver]).compile()
display(
    Image(
        filename=str(
            draw_png(
                routes_app,
                Path(tempfile.mkdtemp()) / "routes.png",
                title="a route: Approver -> Desk",
                exclude=["dynamic_handoff"],
                dpi=110,
            )
        )
    )
)
route_edges = {(s, t): (c, label) for s, t, _, c, label in layout_graph(routes_app).edges}
check("Approver -> Desk", route_edges[("Approver", "Desk")], (True, "refund approved"))
mermaid = routes_app.get_graph().draw_mermaid()
check(
    "the Mermaid text carries the same label",
    "Approver -. &nbsp;refund approved&nbsp; .-> Desk;" in mermaid,
)


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
check(
    "can_return=True gave Support a transfer_back tool",
    "transfer_back" in [f.__name__ for f in support.tools],
)
check(
    "who spoke",
    " -> ".join(m["sender"] for m in deep.messages if m["role"] == "assistant"),
    "Front -> Support -> Billing -> Support -> Front",
)

# %% [markdown]
# The same, split over two stateless runs of one `Swarm`: the second starts at Billing with
# nothing but the messages of the first, and still unwinds to Support, then Front. The stack
# comes from the conversation; the agents' names are resolved by the `Swarm`, which knows
# Support and Front from the first run (Billing itself hands off to nobody).
# %%
split = Swarm(
    chat_model=ScriptedChatModel(
        [
            scripted_tool_call("transfer_to_support"),
            scripted_tool_call("transfer_to_billing"),
            "Billing here: what is the question?",
            scripted_tool_call("done_here"),
            scripted_tool_call("transfer_back"),
            "Front: all set.",
        ]
    )
)
first = split.run(front, [user("a billing question")])
later = split.run(first.agent, [user("a billing question"), *first.messages, user("never mind")])
check("the first run ended at", first.agent.name, "Billing")
check(
    "the second run unwound",
    " -> ".join(m["sender"] for m in later.messages if m["role"] == "assistant"),
    "Billing -> Support -> Front",
)


# %% [markdown]
# ## 5. What the receiving agent sees
#
# By default every agent reads the whole conversation. `Agent(history=...)` applies a view just
# before that agent's model call (the stored conversation stays whole). `since_handoff` shows
# what happened since the conversation came to this agent, plus the last user message;
# `without_tool_calls` drops other agents' tool traffic; `last(n)` keeps the newest messages.
# The same conversation three times, with Refunds reading it through each view: Greeter
# greets, the user asks for a refund, Greeter hands off.
# %%
def refunds_reads(view):
    """What Refunds' model call was sent when Refunds reads the conversation through view."""
    refunds_view = Agent(name="Refunds", instructions="You handle refunds.", history=view)
    greeter = Agent(name="Greeter", instructions="Greet, then route.", handoffs=[refunds_view])
    model = ScriptedChatModel(
        ["Hi! How can I help?", scripted_tool_call("transfer_to_refunds"), "Which order?"]
    )
    swarm = Swarm(chat_model=model)
    chat = [user("hello")]
    chat += swarm.run(greeter, chat).messages
    chat.append(user("I want a refund"))
    stored = chat + swarm.run(greeter, chat).messages
    return model.calls, stored


calls, stored = refunds_reads(since_handoff)
for m in calls[2]:
    print(f"  Refunds saw [{m.type}] {m.content}")
print()
check(
    "Greeter's last call saw the whole conversation",
    [m.type for m in calls[1]],
    ["system", "human", "ai", "human"],
)
check(
    "since_handoff: Refunds saw only its instructions and the request handed over",
    [(m.type, m.content) for m in calls[2]],
    [("system", "You handle refunds."), ("human", "I want a refund")],
)
check(
    "the stored conversation stays whole (greeting, handoff and all)",
    [m["role"] for m in stored],
    ["user", "assistant", "user", "assistant", "tool", "assistant"],
)
calls, _ = refunds_reads(without_tool_calls)
check(
    "without_tool_calls: the greeting stays, Greeter's transfer call and its answer go",
    [(m.type, m.content) for m in calls[2][1:]],
    [("human", "hello"), ("ai", "Hi! How can I help?"), ("human", "I want a refund")],
)
calls, _ = refunds_reads(last(3))
check(
    "last(3): the newest three messages, Greeter's handoff included",
    [(m.type, m.content) for m in calls[2][1:]],
    [("human", "I want a refund"), ("ai", ""), ("tool", '{"assistant": "Refunds"}')],
)

# %% [markdown]
# ## 6. A guarded desk: typed context, guardrails, preconditions
#
# Three contracts, each on a way into an agent:
#
# * `Swarm(context_schema=Desk)` types `context_variables` (a pydantic model or a `TypedDict`).
#   The caller's input is validated before any model call; a tool that writes a wrong type or
#   an unknown key gets an `Error:` answer the model reads, and the context keeps its last valid
#   values. `visits: Annotated[int, operator.add]` gives a key a reducer: a tool's
#   `Result(context_variables={"visits": 1})` adds one.
# * `Agent(requires=["order_id"])`: a handoff into Refunds before the context has an order id
#   does not switch; the transfer call is answered `Error: Refunds needs order_id`.
# * `Agent(input_guardrails=[...])` run whenever Refunds takes the conversation: as the first
#   agent, through a handoff, a route, a `CALLER` return or a resumed `Session`. A trip means
#   Refunds' model is never called. `output_guardrails` run on its final answer. A trip raises
#   `GuardrailTripped`, or, with `on_trip=humans`, hands the conversation to Humans.
#
# One scripted model plays every agent here; which agent a call was for shows in the system
# prompt it was sent, so "Refunds' model was never called" is something we can count.
# %%
import operator
import re
from typing import Annotated

from pydantic import BaseModel

from swarmgraph import GuardrailTripped


class Desk(BaseModel):
    order_id: int | None = None
    visits: Annotated[int, operator.add] = 0


def note_order(order_id: str) -> Result:
    """Note the customer's order id."""
    return Result(value="noted", context_variables={"order_id": order_id, "visits": 1})


def no_threats(context_variables, messages):
    """The user's latest words must not threaten (after a handoff the conversation ends with
    the transfer's answer, so read the human messages)."""
    said = [m.content for m in messages if m.type == "human"]
    return "a threat" if "or else" in said[-1] else None


def no_card_numbers(context_variables, messages):
    """The answer must not show a card number."""
    return "shows a card number" if re.search(r"\d{4} \d{4}", messages[-1].content) else None


humans = Agent(name="Humans", instructions="You are a human colleague.")
guarded = Agent(
    name="Refunds",
    instructions="You file refunds.",
    requires=["order_id"],
    input_guardrails=[no_threats],
    output_guardrails=[no_card_numbers],
    on_trip=humans,
)
front_desk = Agent(
    name="Triage", instructions="Route the customer.", functions=[note_order], handoffs=[guarded]
)


def sent_to(model, instructions):
    """How many of the model's calls carried this agent's system prompt."""
    return sum(call[0].content == instructions for call in model.calls)


def tool_answers(response):
    return [m["content"] for m in response.messages if m["role"] == "tool"]


# %% [markdown]
# ### Typed context and a precondition
#
# The model tries to hand off before it has an order id, then writes `"seven"` for an `int`,
# then gets it right. Each mistake comes back to it as an `Error:` tool answer.
# %%
desk_model = ScriptedChatModel(
    [
        scripted_tool_call("transfer_to_refunds"),
        scripted_tool_call("note_order", {"order_id": "seven"}),
        scripted_tool_call("note_order", {"order_id": "7"}),
        scripted_tool_call("transfer_to_refunds"),
        "Refund filed for order 7.",
    ]
)
desk_swarm = Swarm(chat_model=desk_model, context_schema=Desk)
filed = desk_swarm.run(front_desk, [user("I want a refund")])
for answer in tool_answers(filed):
    print(" ", answer)
print()
answers = tool_answers(filed)
check("the first transfer did not switch", answers[0], "Error: Refunds needs order_id")
check(
    "'seven' was refused, naming the key, the type and the value",
    "'order_id' expects int | None, got 'seven' (str)" in answers[1],
)
check(
    "the model read that error before it tried again", desk_model.calls[2][-1].content, answers[1]
)
check(
    "the context kept its last valid values; the reducer counted one visit",
    filed.context_variables,
    {"order_id": 7, "visits": 1},
)
check("the second transfer switched to Refunds", filed.agent.name, "Refunds")
check(
    "each precondition check is on the trajectory",
    [s["passed"] for s in filed.trajectory if s["kind"] == "precondition"],
    [False, True],
)
try:
    desk_swarm.run(front_desk, [user("hi")], context_variables={"order_id": "seven"})
except ValueError as bad_input:
    print(bad_input)
    check("bad caller input: a clear error before any model call", len(desk_model.calls), 5)

# %% [markdown]
# ### An input guardrail on a handoff
#
# Triage has no guardrail, so it hands a threatening request to Refunds. Refunds' input
# guardrail runs at the handoff, before Refunds' model could read anything: it trips, and
# `on_trip` gives the conversation to Humans. (The Agents SDK runs input guardrails on the
# first agent only; here they guard every way in.)
# %%
threat_model = ScriptedChatModel(
    [scripted_tool_call("transfer_to_refunds"), "A colleague will call you back."]
)
threat = Swarm(chat_model=threat_model, context_schema=Desk).run(
    front_desk, [user("Refund order 7, or else")], {"order_id": 7}
)
print([(m["role"], m.get("sender"), m["content"]) for m in threat.messages])
print()
check("Refunds' model was never called", sent_to(threat_model, "You file refunds."), 0)
check("Humans took the conversation", threat.agent.name, "Humans")
check(
    "the transfer's answer names who took it",
    tool_answers(threat),
    ['{"assistant": "Humans"}'],
)
check(
    "the trip is on the trajectory",
    [
        (s["agent"], s["name"], s["passed"], s.get("reason"))
        for s in threat.trajectory
        if s["kind"] == "guardrail"
    ],
    [("Refunds", "no_threats", False, "a threat")],
)

# %% [markdown]
# ### An output guardrail on the answer
#
# Refunds answers with a card number in it. Its output guardrail refuses the answer; Humans
# answer instead. The refused answer stays in the conversation (nothing is lost), but the run's
# last word is Humans'.
# %%
leak_model = ScriptedChatModel(
    [
        scripted_tool_call("transfer_to_refunds"),
        "Refunded to card 4111 1111 1111 1111.",
        "Your refund is on its way.",
    ]
)
leaked = Swarm(chat_model=leak_model, context_schema=Desk).run(
    front_desk, [user("Refund order 7 please")], {"order_id": 7}
)
check(
    "the last word is Humans'",
    (leaked.agent.name, leaked.messages[-1]["content"]),
    ("Humans", "Your refund is on its way."),
)
check(
    "Refunds' refused answer stayed in the conversation, before Humans'",
    [m["sender"] for m in leaked.messages if m["role"] == "assistant"],
    ["Triage", "Refunds", "Humans"],
)

# %% [markdown]
# Without `on_trip` a trip stops the run with `GuardrailTripped` (a `SwarmError`, like
# `BudgetExceeded`): `.agent`, `.guardrail`, `.reason`, and `.response` with everything so far,
# every tool call answered.
# %%
strict = guarded.model_copy(update={"on_trip": None})
strict_desk = front_desk.model_copy(update={"handoffs": [strict]})
try:
    Swarm(
        chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_refunds")]),
        context_schema=Desk,
    ).run(strict_desk, [user("Refund order 7, or else")], {"order_id": 7})
except GuardrailTripped as trip:
    print(trip)
    check(
        "who refused, and why",
        (trip.agent, trip.guardrail, trip.reason),
        ("Refunds", "no_threats", "a threat"),
    )
    check(
        "the transfer call is answered with the refusal",
        tool_answers(trip.response),
        ["Error: Refunds refused the conversation: a threat"],
    )

# %% [markdown]
# The graph draws the contracts: the edge into Refunds says what it needs, and the edges to
# Humans are where a trip goes (drawn as `Swarm` runs it: every run enters at Triage).
# %%
guarded_app = build_swarm_graph([front_desk], fixed_entry=True).compile()
display(
    Image(
        filename=str(
            draw_png(
                guarded_app,
                Path(tempfile.mkdtemp()) / "guarded.png",
                title="a guarded desk",
                exclude=["dynamic_handoff"],
                dpi=110,
            )
        )
    )
)
guarded_edges = {(s, t): label for s, t, _, _, label in layout_graph(guarded_app).edges}
check(
    "Triage -> Refunds says what Refunds needs",
    guarded_edges[("Triage", "Refunds")],
    "needs order_id",
)
check("a trip goes to Humans", guarded_edges[("Refunds", "Humans")], "on_trip")

# %% [markdown]
# ## What you saw
#
# * `process_refund` stopped the run before it ran (`c2` pending, `lookup_order` already
#   answered); without a decision it stayed pending; approved, it ran once and the reply
#   said the refund was on its way.
# * Across a restart, a new graph on the same SQLite file resumed the thread with one model
#   call; denied ("already refunded by phone"), nothing was refunded and the reply said so.
# * A budget of three handoffs stopped a ping-pong swarm at the fourth, every tool call
#   answered; usage per agent summed to the totals, and the trajectory listed each step.
# * A route switched Approver to Desk without a model call, and the graph drew it as a dashed
#   edge labelled "refund approved".
# * `CALLER` and `transfer_back` unwound Billing → Support → Front, in one run or two.
# * Refunds read the conversation through `since_handoff`, `without_tool_calls` and `last(3)`,
#   while the stored conversation stayed whole.
# * The typed desk refused a handoff without an order id and an order id of `"seven"`, each
#   with an `Error:` the model read, kept its last valid context, and counted visits with a
#   reducer; a bad input from the caller failed before any model call.
# * Refunds' input guardrail refused a threat at the handoff, before Refunds' model was called,
#   and Humans took over; its output guardrail refused an answer with a card number; without
#   `on_trip` the run raised `GuardrailTripped` with the transfer call answered.
# * The drawn graph labels the edge into Refunds with what it needs and the edges to Humans
#   with `on_trip`.
