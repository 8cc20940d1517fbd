"""Memory policies: which stored messages the model is shown on the next run.

A policy (:class:`MemoryPolicy`) has ``select(messages) -> messages`` and ``load_limit``
(how many trailing messages it needs from storage; ``None`` = all), so
:class:`memory.Session` reads only what the policy will use. Session calls the policy through
three hooks with defaults built on those two: ``window(meta)`` (which messages to load),
``fold(snapshot)`` / ``afold`` (what the model is shown, and any state to store) and
``stored_meta(meta, state)``; ``SummaryMemory`` overrides them to keep its running summary in
the conversation's ``meta``. No policy ever starts the shown history on a ToolMessage whose
tool call was cut off (chat APIs reject it).

============================  =============================================================
``BufferMemory()``            everything
``WindowMemory(k)``           the last ``k`` messages (reads only ``k`` rows)
``TokenTrimMemory(n)``        the newest messages that fit ``n`` tokens, starting on a human
                              message (``trim_messages``, approximate token count)
``SummaryMemory(model, k)``   the last ``k`` messages, plus a running summary of everything
                              older as one leading SystemMessage; the summary is stored with
                              the context record and only newly evicted messages are sent to
                              the summariser each turn (incremental, never recomputed)
============================  =============================================================

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> chat = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("refund 7"), AIMessage("ok")]
    >>> [m.content for m in WindowMemory(2).select(chat)]
    ['refund 7', 'ok']
    >>> [m.content for m in parse_memory("buffer").select(chat)]
    ['hi', 'hello', 'refund 7', 'ok']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from .store import ALL_MESSAGES, Snapshot, Window


def drop_orphan_tool_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Drop leading ToolMessages whose AI tool call fell outside a window.

    Chat APIs reject a ``tool`` message that does not follow the assistant message that
    called it, so a window must never start on one.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> window = [ToolMessage("42", tool_call_id="c1"), AIMessage("It is 42.")]
        >>> [m.type for m in drop_orphan_tool_messages(window)]
        ['ai']
    """
    start = 0
    while start < len(messages) and isinstance(messages[start], ToolMessage):
        start += 1
    return messages[start:]


@dataclass
class Folded:
    """What a policy made of a loaded window: the messages the model is shown, and the
    policy's state to store with the turn (``None``: nothing changed)."""

    shown: list[BaseMessage]
    state: dict | None = None


class MemoryPolicy:
    """Chooses what part of the stored conversation the model is shown.

    Subclasses implement :meth:`select` (and set ``load_limit`` if they need only the last
    messages); a policy that keeps state between turns (``stateful``) overrides the hooks.

    Example:
        >>> class LastTwo(MemoryPolicy):
        ...     load_limit = 2
        ...     def select(self, messages):
        ...         return list(messages)[-2:]
        >>> LastTwo().window({})
        Window(last=2, start=0)
    """

    #: How many trailing messages the policy needs from storage (``None``: all).
    load_limit: int | None = None
    #: True when :meth:`window` depends on the stored ``meta`` (Session reads it first).
    stateful: bool = False
    #: Approximate tokens the last :meth:`fold` sent to a model of its own (a summariser).
    last_input_tokens: int = 0

    def select(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """What the model is shown of ``messages`` (the stored window)."""
        return list(messages)

    def window(self, meta: dict) -> Window:
        """Which stored messages to load, given the conversation's ``meta``."""
        return ALL_MESSAGES if self.load_limit is None else Window(last=self.load_limit)

    def fold(self, snapshot: Snapshot) -> Folded:
        """What the model is shown of the loaded ``snapshot``, and the state to store."""
        return Folded(self.select(snapshot.messages))

    async def afold(self, snapshot: Snapshot) -> Folded:
        """:meth:`fold` for async code (a policy that calls a model awaits it here)."""
        return self.fold(snapshot)

    def stored_meta(self, meta: dict, state: dict | None) -> dict:
        """``meta`` (the latest stored) with this turn's policy ``state`` in it."""
        return meta

    def arrange(
        self, shown: Sequence[BaseMessage], new: Sequence[BaseMessage]
    ) -> list[BaseMessage]:
        """What the model is sent this turn: the folded history ``shown``, then the turn's
        ``new`` messages. A policy that chooses by what was just said (retrieval) overrides
        it: ``fold`` runs on storage and never sees the new message.

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> shown, new = [HumanMessage("a")], [HumanMessage("b")]
            >>> [m.content for m in BufferMemory().arrange(shown, new)]
            ['a', 'b']
        """
        return [*shown, *new]


class BufferMemory(MemoryPolicy):
    """Show everything (what plain ``ConversationBufferMemory`` does).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> len(BufferMemory().select([HumanMessage("a"), HumanMessage("b")]))
        2
    """

    def __repr__(self) -> str:
        return "BufferMemory()"


class WindowMemory(MemoryPolicy):
    """Show the last ``k`` messages, minus a leading orphaned ToolMessage.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> call = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
        >>> chat = [HumanMessage("q"), call, ToolMessage("42", tool_call_id="c1"), AIMessage("42")]
        >>> [m.type for m in WindowMemory(2).select(chat)]
        ['ai']
    """

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"window size must be an int >= 0, got {k!r}")
        self.k = k
        self.load_limit: int | None = k
        self._window = Window(last=k)

    def window(self, meta: dict) -> Window:
        return self._window

    def select(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        return drop_orphan_tool_messages(list(messages)[-self.k :] if self.k else [])

    def __repr__(self) -> str:
        return f"WindowMemory({self.k})"


class TokenTrimMemory(MemoryPolicy):
    """Show the newest messages that fit in ``max_tokens`` (approximate count).

    LangChain's ``trim_messages(strategy="last", start_on="human")``: the kept part always
    starts on a human message, so it can never start on an orphaned tool result.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> chat = [HumanMessage("a " * 200), AIMessage("b"), HumanMessage("c"), AIMessage("d")]
        >>> [m.content for m in TokenTrimMemory(50).select(chat)]
        ['c', 'd']
    """

    def __init__(self, max_tokens: int, *, token_counter: Any = count_tokens_approximately):
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be an int >= 1, got {max_tokens!r}")
        self.max_tokens = max_tokens
        self.token_counter = token_counter

    def select(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        kept = trim_messages(
            list(messages),
            max_tokens=self.max_tokens,
            strategy="last",
            token_counter=self.token_counter,
            start_on="human",
            include_system=False,
            allow_partial=False,
        )
        return drop_orphan_tool_messages(kept)

    def __repr__(self) -> str:
        return f"TokenTrimMemory({self.max_tokens})"


SUMMARY_PROMPT = (
    "You keep a running summary of a conversation between a user and AI agents. "
    "Extend the existing summary with the new lines. Keep names, ids, numbers and decisions; "
    "drop small talk. Answer with the updated summary only."
)


@dataclass
class SummaryState:
    """The stored part of a summary: its text and how many leading messages it covers."""

    summary: str = ""
    summarized: int = 0

    @classmethod
    def from_meta(cls, meta: dict) -> SummaryState:
        return cls(str(meta.get("summary", "")), int(meta.get("summarized", 0)))

    def to_meta(self) -> dict:
        return {"summary": self.summary, "summarized": self.summarized}


def transcript(messages: Sequence[BaseMessage]) -> str:
    """Messages as plain lines for a summariser or extractor.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> print(transcript([HumanMessage("refund 7"), AIMessage("Done.", name="Refunds")]))
        User: refund 7
        Refunds: Done.
    """
    lines = []
    for m in messages:
        text = m.content if isinstance(m.content, str) else str(m.content)
        if isinstance(m, HumanMessage):
            lines.append(f"User: {text}")
        elif isinstance(m, AIMessage):
            calls = ", ".join(f"{c['name']}({c['args']})" for c in m.tool_calls)
            who = m.name or "Assistant"
            lines.append(f"{who}: {text}" + (f" [calls {calls}]" if calls else ""))
        elif isinstance(m, ToolMessage):
            lines.append(f"Tool {m.name or ''} result: {text}".replace("  ", " "))
        else:
            lines.append(f"{m.type.capitalize()}: {text}")
    return "\n".join(lines)


class SummaryMemory(MemoryPolicy):
    """Show the last ``keep_last`` messages after one SystemMessage summarising the rest.

    The summary goes first as a SystemMessage ("Summary of the earlier conversation: ..."),
    after the agent's instructions: it is context the model should trust, not something the
    user said. Each turn only the messages newly pushed out of the window, plus the previous
    summary, are sent to ``model``; the result is stored (by :class:`memory.Session`, in the
    context record's ``meta``) and extended next time, never recomputed from scratch.

    ``select(messages)`` keeps that state on the object, for use without a Session: give it
    the whole conversation each time, one object per conversation.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from swarmgraph.graph import ScriptedChatModel
        >>> summariser = ScriptedChatModel(["Ming asked for a refund of order 7."])
        >>> policy = SummaryMemory(summariser, keep_last=2)
        >>> chat = [HumanMessage("I'm Ming"), AIMessage("Hi Ming"),
        ...         HumanMessage("refund 7"), AIMessage("Done")]
        >>> [m.type for m in policy.select(chat)], policy.state.summarized
        (['system', 'human', 'ai'], 2)
        >>> len(summariser.calls)   # a second select with no new evictions calls nothing
        1
        >>> _ = policy.select(chat); len(summariser.calls)
        1
    """

    stateful = True

    def __init__(self, model: Any, keep_last: int = 10, *, prompt: str = SUMMARY_PROMPT):
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
            raise ValueError(f"keep_last must be an int >= 0, got {keep_last!r}")
        self.model = model
        self.keep_last = keep_last
        self.prompt = prompt
        self.state = SummaryState()
        #: Approximate tokens sent to the summariser by the last fold (0 if it was not called).
        self.last_input_tokens = 0

    def __repr__(self) -> str:
        return f"SummaryMemory({type(self.model).__name__}, keep_last={self.keep_last})"

    def _shown(self, state: SummaryState, kept: list[BaseMessage]) -> list[BaseMessage]:
        if not state.summary:
            return kept
        return [SystemMessage(f"Summary of the earlier conversation: {state.summary}"), *kept]

    def window(self, meta: dict) -> Window:
        """Every message after those the stored summary covers."""
        return Window(start=SummaryState.from_meta(meta).summarized)

    def fold(self, snapshot: Snapshot) -> Folded:
        """Summarise what left the window (one model call, only if something did)."""
        state = self._state(snapshot)
        cut, request = self._request(snapshot.messages, state)
        reply = None if request is None else self.model.invoke(request)
        return self._folded(snapshot.messages, state, cut, reply)

    async def afold(self, snapshot: Snapshot) -> Folded:
        """Async twin of :meth:`fold`."""
        state = self._state(snapshot)
        cut, request = self._request(snapshot.messages, state)
        reply = None if request is None else await self.model.ainvoke(request)
        return self._folded(snapshot.messages, state, cut, reply)

    def stored_meta(self, meta: dict, state: dict | None) -> dict:
        """``meta`` with the new summary, unless a later one is stored already (a concurrent
        turn summarised further)."""
        if state and state["summarized"] > SummaryState.from_meta(meta).summarized:
            return {**meta, **state}
        return meta

    def select(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        messages = list(messages)
        if len(messages) < self.state.summarized:  # a shorter conversation: start over
            self.state = SummaryState()
        start = self.state.summarized
        folded = self.fold(
            Snapshot(meta=self.state.to_meta(), messages=messages[start:], start=start)
        )
        if folded.state is not None:
            self.state = SummaryState.from_meta(folded.state)
        return folded.shown

    @staticmethod
    def _state(snapshot: Snapshot) -> SummaryState:
        state = SummaryState.from_meta(snapshot.meta)
        # The window starts where the summary ends, unless the messages were cleared since.
        return state if snapshot.start == state.summarized else SummaryState()

    def _request(
        self, recent: list[BaseMessage], state: SummaryState
    ) -> tuple[int, list[BaseMessage] | None]:
        """How many of ``recent`` leave the window, and the summariser's request for them."""
        cut = max(len(recent) - self.keep_last, 0)
        # Keep a tool result with the AI message that called it.
        while 0 < cut < len(recent) and isinstance(recent[cut], ToolMessage):
            cut -= 1
        self.last_input_tokens = 0
        if cut == 0:
            return 0, None
        previous = state.summary or "(none yet)"
        body = f"Existing summary:\n{previous}\n\nNew lines:\n{transcript(recent[:cut])}"
        request = [SystemMessage(self.prompt), HumanMessage(body)]
        self.last_input_tokens = count_tokens_approximately(request)
        return cut, request

    def _folded(
        self, recent: list[BaseMessage], state: SummaryState, cut: int, reply: Any
    ) -> Folded:
        if reply is None:
            return Folded(self._shown(state, recent))
        new = SummaryState(_text(reply), state.summarized + cut)
        return Folded(self._shown(new, recent[cut:]), new.to_meta())


def _text(reply: Any) -> str:
    content = getattr(reply, "content", reply)
    return content if isinstance(content, str) else str(content)


def parse_memory(spec: str, *, model: Any = None) -> MemoryPolicy:
    """A policy from a CLI string: ``buffer``, ``window:K``, ``tokens:N``, ``summary[:K]``.

    ``summary`` needs the summariser ``model``; it keeps the last 10 messages unless ``:K``.

    Example:
        >>> parse_memory("window:20"), parse_memory("tokens:2000")
        (WindowMemory(20), TokenTrimMemory(2000))
        >>> parse_memory("window")
        Traceback (most recent call last):
        ...
        ValueError: memory policy 'window' needs a number: 'window:K'
    """
    if isinstance(spec, MemoryPolicy):
        return spec
    name, _, arg = str(spec).strip().partition(":")
    name = name.strip().lower()
    if name not in ("buffer", "window", "tokens", "summary"):
        raise ValueError(
            f"unknown memory policy {spec!r}; use buffer, window:K, tokens:N or summary[:K]"
        )
    if name == "buffer":
        if arg:
            raise ValueError(f"memory policy 'buffer' takes no argument, got {spec!r}")
        return BufferMemory()
    number: int | None = None
    if arg:
        try:
            number = int(arg)
        except ValueError:
            raise ValueError(f"memory policy {spec!r}: {arg!r} is not a whole number") from None
    if name == "summary":
        if model is None:
            raise ValueError("memory policy 'summary' needs a model to write the summary")
        return SummaryMemory(model, keep_last=10 if number is None else number)
    if number is None:
        hint = "K" if name == "window" else "N"
        raise ValueError(f"memory policy {name!r} needs a number: '{name}:{hint}'")
    return WindowMemory(number) if name == "window" else TokenTrimMemory(number)
