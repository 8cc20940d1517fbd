"""Each tool call of a reply through the middleware's ``wrap_tool_call`` hooks.

The innermost handler is the tool runner's own call (arguments checked, ``context_variables``
injected) and it *raises* what the tool raised, so a ``ToolRetryMiddleware`` sees the failure
and can try again; whatever still fails once the hooks are done is answered ``Error: ...``, as
every failing call is (graph/core/tool_calls.py). A hook that changes the call's arguments gets
them checked like the model's, and one that changes its name (``HumanInTheLoopMiddleware``'s
edit to another tool) runs that tool; a hook that answers without calling the handler answers the
call, and the tool never runs. A tool that ran keeps its ``Result`` (context update, handoff)
even when a hook rewrites the text the model reads; a hook may answer with a LangGraph
``Command``, as LangChain's may, and it is applied as a tool's would be.

Example:
    >>> from langchain.agents.middleware import wrap_tool_call
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
    >>> def lookup(city: str) -> str:
    ...     return f"sunny in {city}"
    >>> @wrap_tool_call
    ... def shout(request, handler):
    ...     answer = handler(request)
    ...     return answer.model_copy(update={"content": answer.content.upper()})
    >>> model = ScriptedChatModel([scripted_tool_call("lookup", {"city": "Oslo"}), "Done."])
    >>> agent = Agent(functions=[lookup], middleware=[shout])
    >>> response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "weather?"}])
    >>> response.messages[1]["content"]
    'SUNNY IN OSLO'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphInterrupt
from langgraph.types import Command

from .drivers import Driver
from .tool_calls import (
    CallsAround,
    StateWrite,
    _Call,
    _Runner,
    content_text,
    invoke_tool,
    to_result,
    unusable,
)
from .types import Agent, Result

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from .tool_events import ToolEvents

__all__ = ["ToolWrapping", "calls_around"]


class ToolWrapping(Protocol):
    """What the tool runner asks of the step's middleware (graph/core/middleware.py's
    ``StepHooks``)."""

    def tool_request(
        self, tool_call: dict[str, Any], tool: Any, tools: list[Any]
    ) -> ToolCallRequest: ...

    async def call_tool(
        self,
        request: ToolCallRequest,
        run: Callable[[ToolCallRequest], Awaitable[ToolMessage]],
    ) -> Any: ...


class _Attempt:
    """One call of the reply through the hooks: called with a request, the innermost handler
    (:meth:`__call__`); and what its last run did: the call as run, its function, its raw
    value or error (``None`` before the tool was reached)."""

    __slots__ = (
        "answer", "call", "error", "events", "func", "io", "ledgered", "origin", "raw", "result",
        "runner", "shown",
    )  # fmt: skip

    def __init__(
        self, runner: _Runner, origin: _Call, io: Driver, events: ToolEvents | None
    ) -> None:
        self.runner, self.origin, self.io, self.events = runner, origin, io, events
        self.call: _Call | None = None
        self.func: Callable[..., Any] | None = None
        self.raw: Any = None
        self.error: Exception | None = None
        self.answer: ToolMessage | None = None  # the message the handler returned
        self.shown: Any = None  # its text as the handler made it (a hook may edit it in place)
        #: ``to_result(raw)``, made for the answer and handed on to the runner (which would
        #: make it again); None where it could not be made, or was not.
        self.result: Result | None = None
        #: A recorded call's records were asked (once per call, whatever the retries): True, it
        #: runs; False, the records answered the call themselves (a middleware's CallRecords).
        self.ledgered: bool | None = None

    def again(self) -> None:
        """A retry starts afresh (the ledger is asked once per call)."""
        self.call, self.func, self.raw, self.error, self.answer = None, None, None, None, None
        self.result = None

    async def __call__(self, request: ToolCallRequest) -> ToolMessage:
        """The innermost handler: the call as the request has it, checked and run; the tool's
        exception propagates (the hooks around may retry)."""
        attempt, runner, call, io = self, self.runner, self.origin, self.io
        asked = request.tool_call
        name = asked.get("name") or call.name  # a hook may send the call to another tool
        same = asked["args"] is call.args and name == call.name
        this = call if same else _Call(call.id, name, asked["args"])
        attempt.again()
        prepared = runner.prepare(this)
        if isinstance(prepared, str):  # arguments the tool cannot take: the model reads why
            attempt.answer = _message(call, prepared, error=True)
            return attempt.answer
        func, kwargs = prepared
        refused = runner.refusal(this, func)
        if refused is not None:
            attempt.answer = _message(call, refused, error=True)
            return attempt.answer
        records = runner.records
        if attempt.ledgered is None and records is not None and records.ledgered(func):
            attempt.ledgered = await io.off_loop(runner.start, this, func)
            if not attempt.ledgered:  # the ledger answered it (it ran before a step died)
                attempt.answer = runner.outcome.messages[-1]
                return attempt.answer
        elif attempt.ledgered is False:
            return runner.outcome.messages[-1]
        attempt.call, attempt.func = this, func
        try:
            attempt.raw = await invoke_tool(io, this, func, kwargs, self.events)
        except Exception as exc:
            attempt.error = exc
            raise
        try:
            result = to_result(attempt.raw, call.id)
        except Exception as exc:  # settled as the runner settles it, below
            shown = unusable(call.name, exc)
        else:
            shown = result.value
            # the runner reads the same Result (to_result of a Result is that Result), except
            # where to_result would read it anew: an agent that is no Agent (a MultiHandoff's)
            if result.agent is None or isinstance(result.agent, Agent):
                attempt.result = result
        # The tool's own return value (an Agent, a Result) rides along for the hooks around, as
        # LangChain's tools return theirs (tracing reads a handoff's target from it).
        attempt.answer, attempt.shown = _message(this, shown, artifact=attempt.raw), shown
        return attempt.answer


def calls_around(around: ToolWrapping) -> CallsAround:
    """What the tool runner runs a reply's calls with (its ``around=``): each call through
    ``around``'s ``wrap_tool_call`` hooks."""

    async def run_calls(
        runner: _Runner,
        io: Driver,
        debug: Callable[[str], None] | None,
        events: ToolEvents | None,
    ) -> None:
        await _run_calls(runner, around, io, debug, events)

    return run_calls


async def _run_calls(
    runner: _Runner,
    around: ToolWrapping,
    io: Driver,
    debug: Callable[[str], None] | None,
    events: ToolEvents | None,
) -> None:
    """Run ``runner``'s calls in order, each through ``around``'s ``wrap_tool_call`` hooks."""
    tools = runner.listed_tools()  # request.tool and runtime.tools, BaseTools as ToolNode's
    listed = {tool.name: tool for tool in tools}
    for call in list(runner.calls):
        if debug is not None:
            runner.announce(call, debug)
        attempt = _Attempt(runner, call, io, events)  # (the handler the hooks call)
        tool_call = {"name": call.name, "args": call.args, "id": call.id, "type": "tool_call"}
        request = around.tool_request(tool_call, listed.get(call.name), tools)
        try:
            answer: Any = await around.call_tool(request, attempt)
        except GraphInterrupt as pause:  # the tool's interrupt(), or a hook's
            if runner.pauses:  # this call and the ones after it wait for the human's answer
                runner.outcome.paused = pause
                if attempt.ledgered and attempt.call is not None:  # its records hear it
                    await io.off_loop(runner.pause, attempt.call)
                return
            answer, attempt.error = None, attempt.error or pause
        except Exception as exc:  # the tool's own error, re-raised by a hook, or a hook's
            answer, attempt.error = None, attempt.error or exc
        await _settle(runner, call, attempt, answer, io)


async def _settle(runner: _Runner, call: _Call, attempt: _Attempt, answer: Any, io: Driver) -> None:
    """Book the call's outcome in the runner: a tool that ran (or raised) is finished as the
    runner finishes any call; the text the model reads is the hooks' last word, and a hook that
    answers with a ``Command`` has it applied as a tool's (:func:`_with_command`)."""
    if attempt.ledgered is False:
        return  # the ledger answered the call (its answer is in the runner already)
    if isinstance(answer, Command):
        ran = attempt.func is not None and attempt.call is not None
        if not ran:  # the hook answered alone: the call takes nothing of an earlier one's
            runner.unrun()
        this = attempt.call if ran and attempt.call is not None else call
        outcome = _with_command(this, attempt if ran else None, answer)
        if attempt.ledgered:
            await io.off_loop(runner.finish, this, outcome)
        else:
            runner.finish(this, outcome)
        return
    if attempt.func is not None and attempt.call is not None:
        error = attempt.error
        raw = attempt.raw if attempt.result is None else attempt.result
        # The answer the hooks gave back as the handler made it is the one booked (not a
        # second ToolMessage saying the same); one a hook rewrote, or edited in place as
        # LangChain's ToolNode would keep it, gives its text.
        made = attempt.answer if answer is attempt.answer else None
        if attempt.ledgered:
            await io.off_loop(runner.finish, attempt.call, raw, error, made)
        else:
            runner.finish(attempt.call, raw, error, made)
        edited = made is not None and made.content != attempt.shown
        if answer is not None and (answer is not made or edited):
            runner.outcome.messages[-1].content = _content(answer)
        return
    if answer is None:  # a hook raised before the tool was reached
        error = attempt.error
        runner._answer(call, f"Error: {call.name}: {type(error).__name__}: {error}")
        return
    runner._answer(call, _content(answer))  # the hook answered, or the arguments were refused


def _with_command(call: _Call, ran: _Attempt | None, command: Command) -> Any:
    """What a call whose hook answered with ``command`` (LangChain's ``wrap_tool_call`` may
    return one, as a tool may) comes to: the command read as a tool's (its ``ToolMessage``
    answers, its keys are written, its ``goto`` hands off), over the ``Result`` of the tool
    that ran: its context update and handoff stand where the command says nothing of them, as
    they do under a hook that rewrote the text. A command the runner cannot apply is handed
    back as it is: the runner answers it with why, as a tool's."""
    try:
        hook = to_result(command, call.id)
    except Exception:
        return command
    if ran is None or ran.error is not None:
        return hook  # the hook's command is the whole outcome (a tool that raised gave none)
    try:
        tool = ran.result if ran.result is not None else to_result(ran.raw, call.id)
    except Exception:
        return hook
    assert isinstance(hook, StateWrite)
    own = tool if isinstance(tool, StateWrite) else None  # the tool's own Command, if any
    goto = hook.goto or (own.goto if own is not None else None)  # (resolved when finished)
    return hook.model_copy(
        update={
            "context_variables": {**tool.context_variables, **hook.context_variables},
            "state": {**(own.state if own is not None else {}), **hook.state},
            "goto": goto,
            "agent": None if goto is not None else tool.agent,
        }
    )


def _message(
    call: _Call, content: str, *, error: bool = False, artifact: Any = None
) -> ToolMessage:
    status = "error" if error else "success"
    return ToolMessage(
        content=content, tool_call_id=call.id, name=call.name, status=status, artifact=artifact
    )


def _content(answer: Any) -> str:
    return content_text(getattr(answer, "content", answer))
