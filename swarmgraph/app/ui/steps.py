"""What a run does, as it does it, told to the turn's :class:`~.events.AguiTurn`.

The turn runs as ``Session.run`` runs it (no LangGraph stream: nothing runs in another
thread, nothing is queued), with the page's :class:`UiMiddleware` installed as that run's own
middleware (``RunHooks(middleware=...)``, handed to ``Session.run`` as ``hooks=``): a LangChain
``AgentMiddleware`` whose hooks tell the turn what happens, in order:

* ``before_step`` (the swarm's step start, docs/middleware.md): an agent step starts, with the
  state LangGraph hands it (``context_variables``, ``active_agent``); the tool answers the step
  before it wrote are told here (and, for the last step, once the run returned: :meth:`ended`);
* ``wrap_model_call``: the prompt (what long-term memory recalled into it) and the reply (told
  whole when no token was streamed);
* ``wrap_tool_call``: the keys a tool's ``Result`` set;
* each of them stops the run once the page asked (:class:`TurnStopped`, raised into the run:
  nothing of the turn is saved).

Only a turn that streams tokens adds a LangChain callback handler (:class:`TokenWatcher`, a
streaming handler made current by :func:`watching`), so a model asked through ``invoke``
streams to it; with nobody listening a reply is told whole, and no runnable of the run gets a
callback manager's events.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> from swarmgraph.graph.core.run_control import RunHooks
    >>> class Shown:
    ...     def __getattr__(self, name):
    ...         return lambda *args: print(name, *[a for a in args if isinstance(a, str)])
    >>> page = UiMiddleware(Shown())
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
    >>> _ = swarm.run(Agent(name="Doc"), [], hooks=RunHooks(middleware=[page]))
    step_started Doc
    reply_started Doc
    reply_done Doc
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.tracers._streaming import _StreamingCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from ...graph.core.members import member_kinds
from ...graph.core.state import current_branch

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from ...graph.core.runtime import StepStart

__all__ = ["TokenWatcher", "TurnStopped", "UiMiddleware", "UiQuietMiddleware", "plain", "watching"]

#: How long-term recall marks its block in a system prompt (memory/recall_block.py).
RECALL_OPEN, RECALL_CLOSE = "<memory>", "</memory>"


class TurnStopped(Exception):
    """Raised into a run whose stop was asked for (the page's stop button): the run ends
    there, and, as for any run that raises, nothing of the turn is saved."""


#: The agent whose step runs in this context (set by ``before_step``): the sender of its
#: model calls (a fan-out's branches run their steps in their own contexts).
_AGENT: ContextVar[str | None] = ContextVar("swarmgraph_ui_agent", default=None)


class _PageHooks(AgentMiddleware):
    """What both of the page's middleware do: each step's start (``before_step``), each
    reply's calls about to run (``hold_calls``: the reply is told there if it was not yet,
    and a stop asked for refuses its calls), each tool call (``wrap_tool_call``)."""

    #: Whether a reply no hook told (a reply with no call to run: a text answer) is told
    #: from the run's messages at its step's end; :class:`UiMiddleware` tells each reply
    #: as it comes back from the model instead.
    tells_at_step_end = True

    def __init__(self, turn: Any, stop: Any = None, *, recall: bool = True) -> None:
        super().__init__()
        self.turn = turn
        self.stop = stop or threading.Event()
        #: Whether prompts may hold a long-term recall block (a Session with long-term
        #: memory): else no model call's prompt is searched for one.
        self.recall = recall
        self._seen: int | None = None  # the run's messages whose tool answers were told
        self._told: set[str] = set()  # the tool answers told (by message id, else call id)
        self._agent: str | None = None  # the agent of the step told last
        self._start: StepStart | None = None  # the last step's start: who is a member
        self._replied: set[str] = set()  # the replies told (by message id, else call ids)
        self._member_step = False  # the step told last is a LangGraph member's

    def _stopped(self) -> None:
        if self.stop.is_set():
            raise TurnStopped("stopped by the page")

    # -- the step's start (the swarm's extension: graph/core/middleware.py) ------------------
    async def before_step(self, start: StepStart) -> bool:
        """An agent step starts: the step before it is over (its tool answers), this one
        starts from the state it was handed. Never plans the step (False)."""
        step = start.turn
        _AGENT.set(step.agent.name)
        if current_branch() is not None:  # inside a branch of a fan-out: not a swarm step
            return False
        self._stopped()
        state = step.state
        messages = state.get("messages") or []
        if self._seen is not None:
            self._results(messages[self._seen :])
        self._seen = len(messages)
        agent = str(state.get("active_agent") or start.node)
        self._agent, self._start, self._member_step = agent, start, False
        shown = {"context_variables": plain(state.get("context_variables") or {}),
                 "active_agent": agent}  # fmt: skip
        self.turn.step_started(agent, shown)
        return False

    def ended(self, messages: Sequence[Any]) -> None:
        """The run returned ``messages`` (its new ones): the last step's tool answers."""
        self._results(messages)

    def _results(self, messages: Sequence[Any]) -> None:
        """The tool answers among ``messages`` not told yet, each in its step. A reply from
        another agent than the step told last is a step no ``before_step`` announced: a
        LangGraph member's turn (graph/features/native.py runs it as one graph call, with no
        step of ours), told here, once its messages are in."""
        answers: list[Any] = []
        for message in messages:
            kind = getattr(message, "type", None)
            sender = getattr(message, "name", None)
            if kind == "ai" and sender and sender != self._agent and self._member(sender):
                if answers:
                    self.turn.step_ended(answers)
                answers = []
                self._agent, self._member_step = sender, True
                self.turn.step_started(sender, {"active_agent": sender})
            elif kind == "ai" and self.tells_at_step_end and not self._member_step:
                self._tell(str(sender or self._agent or "assistant"), message)
            told = str(getattr(message, "id", None) or getattr(message, "tool_call_id", ""))
            if kind == "tool" and told not in self._told:
                self._told.add(told)
                answers.append(message)
        if answers:
            self.turn.step_ended(answers)

    def _member(self, name: str) -> bool:
        """Whether ``name`` is an agent the swarm runs as a member (not one of ours, whose
        steps ``before_step`` tells; nor a fan-out branch's agent, whose steps are not the
        swarm's). Before any step of ours ran, every reply is a member's."""
        if self._start is None:
            return True
        agent = self._start.runtime.agent_named(name, self._start.turn.control)
        return agent is not None and any(kind.owns(agent) for kind in member_kinds())

    # -- the replies -----------------------------------------------------------------------------
    def _tell(self, agent: str, reply: Any) -> None:
        """Tell ``reply`` whole, once (a reply narrowed by a hook is the same reply)."""
        key = getattr(reply, "id", None) or ",".join(
            str(c.get("id")) for c in getattr(reply, "tool_calls", None) or ()
        )
        if key:
            if key in self._replied:
                return
            self._replied.add(key)
        self.turn.reply_started(agent)
        self.turn.reply_done(agent, reply)

    def hold_calls(self, turn: Any, reply: Any, tools: Any) -> tuple[Any, list[Any]]:
        """The reply's calls are about to run (graph/core/middleware.py's ``hold_calls``,
        asked before any other middleware's): the reply is told now if it was not, so a
        client sees each call before its tool works; once the page asked to stop, none of
        them runs (the run stops here, nothing of it saved). Holds nothing."""
        self._tell(_AGENT.get() or turn.agent.name, reply)
        self._stopped()
        return reply, []

    # -- the tool calls ---------------------------------------------------------------------------
    def _called(self, request: ToolCallRequest, answer: Any) -> Any:
        """The keys a tool's ``Result`` set (its raw value rides on the answer's artifact), so
        a step that ran two tools says which changed what (a tool that changed the live dict
        in place is not seen here: its step's tools are named for it instead)."""
        keys = getattr(getattr(answer, "artifact", None), "context_variables", None)
        if isinstance(keys, dict) and keys:
            self.turn.keys_set(str(request.tool_call["name"]), [str(k) for k in keys])
        return answer

    def _refused(self, request: ToolCallRequest) -> ToolMessage | None:
        """Once the page asked to stop, a tool no longer runs (what raises in a tool call is
        its answer, so the run stops at its next step or model call)."""
        if not self.stop.is_set():
            return None
        call = request.tool_call
        return ToolMessage(content="Error: stopped by the page", tool_call_id=call["id"] or "",
                           name=call["name"], status="error")  # fmt: skip

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        refused = self._refused(request)
        return refused or self._called(request, handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        refused = self._refused(request)
        return refused or self._called(request, await handler(request))


class UiQuietMiddleware(_PageHooks):
    """The page's middleware for a turn whose model does not stream (no client posted it)
    and whose prompts hold no long-term recall: no ``wrap_model_call``, whose request and
    response a step would build around each model call. Each reply is told whole, when its
    calls are about to run (``hold_calls``), or, with no call to run, from the run's
    messages at its step's end (the next step's start, or :meth:`ended`): the same events
    in the same order as :class:`UiMiddleware`'s; an ``AIMessage`` a hook wrote (a limit's
    last word) is told as a reply too, and the page's stop is seen at each step's start
    (right before its model call), before a reply's calls and before each tool call.

    Example:
        >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
        >>> from swarmgraph.graph.core.run_control import RunHooks
        >>> class Shown:
        ...     def __getattr__(self, name):
        ...         return lambda *args: print(name, *[a for a in args if isinstance(a, str)])
        >>> page = UiQuietMiddleware(Shown())
        >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi."]))
        >>> response = swarm.run(Agent(name="Doc"), [], hooks=RunHooks(middleware=[page]))
        step_started Doc
        >>> page.ended(response._langchain_messages)
        reply_started Doc
        reply_done Doc
    """


class UiMiddleware(_PageHooks):
    """The page's middleware for one turn: tells ``turn`` (an :class:`~.events.AguiTurn`) each
    step of the swarm's own run (a parallel branch's are not its steps), each model call and
    each tool call, and stops the run at the next step, model call or tool call once ``stop``
    (a ``threading.Event``, or anything with its ``is_set``) is set (the page's stop
    button). Each reply is told as the model returns it (``wrap_model_call``: a streamed
    reply is closed there), and each prompt is searched for a long-term recall block."""

    tells_at_step_end = False

    # -- the model call -------------------------------------------------------------------------
    def _asking(self, request: ModelRequest) -> str:
        self._stopped()
        agent = _AGENT.get() or "assistant"
        if self.recall:  # long-term memory's block in a system prompt (memory/recall_block.py)
            prompt = [request.system_message, *request.messages]
            lines = _recalled([m for m in prompt if m is not None])
            if lines is not None:
                self.turn.recalled(agent, lines)
        self.turn.reply_started(agent)
        return agent

    def _answered(self, agent: str, response: Any) -> None:
        result = getattr(response, "result", None) or [response]
        reply = result[-1]
        key = getattr(reply, "id", None)
        if key:  # (told: the step's hold_calls finds it so)
            self._replied.add(key)
        self.turn.reply_done(agent, reply)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        agent = self._asking(request)
        response = handler(request)
        self._answered(agent, response)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        agent = self._asking(request)
        response = await handler(request)
        self._answered(agent, response)
        return response


class TokenWatcher(BaseCallbackHandler, _StreamingCallbackHandler):
    """A LangChain streaming handler: each model streams its reply to it, told to ``turn``
    token by token (a turn a client watches: :func:`watching`)."""

    run_inline = True  # called in the model's own thread, in order
    # Only the tokens are heard: LangChain skips the other events for this handler.
    ignore_chain = ignore_chat_model = ignore_retriever = ignore_agent = True
    ignore_retry = ignore_custom_event = True

    def __init__(self, turn: Any) -> None:
        self.turn = turn

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
    if type(value) is dict:  # the usual context: a dict of plain values, copied in one pass
        return {
            (k if type(k) is str else str(k)): (v if type(v) in _ATOMS else plain(v))
            for k, v in value.items()
        }
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


#: The JSON values :func:`plain` keeps as they are (exact types: a subclass goes the long way).
_ATOMS = frozenset({str, int, float, bool, type(None)})

_CURRENT: ContextVar[TokenWatcher | None] = ContextVar("swarmgraph_ui_tokens", default=None)
_registered = False
_register_lock = threading.Lock()


def _recalled(prompt: Any) -> list[str] | None:
    """The lines of the long-term recall block a prompt's system message holds, if any."""
    for message in prompt:
        text = message.content if isinstance(message.content, str) else ""
        start, end = text.find(RECALL_OPEN), text.find(RECALL_CLOSE)
        if getattr(message, "type", None) == "system" and 0 <= start < end:
            return text[start + len(RECALL_OPEN) : end].strip().splitlines()
    return None


@contextmanager
def watching(watcher: TokenWatcher) -> Iterator[TokenWatcher]:
    """Make ``watcher`` hear the model tokens of the runs started in this context (this
    thread, and the threads LangGraph starts from it, which copy the context)."""
    global _registered
    with _register_lock:
        if not _registered:  # once per process: LangChain asks each hook on every run
            register_configure_hook(_CURRENT, inheritable=True)
            _registered = True
    token = _CURRENT.set(watcher)
    try:
        yield watcher
    finally:
        _CURRENT.reset(token)
