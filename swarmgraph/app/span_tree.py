"""A run's exported spans as a tree to read in a terminal (``swarmgraph demo --trace``).

Each span on its own line under its parent, with its duration and the few attributes a reader
looks for (tokens, finish reason, tool call id, branch; the conversation at the root); events
as ``•`` lines.

Example:
    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> exporter = InMemorySpanExporter()
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(SimpleSpanProcessor(exporter))
    >>> tracer = provider.get_tracer("example")
    >>> with tracer.start_as_current_span("invoke_agent Triage") as agent:
    ...     agent.add_event("swarmgraph.handoff", {"swarmgraph.handoff.to": "Sales"})
    ...     with tracer.start_as_current_span("chat gpt-4o"):
    ...         pass
    >>> for line in span_tree(exporter.get_finished_spans(), durations=False):
    ...     print(line)
    invoke_agent Triage
    │ • handoff → Sales
    └─ chat gpt-4o
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["span_tree"]

#: Attributes shown after a span's name, as ``label=value``.
_SHOWN = (
    ("gen_ai.conversation.id", "conversation"),
    ("swarmgraph.branch", "branch"),
    ("gen_ai.tool.call.id", "call"),
    ("gen_ai.response.finish_reasons", "finish"),
)


def span_tree(spans: Iterable[Any], *, durations: bool = True) -> list[str]:
    """Lines of ``spans`` (OpenTelemetry SDK ``ReadableSpan`` s) as trees, roots first, each
    span's children in the order they started."""
    spans = sorted(spans, key=lambda s: s.start_time or 0)
    ids = {s.context.span_id for s in spans}
    children: dict[int | None, list[Any]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)
    lines: list[str] = []

    def walk(span: Any, lead: str, branch: str, last: bool) -> None:
        lines.append(f"{lead}{branch}{_label(span, durations, root=not branch)}")
        inner = lead + ("   " if last else "│  ") if branch else lead
        kids = children.get(span.context.span_id, [])
        for event in span.events:
            lines.append(f"{inner}{'│' if kids else ' '} • {_event(event)}")
        for index, child in enumerate(kids):
            end = index == len(kids) - 1
            walk(child, inner, "└─ " if end else "├─ ", end)

    for root in children.get(None, []):
        walk(root, "", "", True)
    return lines


def _label(span: Any, durations: bool, *, root: bool) -> str:
    attributes = span.attributes or {}
    parts = [span.name]
    if durations and span.end_time and span.start_time:
        parts.append(f"{(span.end_time - span.start_time) / 1e6:.1f} ms")
    tokens_in = attributes.get("gen_ai.usage.input_tokens")
    if tokens_in is not None and span.name.startswith("chat "):
        parts.append(f"tokens {tokens_in}→{attributes.get('gen_ai.usage.output_tokens', 0)}")
    for key, label in _SHOWN if root else _SHOWN[1:]:  # the conversation once, at the root
        value = attributes.get(key)
        if value is not None:
            parts.append(f"{label}={_text(value)}")
    if span.status.status_code.name == "ERROR":
        parts.append(f"ERROR {span.status.description or ''}".rstrip())
    return "  ".join(parts)


def _event(event: Any) -> str:
    attributes = dict(event.attributes or {})
    name = event.name.removeprefix("swarmgraph.")
    target = attributes.pop("swarmgraph.handoff.to", None)
    shown = [name] if target is None else [f"{name} → {target}"]
    shown += [f"{key.rsplit('.', 1)[-1]}={_text(value)}" for key, value in attributes.items()]
    return "  ".join(shown)


def _text(value: Any) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ",".join(map(str, value))
    return str(value)
