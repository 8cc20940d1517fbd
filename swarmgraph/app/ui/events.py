"""One Session turn as AG-UI events: Swarm's stream events and the steps the graph took.

:class:`AguiTurn` is told what happens, in the order the driver (:mod:`.turn`) sees it, and
emits ``ag_ui.core`` event models: ``TEXT_MESSAGE_*`` and ``TOOL_CALL_*`` from Swarm's
deltas and tool results; ``STEP_STARTED`` / ``STEP_FINISHED`` per agent step, each finished
step followed by a ``STATE_DELTA`` (JSON Patch) of ``context_variables``, ``active_agent``
``last_step`` (the keys the step changed, each with the tool(s) that answered in it) and
``changed_this_turn`` (the same, for every step of the turn so far).

Example:
    >>> out = []
    >>> turn = AguiTurn(out.append, {"context_variables": {}, "active_agent": "Doc"})
    >>> turn.feed({"delim": "start"}, [])
    >>> turn.feed({"role": "assistant", "sender": "Doc", "content": "Hi"}, [])
    >>> turn.feed({"delim": "end"}, [])
    >>> [e.type.value for e in out]
    ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import jsonpatch
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    StateDeltaEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from .messages import message_text
from .steps import StepRecord

__all__ = ["RECALL_EVENT", "WINDOW_EVENT", "AguiTurn", "changed_keys"]

#: CUSTOM events, for what AG-UI has no event for: the long-term facts recalled into a prompt
#: (``{"agent", "lines"}``), and what the memory model put into the run's history
#: (``{"policy", "in_prompt": [message ids], "added": [...], "stored": n}``).
RECALL_EVENT = "swarmgraph.recall"
WINDOW_EVENT = "swarmgraph.memory_window"

Emit = Callable[[BaseEvent], Any]


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The top-level keys whose value differs (added, removed or changed).

    Example:
        >>> changed_keys({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 0})
        ['b', 'c']
    """
    keys = list(dict.fromkeys([*before, *after]))
    return [k for k in keys if k not in before or k not in after or before[k] != after[k]]


class AguiTurn:
    """Turns one run's Swarm events and step records into AG-UI events (see module doc).

    ``state`` is the state the client was last sent (a ``STATE_SNAPSHOT``); it is kept up to
    date as deltas go out.
    """

    def __init__(self, emit: Emit, state: dict[str, Any]) -> None:
        self.emit = emit
        self.state = json.loads(json.dumps(state))
        self.message_id: str | None = None  # the reply being streamed
        self.text_open = False
        self.calls: dict[int, str] = {}  # tool-call index -> id, in the reply being streamed
        self.step: StepRecord | None = None
        self.step_tools: list[str] = []
        self.step_keys: dict[str, str] = {}  # key -> the tool whose Result set it
        self.steps = 0
        self.recalled: list[str] = []

    # -- Swarm's events ------------------------------------------------------------------
    def feed(self, event: dict[str, Any], records: Sequence[StepRecord]) -> None:
        """One of Swarm's stream events; ``records``: the steps seen since the last event
        (taken only where every earlier step is over: at a reply's start)."""
        if event.get("delim") == "start":
            self.steps_seen(records)
            return
        if event.get("delim") == "end":
            self._close_reply()
            return
        if "tool_result" in event:
            result = event["tool_result"]
            self.emit(
                ToolCallResultEvent(
                    message_id=str(result.get("id") or f"result-{result.get('tool_call_id')}"),
                    tool_call_id=str(result.get("tool_call_id", "")),
                    content=message_text(result.get("content")),
                    role="tool",
                )
            )
            return
        if event.get("role"):  # the first delta of a reply (parallel branches: each one's)
            self._close_reply()
            self.message_id = f"msg-{uuid.uuid4().hex}"
            self._sender = str(event.get("sender") or "assistant")
        content = event.get("content")
        if content:
            if self.message_id is None:
                self.message_id = f"msg-{uuid.uuid4().hex}"
                self._sender = str(event.get("sender") or "assistant")
            if not self.text_open:
                self.emit(
                    TextMessageStartEvent(
                        message_id=self.message_id, role="assistant", name=self._sender
                    )
                )
                self.text_open = True
            self.emit(TextMessageContentEvent(message_id=self.message_id, delta=content))
        for call in event.get("tool_calls") or []:
            self._tool_call_delta(call)

    def _tool_call_delta(self, call: dict[str, Any]) -> None:
        index = int(call.get("index") or 0)
        function = call.get("function") or {}
        if index not in self.calls:
            call_id = str(call.get("id") or f"call-{uuid.uuid4().hex}")
            self.calls[index] = call_id
            self.emit(
                ToolCallStartEvent(
                    tool_call_id=call_id,
                    tool_call_name=str(function.get("name") or "tool"),
                    parent_message_id=self.message_id,
                )
            )
        arguments = function.get("arguments")
        if arguments:
            self.emit(ToolCallArgsEvent(tool_call_id=self.calls[index], delta=str(arguments)))

    def _close_reply(self) -> None:
        if self.text_open and self.message_id is not None:
            self.emit(TextMessageEndEvent(message_id=self.message_id))
        for call_id in self.calls.values():
            self.emit(ToolCallEndEvent(tool_call_id=call_id))
        self.text_open, self.calls, self.message_id = False, {}, None

    # -- the graph's steps -----------------------------------------------------------------
    def steps_seen(self, records: Sequence[StepRecord]) -> None:
        """Steps that started or ended: the step before a start is over (its state delta,
        then ``STEP_FINISHED``), and the new one starts."""
        for record in records:
            if record.kind == "recall":  # what long-term memory put in this prompt
                if record.tools != self.recalled:
                    self.recalled = list(record.tools)
                    agent = self.step.agent if self.step is not None else None
                    value = {"agent": agent, "lines": self.recalled}
                    self.emit(CustomEvent(name=RECALL_EVENT, value=value))
                continue
            if record.kind == "keys":  # the keys one tool's Result set, in this step
                self.step_keys.update(dict.fromkeys(record.tools, record.agent))
                continue
            if record.kind == "end":
                if self.step is not None and record.step == self.step.step:
                    self.step_tools = list(record.tools)
                continue
            self._close_reply()
            self.finish_step(record.state)
            self.step, self.step_tools, self.step_keys = record, [], {}
            self.steps += 1
            self.emit(StepStartedEvent(step_name=record.agent))

    def finish_step(self, after: dict[str, Any]) -> None:
        """The open step (if any) is over and left ``after`` (context and active agent)."""
        before = self.state.get("context_variables", {})
        now = after.get("context_variables", before)
        changed = changed_keys(before, now)
        new = dict(self.state)
        new["context_variables"] = now
        new["active_agent"] = after.get("active_agent") or self.state.get("active_agent")
        if self.step is not None:
            by = ", ".join(dict.fromkeys(self.step_tools)) or None
            new["last_step"] = {
                "number": self.steps,
                "agent": self.step.agent,
                "tools": list(self.step_tools),
                "changed": {key: self.step_keys.get(key, by) for key in changed},
            }
            if changed:  # what this turn changed so far, each key with its last changer
                turn = dict(self.state.get("changed_this_turn") or {})
                turn.update(new["last_step"]["changed"])
                new["changed_this_turn"] = turn
        self.delta_to(new)
        if self.step is not None:
            self.emit(StepFinishedEvent(step_name=self.step.agent))
            self.step, self.step_tools, self.step_keys = None, [], {}

    def delta_to(self, new: dict[str, Any]) -> None:
        """A ``STATE_DELTA`` from the state the client has to ``new`` (none if equal)."""
        new = json.loads(json.dumps(new, default=repr))
        patch = jsonpatch.make_patch(self.state, new).patch
        if patch:
            self.emit(StateDeltaEvent.model_validate({"delta": patch}))
        self.state = new

    def end(self, records: Sequence[StepRecord], final: dict[str, Any]) -> None:
        """The run returned: the steps not told yet, then the last step's end at ``final``."""
        self._close_reply()
        self.steps_seen(records)
        self.finish_step(final)
