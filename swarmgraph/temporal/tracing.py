"""One run on Temporal, one trace: temporalio's OpenTelemetry plugin on the client (and so on
every worker made from it).

The engine's spans (graph/features/tracing.py: ``invoke_workflow``, ``invoke_agent``, ``chat``,
``execute_tool``) are made where the engine runs, in the workflow; the calls they wrap run in
activities, on any worker. temporalio's ``OpenTelemetryPlugin`` carries the current span in
the headers of everything the client starts and the workflow schedules: the workflow runs
under the caller's span, and each activity under the ``chat`` or ``execute_tool`` span that
scheduled it, so what a model or a tool records inside (a LangChain instrumentation, an HTTP
client) nests there. With ``add_temporal_spans`` it adds Temporal's own spans
(``StartWorkflow``, ``RunWorkflow``, ``StartActivity``, ``RunActivity``): ``RunWorkflow``
holds the whole run, so a run that waits for an approval (two engine runs in one workflow)
is still one trace.

A workflow is replayed (by another worker, after a restart), so its spans must be too: the
plugin requires the global tracer provider to be temporalio's ``ReplaySafeTracerProvider``
(``temporalio.contrib.opentelemetry.create_tracer_provider()``), whose span ids come from the
workflow's deterministic random and whose spans are not ended again while history replays.

Example:
    >>> tracing_wanted(None)  # no OpenTelemetry configured in this process: off
    False
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import TemporalInputError

__all__ = ["plugins_for", "tracing_wanted"]


def _replay_safe_global() -> bool:
    """Whether the global tracer provider is temporalio's replay-safe one (checked without
    importing OpenTelemetry: a process that never loaded it has none)."""
    otel = sys.modules.get("opentelemetry.trace")
    contrib = sys.modules.get("temporalio.contrib.opentelemetry")
    if otel is None or contrib is None:
        return False
    return isinstance(otel.get_tracer_provider(), contrib.ReplaySafeTracerProvider)


def tracing_wanted(tracing: bool | None) -> bool:
    """``tracing`` as given, or (``None``) on exactly when the global tracer provider is
    replay-safe; ``True`` without one is refused: the workflow's spans would be made again on
    every replay, with new ids."""
    if tracing is None:
        return _replay_safe_global()
    if tracing and not _replay_safe_global():
        raise TemporalInputError(
            "tracing on Temporal needs a replay-safe global tracer provider: "
            "opentelemetry.trace.set_tracer_provider("
            "temporalio.contrib.opentelemetry.create_tracer_provider()), then add your span "
            "processors to it (docs/temporal.md, 'Tracing')"
        )
    return bool(tracing)


def plugins_for(tracing: bool | None) -> list[Any]:
    """The client plugins for ``tracing`` (see :func:`tracing_wanted`): temporalio's
    ``OpenTelemetryPlugin`` with Temporal's own spans, or none."""
    if not tracing_wanted(tracing):
        return []
    from temporalio.contrib.opentelemetry import OpenTelemetryPlugin

    return [OpenTelemetryPlugin(add_temporal_spans=True)]
