"""One Session turn as AG-UI events: what the page's middleware (:mod:`.steps`) tells it.

:class:`AguiTurn` is told what happens, in order, and emits AG-UI events as the JSON the wire
carries (``{"type": "TEXT_MESSAGE_CONTENT", "messageId": ..., "delta": ...}``): plain dicts,
kept in the turn's event log as they are, and checked against ``ag_ui.core``'s event models
only when a client reads them (:func:`wire`), so a run nobody watches builds no model and
encodes nothing. The events: ``TEXT_MESSAGE_*`` and ``TOOL_CALL_*`` per reply (token by token
when the model streams, else the whole reply at once), ``TOOL_CALL_RESULT`` per tool answer;
``STEP_STARTED`` / ``STEP_FINISHED`` per agent step, each finished step preceded by a
``STATE_DELTA`` (JSON Patch) of ``context_variables``, ``active_agent``, ``last_step`` (the
keys the step changed, each with the tool(s) that answered in it) and ``changed_this_turn``
(the same, for every step of the turn so far).

Example:
    >>> out = []
    >>> turn = AguiTurn(out.append, {"context_variables": {}, "active_agent": "Doc"})
    >>> turn.step_started("Doc", {"context_variables": {}, "active_agent": "Doc"})
    >>> turn.reply_started("Doc"); turn.reply_delta("Hi", []); turn.reply_done("Doc", None)
    >>> turn.end({"context_variables": {"seen": True}})
    >>> [e["type"] for e in out]  # doctest: +NORMALIZE_WHITESPACE
    ['STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
     'STATE_DELTA', 'STEP_FINISHED']
    >>> out[4]["delta"][0]
    {'op': 'add', 'path': '/context_variables/seen', 'value': True}
    >>> wire(out[2])
    'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-run-...-1","delta":"Hi"}\\n\\n'
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .messages import arguments_json, message_text
from .steps import plain

__all__ = ["RECALL_EVENT", "WINDOW_EVENT", "AguiTurn", "changed_keys", "state_patch", "wire"]

#: CUSTOM events, for what AG-UI has no event for: the long-term facts recalled into a prompt
#: (``{"agent", "lines"}``), and what the memory model put into the run's history
#: (``{"policy", "in_prompt": [message ids], "added": [...], "stored": n}``).
RECALL_EVENT = "swarmgraph.recall"
WINDOW_EVENT = "swarmgraph.memory_window"

Emit = Callable[[dict[str, Any]], Any]


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The top-level keys whose value differs (added, removed or changed).

    Example:
        >>> changed_keys({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 0})
        ['b', 'c']
    """
    keys = list(dict.fromkeys([*before, *after]))
    return [k for k in keys if k not in before or k not in after or before[k] != after[k]]


def _pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _key_ops(
    field: str, old: dict[str, Any], new: dict[str, Any], keys: Iterable[str]
) -> list[dict[str, Any]]:
    """JSON Patch operations turning ``old`` (the dict at ``field``) into ``new`` at ``keys``
    (the keys that changed)."""
    ops: list[dict[str, Any]] = []
    for key in keys:
        path = _pointer(field, key)
        if key not in new:
            ops.append({"op": "remove", "path": path})
        else:
            op = "replace" if key in old else "add"
            ops.append({"op": op, "path": path, "value": new[key]})
    return ops


def state_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """A JSON Patch from ``before`` to ``after`` (the UI state: ``context_variables`` patched
    key by key, the other top-level fields replaced whole), without diffing deep values.

    Example:
        >>> state_patch({"context_variables": {"a": 1, "b/c": 2}, "active_agent": "A"},
        ...             {"context_variables": {"b/c": 3}, "active_agent": "B"})
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'op': 'remove', 'path': '/context_variables/a'},
         {'op': 'replace', 'path': '/context_variables/b~1c', 'value': 3},
         {'op': 'replace', 'path': '/active_agent', 'value': 'B'}]
    """
    patch: list[dict[str, Any]] = []
    for field in dict.fromkeys([*before, *after]):
        old, new = before.get(field), after.get(field)
        if field not in after:
            patch.append({"op": "remove", "path": _pointer(field)})
        elif field not in before:
            patch.append({"op": "add", "path": _pointer(field), "value": new})
        elif field == "context_variables" and isinstance(old, dict) and isinstance(new, dict):
            patch.extend(_key_ops(field, old, new, changed_keys(old, new)))
        elif old != new:
            patch.append({"op": "replace", "path": _pointer(field), "value": new})
    return patch


#: The fields a step's end may change besides ``context_variables`` (the others are the
#: conversation's: set by the snapshot, never by a step).
_STEP_FIELDS = frozenset({"context_variables", "active_agent", "last_step", "changed_this_turn"})


def wire(event: dict[str, Any]) -> str:
    """An event as the SSE ``data:`` frame ``ag_ui.encoder`` writes, checked against its
    ``ag_ui.core`` model first (a malformed event fails here, not in the client)."""
    from ag_ui.encoder import EventEncoder

    return EventEncoder().encode(_EVENT().validate_python(event))


_adapter: Any = None


def _EVENT() -> Any:
    global _adapter
    if _adapter is None:
        from ag_ui.core import Event
        from pydantic import TypeAdapter

        _adapter = TypeAdapter(Event)
    return _adapter


class _Reply:
    """The reply being told in one thread (a fan-out's branches reply in their own)."""

    def __init__(self, sender: str) -> None:
        self.sender = sender
        self.message_id: str | None = None
        self.text_open = False
        self.calls: dict[int, str] = {}  # tool-call index -> id
        self.streamed = False


class AguiTurn:
    """Turns what the page's middleware tells into AG-UI events (see the module docstring).

    ``state`` is the state the client was last sent (a ``STATE_SNAPSHOT``); it is kept up to
    date as deltas go out.
    """

    def __init__(self, emit: Emit, state: dict[str, Any], ids: str = "") -> None:
        self.emit = emit
        # Ids of the replies and calls told here: the run's own, counted (no random source).
        self._ids, self._made = ids or f"run-{uuid.uuid4().hex}", 0
        self.state = plain(state)
        self.step: str | None = None  # the agent of the step going on
        self.step_tools: list[str] = []
        self.step_keys: dict[str, str] = {}  # key -> the tool whose Result set it
        self.steps = 0
        self.recalled_lines: list[str] = []
        self.first_step: Callable[[], object] | None = None  # told once, when the first starts
        self._replies: dict[int, _Reply] = {}
        self._lock = threading.RLock()

    # -- replies ---------------------------------------------------------------------------
    def reply_started(self, sender: str) -> None:
        with self._lock:
            self._replies[threading.get_ident()] = _Reply(sender)

    def reply_delta(self, content: str, calls: Sequence[dict[str, Any]]) -> None:
        """Part of a reply as the model streams it: text, and tool-call chunks."""
        with self._lock:
            reply = self._reply()
            reply.streamed = True
            if content:
                self._text(reply, content)
            for call in calls:
                self._call_delta(reply, call)

    def reply_done(self, sender: str, message: Any) -> None:
        """The model's reply is in: told whole unless it was streamed; then it is closed."""
        with self._lock:
            reply = self._reply()
            if not reply.streamed and message is not None:
                text = message_text(getattr(message, "content", ""))
                if text:
                    self._text(reply, text)
                for index, call in enumerate(getattr(message, "tool_calls", None) or []):
                    arguments = arguments_json(call.get("args", {}))
                    self._call_delta(
                        reply,
                        {"index": index, "id": call.get("id"), "name": call.get("name"),
                         "args": arguments},
                    )  # fmt: skip
            self._close(reply)
            self._replies.pop(threading.get_ident(), None)

    def _reply(self) -> _Reply:
        found = self._replies.get(threading.get_ident())
        if found is None:
            found = self._replies[threading.get_ident()] = _Reply(self.step or "assistant")
        return found

    def _text(self, reply: _Reply, content: str) -> None:
        if reply.message_id is None:
            reply.message_id = self._new_id("msg")
        if not reply.text_open:
            self.emit(
                {"type": "TEXT_MESSAGE_START", "messageId": reply.message_id,
                 "role": "assistant", "name": reply.sender}
            )  # fmt: skip
            reply.text_open = True
        self.emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": reply.message_id, "delta": content})

    def _call_delta(self, reply: _Reply, call: dict[str, Any]) -> None:
        index = int(call.get("index") or 0)
        if index not in reply.calls:
            call_id = str(call.get("id") or self._new_id("call"))
            reply.calls[index] = call_id
            started = {
                "type": "TOOL_CALL_START",
                "toolCallId": call_id,
                "toolCallName": str(call.get("name") or "tool"),
            }
            if reply.message_id is not None:
                started["parentMessageId"] = reply.message_id
            self.emit(started)
        arguments = call.get("args")
        if arguments:
            self.emit(
                {
                    "type": "TOOL_CALL_ARGS",
                    "toolCallId": reply.calls[index],
                    "delta": str(arguments),
                }
            )

    def _new_id(self, kind: str) -> str:
        self._made += 1
        return f"{kind}-{self._ids}-{self._made}"

    def _close(self, reply: _Reply) -> None:
        if reply.text_open and reply.message_id is not None:
            self.emit({"type": "TEXT_MESSAGE_END", "messageId": reply.message_id})
        for call_id in reply.calls.values():
            self.emit({"type": "TOOL_CALL_END", "toolCallId": call_id})
        reply.text_open, reply.calls = False, {}

    # -- what else a step tells ----------------------------------------------------------------
    def recalled(self, agent: str, lines: list[str]) -> None:
        """Long-term memory put ``lines`` into a prompt (told when they change)."""
        with self._lock:
            if lines != self.recalled_lines:
                self.recalled_lines = list(lines)
                value = {"agent": agent, "lines": self.recalled_lines}
                self.emit({"type": "CUSTOM", "name": RECALL_EVENT, "value": value})

    def keys_set(self, tool: str, keys: list[str]) -> None:
        """The keys one tool's ``Result`` set, in the step going on."""
        with self._lock:
            self.step_keys.update(dict.fromkeys(keys, tool))

    # -- steps ---------------------------------------------------------------------------------
    def step_started(self, agent: str, state: dict[str, Any]) -> None:
        """An agent step starts from ``state``: the step before it is over (its delta, then
        ``STEP_FINISHED``), and this one starts."""
        with self._lock:
            if self.first_step is not None:
                told, self.first_step = self.first_step, None
                told()
            self.finish_step(state)
            self.step, self.step_tools, self.step_keys = agent, [], {}
            self.steps += 1
            self.emit({"type": "STEP_STARTED", "stepName": agent})

    def step_ended(self, messages: Sequence[Any]) -> None:
        """The step's update is in: its tool answers (``TOOL_CALL_RESULT`` each)."""
        with self._lock:
            tools = []
            for message in messages:
                if getattr(message, "type", None) != "tool":
                    continue
                tools.append(str(getattr(message, "name", None) or "tool"))
                call_id = str(getattr(message, "tool_call_id", "") or "")
                result_id = str(message.id or f"result-{call_id}")
                self.emit(
                    {"type": "TOOL_CALL_RESULT", "messageId": result_id, "toolCallId": call_id,
                     "content": message_text(message.content), "role": "tool"}
                )  # fmt: skip
            if self.step is not None:
                self.step_tools = tools

    def finish_step(self, after: dict[str, Any]) -> None:
        """The open step (if any) is over and left ``after`` (context and active agent).

        The delta is built from what the step is known to change (the context's changed
        keys, the active agent, ``last_step``, ``changed_this_turn``), in the state's field
        order: the same patch :func:`state_patch` makes of the two states, without comparing
        the fields that cannot have changed."""
        state = self.state
        before = state.get("context_variables", {})
        now = after.get("context_variables", before)
        changed = changed_keys(before, now) if now is not before else []
        new = dict(state)
        new["context_variables"] = now
        new["active_agent"] = after.get("active_agent") or state.get("active_agent")
        if self.step is not None:
            by = ", ".join(dict.fromkeys(self.step_tools)) or None
            new["last_step"] = {
                "number": self.steps,
                "agent": self.step,
                "tools": list(self.step_tools),
                "changed": {key: self.step_keys.get(key, by) for key in changed},
            }
            if changed:  # what this turn changed so far, each key with its last changer
                turn = dict(state.get("changed_this_turn") or {})
                turn.update(new["last_step"]["changed"])
                new["changed_this_turn"] = turn
        patch: list[dict[str, Any]] = []
        keyed = isinstance(before, dict) and isinstance(now, dict)  # patched key by key
        for field in new:  # (``new`` holds every field of ``state``, in its order)
            value = new[field]
            if field not in state:
                patch.append({"op": "add", "path": _pointer(field), "value": value})
            elif field == "context_variables" and keyed:
                patch.extend(_key_ops(field, before, now, changed))
            elif field in _STEP_FIELDS and (value is not state[field]) and value != state[field]:
                patch.append({"op": "replace", "path": _pointer(field), "value": value})
        if patch:
            self.emit({"type": "STATE_DELTA", "delta": patch})
        self.state = new
        if self.step is not None:
            self.emit({"type": "STEP_FINISHED", "stepName": self.step})
            self.step, self.step_tools, self.step_keys = None, [], {}

    def end(self, final: dict[str, Any]) -> None:
        """The run returned: the open reply closed, the last step's end at ``final``."""
        with self._lock:
            for reply in list(self._replies.values()):
                self._close(reply)
            self._replies.clear()
            self.finish_step(plain(final))
