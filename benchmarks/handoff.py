"""Handoff overhead: seconds per run of "agent A hands off to B, B answers" (one handoff).

Every contender does the same work per run: model call 1 (A asks for ``transfer_to_b``),
the tool runs, the active agent switches, model call 2 (B answers "pong"). The model costs
nothing (a zero-latency rule-based reply), so what is measured is framework overhead:

- ``ours: Swarm.run``       - our public API (dict in, Swarm-shaped ``Response`` out)
- ``ours: app.invoke``      - our compiled graph (``build_swarm_graph(...).compile()``)
- ``langgraph-swarm``       - ``create_swarm`` over two ``create_agent`` subgraphs with
  ``create_handoff_tool`` (what langgraph-swarm 0.1.0 documents)
- ``OpenAI Agents SDK``     - ``Runner.run`` with an SDK handoff and a scripted ``Model``
  (as the SDK's own tests fake one), on one reused event loop
- ``openai/swarm``          - real openai/swarm ``Swarm.run`` over a client returning real
  ``ChatCompletion`` objects
- ``minimal loop``          - a Swarm ``core.py``-style Python loop over a mock OpenAI client
- ``LangGraph + ToolNode``  - plain LangGraph: two agent nodes and a separate ``ToolNode``
- ``LangGraph node/agent``  - plain LangGraph: one node per agent that runs its tools itself,
  calling the same chat model class through ``BaseChatModel.invoke``: the floor of any
  LangGraph engine over LangChain chat models (target: ours <= 1.05x this)
- ``LangGraph floor``       - the same two-node graph whose nodes only append canned messages
  (no model, no tools): what LangGraph's own steps cost for this shape
- ``LangGraph empty step``  - one node that returns ``{}``: a single superstep's floor

And each feature's cost on its own (``features``): ``ours: Swarm.run`` with one feature
switched on (a budget, an input guardrail, a typed context, marked tools never called, a
history view), as a ratio to a plain run interleaved with them (:func:`feature_costs`).

Example:
    >>> result = run_handoff(number=2, repeat=2)
    >>> sorted(result["ratios"]) == sorted(RATIOS)
    True
    >>> result["contenders"]["ours: Swarm.run"]["median"] > 0
    True
    >>> sorted(result["features"]["ratios"]) == sorted(FEATURES)
    True
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, build_swarm_graph

from benchmarks.peers import agents_sdk_handoff, openai_swarm_handoff
from benchmarks.timing import Stats, interleaved, paired

PING = "ping"
PONG = "pong"

# name -> (numerator, denominator): the comparisons the report states.
RATIOS = {
    "ours Swarm.run / langgraph-swarm": ("ours: Swarm.run", "langgraph-swarm"),
    "ours Swarm.run / minimal loop": ("ours: Swarm.run", "minimal loop"),
    "ours app.invoke / langgraph-swarm": ("ours: app.invoke", "langgraph-swarm"),
    "ours app.invoke / minimal loop": ("ours: app.invoke", "minimal loop"),
    "ours Swarm.run / LangGraph node/agent": ("ours: Swarm.run", "LangGraph node/agent"),
    "ours Swarm.run / LangGraph floor": ("ours: Swarm.run", "LangGraph floor"),
    "ours Swarm.run / OpenAI Agents SDK": ("ours: Swarm.run", "OpenAI Agents SDK"),
    "ours Swarm.run / openai/swarm": ("ours: Swarm.run", "openai/swarm"),
}


def _rule(messages: list[BaseMessage]) -> AIMessage | str:
    """The scripted model's rule: a user turn gets a handoff, anything else gets the answer."""
    if isinstance(messages[-1], HumanMessage):
        return AIMessage(content="", tool_calls=[{"name": "transfer_to_b", "args": {}, "id": None}])
    return PONG


def make_model() -> ScriptedChatModel:
    return ScriptedChatModel([], respond=_rule)


def _reset_every(model: ScriptedChatModel, fn: Callable[[], Any]) -> Callable[[], Any]:
    # The scripted model records every call; forget them so memory stays flat over a batch.
    def run() -> Any:
        out = fn()
        if len(model.calls) > 1000:
            model.reset()
        return out

    return run


# --------------------------------------------------------------------------- ours
def ours_swarm_run() -> Callable[[], Any]:
    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    swarm = Swarm(chat_model=model)

    def run() -> Any:
        response = swarm.run(a, [{"role": "user", "content": PING}])
        assert response.agent is b and response.messages[-1]["content"] == PONG
        return response

    return _reset_every(model, run)


def ours_app_invoke() -> Callable[[], Any]:
    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    app = build_swarm_graph([a], chat_model=model).compile()

    def run() -> Any:
        out = app.invoke({"messages": [HumanMessage(PING)]})
        assert out["active_agent"] == "B" and out["messages"][-1].content == PONG
        return out

    return _reset_every(model, run)


# --------------------------------------------------------------------------- langgraph-swarm
def langgraph_swarm() -> Callable[[], Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain.agents import create_agent
        from langgraph_swarm import create_handoff_tool, create_swarm

    model = make_model()
    agent_a = create_agent(
        model,
        tools=[create_handoff_tool(agent_name="B", name="transfer_to_b")],
        system_prompt="You are A.",
        name="A",
    )
    agent_b = create_agent(
        model,
        tools=[create_handoff_tool(agent_name="A", name="transfer_to_a")],
        system_prompt="You are B.",
        name="B",
    )
    app = create_swarm([agent_a, agent_b], default_active_agent="A").compile()

    def run() -> Any:
        out = app.invoke({"messages": [HumanMessage(PING)]})
        assert out["active_agent"] == "B" and out["messages"][-1].content == PONG
        return out

    return _reset_every(model, run)


# --------------------------------------------------------------------------- minimal loop
class _MockCompletions:
    """``client.chat.completions.create`` returning canned OpenAI-shaped completions."""

    def __init__(self) -> None:
        self.n = 0

    def create(self, *, model: str, messages: list[dict], tools: Any = None, **_: Any) -> Any:
        self.n += 1
        if messages[-1]["role"] == "user":
            call = SimpleNamespace(
                id=f"call_{self.n}",
                type="function",
                function=SimpleNamespace(name="transfer_to_b", arguments="{}"),
            )
            message = SimpleNamespace(role="assistant", content=None, tool_calls=[call])
        else:
            message = SimpleNamespace(role="assistant", content=PONG, tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


def _function_to_json(func: Callable[..., Any]) -> dict:
    # Swarm's util.function_to_json, reduced to what a no-argument tool needs.
    return {
        "type": "function",
        "function": {
            "name": func.__name__,
            "description": func.__doc__ or "",
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    }


class _LoopAgent:
    def __init__(self, name: str, instructions: str) -> None:
        self.name, self.instructions, self.model = name, instructions, "gpt-4o"
        self.functions: list[Callable[..., Any]] = []


def minimal_loop() -> Callable[[], Any]:
    """Swarm's ``core.py`` run loop, minus streaming/debug: the least a framework can do."""
    client = SimpleNamespace(chat=SimpleNamespace(completions=_MockCompletions()))
    a, b = _LoopAgent("A", "You are A."), _LoopAgent("B", "You are B.")

    def transfer_to_b() -> _LoopAgent:
        return b

    def transfer_to_a() -> _LoopAgent:
        return a

    a.functions, b.functions = [transfer_to_b], [transfer_to_a]

    def run_loop(agent: _LoopAgent, messages: list[dict], context_variables: dict) -> dict:
        active = agent
        context_variables = dict(context_variables)
        history = list(messages)
        start = len(history)
        while True:
            tools = [_function_to_json(f) for f in active.functions]
            completion = client.chat.completions.create(
                model=active.model,
                messages=[{"role": "system", "content": active.instructions}, *history],
                tools=tools or None,
            )
            message = completion.choices[0].message
            turn = {
                "role": "assistant",
                "content": message.content,
                "sender": active.name,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": c.type,
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in message.tool_calls
                ]
                if message.tool_calls
                else None,
            }
            history.append(turn)
            if not message.tool_calls:
                break
            by_name = {f.__name__: f for f in active.functions}
            for call in message.tool_calls:
                name = call.function.name
                args = json.loads(call.function.arguments)
                raw = by_name[name](**args)
                if isinstance(raw, _LoopAgent):
                    active, content = raw, json.dumps({"assistant": raw.name})
                else:
                    content = str(raw)
                history.append(
                    {"role": "tool", "tool_call_id": call.id, "tool_name": name, "content": content}
                )
        return {
            "messages": history[start:],
            "agent": active,
            "context_variables": context_variables,
        }

    def run() -> Any:
        out = run_loop(a, [{"role": "user", "content": PING}], {})
        assert out["agent"] is b and out["messages"][-1]["content"] == PONG
        return out

    return run


# --------------------------------------------------------------------------- plain LangGraph
class _HandoffState(MessagesState):
    active_agent: str


def transfer_to_b() -> str:
    """Transfer to B."""
    return "B"


def transfer_to_a() -> str:
    """Transfer to A."""
    return "A"


def langgraph_toolnode() -> Callable[[], Any]:
    """Agent nodes call the model; a separate ``ToolNode`` runs tools; routing reads the result."""
    from langgraph.prebuilt import ToolNode

    model = make_model()
    tools = {"A": [transfer_to_b], "B": [transfer_to_a]}
    bound = {name: model.bind_tools(fs) for name, fs in tools.items()}
    prompts = {"A": "You are A.", "B": "You are B."}

    def agent_node(name: str) -> Callable[[dict], dict]:
        def node(state: dict) -> dict:
            from langchain_core.messages import SystemMessage

            reply = bound[name].invoke([SystemMessage(prompts[name]), *state["messages"]])
            return {"messages": [reply], "active_agent": name}

        return node

    def after_agent(state: dict) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    def after_tools(state: dict) -> str:
        return state["messages"][-1].content  # the transfer tools return the target's name

    builder = StateGraph(_HandoffState)
    builder.add_node("A", agent_node("A"))
    builder.add_node("B", agent_node("B"))
    builder.add_node("tools", ToolNode([transfer_to_a, transfer_to_b]))
    builder.add_edge(START, "A")
    builder.add_conditional_edges("A", after_agent, ["tools", END])
    builder.add_conditional_edges("B", after_agent, ["tools", END])
    builder.add_conditional_edges("tools", after_tools, ["A", "B"])
    app = builder.compile()

    def run() -> Any:
        out = app.invoke({"messages": [HumanMessage(PING)], "active_agent": "A"})
        assert out["active_agent"] == "B" and out["messages"][-1].content == PONG
        return out

    return _reset_every(model, run)


def langgraph_node_per_agent() -> Callable[[], Any]:
    """One node per agent: call the model, run its tool calls inline, route to the target."""
    from langchain_core.messages import SystemMessage

    model = make_model()
    tools = {"A": [transfer_to_b], "B": [transfer_to_a]}
    bound = {name: model.bind_tools(fs) for name, fs in tools.items()}
    prompts = {"A": "You are A.", "B": "You are B."}

    def agent_node(name: str) -> Callable[[dict], dict]:
        by_name = {f.__name__: f for f in tools[name]}

        def node(state: dict) -> dict:
            reply = bound[name].invoke([SystemMessage(prompts[name]), *state["messages"]])
            update: dict[str, Any] = {"messages": [reply], "active_agent": name}
            for call in reply.tool_calls:
                target = by_name[call["name"]](**call["args"])
                update["messages"].append(
                    ToolMessage(content=target, tool_call_id=call["id"], name=call["name"])
                )
                update["active_agent"] = target
            return update

        return node

    def route(state: dict) -> str:
        last = state["messages"][-1]
        return END if isinstance(last, AIMessage) else state["active_agent"]

    builder = StateGraph(_HandoffState)
    builder.add_node("A", agent_node("A"))
    builder.add_node("B", agent_node("B"))
    builder.add_edge(START, "A")
    builder.add_conditional_edges("A", route, ["A", "B", END])
    builder.add_conditional_edges("B", route, ["A", "B", END])
    app = builder.compile()

    def run() -> Any:
        out = app.invoke({"messages": [HumanMessage(PING)], "active_agent": "A"})
        assert out["active_agent"] == "B" and out["messages"][-1].content == PONG
        return out

    return _reset_every(model, run)


def langgraph_floor() -> Callable[[], Any]:
    """The node-per-agent graph's shape with the model and tools taken out."""

    def node_a(state: dict) -> dict:
        call = {"name": "transfer_to_b", "args": {}, "id": "c1"}
        return {
            "messages": [
                AIMessage(content="", tool_calls=[call]),
                ToolMessage(content="B", tool_call_id="c1", name="transfer_to_b"),
            ],
            "active_agent": "B",
        }

    def node_b(state: dict) -> dict:
        return {"messages": [AIMessage(content=PONG)]}

    def route(state: dict) -> str:
        last = state["messages"][-1]
        return END if isinstance(last, AIMessage) else state["active_agent"]

    builder = StateGraph(_HandoffState)
    builder.add_node("A", node_a)
    builder.add_node("B", node_b)
    builder.add_edge(START, "A")
    builder.add_conditional_edges("A", route, ["A", "B", END])
    builder.add_conditional_edges("B", route, ["A", "B", END])
    app = builder.compile()

    def run() -> Any:
        out = app.invoke({"messages": [HumanMessage(PING)], "active_agent": "A"})
        assert out["messages"][-1].content == PONG
        return out

    return run


def langgraph_empty_step() -> Callable[[], Any]:
    class _Empty(MessagesState):
        pass

    builder = StateGraph(_Empty)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    app = builder.compile()
    return lambda: app.invoke({"messages": []})


# --------------------------------------------------------------------------- each feature apart
#: The context the typed row passes (and validates against :class:`_Desk`).
_TYPED_CONTEXT = {"order_id": 7, "customer": "Ming"}


def _passes(context_variables: dict, messages: list[BaseMessage]) -> str | None:
    """An input guardrail that always lets the conversation through (its cost, not its rule)."""
    return None


def _refund(order_id: int) -> str:
    """Refund an order (marked, never called: the model only ever asks for the handoff)."""
    return f"refunded {order_id}"


def _pay(order_id: int, idempotency_key: str) -> str:
    """Pay an order (marked, never called)."""
    return f"paid {order_id}"


def ours_with(feature: str) -> Callable[[], Any]:
    """The handoff of ``ours: Swarm.run`` with one feature switched on, and nothing else: the
    run asserts the feature took part (a feature that silently did nothing would be free).

    - ``budget``: ``Swarm.run(budget=Budget(...))`` whose limits the run just fits (two model
      calls, one tool call, one handoff: a budget that counted one step too many would stop
      it); the same swarm with a budget one handoff short is checked to stop, once, before
      timing (the budget's middleware takes part). A plain run installs no middleware;
    - ``input guardrail``: B has one input guardrail, checked on the handoff (it passes);
    - ``typed context``: ``Swarm(context_schema=...)``, a two-key context validated on entry;
    - ``marked tools``: A also has an ``@needs_approval`` and an ``@effect`` tool the model
      never calls (approvals and effects attach, nothing waits);
    - ``history view``: B's model sees ``Agent(history=last(2))``: A's transfer call and its
      answer, not the user's message before them;
    - ``no-op middleware``: ``Swarm(middleware=[m])``, one LangChain ``AgentMiddleware`` whose
      ``before_model`` counts the calls and changes nothing (the hook machinery's own cost).
    """
    from langchain.agents.middleware import AgentMiddleware
    from pydantic import BaseModel
    from swarmgraph.graph import Budget, BudgetExceeded, effect, needs_approval
    from swarmgraph.graph.features.history_views import last

    class _Desk(BaseModel):
        order_id: int | None = None
        customer: str = ""

    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    kwargs: dict[str, Any] = {}
    swarm = Swarm(chat_model=model)
    if feature == "budget":
        kwargs["budget"] = Budget(max_model_calls=2, max_tool_calls=1, max_handoffs=1)
        short = Budget(max_model_calls=2, max_tool_calls=1, max_handoffs=0)
        try:
            swarm.run(a, [{"role": "user", "content": PING}], budget=short)
        except BudgetExceeded as stop:
            assert stop.limit == "max_handoffs", stop
        else:  # pragma: no cover - the budget did nothing: its row would be free
            raise AssertionError("a budget one handoff short did not stop the run")
        model.reset()
    elif feature == "input guardrail":
        b.input_guardrails = [_passes]
    elif feature == "typed context":
        swarm = Swarm(chat_model=model, context_schema=_Desk)
        kwargs["context_variables"] = _TYPED_CONTEXT
    elif feature == "marked tools":
        a.functions = [needs_approval(_refund), effect(_pay)]
    elif feature == "history view":
        b.history = last(2)
    elif feature == "no-op middleware":

        class Noop(AgentMiddleware):
            calls = 0

            def before_model(self, state: Any, runtime: Any) -> None:
                Noop.calls += 1

        swarm = Swarm(chat_model=model, middleware=[Noop()])
    else:
        raise ValueError(f"no feature row {feature!r}; known: {', '.join(FEATURES)}")

    def run() -> Any:
        response = swarm.run(a, [{"role": "user", "content": PING}], **kwargs)
        assert response.agent is b and response.messages[-1]["content"] == PONG
        assert response.usage["model_calls"] == 2  # the same two-call handoff as the plain run
        if feature == "input guardrail":  # the guardrail ran (and passed)
            assert [s["kind"] for s in response.trajectory].count("guardrail") == 1
        elif feature == "typed context":
            assert response.context_variables == _TYPED_CONTEXT
        elif feature == "marked tools":
            assert response.pending == [] and len(a.functions) == 2
        elif feature == "history view":  # B's model was sent the view, not the whole chat
            assert [m.type for m in model.calls[-1] if m.type != "system"] == ["ai", "tool"]
        elif feature == "no-op middleware":  # its hook ran before both model calls
            assert Noop.calls >= 2
        return response

    return _reset_every(model, run)


#: The per-feature rows: each is ``ours: Swarm.run`` with that one feature (see :func:`ours_with`).
FEATURES = (
    "budget",
    "input guardrail",
    "typed context",
    "marked tools",
    "history view",
    "no-op middleware",
)


def feature_costs(number: int, repeat: int, rounds: int = 0) -> dict[str, Any]:
    """Each feature's cost on its own: ``plain`` (``ours: Swarm.run``) and one row per
    feature (:func:`ours_with`), in interleaved batches of their own, timed in this process's
    CPU time (the model never waits, and it is steadier on a shared machine than the wall
    clock); ``ratios``: each row's median over the plain one's. With ``rounds``, ``paired``:
    each feature again beside the plain run in ``rounds`` pairs of adjacent batches
    (:func:`benchmarks.timing.paired`), what a feature a few percent from plain is judged by
    (the table's rows stand up to six batches apart)."""
    rows = {"plain": ours_swarm_run(), **{f: ours_with(f) for f in FEATURES}}
    stats = interleaved(rows, number=number, repeat=repeat, clock=time.process_time)
    plain = stats["plain"].median
    out: dict[str, Any] = {
        "contenders": {name: s.as_dict() for name, s in stats.items()},
        "ratios": {f: stats[f].median / plain for f in FEATURES},
    }
    if rounds:
        out["paired"] = {
            f: paired(rows[f], rows["plain"], repeat=rounds).as_dict() for f in FEATURES
        }
    return out


def floor_pair(number: int, repeat: int) -> dict[str, Any]:
    """Ours against the floor the target names, and nothing else: ``ours: Swarm.run`` and
    ``LangGraph node/agent`` in adjacent batches (A B, then B A, ...: neither always goes
    first), in this process's CPU time. ``ratio`` is the median of each round's ratio: a
    round's two batches are a moment apart, so the machine's slow drift (another process,
    the CPU's clock) mostly cancels within it, which the many-contender table, where the two
    stand seven batches apart, cannot do.

    Example:
        >>> pair = floor_pair(2, 3)
        >>> len(pair["rounds"]) == 3 and pair["ratio"] > 0
        True
    """
    pair = paired(ours_swarm_run(), langgraph_node_per_agent(), number=number, repeat=repeat)
    return {
        "number": number,
        "repeat": repeat,
        "rounds": pair.rounds,
        "ratio": pair.ratio,
        "quartiles": list(pair.quartiles),
    }


CONTENDERS: dict[str, Callable[[], Callable[[], Any]]] = {
    "ours: Swarm.run": ours_swarm_run,
    "ours: app.invoke": ours_app_invoke,
    "langgraph-swarm": langgraph_swarm,
    "OpenAI Agents SDK": agents_sdk_handoff,
    "openai/swarm": openai_swarm_handoff,
    "minimal loop": minimal_loop,
    "LangGraph + ToolNode": langgraph_toolnode,
    "LangGraph node/agent": langgraph_node_per_agent,
    "LangGraph floor": langgraph_floor,
    "LangGraph empty step": langgraph_empty_step,
}


def run_handoff(
    *, number: int = 200, repeat: int = 7, profile: int = 0, pairs: int = 61, rounds: int = 100
) -> dict[str, Any]:
    """Seconds per handoff for every contender, and the ratios the targets are stated in
    (the floor's target from ``pairs`` rounds of :func:`floor_pair`; each feature's from
    ``rounds`` paired rounds of :func:`feature_costs`).

    ``profile`` > 0 also profiles that many ``Swarm.run`` handoffs and says where the time
    goes (:func:`profile_buckets`).
    """
    fns, missing = {}, {}
    for name, factory in CONTENDERS.items():
        try:
            fns[name] = factory()
        except ImportError as exc:  # an optional peer is not installed: say so
            missing[name] = f"not installed: {exc}"
    stats = interleaved(fns, number=number, repeat=repeat)
    ratios = {
        name: stats[num].median / stats[den].median
        for name, (num, den) in RATIOS.items()
        if num in stats and den in stats
    }
    ours = stats["ours: Swarm.run"].median
    out = {
        "number": number,
        "repeat": repeat,
        "contenders": {name: s.as_dict() for name, s in stats.items()},
        "missing": missing,
        "ratios": ratios,
        # the same handoff with one feature each, side by side with a plain run of its own
        "features": feature_costs(number, repeat, rounds),
        # the floor target's figure: ours and the floor alone, batch after batch
        "floor_pair": floor_pair(number, pairs),
        "overhead_above_floor_s": ours - stats["LangGraph floor"].median,
        "stats": stats,
    }
    if profile:
        out["profile"] = profile_buckets(ours_swarm_run(), profile)
        out["profile_runs"] = profile
    return out


#: Where a profiled frame's own time is counted, by the file it runs in (first match wins).
BUCKETS = (
    ("ours (swarmgraph)", ("/graph/", "/memory/", "/swarmgraph/")),
    ("LangGraph (Pregel, channels, checkpoint)", ("/langgraph/",)),
    ("LangChain core (invoke, callbacks, messages)", ("/langchain_core/",)),
    ("LangSmith (run trees, tracing checks)", ("/langsmith/",)),
    ("pydantic", ("/pydantic/", "/pydantic_core/")),
    ("scripted model (benchmark)", ("/chat_models/scripted.py",)),
)


def profile_buckets(run: Callable[[], Any], n: int) -> dict[str, float]:
    """Share of ``n`` runs' time spent in each :data:`BUCKETS` entry (own time, cProfile).

    Example:
        >>> shares = profile_buckets(ours_swarm_run(), 3)
        >>> abs(sum(shares.values()) - 1.0) < 1e-6
        True
    """
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        run()
    profiler.disable()
    totals: dict[str, float] = {name: 0.0 for name, _ in BUCKETS}
    totals["Python stdlib and builtins"] = 0.0
    for (filename, _, _), row in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        own = row[2]
        path = filename.replace("\\", "/")
        for name, needles in BUCKETS:
            if name.startswith("ours") and "/site-packages/" in path and "swarmgraph" not in path:
                continue
            if any(needle in path for needle in needles):
                # the scripted model lives in our tree but stands in for the network
                if name.startswith("ours") and path.endswith("/chat_models/scripted.py"):
                    continue
                totals[name] += own
                break
        else:
            totals["Python stdlib and builtins"] += own
    whole = sum(totals.values()) or 1.0
    return {name: value / whole for name, value in totals.items()}


def _us(stats: Stats) -> str:
    return f"{stats.median * 1e6:,.0f} µs (min {stats.min * 1e6:,.0f}, max {stats.max * 1e6:,.0f})"


if __name__ == "__main__":  # pragma: no cover - quick look while tuning
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    result = run_handoff(number=n, repeat=5)
    for name, s in result["stats"].items():
        print(f"{name:24s} {_us(s)}")
    for name, r in result["ratios"].items():
        print(f"{name:40s} {r:.3f}")
