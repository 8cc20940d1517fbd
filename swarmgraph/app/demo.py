"""The customer-service demo swarm (Triage → Sales / Refunds) and its offline demo model.

Everything the CLI, the README and the notebooks show runs on these agents:

- **Triage** greets the customer. Its tools ``set_name`` and ``record_order`` write the
  customer's name and order id into ``context_variables`` through ``Result``; its handoff
  tools send the customer to Sales or Refunds.
- **Sales** quotes prices with ``quote_price``, which *reads* the name from
  ``context_variables`` (injected by the framework, invisible to the model).
- **Refunds** files refunds with ``process_refund`` (reads ``order_id``, writes the order's
  status into ``refunds``, one entry per order, and ``refund_status``, the current order's)
  and answers "did it go through?" with ``refund_status``, which reads ``refunds``.

Each agent's instructions are a function of ``context_variables``, so the system prompt
tells the model what is already known.

:func:`demo_model` is a deterministic, **offline demo model**: a rule-based stand-in for a
chat model (``ScriptedChatModel(respond=...)``) that reads the latest user text and the
system prompt, calls the tools above, hands off, and answers with what it knows. It never
runs out and it streams, so the REPL works without an API key.

Example:
    >>> from swarmgraph.graph import Swarm
    >>> triage, sales, refunds = demo_agents()
    >>> response = Swarm(chat_model=demo_model()).run(
    ...     agent=triage,
    ...     messages=[{"role": "user", "content": "I'm Ming, please refund order 7"}],
    ... )
    >>> ctx = response.context_variables
    >>> response.agent.name, ctx["name"], ctx["order_id"], ctx["refund_status"]
    ('Refunds', 'Ming', 7, 'approved')
    >>> print(response.messages[-1]["content"])
    Done, Ming: the refund for order 7 is approved. The money is back in 3-5 days.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..graph.chat_models.scripted import ScriptedChatModel, scripted_tool_calls
from ..graph.core.types import Agent, Result
from .demo_memory import memory_reply, recalled, with_memory_note

__all__ = [
    "DEMO_CONVERSATION",
    "DEMO_MODEL_LABEL",
    "PERSIST_TABLE_NOTE",
    "PRICES",
    "demo_agents",
    "demo_model",
    "demo_rules",
]

#: How the rule-based model is named wherever it is shown.
DEMO_MODEL_LABEL = "offline demo model (rule-based, no API key needed)"

#: The short scripted conversation ``swarmgraph demo`` plays.
DEMO_CONVERSATION: tuple[str, ...] = (
    "Hi, I'm Ming. Please refund order 7, the bees arrived grumpy.",
    "Thanks! How much is a new hive?",
    "Did my refund go through?",
)

#: Printed under the persist table (demo, README, notebook 03): why two numbers look backwards.
PERSIST_TABLE_NOTE: tuple[str, ...] = (
    "Measured with the offline rule-based model: tokens are approximate counts of what it",
    "was sent. The active agent is saved with the context, so without it turn 2 restarts",
    "at Triage and hands off to Refunds again: one more model call resending the history",
    "(`none` sends more tokens than `context`) and two more stored messages, the transfer",
    "call and its result (`messages` stores more bytes than `messages+context`).",
    "The last column is the third kind: a new conversation of the same customer knows them",
    "only when persist keeps long_term (facts extracted in turn 1, recalled into the prompt).",
)

#: Sales' price list (what ``quote_price`` knows).
PRICES = {"hive": 120, "bees": 35, "honey": 9, "smoker": 25, "suit": 60}


# -- tools ------------------------------------------------------------------------------
def set_name(name: str) -> Result:
    """Remember the customer's name.

    Args:
        name: the customer's first name, as they gave it.
    """
    return Result(value=f"Name saved: {name}.", context_variables={"name": name})


def record_order(order_id: int, context_variables: dict) -> Result:
    """Remember which order the customer is talking about.

    Args:
        order_id: the order number the customer gave.
    """
    # refund_status is the status of this order's refund: another order's must not show.
    status = context_variables.get("refunds", {}).get(str(order_id))
    update: dict = {"order_id": order_id}
    if status is None:
        context_variables.pop("refund_status", None)  # in place: the deletion sticks
    else:
        update["refund_status"] = status
    return Result(value=f"Order saved: {order_id}.", context_variables=update)


def quote_price(item: str, context_variables: dict) -> str:
    """Look up the price of an item in the shop.

    Args:
        item: what the customer wants to buy, e.g. "hive".
    """
    name = context_variables.get("name", "there")
    key = item.lower().rstrip("s") if item.lower().rstrip("s") in PRICES else item.lower()
    if key not in PRICES:
        return f"No price for {item!r}; we sell {', '.join(sorted(PRICES))}."
    return f"Quote for {name}: one {key} costs ${PRICES[key]}."


def process_refund(context_variables: dict) -> Result:
    """File a refund for the customer's order (the order id comes from context)."""
    order_id = context_variables.get("order_id")
    if order_id is None:
        return Result(value="Error: no order_id in context; ask the customer for it.")
    # One status per order (JSON keys are strings); refund_status is the current order's.
    refunds = {**context_variables.get("refunds", {}), str(order_id): "approved"}
    return Result(
        value=f"Refund for order {order_id} approved.",
        context_variables={"refunds": refunds, "refund_status": "approved"},
    )


def refund_status(context_variables: dict) -> str:
    """Check how the refund of the customer's order is going."""
    order_id = context_variables.get("order_id")
    if order_id is None:
        return "No order_id in context: I can't look up a refund."
    status = context_variables.get("refunds", {}).get(str(order_id))
    if status is None:
        return f"No refund filed for order {order_id}."
    return f"Refund for order {order_id}: {status}."


# -- instructions (functions of context_variables, called by the framework) -----------------
def _known(ctx: dict) -> str:
    fields = [f"{key}={ctx[key]}" for key in ("name", "order_id", "refund_status") if key in ctx]
    return "Known: " + (", ".join(fields) if fields else "nothing yet") + "."


def triage_instructions(context_variables: dict) -> str:
    """Triage's system prompt, rebuilt from the context before every model call."""
    return (
        "You are Triage, the front desk of a bee shop. Save the customer's name with set_name "
        "and their order number with record_order, then hand refunds to Refunds and "
        f"purchases to Sales. {_known(context_variables)}"
    )


def sales_instructions(context_variables: dict) -> str:
    """Sales' system prompt."""
    return (
        "You are Sales. Quote prices with quote_price. Anything else goes back to Triage. "
        f"{_known(context_variables)}"
    )


def refunds_instructions(context_variables: dict) -> str:
    """Refunds' system prompt."""
    return (
        "You are Refunds. File refunds with process_refund and check them with refund_status. "
        f"Anything else goes back to Triage. {_known(context_variables)}"
    )


def demo_agents(
    model: str = "gpt-4o-mini", *, memory_tools: bool = False
) -> tuple[Agent, Agent, Agent]:
    """Fresh ``(triage, sales, refunds)`` agents; ``model`` is what a real model run uses.
    ``memory_tools=True`` (``swarmgraph chat --user ID``) gives each the long-term memory
    tools and says so in its instructions (:mod:`.demo_memory`).

    Example:
        >>> triage, sales, refunds = demo_agents()
        >>> [t.__name__ for t in triage.tools]
        ['set_name', 'record_order', 'transfer_to_sales', 'transfer_to_refunds']
        >>> [t.__name__ for t in refunds.tools]
        ['process_refund', 'refund_status', 'transfer_to_triage']
    """
    sales = Agent(
        name="Sales", model=model, instructions=sales_instructions, functions=[quote_price]
    )
    refunds = Agent(
        name="Refunds",
        model=model,
        instructions=refunds_instructions,
        functions=[process_refund, refund_status],
    )
    triage = Agent(
        name="Triage",
        model=model,
        instructions=triage_instructions,
        functions=[set_name, record_order],
        handoffs=[sales, refunds],
    )
    sales.handoffs.append(triage)
    refunds.handoffs.append(triage)
    if memory_tools:
        for agent in (triage, sales, refunds):
            agent.memory_tools = True
            agent.instructions = with_memory_note(agent.instructions)
    return triage, sales, refunds


# -- the offline demo model -----------------------------------------------------------------
_NAME = re.compile(r"\b(?i:I'm|I am|my name is|this is|call me)\s+([A-Z][\w-]*)")
_ORDER = re.compile(r"\border\s*(?:number\s*|no\.?\s*|#\s*)?(\d+)", re.IGNORECASE)
_REFUND = re.compile(r"\b(refund|money back|return|broken|grumpy|angry)\b", re.IGNORECASE)
_STATUS = re.compile(r"\b(go through|went through|status|did it|approved)\b", re.IGNORECASE)
_BUY = re.compile(r"\b(buy|price|cost|how much|purchase|order a|want a|new)\b", re.IGNORECASE)
_KNOWN = re.compile(r"Known: (.*?)\.$")


def _field(system: str, key: str) -> str | None:
    match = _KNOWN.search(system)
    if not match:
        return None
    for part in match[1].split(", "):
        k, _, v = part.partition("=")
        if k == key:
            return v
    return None


def _call(calls: list[tuple[str, dict]], n: int) -> AIMessage:
    return scripted_tool_calls([(name, args, f"call_{name}_{n}") for name, args in calls])


_SUMMARY_ASK = "You keep a running summary"  # memory.policies.SUMMARY_PROMPT's first words


def _summarise(request: str) -> str:
    """The demo model as a summariser: the previous summary plus one short clause per new
    user or agent line (tool results and handoff calls add nothing a reader needs)."""
    previous, _, new = request.partition("\n\nNew lines:\n")
    previous = previous.removeprefix("Existing summary:\n").strip()
    clauses = [] if previous in ("", "(none yet)") else [previous]
    for line in new.splitlines():
        who, _, text = line.partition(": ")
        text = text.split(" [calls ", 1)[0].strip()
        if who.startswith("Tool") or not text:
            continue
        clauses.append(f"{who} said: {text[:80]}" + ("…" if len(text) > 80 else ""))
    return " / ".join(clauses) or "(nothing to summarise)"


def demo_rules(messages: Sequence[BaseMessage]) -> AIMessage | str:
    """The offline demo model's policy: one reply for the messages it was sent.

    It plays whichever agent the system prompt names ("You are Triage"), looks only at the
    latest user message and the tool results since then, and reads the customer's fields
    from the "Known:" line of the system prompt, i.e. from ``context_variables``. Asked by
    ``SummaryMemory`` for a summary, it extends the summary with the new lines.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> reply = demo_rules([SystemMessage(triage_instructions({})),
        ...                     HumanMessage("I'm Ming, refund order 7")])
        >>> [(c["name"], c["args"]) for c in reply.tool_calls]
        [('set_name', {'name': 'Ming'}), ('record_order', {'order_id': 7})]
    """
    system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
    if system.startswith(_SUMMARY_ASK):  # SummaryMemory asks the run's model for a summary
        return _summarise(str(messages[-1].content))
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    text = str(messages[last_user].content) if last_user >= 0 else ""
    done = {m.name: str(m.content) for m in messages[last_user + 1 :] if isinstance(m, ToolMessage)}
    n = len(messages)
    name = _field(system, "name")
    order = _field(system, "order_id")
    wants_refund, wants_buy = bool(_REFUND.search(text)), bool(_BUY.search(text))
    asks_status = bool(_STATUS.search(text))
    remembered = memory_reply(system, text, done, n)  # only with the memory tools
    if remembered is not None:
        return remembered
    # A name from an earlier conversation greets the customer (the context may not hold it).
    hello = name or recalled(system).get("name") or "there"

    if system.startswith("You are Triage"):
        calls: list[tuple[str, dict]] = []
        said_name, said_order = _NAME.search(text), _ORDER.search(text)
        if said_name and "set_name" not in done and said_name[1] != name:
            calls.append(("set_name", {"name": said_name[1]}))
        if said_order and "record_order" not in done and said_order[1] != order:
            calls.append(("record_order", {"order_id": int(said_order[1])}))
        if calls:
            return _call(calls, n)
        if (wants_refund or asks_status) and "transfer_to_refunds" not in done:
            return _call([("transfer_to_refunds", {})], n)
        if wants_buy and "transfer_to_sales" not in done:
            return _call([("transfer_to_sales", {})], n)
        return (
            f"Hello {hello}! I'm Triage. Tell me your name and order number, and whether you "
            "want to buy something or need a refund."
        )

    if system.startswith("You are Sales"):
        if "quote_price" in done:
            return f"{done['quote_price']} Anything else, {hello}?"
        if wants_buy and not wants_refund:
            item = next((i for i in PRICES if i in text.lower()), "hive")
            return _call([("quote_price", {"item": item})], n)
        if "transfer_to_triage" not in done and (
            wants_refund or asks_status or _ORDER.search(text)
        ):
            return _call([("transfer_to_triage", {})], n)
        return f"Sales here, {hello}. We sell {', '.join(sorted(PRICES))}. What would you like?"

    if system.startswith("You are Refunds"):
        if "process_refund" in done:
            result = done["process_refund"]
            if result.startswith("Error: denied"):  # a person said no (swarmgraph chat --approve)
                why = result.removeprefix("Error: denied").strip(" :.") or "no reason given"
                return (
                    f"I have not filed the refund for order {order}, {hello}: it was denied "
                    f"({why}). Anything else?"
                )
            if result.startswith("Error"):
                return "Which order should I refund? Please give me the order number."
            return (
                f"Done, {hello}: the refund for order {order} is "
                f"{_field(system, 'refund_status') or 'filed'}. The money is back in 3-5 days."
            )
        if "refund_status" in done:
            return f"{done['refund_status']} Anything else, {hello}?"
        said_order = _ORDER.search(text)
        if said_order and said_order[1] != order and "transfer_to_triage" not in done:
            return _call([("transfer_to_triage", {})], n)  # Triage records the new order
        if asks_status:
            return _call([("refund_status", {})], n)
        if wants_buy and not wants_refund and "transfer_to_triage" not in done:
            return _call([("transfer_to_triage", {})], n)
        if wants_refund or _ORDER.search(text):
            if order is None:
                if "transfer_to_triage" not in done and _ORDER.search(text):
                    return _call([("transfer_to_triage", {})], n)
                return f"I can refund that, {hello}. Which order number is it?"
            return _call([("process_refund", {})], n)
        return f"Refunds here, {hello}. Tell me which order you want refunded."

    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage):
        return f"Tool said: {last.content}"
    return f"(offline demo model) You said: {json.dumps(text)}"


def demo_model(latency: float = 0.0) -> ScriptedChatModel:
    """The deterministic **offline demo model**: :func:`demo_rules` behind a chat model.

    It calls tools, hands off and streams its replies word by word, and never runs out.
    ``latency`` (seconds per call) makes a spinner visible in the REPL.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> model = demo_model()
        >>> model.invoke([SystemMessage(sales_instructions({"name": "Ming"})),
        ...               HumanMessage("hello")]).content
        'Sales here, Ming. We sell bees, hive, honey, smoker, suit. What would you like?'
    """
    return ScriptedChatModel([], respond=demo_rules, latency=latency)
