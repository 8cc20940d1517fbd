"""What tracing costs a handoff (issue 32): off (no tracer provider) and on (the SDK with an
in-memory exporter), side by side with the plain handoff.

Every contender runs the handoff of benchmarks/handoff.py through ``Swarm.run`` (A's model asks
for ``transfer_to_b``, the tool runs, B answers; a zero-latency scripted model). They differ
only by what the run's one check (``PreparedRun.prepare``, graph/features/tracing.py) finds:

- ``no OpenTelemetry``: the API is not imported, so no provider can be set (the check stops at
  a ``sys.modules`` lookup): a program that never touches OpenTelemetry;
- ``tracing off``: the API is imported (as LangSmith does in most programs) and its global
  provider is the default proxy: the check asks for the provider and finds none;
- ``tracing on``: a provider from the SDK with a ``SimpleSpanProcessor`` into an
  ``InMemorySpanExporter`` (cleared every run): 6 spans per handoff, exported as they end;
- ``SDK alone: the same spans``: the floor under ``tracing on``, nothing of ours and no handoff: the
  SDK (its own provider, the same processor into the same kind of exporter) making the spans
  one traced handoff made (recorded once, then replayed: the same names, kinds, parents,
  attributes and events, each span's attributes given at its start, in the order they
  started and ended). Its time over the handoff's is the part of ``tracing on`` no tracing
  code can remove. In a loop of its own the SDK runs warm (its code and data stay in the
  caches), so that row understates what the same work costs amid a handoff;
- ``handoff, then SDK alone``: the plain handoff (as ``no OpenTelemetry``) and then the SDK
  making its spans, one after the other in each call: what ``tracing on`` would cost if
  swarmgraph's tracing added nothing to the SDK's work, its ratio the floor of ``tracing on``'s;
- ``no-op middleware, tracing's hooks``: no tracing, the swarm's middleware
  (``Swarm(middleware=[...])``: its stacks built once, as tracing's are) with tracing's two
  hooks (``wrap_model_call``, ``wrap_tool_call``) doing nothing: what the step's middleware
  machinery costs any middleware with those hooks, tracing among them (tracing hears the
  handoff as the run's ledger books it, not with a ``before_handoff`` hook).

and the same handoff through a compiled graph invoked directly (``app.invoke``), tracing off:

- ``graph.invoke, LangGraph's class``: the builder compiled as LangGraph compiles it (a plain
  ``CompiledStateGraph``), the floor;
- ``graph.invoke, tracing off``: ``build_swarm_graph(...).compile()`` as a user gets it (an
  ``ObservedCompiledGraph``, graph/observed_graph.py): its one check per invoke finds no
  provider.

One process runs all eight, batches interleaved round-robin (benchmarks/timing.py). All but the
traced one must look like a process where tracing (graph/features/tracing.py, the middleware
the check installs) was never loaded, so around each of their runs the benchmark takes that
module (and, for the first, ``opentelemetry.trace``) out of ``sys.modules`` and puts them back
after: the check reads nothing else. The ratios the verdicts and the floor's note read (tracing
off, tracing on, the floor, the no-op hooks, ``graph.invoke`` off) are then measured again,
each contender beside its baseline in adjacent batches (:func:`benchmarks.timing.paired`).

Run: ``.venv/bin/python -m benchmarks --only tracing`` (or ``python -m benchmarks.tracing``).

Example:
    >>> result = run_tracing(number=2, repeat=2, rounds=2)
    >>> sorted(result["ratios"]) == sorted(RATIOS)
    True
    >>> sorted(result["paired"]) == sorted(PAIRED_RATIOS)
    True
    >>> result["spans_per_run"]
    6
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from swarmgraph.graph import Agent, Swarm

from benchmarks.handoff import PING, PONG, make_model
from benchmarks.timing import PAIR_BATCH, interleaved, middle_half, paired

#: The floor's rows: the SDK making one traced handoff's spans, nothing else; and the plain
#: handoff followed by that, in one call (the floor of ``tracing on`` read as its ratio).
SDK_ALONE = "SDK alone: the same spans"
FLOOR = "handoff, then SDK alone"
#: The hooks tracing goes through, doing nothing: the run's own middleware, as tracing's is.
HOOKS = "no-op middleware, tracing's hooks"
#: name -> (numerator, denominator)
RATIOS = {
    "tracing off / no OpenTelemetry": ("tracing off", "no OpenTelemetry"),
    "tracing on / no OpenTelemetry": ("tracing on", "no OpenTelemetry"),
    "SDK alone / no OpenTelemetry": (SDK_ALONE, "no OpenTelemetry"),
    "handoff, then SDK alone / no OpenTelemetry": (FLOOR, "no OpenTelemetry"),
    "no-op middleware / no OpenTelemetry": (HOOKS, "no OpenTelemetry"),
    "graph.invoke off / LangGraph's class": (
        "graph.invoke, tracing off",
        "graph.invoke, LangGraph's class",
    ),
}
#: Each contender's baseline, for the table's last column.
BASELINE = {
    "graph.invoke, tracing off": "graph.invoke, LangGraph's class",
    "graph.invoke, LangGraph's class": "graph.invoke, LangGraph's class",
}
#: The ratios the verdicts and the floor's note read: measured again in adjacent pairs of
#: batches (each a few percent from its target, where the many-contender table's drift is as
#: large).
PAIRED_RATIOS = (
    "tracing off / no OpenTelemetry",
    "tracing on / no OpenTelemetry",
    "handoff, then SDK alone / no OpenTelemetry",
    "no-op middleware / no OpenTelemetry",
    "graph.invoke off / LangGraph's class",
)
#: Issue 32's target for tracing off.
TARGET = 1.02
#: Issue 40's target for tracing on.
ON_TARGET = 1.25
_TRACING = "swarmgraph.graph.features.tracing"
_OTEL = "opentelemetry.trace"


def _handoff() -> Callable[[], Any]:
    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    swarm = Swarm(chat_model=model)
    messages = [{"role": "user", "content": PING}]

    def run() -> Any:
        response = swarm.run(a, messages)
        assert response.agent is b and response.messages[-1]["content"] == PONG
        if len(model.calls) > 1000:  # the scripted model records every call
            model.reset()
        return response

    return run


def _hooked() -> Callable[[], Any]:
    """The handoff through a middleware with tracing's hooks that does nothing: the swarm's
    (``Swarm(middleware=[...])``), so its stacks are built once, as tracing's shared ones are."""
    from langchain.agents.middleware import AgentMiddleware

    calls = [0]

    class Nothing(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            calls[0] += 1
            return handler(request)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    swarm = Swarm(chat_model=model, middleware=[Nothing()])
    messages = [{"role": "user", "content": PING}]

    def run() -> Any:
        before = calls[0]
        response = swarm.run(a, messages)
        assert response.agent is b and calls[0] == before + 2  # both model calls went through
        if len(model.calls) > 1000:
            model.reset()
        return response

    return run


def _invoked(observed: bool) -> Callable[[], Any]:
    """The handoff through the compiled graph of ``build_swarm_graph``: as a user gets it
    (``observed``), or the same builder compiled by LangGraph's own ``StateGraph.compile``."""
    from langgraph.graph import StateGraph
    from swarmgraph.graph import build_swarm_graph

    model = make_model()
    a, b = Agent(name="A", instructions="You are A."), Agent(name="B", instructions="You are B.")
    a.handoffs, b.handoffs = [b], [a]
    builder = build_swarm_graph([a, b], chat_model=model)
    app = builder.compile() if observed else StateGraph.compile(builder)
    given = {"messages": [("user", PING)]}

    def run() -> Any:
        out = app.invoke(given)
        assert out["active_agent"] == "B" and out["messages"][-1].content == PONG
        if len(model.calls) > 1000:
            model.reset()
        return out

    return run


def _hidden(run: Callable[[], Any], names: tuple[str, ...]) -> Callable[[], Any]:
    """``run`` in a process that (as far as the run's check can tell) never loaded ``names``."""

    def hidden() -> Any:
        kept = {name: sys.modules.pop(name) for name in names if name in sys.modules}
        try:
            return run()
        finally:
            sys.modules.update(kept)

    return hidden


def _recorded(provider: Any, exporter: Any) -> list[Any]:
    """The spans one traced handoff exports (``provider`` exporting to ``exporter``)."""
    from swarmgraph.graph.features.tracing import use_tracer_provider

    exporter.clear()
    use_tracer_provider(provider)
    try:
        _handoff()()
    finally:
        use_tracer_provider(None)
    spans = list(exporter.get_finished_spans())
    exporter.clear()
    return spans


def sdk_alone(spans: list[Any]) -> Callable[[], Any]:
    """The SDK making ``spans`` again (a traced handoff's, :func:`_recorded`) with its own
    provider, a ``SimpleSpanProcessor`` into an ``InMemorySpanExporter``: the same names,
    kinds, parent/child relations, attributes (all given at the span's start, the cheapest way
    the API has) and events, started and ended in the order they were; no handoff, nothing of
    swarmgraph's. What it costs is the floor of ``tracing on``.

    Example:
        >>> from opentelemetry.sdk.trace import TracerProvider
        >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        ...     InMemorySpanExporter)
        >>> exporter = InMemorySpanExporter()
        >>> provider = TracerProvider()
        >>> provider.add_span_processor(SimpleSpanProcessor(exporter))
        >>> spans = _recorded(provider, exporter)
        >>> replayed = sdk_alone(spans)()
        >>> _shape(replayed) == _shape(spans)
        True
    """
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import set_span_in_context

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("sdk-alone")
    # One step per span's start and end, in time order, the record read once, not per run.
    moments = sorted(
        [(s.start_time, 0, s) for s in spans] + [(s.end_time, 1, s) for s in spans],
        key=lambda m: (m[0], m[1]),
    )
    steps: list[tuple[bool, int, int | None, str, Any, dict[str, Any], list[Any]]] = [
        (
            ends == 0,
            s.context.span_id,
            s.parent.span_id if s.parent is not None else None,
            s.name,
            s.kind,
            dict(s.attributes or {}),
            [(e.name, dict(e.attributes or {})) for e in s.events],
        )
        for _, ends, s in moments
    ]

    def run() -> Any:
        live: dict[int, Any] = {}
        for starts, span_id, parent, name, kind, attributes, events in steps:
            if starts:
                context = None if parent is None else set_span_in_context(live[parent])
                live[span_id] = tracer.start_span(
                    name, context=context, kind=kind, attributes=attributes
                )
            else:
                span = live.pop(span_id)
                for event in events:
                    span.add_event(*event)
                span.end()
        made = exporter.get_finished_spans()
        exporter.clear()
        return made

    return run


def _shape(spans: Any) -> list[tuple[Any, ...]]:
    """What :func:`sdk_alone` keeps of ``spans``: names, kinds, parents' names, attributes,
    events, in the order they ended."""
    names = {s.context.span_id: s.name for s in spans}
    return [
        (
            s.name,
            s.kind,
            names.get(s.parent.span_id) if s.parent is not None else None,
            dict(s.attributes or {}),
            [(e.name, dict(e.attributes or {})) for e in s.events],
        )
        for s in spans
    ]


def contenders() -> dict[str, Callable[[], Any]]:
    """The contenders (the traced one exports into an in-memory exporter; the SDK's floor
    replays what it exported once)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from swarmgraph.graph.features.tracing import use_tracer_provider

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = _handoff()

    def on() -> Any:
        use_tracer_provider(provider)
        try:
            return traced()
        finally:
            use_tracer_provider(None)
            exporter.clear()

    floor = sdk_alone(_recorded(provider, exporter))
    plain = _hidden(_handoff(), (_TRACING, _OTEL))

    def then_floor() -> Any:
        plain()
        return floor()

    return {
        "no OpenTelemetry": _hidden(_handoff(), (_TRACING, _OTEL)),
        "tracing off": _hidden(_handoff(), (_TRACING,)),
        "tracing on": on,
        "graph.invoke, LangGraph's class": _hidden(_invoked(False), (_TRACING,)),
        "graph.invoke, tracing off": _hidden(_invoked(True), (_TRACING,)),
        SDK_ALONE: floor,
        FLOOR: then_floor,
        HOOKS: _hidden(_hooked(), (_TRACING,)),
    }


def run_tracing(number: int = 100, repeat: int = 9, rounds: int = 100) -> dict[str, Any]:
    """CPU seconds per handoff for each contender (median of ``repeat`` interleaved batches of
    ``number`` runs, this process's CPU time) and the ratios to ``no OpenTelemetry``; and the
    ratios of :data:`PAIRED_RATIOS` measured again in ``rounds`` pairs of adjacent batches of
    :data:`PAIR_BATCH` runs (:func:`benchmarks.timing.paired`): what the verdicts read."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    runs = contenders()
    # How many spans one traced handoff exports: counted, not assumed.
    counted = InMemorySpanExporter()
    counter = TracerProvider()
    counter.add_span_processor(SimpleSpanProcessor(counted))
    spans = len(_recorded(counter, counted))
    stats = interleaved(runs, number=number, repeat=repeat, clock=time.process_time)
    medians = {name: s.median for name, s in stats.items()}
    pairs = {
        ratio: paired(runs[a], runs[b], repeat=rounds).as_dict()
        for ratio, (a, b) in RATIOS.items()
        if ratio in PAIRED_RATIOS
    }
    return {
        "number": number,
        "repeat": repeat,
        "spans_per_run": spans,
        "contenders": {name: s.as_dict() for name, s in stats.items()},
        "ratios": {k: medians[a] / medians[b] for k, (a, b) in RATIOS.items()},
        "paired": pairs,
        # the lowest ``tracing on / no OpenTelemetry`` could be: the handoff, then the SDK alone
        "on_floor": medians[FLOOR] / medians["no OpenTelemetry"],
        "target": TARGET,
        "on_target": ON_TARGET,
    }


def _paired_note(pairs: dict[str, Any]) -> str:
    """What the ratios of this paragraph and the next are, when measured in pairs."""
    if not pairs:
        return ""
    spread = "; ".join(f"{name.split(' /')[0]}: {middle_half(p)}" for name, p in pairs.items())
    rounds = len(next(iter(pairs.values()))["rounds"])
    return (
        f" These ratios, and those of the next paragraph, are each the median of {rounds} "
        f"rounds of two adjacent batches of {PAIR_BATCH} runs, the contender and its "
        "baseline, in alternating order (`benchmarks.timing.paired`: the table's batches stand "
        "seven apart, and this machine's drift between them is as large as the targets' "
        f"margins); the middle half of the rounds: {spread}."
    )


def tracing_section(t: dict[str, Any], targets: list[dict[str, str]]) -> list[str]:
    """RESULTS.md's section for :func:`run_tracing` (benchmarks/report.py calls it)."""
    from benchmarks.report import _span, _table, verdict

    c = t["contenders"]

    def base(name: str) -> float:
        return c[BASELINE.get(name, "no OpenTelemetry")]["median"]

    rows = [[name, *_span(s, 1e6), f"{s['median'] / base(name):.3f}"] for name, s in c.items()]
    pairs = t.get("paired") or {}  # (results from before the pairs have none: the table's)

    def ratio_of(name: str) -> float:
        return float(pairs[name]["ratio"]) if name in pairs else t["ratios"][name]

    off = ratio_of("tracing off / no OpenTelemetry")
    on = ratio_of("tracing on / no OpenTelemetry")
    invoked = ratio_of("graph.invoke off / LangGraph's class")
    lines = [
        "## 1c. What tracing costs a handoff",
        "",
        "The handoff of section 1 through `Swarm.run`: `no OpenTelemetry` (the API never "
        "imported), `tracing off` (the API imported, no tracer provider: the default proxy) and "
        f"`tracing on` (the SDK's `SimpleSpanProcessor` into an in-memory exporter: "
        f"{t['spans_per_run']} spans per handoff, docs/tracing.md). Median of {t['repeat']} "
        f"interleaved batches of {t['number']} runs; CPU µs per handoff. The `graph.invoke` "
        "rows run the same handoff through a compiled graph invoked directly, tracing off: "
        "LangGraph's own compiled class against what `build_swarm_graph(...).compile()` gives.",
        "",
        *_table(["contender", "median µs", "min µs", "max µs", "x its baseline"], rows),
        "",
        f"Tracing off costs {off:.3f}x; on, with the SDK exporting every span, {on:.3f}x. "
        f"A compiled graph invoked directly, tracing off: {invoked:.3f}x LangGraph's class."
        + _paired_note(pairs),
        "",
    ]
    floor = t.get("on_floor")
    if floor is not None:
        floor = ratio_of("handoff, then SDK alone / no OpenTelemetry")
    hooks = (
        ratio_of("no-op middleware / no OpenTelemetry")
        if "no-op middleware / no OpenTelemetry" in t["ratios"]
        else None
    )
    if floor is not None:  # (results from before the floor was measured have none)
        on_target = t.get("on_target", ON_TARGET)
        lines[-1:-1] = [
            "",
            f"`{SDK_ALONE}` is the SDK alone (same processor, same kind of exporter) making "
            "the spans one traced handoff made, replayed with their names, kinds, parents, "
            "attributes and events: no handoff, nothing of swarmgraph's (in a loop of its own, "
            f"so warm in the caches: a low bound). `{FLOOR}` runs the plain handoff and then "
            "that in each call: what tracing on would cost if swarmgraph added nothing to the "
            f"SDK's own work: {floor:.3f}x."
            + (
                f" A middleware with tracing's two hooks that does nothing (`{HOOKS}`: the "
                f"step's middleware machinery, which tracing goes through) costs {hooks:.3f}x; "
                f"together, {floor + hooks - 1:.3f}x is what tracing built as a middleware pays "
                f"before any code of its own, and tracing on is {on:.3f}x."
                if hooks is not None
                else ""
            )
            + (
                f" The {on_target}x target is below what the SDK itself costs here."
                if floor > on_target
                else f" The {on_target}x target is below what the SDK and the middleware "
                "machinery cost together here."
                if hooks is not None and floor + hooks - 1 > on_target
                else ""
            ),
        ]
    targets.append(
        {
            "target": f"tracing off (no provider) <= {t['target']}x the untraced handoff",
            "verdict": verdict(off, t["target"]),
            "why": f"{off:.3f}x",
        }
    )
    on_target = t.get("on_target", ON_TARGET)
    targets.append(
        {
            "target": f"tracing on (the SDK, in-memory export) <= {on_target}x the handoff",
            "verdict": verdict(on, on_target),
            "why": f"{on:.3f}x",
        }
    )
    targets.append(
        {
            "target": f"graph.invoke, tracing off <= {t['target']}x LangGraph's compiled class",
            "verdict": verdict(invoked, t["target"]),
            "why": f"{invoked:.3f}x",
        }
    )
    return lines


if __name__ == "__main__":
    print(json.dumps(run_tracing(), indent=1))
