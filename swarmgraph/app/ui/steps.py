"""What a run does, as it does it, told to the turn's :class:`~.events.AguiTurn`.

The turn runs as ``Session.run`` runs it (no LangGraph stream: nothing runs in another
thread, nothing is queued), and two observers made current in the thread that drives it
(:func:`watching`) tell the turn what happens, in order:

* a LangChain callback handler (:class:`StepWatcher`) sees each agent step start (LangGraph
  hands a node the whole state: ``context_variables``, ``active_agent``) and end (its update:
  the tool answers), and, when the turn streams tokens, each token of a reply;
* a run observer (graph/core/hooks.py) sees each model call (its prompt: what long-term memory
  recalled into it; its reply, told whole when no token was streamed) and each tool call
  (the keys a tool's ``Result`` set), and stops the run at the next call once asked to.

Whether the model streams tokens is the watcher's class: :class:`TokenWatcher` is a
LangChain streaming handler, so a model asked through ``invoke`` streams to it (what a
client watching the reply appear wants); :class:`StepWatcher` is not, so with nobody
listening a reply is told whole, for the cost of a plain run. The callback hook reads a
context variable, so runs in other threads are not seen, and a thread with no watcher costs
one lookup per runnable.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> class Shown:
    ...     def __getattr__(self, name):
    ...         return lambda *args: print(name, *[a for a in args if isinstance(a, str)])
    >>> with watching(StepWatcher(Shown())):
    ...     _ = Swarm(chat_model=ScriptedChatModel(["Hi."])).run(Agent(name="Doc"), [])
    step_started Doc
    reply_started Doc
    reply_done Doc
    step_ended
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers._streaming import _StreamingCallbackHandler
from langchain_core.tracers.context import register_configure_hook

__all__ = ["StepWatcher", "TokenWatcher", "TurnStopped", "watching"]

#: How long-term recall marks its block in a system prompt (memory/recall_block.py).
RECALL_OPEN, RECALL_CLOSE = "<memory>", "</memory>"


class TurnStopped(Exception):
    """Raised into a run whose stop was asked for (the page's stop button): the run ends
    there, and, as for any run that raises, nothing of the turn is saved."""


class StepWatcher(BaseCallbackHandler):
    """Tells ``turn`` (an :class:`~.events.AguiTurn`) the top-level graph nodes' starts and
    ends, and holds what the run observer needs (``stop``: set to stop the run)."""

    run_inline = True  # called in the node's own thread, in order
    # Only the chains' events are heard: LangChain skips the others for this handler.
    ignore_llm = ignore_chat_model = ignore_retriever = ignore_agent = True
    ignore_retry = ignore_custom_event = True

    def __init__(self, turn: Any, stop: threading.Event | None = None) -> None:
        self.turn = turn
        self.stop = stop or threading.Event()
        self._open: dict[UUID, str] = {}
        self._lock = threading.Lock()

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
        state = {
            "context_variables": plain(inputs.get("context_variables") or {}),
            "active_agent": agent,
        }
        with self._lock:
            self._open[run_id] = agent
        self.turn.step_started(agent, state)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            agent = self._open.pop(run_id, None)
        if agent is None:
            return
        update = getattr(outputs, "update", outputs)  # a node may return a Command
        messages = update.get("messages", []) if isinstance(update, dict) else []
        self.turn.step_ended(messages)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._open.pop(run_id, None)


class TokenWatcher(StepWatcher, _StreamingCallbackHandler):
    """A :class:`StepWatcher` that makes each model stream its reply, told token by token."""

    ignore_llm = False  # the tokens (``on_llm_new_token``)

    def on_llm_new_token(  # LangChain's token is str | list of parts
        self, token: Any, *, chunk: Any = None, **kwargs: Any
    ) -> None:
        message = getattr(chunk, "message", None)
        calls = list(getattr(message, "tool_call_chunks", None) or [])
        content = token if isinstance(token, str) else ""
        if content or calls:
            self.turn.reply_delta(content, calls)

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        return output


def plain(value: Any) -> Any:
    """A JSON-ready copy (a typed context is a pydantic model; anything else odd is text).

    Example:
        >>> plain({"a": (1, object)})["a"][0], type(plain({"a": (1, object)})["a"][1])
        (1, <class 'str'>)
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


_CURRENT: ContextVar[StepWatcher | None] = ContextVar("swarmgraph_ui_steps", default=None)
_registered = False
_register_lock = threading.Lock()


def _ui_observer(run: Any) -> Any:
    """An observer of the run if a watcher is current where it starts (graph/core/hooks.py asks
    every run): model calls (recall in the prompt, the reply, the stop) and tool calls (which
    keys a tool's ``Result`` set, so a step that ran two tools says which changed what; a
    tool that changed the live dict in place is not seen here: its step's tools are named
    for it instead)."""
    watcher = _CURRENT.get()
    if watcher is None:
        return None
    global _Observer
    if _Observer is None:  # made once (a class a run costs each run its making)
        _Observer = _observer_class()
    return _Observer(watcher.turn, watcher.stop)


_Observer: Any = None


def _observer_class() -> type:
    """The run observer's class, made on first use: graph/core/hooks.py is loaded only once
    a run is watched."""
    from ...graph.core.hooks import RunObserver

    class UiObserver(RunObserver):
        def __init__(self, turn: Any, stop: threading.Event) -> None:
            self.turn, self.stop = turn, stop

        async def around_model_call(self, proceed: Any, call: Any) -> Any:
            if self.stop.is_set():
                raise TurnStopped("stopped by the page")
            lines = _recalled(call.prompt)
            if lines is not None:
                self.turn.recalled(call.agent.name, lines)
            self.turn.reply_started(call.agent.name)
            reply = await proceed()
            self.turn.reply_done(call.agent.name, reply)
            return reply

        async def around_tool_call(self, proceed: Any, call: Any) -> Any:
            if self.stop.is_set():
                raise TurnStopped("stopped by the page")
            value = await proceed()
            keys = getattr(value, "context_variables", None)
            if isinstance(keys, dict) and keys:
                self.turn.keys_set(str(call.name), [str(k) for k in keys])
            return value

    return UiObserver


def _recalled(prompt: Any) -> list[str] | None:
    """The lines of the long-term recall block a prompt's system message holds, if any."""
    for message in prompt:
        text = message.content if isinstance(message.content, str) else ""
        start, end = text.find(RECALL_OPEN), text.find(RECALL_CLOSE)
        if getattr(message, "type", None) == "system" and 0 <= start < end:
            return text[start + len(RECALL_OPEN) : end].strip().splitlines()
    return None


@contextmanager
def watching(watcher: StepWatcher) -> Iterator[StepWatcher]:
    """Make ``watcher`` see the runs started in this context (this thread, and the threads
    LangGraph starts from it, which copy the context)."""
    global _registered
    with _register_lock:
        if not _registered:  # once per process: LangChain asks each hook on every run
            from ...graph.core.hooks import register

            register_configure_hook(_CURRENT, inheritable=True)
            register(_ui_observer)
            _registered = True
    token = _CURRENT.set(watcher)
    try:
        yield watcher
    finally:
        _CURRENT.reset(token)
