"""Run the tool calls of one model reply, the way Swarm does, without ever crashing.

Every tool call gets exactly one ``ToolMessage`` answer. Anything that goes wrong
(unknown tool, malformed or wrong-typed arguments, a tool that raises) becomes a message
starting ``Error:`` that the model reads on its next call, and the run goes on.

As in Swarm's ``handle_tool_calls``: every call of the reply runs, in order; each gets the
live ``context_variables`` (an in-place write is seen by the calls after it), while the
``Result(context_variables=...)`` updates are applied after the last call, in call order;
when several calls hand off, the last one's agent takes over and each call is answered
with its own result. ``first_handoff_wins=True`` (``Swarm(parallel_handoffs="first")``)
keeps the first handoff instead, and a later call of a tool that hands off is not run.

A call whose tool must run at most once runs between its records' ``before`` and ``done``
when the step hands the runner some (``records=``, a
:class:`~swarmgraph.graph.core.runtime.CallRecords`, a middleware's); a call they already hold
is answered from them instead of running again.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> from swarmgraph.graph.core.types import Result
    >>> def remember(order_id: int):
    ...     return Result(value="ok", context_variables={"order_id": order_id})
    >>> reply = AIMessage("", tool_calls=[
    ...     {"name": "remember", "args": {"order_id": 7}, "id": "c1"},
    ...     {"name": "nope", "args": {}, "id": "c2"}])
    >>> out = execute_tool_calls(reply, [remember], {})
    >>> [m.content for m in out.messages], out.context_variables
    (['ok', 'Error: Tool nope not found.'], {'order_id': 7})
    >>> from swarmgraph.graph.core.types import Agent
    >>> a, b = Agent(name="A"), Agent(name="B")
    >>> def to_a():
    ...     return a
    >>> def to_b():
    ...     return b
    >>> both = AIMessage("", tool_calls=[
    ...     {"name": "to_a", "args": {}, "id": "c1"}, {"name": "to_b", "args": {}, "id": "c2"}])
    >>> out = execute_tool_calls(both, [to_a, to_b], {})
    >>> out.handoff.name, [m.content for m in out.messages]  # Swarm's rule: the last wins
    ('B', ['{"assistant": "A"}', '{"assistant": "B"}'])
    >>> out = execute_tool_calls(both, [to_a, to_b], {}, first_handoff_wins=True)
    >>> out.handoff.name, out.messages[1].content
    ('A', 'Error: to_b was not run: this reply already transferred the conversation to A.')
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphInterrupt
from langgraph.types import Command
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import Unpack

from .drivers import SYNC, Driver, drive
from .errors import ContextValidationError
from .injected import CONTEXT_PARAM, InjectedParam, param_for
from .langchain_args import step_values
from .loop import inject_context
from .members import members_in
from .middleware_tools import REPORTS_ITSELF
from .runtime import (
    CallRecords,
    HandoffValue,
    MultiHandoff,
    RecordedOutcome,
    ToolOutcome,
)
from .schema import INJECTED, ToolArgumentError, ToolSpec, tool_spec
from .state import current_branch
from .types import MULTI_HANDOFF_ATTR, Agent, Result

if TYPE_CHECKING:
    from .tool_events import ToolEvents

_UNSET: Any = object()

#: Runs a reply's calls another way (``runner, io, debug, events``): through middleware's
#: ``wrap_tool_call`` hooks (graph/core/tool_wrapping.py).
CallsAround = Callable[
    ["_Runner", Driver, "Callable[[str], None] | None", "ToolEvents | None"],
    Awaitable[None],
]


class ContextWrites(Protocol):
    """How each call's ``context_variables`` change goes in, when a middleware says so (its
    ``tool_context`` hook, graph/core/middleware.py; the typed context's,
    graph/features/context_middleware.py). Without one, Swarm's rule: ``Result`` updates are
    applied after the reply's last call, key by key, and nothing is checked.

    With one, a call's ``Result(context_variables=...)`` goes in at once (:meth:`update`), and
    the context is checked after every call that could change it (:meth:`validate`): a call
    whose change does not fit is answered ``Error: ...`` and undone."""

    def update(self, context: dict[str, Any], update: Mapping[str, Any]) -> None:
        """Apply a call's ``Result`` update to ``context`` in place (not checked here)."""
        ...

    def validate(self, context: dict[str, Any]) -> dict[str, Any]:
        """``context`` as it must be (a new dict), or raise
        :class:`~swarmgraph.graph.core.errors.ContextValidationError` naming each problem."""
        ...


@dataclass
class _Call:
    id: str
    name: str
    args: Any  # a dict, or the raw string of arguments that were not valid JSON
    parse_error: str | None = None


class UnusableReturn(TypeError):
    """A tool returned what a swarm step cannot use as it was meant (a LangGraph ``Command``
    that goes somewhere): its text, after the tool's name, says what to return instead."""


class StateWrite(Result):
    """A tool's LangGraph ``Command``, as the step applies it: the answer (the update's
    ``ToolMessage``) and the context change, as any ``Result``'s; ``state``, the other state
    keys it writes (channels of the graph: a middleware's ``state_schema`` keys, or your
    ``state_schema``'s); ``goto``, the agent it hands off to, by name (langgraph-swarm's
    handoff tools); ``echoed``, messages of its update besides the answer, which the step takes
    only as the conversation's own (``[*state["messages"], answer]``: under LangGraph's
    ``add_messages`` they change nothing)."""

    state: dict = Field(default_factory=dict)
    goto: str | None = None
    echoed: list = Field(default_factory=list)


def to_result(raw: Any, call_id: str | None = None) -> Result:
    """Swarm's rule for tool return values, plus JSON for dicts and lists, and LangGraph's
    ``Command`` (:func:`_from_command`; ``call_id``: the call it answers).

    Example:
        >>> to_result({"ok": True}).value
        '{"ok": true}'
        >>> to_result(Agent(name="Sales")).value
        '{"assistant": "Sales"}'
        >>> from langgraph.types import Command
        >>> from langchain_core.messages import ToolMessage
        >>> written = to_result(Command(update={"todos": ["call Ming"], "messages": [
        ...     ToolMessage("Noted.", tool_call_id="c1")]}), "c1")
        >>> written.value, written.state, written.goto
        ('Noted.', {'todos': ['call Ming']}, None)
        >>> to_result(ToolMessage("3 rows", tool_call_id="c1")).value
        '3 rows'
        >>> to_result(Command(goto="Sales")).goto  # a handoff by name, resolved by the runner
        'Sales'
        >>> to_result(Command(resume="yes"))
        Traceback (most recent call last):
        ...
        swarmgraph.graph.core.tool_calls.UnusableReturn: returned a LangGraph Command that goes ...
    """
    if isinstance(raw, Result):
        if raw.agent is not None and not isinstance(raw.agent, Agent):
            raw = raw.model_copy(update={"agent": _member(raw.agent)})
        return raw
    if isinstance(raw, str):
        return Result(value=raw)
    if isinstance(raw, ToolMessage):  # a LangChain tool's own answer (ToolNode sends it as is)
        return Result(value=content_text(raw.content))
    if isinstance(raw, (dict, list, tuple)):  # plain data, never a handoff: its JSON
        try:
            return Result(value=json.dumps(raw, ensure_ascii=False, default=str))
        except (TypeError, ValueError):
            return Result(value=str(raw))
    if isinstance(raw, Command):  # what ToolNode applies (str() of it would reach the model)
        return _from_command(raw, call_id)
    if not isinstance(raw, Agent):
        if getattr(type(raw), MULTI_HANDOFF_ATTR, False):  # several agents (MultiHandoff): a
            return Result(agent=raw)  # feature's graph extension runs them and answers the call
        raw = _member(raw)  # another kind of member (graph/core/members.py) hands off too
    if isinstance(raw, Agent):  # a handoff: valid as it is (no validator to run)
        # every field given: model_construct would otherwise inspect the default factory's
        # signature on each call (pydantic 2.10+), ~10 µs per handoff
        handoff = json.dumps({"assistant": raw.name})
        return Result.model_construct(value=handoff, agent=raw, context_variables={})
    return Result(value=str(raw))


def _from_command(command: Command, call_id: str | None) -> StateWrite:
    """A tool's ``Command``, where a swarm step can apply it as ``ToolNode`` would: an
    ``update`` holding one ``ToolMessage`` answering the call (LangGraph asks for it too), and
    besides it ``context_variables`` and the graph's other keys; and a ``goto`` naming one agent
    (in this graph, or its parent: ``graph=Command.PARENT``), which hands off to it as a returned
    ``Agent`` would: what langgraph-swarm's ``create_handoff_tool`` returns, with its
    ``active_agent`` write. A ``Command`` that resumes, goes to a ``Send`` or to several nodes, or
    writes the switch's keys otherwise, is not applied."""
    goto = command.goto
    if (
        command.resume is not None
        or command.graph not in (None, Command.PARENT)
        or not (isinstance(goto, str) or goto in ((), None, []))
    ):
        raise UnusableReturn(
            "returned a LangGraph Command that goes where a swarm step cannot follow (resume, "
            "a Send, several destinations, or a graph other than Command.PARENT): return an "
            "Agent, or Command(goto='<agent name>'), to hand off"
        )
    target = goto if isinstance(goto, str) else None
    update = dict(command.update) if isinstance(command.update, Mapping) else None
    if update is None:
        if command.update is not None:
            raise UnusableReturn("returned a LangGraph Command whose update is not a dict")
        update = {}
    messages = update.pop("messages", [])
    messages = messages if isinstance(messages, list) else [messages]
    answers = [
        m
        for m in messages
        if isinstance(m, ToolMessage) and (call_id is None or m.tool_call_id == call_id)
    ]
    if len(answers) != 1 and (target is None or messages):
        raise UnusableReturn(
            "returned a LangGraph Command whose update does not hold exactly one ToolMessage "
            f"answering this call (tool_call_id={call_id!r})"
        )
    if update.get("active_agent", target) != target:  # langgraph-swarm writes the target too
        raise UnusableReturn(
            "returned a LangGraph Command that writes active_agent without going there: "
            "return an Agent, or Command(goto='<agent name>'), to hand off"
        )
    update.pop("active_agent", None)
    if "handoff_trail" in update:
        raise UnusableReturn(
            "returned a LangGraph Command that writes handoff_trail, which only the swarm's "
            "switch writes"
        )
    context = update.pop("context_variables", None) or {}
    if not isinstance(context, Mapping):
        raise UnusableReturn("returned a LangGraph Command whose context_variables is no dict")
    value = content_text(answers[0].content) if answers else json.dumps({"assistant": target})
    echoed = [m for m in messages if m is not (answers[0] if answers else None)]
    return StateWrite(
        value=value, context_variables=dict(context), state=update, goto=target, echoed=echoed
    )


def content_text(content: Any) -> str:
    """A ``ToolMessage``'s content as the text the model reads (content blocks as JSON)."""
    return content if isinstance(content, str) else json.dumps(content, default=str)


def unusable(name: str, error: Exception) -> str:
    """The answer for a call whose return value :func:`to_result` could not take."""
    if isinstance(error, UnusableReturn):
        return f"Error: {name} {error}"
    return f"Error: {name} returned an unprintable value: {error!r}"


def _unreadable(call: _Call, func: Callable[..., Any]) -> str:
    """The error text for arguments that are not a JSON object: the tool's spec explains
    exactly what is wrong with the raw text where it can."""
    raw = call.args if isinstance(call.args, str) else json.dumps(call.args, default=str)
    try:
        tool_spec(func).parse_arguments(raw)
    except ToolArgumentError as exc:
        return f"Error: {exc}"
    if raw.strip() == "null":  # valid JSON that the spec alone reads as no arguments
        return f"Error: {call.name}: arguments must be a JSON object, got null"
    return f"Error: {call.name}: arguments are not valid JSON: {raw!r}"


def _hands_off(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is seen to hand off: it declares a destination, or its code names an
    agent (graph/core/discovery.py, read only when a reply hands off twice under the first rule)."""
    from .discovery import function_targets

    return bool(function_targets(func))


def _member(value: Any) -> Any:
    """The member ``value`` stands for (a registered kind's), else ``value`` itself."""
    found = members_in(value)
    return found[0] if found else value


class _Runner:
    """Shared bookkeeping for the sync and async paths."""

    def __init__(
        self,
        reply: AIMessage,
        functions: Sequence[Callable[..., Any]],
        ctx: dict,
        writes: ContextWrites | None = None,
        records: CallRecords | None = None,
        inputs: Mapping[str, Any] | None = None,
        first_handoff_wins: bool = False,
        state: Callable[[], Mapping[str, Any]] | None = None,
        state_keys: frozenset[str] | None = None,
        agents: Callable[[str], Agent | None] | None = None,
    ):
        self.reply, self.state = reply, state  # what a call reads of the step (tool_state)
        self.agents = agents  # the swarm's agents by name, for a Command(goto=...)
        self.listed: list[Any] | None = None  # listed_tools, once a call asked
        self.state_keys = state_keys  # what a Command's update may write (None: anything)
        self.calls = [_Call(c["id"] or "", c["name"], c["args"]) for c in reply.tool_calls]
        for bad in reply.invalid_tool_calls:  # answered with what is wrong with them
            self.calls.append(
                _Call(bad.get("id") or "", bad.get("name") or "", bad.get("args"), bad.get("error"))
            )
        self.by_name = {tool_spec(f).name: f for f in functions}
        self.base_ctx = ctx
        self.inputs = inputs or {}
        self.ctx: dict[str, Any] | None = None
        #: ``Result(context_variables=...)`` of the calls so far, applied after the last one
        #: (Swarm's ``partial_response.context_variables``); with ``writes``, they go in at once.
        self.later: dict[str, Any] = {}
        self.first_wins = first_handoff_wins
        self.outcome = ToolOutcome()
        self.records = records
        self.running: dict[str, Any] = {}  # recorded calls between before and done
        self.before_call: dict[str, dict[str, Any]] = {}  # their context when they started
        # A middleware's rules for the context (ContextWrites): each call's changes are checked,
        # and undone when they do not fit; ``before`` is the context the current call started from.
        self.writes = writes
        self.before: dict[str, Any] | None = None
        self.touched = False
        self.typed: BaseModel | None = None  # the instance a ``context_variables: Model`` got
        #: A call's ``interrupt()`` pauses the graph (True: ``outcome.paused``, the calls after it
        #: wait) or, where nothing can resume it (``Swarm.run``), is that call's error.
        self.pauses = False

    def working_context(self) -> dict[str, Any]:
        # Copy on first use: the state's dict is never mutated in place.
        if self.ctx is None:
            self.ctx = dict(self.base_ctx)
        return self.ctx

    def prepare(self, call: _Call) -> tuple[Callable[..., Any], dict[str, Any]] | str:
        """The function and its keyword arguments, or the error text for the model."""
        func = self.by_name.get(call.name)
        if func is None:
            return f"Error: Tool {call.name} not found."
        if call.parse_error is not None or not isinstance(call.args, (dict, type(None))):
            return _unreadable(call, func)
        spec = tool_spec(func)
        try:
            kwargs = spec.parse_arguments(call.args)
        except ToolArgumentError as exc:
            return f"Error: {exc}"
        refused = self.inject(call, spec, kwargs)
        return (func, kwargs) if refused is None else refused

    def inject(self, call: _Call, spec: ToolSpec, kwargs: dict[str, Any]) -> str | None:
        """**``context_variables`` are injected here**: a tool that declares the parameter gets
        the live dict (an in-place write is seen by the calls after it, as in Swarm), or an
        instance of the model it annotates; the model's schema never shows the parameter, so it
        cannot forge it. The other injected parameters (graph/core/injected.py) are made for the
        call by the feature that registered them, or come from the run.
        None, or the error text for the model."""
        made: list[InjectedParam] | None = None
        for name in spec.injected:  # the framework's values, never the model's (schema.INJECTED)
            if name == CONTEXT_PARAM:
                continue  # below: the live dict (or a typed instance)
            param = param_for(name)
            if param is not None and param.make is not None:  # made for this call, below
                made = [param] if made is None else [*made, param]
            elif name in self.inputs:
                kwargs[name] = self.inputs[name]
            elif name not in spec.injected_optional:
                return (
                    f"Error: {call.name} needs {name!r} ({INJECTED[name]}), and this run has "
                    "none. Carry on without this tool."
                )
        if self.writes is not None:
            self.before = None if self.ctx is None else dict(self.ctx)
        self.touched = spec.wants_context
        if spec.wants_context:
            context = self.working_context()
            if spec.context_model is not None:  # ``context_variables: Model``: an instance
                try:
                    kwargs[CONTEXT_PARAM] = self.typed = self._instance(spec.context_model)
                except ValidationError as exc:
                    problems = "; ".join(e["msg"] for e in exc.errors(include_url=False))
                    name = spec.context_model.__name__
                    return f"Error: {call.name}: context_variables do not fit {name}: {problems}"
            else:
                inject_context(kwargs, context)
        for param in made or ():
            kwargs[param.name] = param.make(call.id, call.name, call.args, self.records)  # type: ignore[misc]
        if spec.filled:  # what LangChain's annotations ask for (graph/core/langchain_args.py)
            values = step_values(spec.filled, call.id, self.tool_state, self.listed_tools)
            if isinstance(values, str):
                return f"Error: {call.name} {values}. Carry on without this tool."
            kwargs.update(values)
        return None

    def tool_state(self) -> dict[str, Any]:
        """The swarm's state as a call reads it (``ToolRuntime.state``, ``InjectedState``): the
        step's, with the reply that asked for the call, and the live ``context_variables`` (an
        in-place write is the call's, as through a ``context_variables`` parameter)."""
        self.touched = True
        state: dict[str, Any] = dict(self.state() if self.state is not None else {})
        state["messages"] = self._conversation(state)
        state["context_variables"] = self.working_context()
        return state

    def _conversation(self, state: Mapping[str, Any] | None = None) -> list[Any]:
        """The step's messages as a call reads them: ending with the reply that asked for it
        (the hooks' conversation may hold it already)."""
        if state is None:
            state = self.state() if self.state is not None else {}
        messages = list(state.get("messages", ()))
        last = messages[-1] if messages else None
        if last is None or not (last is self.reply or (last.id and last.id == self.reply.id)):
            messages.append(self.reply)
        return messages

    def listed_tools(self) -> list[Any]:
        """The step's tools as LangChain's ``BaseTool`` s (``ToolRuntime.tools``), as a model
        request lists them (graph/core/request_tools.py)."""
        if self.listed is None:
            from .request_tools import request_tools  # LangChain's tools, loaded by who asks

            self.listed = request_tools(list(self.by_name.values()))
        return self.listed

    def unrun(self) -> None:
        """Start a call whose tool does not run (a hook answers it): nothing of the call before
        it (its typed instance, the context it started from) is taken for this one's."""
        self.typed, self.touched = None, False
        if self.writes is not None:
            self.before = None if self.ctx is None else dict(self.ctx)

    def _instance(self, model: type[BaseModel]) -> BaseModel:
        return model.model_validate(self.working_context())

    def settle_context(self, update: dict[str, Any] | None) -> str | None:
        """The call's changes into the working context: a typed instance's fields written
        back, then ``Result.context_variables`` (through ``writes``, when a middleware gave
        them). With ``writes`` the result is validated: the error text for the model when it
        does not fit, the context as it was before the call restored."""
        typed, self.typed = self.typed, None
        if typed is not None:  # the fields the tool assigned are in-place writes
            context = self.working_context()
            for key, value in typed:
                if context.get(key, _UNSET) is not value:
                    context[key] = value
        writes = self.writes
        if writes is None:
            if update:
                self.later.update(update)
            return None
        if not update and (not self.touched or self.ctx is None):
            return None
        try:
            if update:
                writes.update(self.working_context(), update)
            assert self.ctx is not None
            valid = writes.validate(self.ctx)
        except ContextValidationError as exc:
            self.ctx = self.before
            problems = "; ".join(exc.problems)
            return (
                f"wrote context_variables that do not fit {exc.schema}: {problems}. "
                "The context keeps its last valid values."
            )
        context = self.ctx
        changed = any(context.get(k, _UNSET) is not v for k, v in valid.items())
        if changed or len(valid) != len(context):  # coerced values, refilled defaults
            context.clear()
            context.update(valid)
        return None

    def start(self, call: _Call, func: Callable[..., Any]) -> bool:
        """Whether ``call`` runs now. A call its records keep (``records.ledgered``) is recorded
        as started first; one they already hold is answered from there (done) or refused (in
        doubt) instead."""
        records = self.records
        if records is None or not records.ledgered(func):
            return True
        record = records.call(call.id, call.name, call.args)
        prior = records.before(record, self.working_context())
        if prior is None:
            self.running[call.id] = record
            self.before_call[call.id] = dict(self.working_context())
            return True
        self.replay(call, prior)
        return False

    def replay(self, call: _Call, prior: RecordedOutcome) -> None:
        """Answer ``call`` from what its ledger holds, without running it."""
        if prior.status != "done":  # started elsewhere: never run again on a guess
            self._answer(
                call,
                f"Error: {call.name} was started by another run of this turn and may or may "
                "not have happened; it was not run again. A human decides it (in doubt).",
            )
            return
        if prior.error:
            self._answer(call, prior.value)
            return
        agent = None
        if prior.handoff is not None and self.records is not None:
            agent = self.records.resolve(prior.handoff)
        update = prior.context_variables or {}
        if self.writes is None and update:
            # The record holds the call's in-place writes, which the calls after it saw
            # when it ran, with its Result update: applied now, as the writes were.
            self.working_context().update(update)
            update = {}
        self.finish(call, Result(value=prior.value, context_variables=update, agent=agent))

    def ready(
        self, debug: Callable[[str], None] | None
    ) -> Iterator[tuple[_Call, Callable[..., Any], dict[str, Any]]]:
        """The calls that can run, in order; the others are answered with their error here.

        ``debug`` gets Swarm's debug lines (:meth:`announce`).
        """
        for call in self.calls:
            prepared = self.prepare(call)
            if debug is not None:
                self.announce(call, debug)
            if isinstance(prepared, str):
                self._answer(call, prepared)
                continue
            refused = self.refusal(call, prepared[0])
            if refused is not None:
                self._answer(call, refused)
                continue
            yield call, *prepared

    def announce(self, call: _Call, debug: Callable[[str], None]) -> None:
        """Swarm's debug line for ``call``: the arguments as the model sent them (never the
        injected ``context_variables``), or that the tool does not exist."""
        if call.name not in self.by_name:
            debug(f"Tool {call.name} not found in function map.")
        else:
            debug(f"Processing tool call: {call.name} with arguments {call.args}")

    def finish(
        self,
        call: _Call,
        raw: Any = None,
        error: BaseException | None = None,
        made: ToolMessage | None = None,
    ) -> None:
        """Book ``call``'s outcome: its answer, its context change, its handoff. ``made``: the
        answer already made for it (a wrapped call's, graph/core/tool_wrapping.py), booked
        itself when it says what this answer says."""
        if error is not None:
            if isinstance(error, GraphInterrupt):  # nothing here can pause and resume it
                content = (
                    f"Error: {call.name} asked for a human's decision (LangGraph's interrupt()), "
                    "and this run keeps no state to resume from (a compiled graph with a "
                    "checkpointer does)."
                )
            else:
                content = f"Error: {call.name} raised {type(error).__name__}: {error}"
            rejected = self.settle_context(None)  # what it wrote before raising stays if valid
            content = content if rejected is None else f"{content}; it also {rejected}"
            self._failed(call, content)
            return
        try:
            result = to_result(raw, call.id)
        except Exception as exc:  # a __str__ that raises is still only the model's problem
            self.settle_context(None)
            self._failed(call, unusable(call.name, exc))
            return
        refused = self.command_refusal(result) if isinstance(result, StateWrite) else None
        if refused is None and isinstance(result, StateWrite) and result.state:
            refused = self.write_state(result.state)
        if refused is not None:  # the call failed: its context change is not applied either
            self.settle_context(None)
            self._failed(call, f"Error: {call.name} {refused}")
            return
        rejected = None
        if result.context_variables or self.typed is not None or self.writes is not None:
            rejected = self.settle_context(result.context_variables)
        if rejected is not None:  # the call failed: no handoff either
            self._failed(call, f"Error: {call.name} {rejected}")
            return
        content = result.value
        handoff = getattr(result.agent, "name", None)
        if result.agent is not None:
            taken = self.outcome.handoff
            if taken is None or not self.first_wins:  # Swarm: the last agent returned wins
                if taken is not None and not isinstance(taken, Agent):  # several, not run
                    self._reanswer(self.outcome.handoff_call, taken, result.agent)
                self.outcome.handoffs.append((call.id, result.agent, content))
                self.outcome.handoff = result.agent
                self.outcome.handoff_call = call.id
            else:  # a tool not seen to hand off did, after the first: it ran, say so
                content = (
                    f"{call.name} ran, but its handoff to {result.agent.name} was not taken: "
                    f"this reply already transferred the conversation to {taken.name}."
                )
                handoff = None
        self._answer(call, content, made)
        if self.running:  # a recorded call: its outcome is recorded too
            update = dict(result.context_variables) if result.context_variables else None
            self._done(call, value=content, context_variables=update, handoff=handoff)

    def command_refusal(self, write: StateWrite) -> str | None:
        """Why a tool's ``Command`` is not applied (the model reads it), else None, its ``goto``
        resolved into the agent it hands off to (``write.agent``): messages besides its answer
        that are not the conversation's own (``ToolNode``'s ``add_messages`` would append
        them; a swarm tool's answer is its one message), or a ``goto`` naming no agent."""
        if write.echoed:
            conversation = self._conversation()
            objects = {id(m) for m in conversation}
            ids = {m.id for m in conversation if m.id is not None}
            new = [
                m
                for m in write.echoed
                if not (id(m) in objects or getattr(m, "id", None) in ids)  # (ids holds no None)
            ]
            if new:
                return (
                    f"returned a LangGraph Command whose update adds {len(new)} message(s) "
                    "besides the ToolMessage answering the call; a tool answers with that one "
                    "message, so nothing it returned was written"
                )
        if write.goto is None:
            return None
        agent = None if self.agents is None else self.agents(write.goto)
        if agent is None:
            return (
                f"handed off to {write.goto!r}, which is no agent of this swarm (name it in "
                "build_swarm_graph([...]), or hand off by returning the Agent); nothing it "
                "returned was written"
            )
        write.agent = agent
        return None

    def write_state(self, writes: dict[str, Any]) -> str | None:
        """Keep a call's state writes (a ``Command``'s) for the step's update; or why they are
        not written (the model reads it): a call in a parallel branch (its join carries the
        branch's messages and context only), a key that is no channel of the graph, or one an
        earlier call of the reply wrote (one write per key per step, as a channel takes it)."""
        if current_branch() is not None:  # a branch's join carries its messages and context only
            return (
                f"wrote state keys ({', '.join(sorted(writes))}) inside parallel branch "
                f"{current_branch()!r}, whose join does not carry them back; nothing it returned "
                "was written"
            )
        known = self.state_keys
        unknown = sorted(k for k in writes if known is not None and k not in known)
        if unknown:
            return (
                f"wrote state keys this swarm's graph has no channel for ({', '.join(unknown)}); "
                "nothing it returned was written"
            )
        twice = sorted(writes.keys() & self.outcome.state.keys())
        if twice:
            return (
                f"wrote {', '.join(twice)}, which an earlier call of this reply wrote; nothing "
                "it returned was written"
            )
        self.outcome.state.update(writes)
        return None

    def _failed(self, call: _Call, content: str) -> None:
        """Answer ``call`` with its error (and record that, for a recorded call)."""
        self._answer(call, content)
        if self.running:
            self._done(call, value=content, error=True)

    def _done(
        self,
        call: _Call,
        value: str,
        context_variables: dict[str, Any] | None = None,
        handoff: str | None = None,
        error: bool = False,
    ) -> None:
        """Record a recorded call's outcome (:meth:`CallRecords.done`) right after it ran
        (nothing for other calls).

        Its context change is what a replay applies again: for a plain dict context every key
        the call set, in place or through ``Result`` (Swarm's tools write the live dict); for
        ``writes`` its ``Result`` update, which they apply again."""
        record = self.running.pop(call.id, None)
        if record is None or self.records is None:
            return
        before = self.before_call.pop(call.id, None)
        if self.writes is None and before is not None and not error:
            now = self.working_context()
            changed = {k: v for k, v in now.items() if k not in before or before[k] is not v}
            changed.update(context_variables or {})  # its Result's: applied later
            context_variables = changed or None
        self.records.done(record, value, context_variables, handoff, error)

    def pause(self, call: _Call) -> None:
        """A recorded call stopped at ``interrupt()``: its records hear it
        (:meth:`CallRecords.paused`), so the graph's resume runs it again."""
        record = self.running.pop(call.id, None)
        self.before_call.pop(call.id, None)
        if record is not None and self.records is not None:
            self.records.paused(record)

    def _reanswer(self, call_id: str | None, several: MultiHandoff, later: HandoffValue) -> None:
        """Answer a call that handed off to several agents when a later handoff of the reply
        overtook it (the value says how: :meth:`MultiHandoff.overtaken`)."""
        for message in self.outcome.messages:
            if message.tool_call_id == call_id:
                message.content = several.overtaken(later.name)

    def settled(self) -> ToolOutcome:
        """The outcome once every call ran: Swarm applies the ``Result`` context updates after
        the reply's last call."""
        if self.later:
            self.working_context().update(self.later)
        self.outcome.context_variables = self.ctx  # the full working copy, None if untouched
        return self.outcome

    def refusal(self, call: _Call, func: Callable[..., Any]) -> str | None:
        """Why ``call`` is not run although it can be: a later handoff when the first wins."""
        taken = self.outcome.handoff
        if self.first_wins and taken is not None and _hands_off(func):
            # the first handoff stands: a later one is refused, not run and then ignored
            return (
                f"Error: {call.name} was not run: this reply already transferred the "
                f"conversation to {taken.name}."
            )
        return None

    def _answer(self, call: _Call, content: str, made: ToolMessage | None = None) -> None:
        """Answer ``call`` with ``content``: ``made`` where it is that answer (a successful
        one, without its artifact, the tool's raw return value: the conversation's messages
        hold none, so a checkpointer can save them), else a new ``ToolMessage``."""
        if made is not None and made.content == content and made.status == "success":
            if made.artifact is not None:  # a copy: the hooks that hold ``made`` keep theirs
                made = made.model_copy(update={"artifact": None})
        else:
            made = ToolMessage(content=content, tool_call_id=call.id, name=call.name)
        self.outcome.messages.append(made)


class ToolRunOptions(TypedDict, total=False):
    """The keywords of :func:`execute_tool_calls` and :func:`run_tool_calls`: ``debug``
    gets Swarm's debug lines; ``writes``: how each call's context change goes in and is
    checked (:class:`ContextWrites`, a middleware's; None: Swarm's rule); ``records``: where
    the calls that must run at most once are recorded (:class:`CallRecords`, a middleware's),
    if anywhere; ``inputs``: values for the injected parameters the run supplies
    (:data:`~swarmgraph.graph.core.schema.INJECTED`, those without a ``make``), e.g.
    ``{"long_term": ...}``;
    ``first_handoff_wins``: ``Swarm(parallel_handoffs="first")``'s rule (see the module);
    ``around``: runs the calls through the step's middleware's ``wrap_tool_call`` hooks instead
    (graph/core/tool_wrapping.py); ``events``: LangChain's tool callbacks for each call, when a
    handler listens (graph/core/tool_events.py); ``pauses``: a call's ``interrupt()`` stops the
    calls there (``ToolOutcome.paused``: the graph pauses) instead of being its error;
    ``state``: reads the step's state, for a tool taking ``ToolRuntime`` or ``InjectedState``
    (:meth:`_Runner.tool_state`: read only when such a call runs); ``state_keys``: the graph's
    channels, which a tool's ``Command(update=...)`` may write (:meth:`_Runner.write_state`);
    ``agents``: the swarm's agents by name, where a tool's ``Command(goto=...)`` hands off."""

    debug: Callable[[str], None] | None
    writes: ContextWrites | None
    records: CallRecords | None
    inputs: Mapping[str, Any] | None
    first_handoff_wins: bool
    around: CallsAround | None
    events: ToolEvents | None
    pauses: bool
    state: Callable[[], Mapping[str, Any]] | None
    state_keys: frozenset[str] | None
    agents: Callable[[str], Agent | None] | None


def execute_tool_calls(
    reply: AIMessage,
    functions: Sequence[Callable[..., Any]],
    context_variables: dict[str, Any],
    **options: Unpack[ToolRunOptions],
) -> ToolOutcome:
    """Run every tool call in ``reply`` in order (sync path; async tools are awaited here);
    ``options``: :class:`ToolRunOptions`."""
    return drive(run_tool_calls(reply, functions, context_variables, SYNC, **options))


async def run_tool_calls(
    reply: AIMessage,
    functions: Sequence[Callable[..., Any]],
    context_variables: dict[str, Any],
    io: Driver,
    *,
    debug: Callable[[str], None] | None = None,
    writes: ContextWrites | None = None,
    records: CallRecords | None = None,
    inputs: Mapping[str, Any] | None = None,
    first_handoff_wins: bool = False,
    around: CallsAround | None = None,
    events: ToolEvents | None = None,
    pauses: bool = False,
    state: Callable[[], Mapping[str, Any]] | None = None,
    state_keys: frozenset[str] | None = None,
    agents: Callable[[str], Agent | None] | None = None,
) -> ToolOutcome:
    """Run every tool call in ``reply`` in order, sync or async as ``io`` says
    (graph/core/drivers.py); a call with records runs between their ``before`` and ``done``
    (off the event loop)."""
    runner = _Runner(
        reply,
        functions,
        context_variables,
        writes,
        records,
        inputs,
        first_handoff_wins,
        state,
        state_keys,
        agents,
    )
    runner.pauses = pauses
    if around is not None:  # each call through the middleware's wrap_tool_call
        await around(runner, io, debug, events)
        return runner.settled()
    for call, func, kwargs in runner.ready(debug):
        ledgered = records is not None and records.ledgered(func)
        if ledgered and not await io.off_loop(runner.start, call, func):
            continue  # the ledger answered it
        error: Exception | None = None
        try:
            raw = await invoke_tool(io, call, func, kwargs, events)
        except GraphInterrupt as pause:
            if pauses:  # this call and the ones after it wait for the human's answer
                runner.outcome.paused = pause
                if ledgered:
                    await io.off_loop(runner.pause, call)
                break
            raw, error = None, pause
        except Exception as exc:
            raw, error = None, exc
        if ledgered:
            await io.off_loop(runner.finish, call, raw, error)
        else:
            runner.finish(call, raw, error)
    return runner.settled()


async def invoke_tool(
    io: Driver,
    call: _Call,
    func: Callable[..., Any],
    kwargs: dict[str, Any],
    events: ToolEvents | None,
) -> Any:
    """One tool function called through ``io``: between LangChain's tool events when a
    callback handler listens (graph/core/tool_events.py)."""
    if events is None or getattr(func, REPORTS_ITSELF, False):
        return await io.call_tool(func, kwargs)
    run = functools.partial(io.call_tool, func, kwargs)  # the call, for the events to wrap
    return await events.around(call.name, call.id, call.args, run, _shown)


def _shown(raw: Any) -> str:
    """The text the model reads of a tool's value (for the tool-end event)."""
    try:
        return to_result(raw).value
    except Exception as exc:  # the runner answers this call with the error
        return f"Error: {exc!r}"
