"""Each agent step of a run as it starts and ends, read from LangChain's callbacks.

``Session.stream`` yields Swarm's events (text and tool-call deltas, tool results): none of
them carries ``context_variables`` or says which agent a step belongs to. The compiled
graph knows both, step by step: each agent step is one node of it, and LangGraph hands a
node's input (the whole state: ``context_variables``, ``active_agent``) to the callbacks
when the node starts, and its update when it ends. A :class:`StepWatcher` made current in
the thread that drives the turn (:func:`watching`) collects those, for that turn only: the
callback hook reads a context variable, so runs in other threads are not seen, and a thread
with no watcher costs one lookup per runnable.

Callbacks fire in the node's thread, ahead of the stream items the driver relays, so the
watcher only queues what it sees; the driver takes the queue (:meth:`StepWatcher.take`) at
moments when every earlier step is over (a new reply starts, the run returns).

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> watcher = StepWatcher()
    >>> with watching(watcher):
    ...     _ = Swarm(chat_model=ScriptedChatModel(["Hi."])).run(Agent(name="Doc"), [])
    >>> [(s.kind, s.agent) for s in watcher.take()]
    [('start', 'Doc'), ('end', 'Doc')]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

__all__ = ["StepRecord", "StepWatcher", "watching"]

#: How long-term recall marks its block in a system prompt (memory/recall_block.py).
RECALL_OPEN, RECALL_CLOSE = "<memory>", "</memory>"


@dataclass
class StepRecord:
    """One agent step starting (``state``: the context and active agent it starts from) or
    ending (``tools``: the tools that answered in it, in order); or a model call's prompt
    holding long-term recall (``tools``: the recalled lines); or the keys a tool's ``Result``
    set (``agent``: the tool's name, ``tools``: the keys)."""

    kind: str  # "start" | "end" | "recall" | "keys"
    step: int
    agent: str
    state: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)


class StepWatcher(BaseCallbackHandler):
    """Queues the top-level graph nodes' starts and ends of the run it watches."""

    run_inline = True  # called in the node's own thread, in order

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[StepRecord] = []
        self._open: dict[UUID, tuple[int, str]] = {}

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        node = (metadata or {}).get("langgraph_node")
        # A node's own run is named after it; the runnables inside it inherit its metadata.
        if node is None or kwargs.get("name") != node or not isinstance(inputs, dict):
            return
        if "|" in str((metadata or {}).get("langgraph_checkpoint_ns", "")):
            return  # inside a member's or a branch's own graph: not a step of the swarm
        if "messages" not in inputs:
            return
        agent = str(inputs.get("active_agent") or node)
        step = int((metadata or {}).get("langgraph_step", 0))
        state = {
            "context_variables": _plain(inputs.get("context_variables") or {}),
            "active_agent": agent,
        }
        with self._lock:
            self._open[run_id] = (step, agent)
            self._queue.append(StepRecord("start", step, agent, state))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            opened = self._open.pop(run_id, None)
        if opened is None:
            return
        update = getattr(outputs, "update", outputs)  # a node may return a Command
        messages = update.get("messages", []) if isinstance(update, dict) else []
        tools = [
            str(getattr(m, "name", None) or "tool")
            for m in messages
            if getattr(m, "type", None) == "tool"
        ]
        with self._lock:
            self._queue.append(StepRecord("end", opened[0], opened[1], tools=tools))

    def on_chat_model_start(
        self, serialized: dict[str, Any] | None, messages: list[list[Any]], **kwargs: Any
    ) -> None:
        """A model call's prompt: the long-term recall block it holds, if any, is queued
        (``kind="recall"``, its lines in ``tools``): what was recalled into *this* prompt."""
        for prompt in messages:
            for message in prompt:
                text = message.content if isinstance(message.content, str) else ""
                start, end = text.find(RECALL_OPEN), text.find(RECALL_CLOSE)
                if getattr(message, "type", None) == "system" and 0 <= start < end:
                    lines = text[start + len(RECALL_OPEN) : end].strip().splitlines()
                    with self._lock:
                        self._queue.append(StepRecord("recall", 0, "", tools=lines))
                    return

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._open.pop(run_id, None)

    def queue(self, record: StepRecord) -> None:
        with self._lock:
            self._queue.append(record)

    def take(self) -> list[StepRecord]:
        """What was queued since the last take, oldest first."""
        with self._lock:
            taken, self._queue = self._queue, []
        return taken


def _plain(value: Any) -> Any:
    """A JSON-ready copy (a typed context is a pydantic model; anything else odd is text)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


_CURRENT: ContextVar[StepWatcher | None] = ContextVar("swarmgraph_ui_steps", default=None)
_registered = False
_register_lock = threading.Lock()


def _tool_keys_observer(run: Any) -> Any:
    """An observer of the run if a watcher is current where it starts (graph/core/hooks.py asks
    every run): it queues, for each tool call that returned a ``Result`` with
    ``context_variables``, which keys that tool set (``kind="keys"``), so a step that ran two
    tools says which changed what. A tool that changed the live dict in place is not seen
    here: its step's tools are named for it instead."""
    watcher = _CURRENT.get()
    if watcher is None:
        return None
    from ...graph.core.hooks import RunObserver

    queue = watcher.queue

    class ToolKeys(RunObserver):
        async def around_tool_call(self, proceed: Any, call: Any) -> Any:
            value = await proceed()
            keys = getattr(value, "context_variables", None)
            if isinstance(keys, dict) and keys:
                queue(StepRecord("keys", 0, str(call.name), tools=[str(k) for k in keys]))
            return value

    return ToolKeys()


@contextmanager
def watching(watcher: StepWatcher) -> Iterator[StepWatcher]:
    """Make ``watcher`` see the runs started in this context (this thread, and the threads
    LangGraph starts from it, which copy the context)."""
    global _registered
    with _register_lock:
        if not _registered:  # once per process: LangChain asks each hook on every run
            from ...graph.core.hooks import register

            register_configure_hook(_CURRENT, inheritable=True)
            register(_tool_keys_observer)  # which tool set which key (graph/core/hooks.py)
            _registered = True
    token = _CURRENT.set(watcher)
    try:
        yield watcher
    finally:
        _CURRENT.reset(token)
