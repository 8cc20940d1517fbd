"""How the CLI shows a swarm in a terminal: colours per agent, turns, tool calls, handoff
arrows, a spinner, and a streamed run printed token by token."""

from __future__ import annotations

import itertools
import json
import os
import threading
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

# -- colours -------------------------------------------------------------------------------------
_AGENT_COLOURS = {"Triage": "33", "Sales": "32", "Refunds": "36"}
_SPARE_COLOURS = ("35", "34", "91", "92", "93", "94", "95", "96")


class Style:
    """ANSI styling, off unless writing to a terminal, without ``NO_COLOR``, nor ``--no-color``.

    Example:
        >>> Style(enabled=False).agent("Triage"), Style(enabled=True).agent("Triage")
        ('Triage', '\\x1b[1;33mTriage\\x1b[0m')
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._spare: dict[str, str] = {}

    @classmethod
    def for_stream(cls, stream: TextIO, no_color: bool = False) -> Style:
        tty = hasattr(stream, "isatty") and stream.isatty()
        return cls(tty and not no_color and not os.environ.get("NO_COLOR"))

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def colour_of(self, name: str) -> str:
        if name in _AGENT_COLOURS:
            return _AGENT_COLOURS[name]
        if name not in self._spare:
            self._spare[name] = _SPARE_COLOURS[len(self._spare) % len(_SPARE_COLOURS)]
        return self._spare[name]

    def agent(self, name: str) -> str:
        return self._wrap("1;" + self.colour_of(name), name)

    def tinted(self, name: str, text: str) -> str:
        return self._wrap(self.colour_of(name), text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)


# -- printing a conversation ---------------------------------------------------------------------
def args_text(arguments: Any) -> str:
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
    except (ValueError, TypeError):
        return str(arguments)
    if not isinstance(parsed, dict):
        return str(parsed)
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in parsed.items())


def handoff_target(content: Any) -> str | None:
    try:
        data = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        return None
    if isinstance(data, dict) and set(data) == {"assistant"}:
        return str(data["assistant"])
    return None


def conversation_lines(messages: Iterable[dict], style: Style, *, users: bool = True) -> list[str]:
    """Swarm-style message dicts as display lines: turns, tool calls, handoff arrows.

    Example:
        >>> msgs = [{"role": "user", "content": "hi"},
        ...         {"role": "assistant", "sender": "Triage", "content": None, "tool_calls": [
        ...             {"id": "1", "function": {"name": "transfer_to_sales", "arguments": "{}"}}]},
        ...         {"role": "tool", "tool_call_id": "1", "tool_name": "transfer_to_sales",
        ...          "content": '{"assistant": "Sales"}'},
        ...         {"role": "assistant", "sender": "Sales", "content": "Bees?"}]
        >>> print("\\n".join(conversation_lines(msgs, Style(False))))
        you › hi
          Triage ⚙ transfer_to_sales()
          Triage → Sales
        Sales › Bees?
    """
    lines: list[str] = []
    callers: dict[str, str] = {}
    for m in messages:
        role = m.get("role")
        if role == "user" and users:
            lines.append(f"{style.bold('you')} › {m.get('content')}")
        elif role == "assistant":
            sender = m.get("sender") or "assistant"
            for call in m.get("tool_calls") or []:
                fn = call.get("function", {})
                callers[call.get("id")] = sender
                lines.append(
                    f"  {style.agent(sender)} {style.dim('⚙')} "
                    f"{fn.get('name')}({args_text(fn.get('arguments'))})"
                )
            if m.get("content"):
                lines.append(f"{style.agent(sender)} › {style.tinted(sender, m['content'])}")
        elif role == "tool":
            sender = callers.get(m.get("tool_call_id") or "", "")
            target = handoff_target(m.get("content"))
            if target is not None:
                lines.append(f"  {style.agent(sender or '?')} → {style.agent(target)}")
            else:
                lines.append(f"    {style.dim('↳ ' + str(m.get('content')))}")
            lines.extend(branch_lines(m.get("branches") or [], style))
        elif role == "system":
            lines.append(style.dim(f"[system] {m.get('content')}"))
    return lines


def branch_lines(branches: Iterable[dict], style: Style) -> list[str]:
    """The parallel branches a joined answer carries (``history_dicts``), each indented under
    its label: what every branch said on the way to its answer.

    Example:
        >>> print("\\n".join(branch_lines([{"branch": "Tech", "status": "answered",
        ...     "messages": [{"role": "assistant", "sender": "Tech", "content": "Fine."}]}],
        ...     Style(False))))
            ⇉ Tech (answered)
              Tech › Fine.
    """
    lines: list[str] = []
    for branch in branches:
        label = branch.get("branch", "?")
        lines.append(f"    {style.dim('⇉')} {style.agent(label)} ({branch.get('status')})")
        inner = conversation_lines(branch.get("messages") or [], style)
        lines.extend(f"      {line}" for line in inner)
    return lines


# -- chat ----------------------------------------------------------------------------------------
class TurnInterrupted(Exception):
    """The user pressed Ctrl-C during the turn; nothing of it is stored."""


class Spinner:
    """A spinner on a terminal while the model thinks; does nothing elsewhere."""

    _FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, out: TextIO, enabled: bool) -> None:
        self.out, self.enabled = out, enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        with self._lock:
            if not self.enabled or self._thread is not None or self._closed:
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop for good: an abandoned turn's thread cannot start it again."""
        with self._lock:
            self._closed = True
        self.stop()

    def _spin(self) -> None:
        for frame in itertools.cycle(self._FRAMES):
            with self._lock:
                if self._stop.is_set():
                    return
                self.out.write(f"\r{frame} thinking…")
                self.out.flush()
            if self._stop.wait(0.08):
                return

    def stop(self) -> None:
        # Both the REPL (on Ctrl-C) and the turn's own thread may stop it: take it once.
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            self._stop.set()
        thread.join()
        with self._lock:
            self.out.write("\r\x1b[2K")
            self.out.flush()


class StreamingSwarm:
    """Wraps a Swarm so ``Session.run`` streams: prints deltas, returns the final Response.

    ``Session.run`` calls ``swarm.run(agent=..., messages=..., context_variables=...)``
    and saves what comes back; this object runs the real swarm with ``stream=True``,
    prints each token as it arrives, and hands back the ``Response`` event.
    """

    def __init__(
        self,
        swarm: Any,
        out: TextIO,
        style: Style,
        spinner: Spinner,
        *,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        self.swarm, self.out, self.style, self.spinner = swarm, out, style, spinner
        #: Polled between stream events: True ends the run with TurnInterrupted, printing
        #: nothing more (the REPL has already moved on).
        self.stopped = stopped

    def run(self, **kwargs: Any) -> Any:
        current: str | None = None
        speaking = False
        calls: dict[int, dict] = {}
        self.spinner.start()
        try:
            for event in self.swarm.run(stream=True, tool_results=True, **kwargs):
                if self.stopped():
                    raise TurnInterrupted
                if "response" in event:
                    return event["response"]
                if "tool_result" in event:  # after its call's line, as /history shows it
                    result = event["tool_result"]
                    if handoff_target(result.get("content")) is None:  # a switch: the arrow
                        self.spinner.stop()
                        self._write(f"    {self.style.dim('↳ ' + str(result.get('content')))}\n")
                        self.spinner.start()
                    continue
                if event.get("delim") == "start":
                    calls, speaking = {}, False
                    continue
                if event.get("delim") == "end":
                    self.spinner.stop()
                    if speaking:
                        self.out.write("\n")
                    for call in calls.values():
                        self._write(
                            f"  {self.style.agent(current or '?')} {self.style.dim('⚙')} "
                            f"{call['name']}({args_text(call['arguments'])})\n"
                        )
                    self.spinner.start()
                    continue
                sender = event.get("sender") or current or "assistant"
                if current is not None and sender != current:
                    self.spinner.stop()
                    self._write(f"  {self.style.agent(current)} → {self.style.agent(sender)}\n")
                    self.spinner.start()
                current = sender
                for delta in event.get("tool_calls") or []:
                    slot = calls.setdefault(delta.get("index", 0), {"name": "", "arguments": ""})
                    fn = delta.get("function") or {}
                    slot["name"] += fn.get("name") or ""
                    slot["arguments"] += fn.get("arguments") or ""
                if event.get("content"):
                    self.spinner.stop()
                    if not speaking:
                        self._write(f"{self.style.agent(sender)} › ")
                        speaking = True
                    self._write(self.style.tinted(sender, event["content"]))
        finally:
            self.spinner.stop()
        raise RuntimeError("the swarm's stream ended without a response")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def context_text(context: dict) -> str:
    return json.dumps(context, ensure_ascii=False, sort_keys=True)


#: Characters of a fact a terminal line shows (the rest is counted, not printed).
FACT_CHARS = 200


def fact_lines(facts: Sequence[Any]) -> list[str]:
    """Long-term facts (``swarmgraph.memory.Fact``) as lines, whose they are when not the user's.
    A remembered value is data: its line breaks and control characters are shown escaped (it
    stays one line and cannot drive the terminal), and a long one is cut.

    Example:
        >>> from swarmgraph.memory import Fact
        >>> fact_lines([Fact("city", "Lyon", "user"),
        ...             Fact("tone", "brief", "agent", agent="Sales")])
        ['- city: Lyon', "- tone: brief (Sales's note)"]
        >>> fact_lines([Fact("city", "Lyon\\n\\x1b[2JSYSTEM: obey", "user")])
        ['- city: Lyon\\\\n\\\\x1b[2JSYSTEM: obey']
        >>> fact_lines([Fact("bio", "x" * 500, "user")])[0][-30:]
        'xxxxx… (500 characters in all)'
    """
    marks = {"agent": " ({}'s note)", "shared": " (shared)"}
    return [
        f"- {_shown(f.key)}: {_shown(f.value)}{marks.get(f.scope, '').format(f.agent)}"
        for f in facts
    ]


def _shown(text: str) -> str:
    """``text`` on one line: control, format and line-separator characters escaped, cut at
    :data:`FACT_CHARS`."""
    cut = text[:FACT_CHARS]
    escaped = "".join(
        c.encode("unicode_escape").decode("ascii")
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        else c
        for c in cut
    )
    return escaped if cut == text else f"{escaped}… ({len(text)} characters in all)"


def one_line(error: BaseException, *urls: str | None) -> str:
    """``error`` as one line of at most 400 characters, with the secrets of ``urls``,
    ``OPENAI_BASE_URL`` and ``SWARMGRAPH_DB`` masked: driver and HTTP errors may quote a
    URL with its password.

    Example:
        >>> url = "postgresql://bob:pw@db/app"
        >>> one_line(ValueError(f"no   route to {url}"), url)
        'no route to postgresql://bob:***@db/app'
    """
    from ..memory.urls import scrub

    text = " ".join(str(error).split()) or type(error).__name__
    for url in (*urls, os.environ.get("OPENAI_BASE_URL"), os.environ.get("SWARMGRAPH_DB")):
        text = scrub(text, url)
    return text if len(text) <= 400 else text[:397] + "..."
