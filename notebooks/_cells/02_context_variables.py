# Cells of notebooks/02_context_variables.ipynb (built by notebooks/_build.py).
# %% [markdown]
# # 02 · context_variables: one dict, one run
#
# ## What you will learn
#
# * `context_variables` is a plain dict the framework carries through **one** `Swarm.run`;
# * the run works on a **deep copy**: the dict you pass in never changes;
# * a tool that declares a `context_variables` parameter gets the dict **injected**, and the
#   model can neither see nor forge that parameter;
# * a tool **writes back** with `Result(context_variables=...)`, and the next system prompt
#   already reflects it;
# * the dict is **gone after the run**: keeping it is your job (or `Session`'s).
#
# `context_variables` is how instruction functions and tools share small structured facts
# (a user id, a tier, an order number) without stuffing them into the chat text.
# Its life has four steps, and this notebook runs each one and looks at the evidence:
#
# 1. **copied on entry** – the run works on a deep copy; the dict you passed never changes;
# 2. **injected** – a tool that declares a `context_variables` parameter receives the dict,
#    and the model never sees that parameter (so it cannot fake it);
# 3. **written back** – a tool returns `Result(context_variables={...})` to add or change
#    fields; the next instruction call and the final `Response` see them;
# 4. **gone after the run** – nothing is kept; the next run starts from whatever you pass.
#
# The model is an **offline stand-in**, `ScriptedChatModel`: it replays the replies written
# here and records every request it received (`.calls`) and the tools bound to each request
# (`.bound_tools`). The replies are ours; what is checked is what the framework did. Each `✓`
# line is a claim of the text, checked as the notebook runs (`notebooks/checks.py`).
# %%
import json

from checks import check

from swarmgraph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call


def show(messages):
    """Print what a model call received, one line per message."""
    for m in messages:
        label = m.type + (f" {m.name}" if getattr(m, "name", None) else "")
        parts = [m.content] if m.content else []
        parts += [f"-> calls {c['name']}({c['args']})" for c in getattr(m, "tool_calls", [])]
        print(f"  [{label}] {' '.join(parts)}")


# %% [markdown]
# ## The agent used throughout
#
# * `instructions` is a function of the context: the framework calls it before **every**
#   model call, so the system prompt follows the context as it changes during the run.
# * `remember_name` is a tool the model calls with an argument it read from the chat; it
#   writes the name into the context through `Result`.
# * `list_orders` is a tool that needs the user id. It declares `context_variables` and
#   gets the dict injected; the model does not pass it.
# * `set_language` edits a nested value of the dict in place (not a good habit, but it
#   shows how deep the copy goes).
# %%
tool_saw = []  # what list_orders received, call by call
prompts_built = []  # one entry per call of the instruction function


def support_instructions(context_variables):
    prompts_built.append(dict(context_variables))
    name = context_variables.get("name", "an unknown customer")
    return f"You are Support. You are talking to {name}."


def remember_name(name: str) -> Result:
    """Remember the customer's name for the rest of this run."""
    return Result(value=f"I'll call you {name}.", context_variables={"name": name})


def list_orders(context_variables: dict) -> str:
    """List the customer's open orders."""
    tool_saw.append(json.loads(json.dumps(context_variables)))  # a snapshot, not a reference
    user_id = context_variables.get("user_id")
    if user_id is None:
        return "No user_id in context_variables: I cannot look anything up."
    return f"User {user_id} has open orders 7 and 9."


def set_language(language: str, context_variables: dict) -> str:
    """Switch the reply language."""
    context_variables["prefs"]["language"] = language  # edits the run's copy in place
    return f"Language set to {language}."


support = Agent(
    name="Support",
    instructions=support_instructions,
    functions=[remember_name, list_orders, set_language],
)

# %% [markdown]
# ## 1. Copied on entry
#
# We pass a dict with a nested value. During the run `remember_name` writes `name` and
# `set_language` changes the nested language in place. Afterwards the caller's dict is
# exactly what it was: the run worked on a **deep** copy. The changes live in
# `response.context_variables`, which is where you pick them up if you want to keep them.
# %%
model = ScriptedChatModel(
    [
        scripted_tool_call("remember_name", {"name": "Li"}),
        scripted_tool_call("set_language", {"language": "zh"}),
        scripted_tool_call("list_orders"),
        "Li, you have two open orders: 7 and 9.",
    ]
)
swarm = Swarm(chat_model=model)

caller_context = {"user_id": 456, "prefs": {"language": "en"}}
prompts_built.clear()
snapshot = json.dumps(caller_context, sort_keys=True)
response = swarm.run(
    agent=support,
    messages=[{"role": "user", "content": "I'm Li. Which orders do I have open?"}],
    context_variables=caller_context,
)

built_in_run_1 = len(prompts_built)
print("caller's dict after the run:", caller_context)
print("response.context_variables: ", response.context_variables)
print()
check(
    "the caller's dict is unchanged, nested value included",
    json.dumps(caller_context, sort_keys=True) == snapshot,
)
check(
    "the changes are in response.context_variables",
    response.context_variables,
    {"user_id": 456, "prefs": {"language": "zh"}, "name": "Li"},
)

# %% [markdown]
# ## 2. Injected into tools, hidden from the model
#
# `list_orders` declared `context_variables`, so the framework passed it the run's dict.
# Now look at the tool schemas the model was actually given on its first call: the
# `context_variables` parameter is **not there**. The model can only choose *whether* to
# call `list_orders`; the user id comes from your code, not from the model.
# %%
print("what list_orders received:", tool_saw[-1])
print()
print("tool schemas bound to the model (first call):")
schemas = {}
for tool in model.bound_tools[0]:
    fn = tool["function"]
    schemas[fn["name"]] = sorted(fn["parameters"].get("properties", {}))
    print(f"  {fn['name']}: parameters = {schemas[fn['name']]}")
print()
check("list_orders received the run's dict", tool_saw[-1], response.context_variables)
check("the model sees no parameter of list_orders", schemas["list_orders"], [])
check("and only `language` of set_language", schemas["set_language"], ["language"])

# %% [markdown]
# Because the parameter is hidden, a model cannot forge it either. Here the script makes the
# model *try* to pass its own `context_variables` (say, someone else's user id). The
# framework ignores that argument and injects the real dict:
# %%
tool_saw.clear()
forger = ScriptedChatModel(
    [scripted_tool_call("list_orders", {"context_variables": {"user_id": 1}}), "Done."]
)
forged = Swarm(chat_model=forger).run(
    agent=support,
    messages=[{"role": "user", "content": "show orders"}],
    context_variables={"user_id": 456},
)
print("the model's arguments:", forged.messages[0]["tool_calls"][0]["function"]["arguments"])
print("the tool received:    ", tool_saw[-1])
print("the tool answered:    ", forged.messages[1]["content"])
print()
check(
    "the model did try to pass a user id of its own",
    json.loads(forged.messages[0]["tool_calls"][0]["function"]["arguments"]),
    {"context_variables": {"user_id": 1}},
)
check("the tool received the caller's user id, not the forged one", tool_saw[-1], {"user_id": 456})

# %% [markdown]
# ## 3. Written back through `Result`
#
# `remember_name` returned `Result(context_variables={"name": "Li"})`. The framework merged
# that into the run's dict, so the **next** time it called the instruction function the
# system prompt already knew the name. Compare the system prompt of each model call in the
# first run:
# %%
for i, call in enumerate(model.calls):
    print(f"call {i}: system prompt = {call[0].content!r}")
print()
print("the conversation the model saw on its last call:")
show(model.calls[-1])
print()
check(
    "the framework built the system prompt before every model call of the run",
    built_in_run_1,
    len(model.calls),
)
check(
    "before remember_name ran, the prompt did not know the name",
    model.calls[0][0].content,
    "You are Support. You are talking to an unknown customer.",
)
check(
    "every call after it did",
    {call[0].content for call in model.calls[1:]},
    {"You are Support. You are talking to Li."},
)

# %% [markdown]
# ## 4. Gone after the run
#
# Nothing is stored anywhere. A second run that passes no `context_variables` starts with
# an empty dict: the instruction function no longer knows the name and the tool has no user
# id, even though it is the same agent object.
# %%
tool_saw.clear()
model2 = ScriptedChatModel([scripted_tool_call("list_orders"), "Sorry, I can't see your account."])
second = Swarm(chat_model=model2).run(
    agent=support, messages=[{"role": "user", "content": "Which orders do I have open?"}]
)
print("system prompt: ", model2.calls[0][0].content)
print("tool answered: ", second.messages[1]["content"])
print()
check(
    "the instruction function no longer knows the name",
    "unknown customer" in model2.calls[0][0].content,
)
check("the tool received an empty dict", tool_saw[-1], {})
check("and the run ends with an empty dict", second.context_variables, {})

# %% [markdown]
# To "remember" across runs you do the three steps yourself: **save** the returned
# `response.context_variables`, **load** it when the next run starts, **pass** it in again.
# Passing the first run's result back in restores everything:
# %%
tool_saw.clear()
model3 = ScriptedChatModel([scripted_tool_call("list_orders"), "Li, orders 7 and 9 are open."])
third = Swarm(chat_model=model3).run(
    agent=support,
    messages=[{"role": "user", "content": "Which orders do I have open?"}],
    context_variables=response.context_variables,  # saved from run 1, passed back by us
)
check(
    "the name is back in the system prompt",
    model3.calls[0][0].content,
    "You are Support. You are talking to Li.",
)
check("the tool received everything run 1 ended with", tool_saw[-1], response.context_variables)

# %% [markdown]
# `swarmgraph.Session` packages exactly these three steps (and the messages' equivalent) behind
# one object; notebook 03 shows what each half brings back after a page refresh.

# %% [markdown]
# ## What you saw
#
# * The caller's dict, nested `prefs` included, was unchanged after a run that renamed and
#   re-languaged it; the changes were only in `response.context_variables`.
# * `list_orders` received the run's dict, and its schema showed the model no parameter; a
#   model that tried to pass `context_variables` itself got the caller's user id 456, not 1.
# * After `remember_name` returned `Result(context_variables={"name": "Li"})`, every later
#   system prompt of the run said "talking to Li"; the first had said "unknown customer".
# * A second run without `context_variables` started empty (no name, no user id, `{}` at the
#   end); passing run 1's `response.context_variables` back in restored both.
