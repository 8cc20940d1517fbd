"""What an agent's step does at its middleware's moments: the part of the step only an agent
with middleware runs (graph/core/middleware.py calls the hooks; this module does what they
decide).

:class:`~swarmgraph.graph.core.node.AgentNode` reads top-down without these: a plain Swarm
step builds its instructions, asks the model, runs the tools and switches the agent
(graph/core/node.py). An agent with middleware also gets, from :class:`HookedStep`:

- ``before_step`` hooks, which may plan the step themselves (calls an earlier step left
  waiting: :meth:`HookedStep._started`);
- ``wrap_model_call``, the model call through each wrapper (:meth:`HookedStep._ask_through`);
  ``wrap_tool_call``, the tool calls through each (:meth:`HookedStep._around`);
- a ``before_model`` hook that rewrote the conversation (:meth:`HookedStep._reprompt`);
- ``after_model`` on the booked reply, which may stop the run, pause it for a human
  (``interrupt()``) and go on in the agent's next step, or answer some calls itself
  (:meth:`HookedStep._after_model`, :meth:`HookedStep._resume_after_model`);
- a hook that stops the run (:meth:`HookedStep._stopped`) or hands the conversation to
  another agent (``jump_to=HandTo(...)``: :meth:`HookedStep._handed`);
- ``after_agent`` when the run ends on the agent or it hands off (:meth:`HookedStep._leaving`);
- the ``next_agent`` hooks on who takes over after the tools (routes, the ``CALLER``
  hand-back: :meth:`HookedStep._chosen`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.types import Command

from .drivers import Driver
from .handoffs import HandTo, Takeover
from .messages import reanswer
from .runtime import GraphRuntime, ModelCall, StepStart, Turn
from .state import StateUpdate, SwarmState
from .tool_calls import CallsAround
from .types import Agent, AgentFunction
from .wrap_chains import model_response

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse

    from .middleware import StepHooks

__all__ = ["HookedStep", "paused_after_model"]

#: graph/core/middleware.py and graph/core/tool_wrapping.py's ``calls_around``, loaded by the
#: first step with middleware (a step without never loads them) and kept: a ``from .x
#: import`` in a function resolves the package and the module again on every call.
_lazy: dict[str, Any] = {}
_loaded_middleware: Any = None


def _request_tools() -> Any:
    """graph/core/request_tools.py (it imports LangChain's ``BaseTool``), loaded by the first
    step that lists its tools for a ``wrap_model_call`` hook."""
    found = _lazy.get("request_tools")
    if found is None:
        from . import request_tools

        found = _lazy["request_tools"] = request_tools
    return found


def _middleware() -> Any:
    global _loaded_middleware
    if _loaded_middleware is None:
        from . import middleware

        _loaded_middleware = middleware
    return _loaded_middleware


def paused_after_model(turn: Turn) -> bool:
    """Whether the step's ``after_model`` hooks paused the run on its reply (that reply's
    calls run once they have run again: ``HookedStep._resume_after_model``)."""
    if turn.stack is None:  # no middleware: nothing can have paused there
        return False
    middleware = _loaded_middleware or _middleware()
    return turn.state.get(middleware.AFTER_MODEL_KEY) is not None


class HookedStep:
    """The middleware's moments of an agent's step (see the module); the base of
    :class:`~swarmgraph.graph.core.node.AgentNode`, whose step calls them only when its
    agent has middleware."""

    runtime: GraphRuntime
    name: str

    def _hooks(
        self, turn: Turn, state: SwarmState, config: RunnableConfig, io: Driver
    ) -> StepHooks:
        """The step's middleware hooks (``turn.stack``), over ``state``."""
        stack = turn.stack
        assert stack is not None
        # the agent's state key only where a before_agent/after_agent hook needs it
        key = self.runtime.key_for(turn.agent, turn.control) if stack.keyed else None
        middleware = _loaded_middleware or _middleware()
        return middleware.StepHooks(stack, state, config, io, key, turn.control)

    # The plain step's parts these moments call, defined by AgentNode (graph/core/node.py),
    # stated again for the type checker: naming node.py's class here, even for types only,
    # would make node.py and this module an import circle.
    if TYPE_CHECKING:

        async def _ask(
            self,
            turn: Turn,
            call: ModelCall,
            prompt: list[BaseMessage],
            config: RunnableConfig,
            io: Driver,
        ) -> AIMessage: ...

        async def _tools(
            self, turn: Turn, io: Driver, hooks: StepHooks | None, config: RunnableConfig
        ) -> None: ...

        def _next(self, turn: Turn) -> StateUpdate | Command: ...

        def _prompt(
            self, agent: Agent, context: dict[str, Any], messages: Sequence[BaseMessage]
        ) -> list[BaseMessage]: ...

        def _admit(
            self, turn: Turn, reply: AIMessage, tools: list[AgentFunction], *, hold: bool = True
        ) -> None: ...

    async def _ask_through(
        self, turn: Turn, call: ModelCall, hooks: StepHooks, config: RunnableConfig, io: Driver
    ) -> AIMessage:
        """The model call through each ``wrap_model_call``: a request the middleware left as it
        was is the step's own call; a changed one (model, tools, settings) is bound anew."""
        model = self.runtime.chat_model(turn.agent, turn.control)
        listing = _request_tools()  # BaseTools, as create_agent's request lists them
        tools = listing.request_tools(call.tools)
        request = hooks.model_request(model, turn.prompt, tools, turn.agent.tool_choice)
        respond = model_response  # (graph/core/wrap_chains.py)

        async def ask(req: ModelRequest) -> ModelResponse:
            prompt: list[BaseMessage] = [*([req.system_message] if req.system_message else [])]
            prompt += req.messages
            same = req.model is model and req.tools is request.tools
            if same and req.tool_choice == request.tool_choice and not req.model_settings:
                return respond(await self._ask(turn, call, prompt, config, io))
            settings = req.model_settings
            schemas = [listing.schema_of(t) for t in req.tools]  # each as the model is told it
            bound = (
                req.model.bind_tools(schemas, tool_choice=req.tool_choice, **settings)
                if schemas
                else req.model.bind(**settings)
            )
            changed = call._replace(runnable=bound, kwargs={})
            return respond(await self._ask(turn, changed, prompt, config, io))

        return await hooks.call_model(request, ask)

    @staticmethod
    def _around(hooks: StepHooks) -> CallsAround | None:
        """The tool calls through the middleware's ``wrap_tool_call`` hooks, if any has one."""
        if not hooks.stack.tool_wrappers:
            return None
        around = _lazy.get("calls_around")
        if around is None:
            from .tool_wrapping import calls_around

            around = _lazy["calls_around"] = calls_around
        made: CallsAround = around(hooks)
        return made

    def _reprompt(self, turn: Turn, messages: Sequence[BaseMessage]) -> None:
        """The prompt again, from the conversation a ``before_model`` hook changed."""
        turn.prompt = self._prompt(turn.agent, turn.context, messages)

    @staticmethod
    def _booked(hooks: StepHooks, reply: AIMessage) -> None:
        """The reply in the conversation the hooks see, as the graph's state will hold it once
        the step is written: what ``after_model`` reads, and ``wrap_tool_call``'s
        ``request.state`` (as in ``create_agent``, where the tools run after the model's
        node wrote its reply)."""
        known = reply.id is not None and any(m.id == reply.id for m in hooks.messages)
        if reply.id is None or known:  # the channel's rules (an id given, or replaced)
            middleware = _loaded_middleware or _middleware()
            hooks.messages = middleware.with_messages(hooks.messages, [reply])
        else:  # a new reply with its id: appended, as add_messages would
            hooks.messages = [*hooks.messages, reply]

    async def _after_model(
        self, turn: Turn, call: ModelCall, reply: AIMessage, hooks: StepHooks, resumed: bool = False
    ) -> StateUpdate | Command | None:
        """``after_model`` on the booked reply: None, the step goes on; else where it goes (a
        hook stopped the run, or paused it: the reply is kept and the hooks run again in the
        agent's next step). A hook that rewrote the reply (same id) or answered some of its
        calls changes what runs."""
        written = len(hooks.written)
        update = turn.update
        if not resumed:
            if written:  # before_model's messages come before the reply
                update["messages"] = [*hooks.written, *update.get("messages", ())]
            if not hooks.stack.after_model and hooks.model_commands is None:
                # wrap_tool_call's state holds the reply, and after_agent's, when the run ends
                # on it or its tools hand off
                if hooks.stack.tool_wrappers or hooks.stack.leaves:
                    self._booked(hooks, reply)
                if hooks.values:
                    update.update(hooks.written_update())  # type: ignore[typeddict-item]
                return None
            self._booked(hooks, reply)
        middleware = _loaded_middleware or _middleware()
        if hooks.model_commands is not None and hooks.apply_model_commands():
            return await self._stopped(turn, hooks)  # (its messages: after the reply, below)
        try:
            if hooks.stack.after_model and await hooks.after_model():
                if hooks.handed is not None:  # handed over: the step switches (_handed)
                    return None
                return await self._stopped(turn, hooks)
        except GraphInterrupt:
            if resumed:  # the pause itself: LangGraph keeps the run here until it is resumed
                raise
            if turn.control.swarm_run:  # stateless: nothing can resume it, so the run stops
                hooks.stopped = hooks.paused_by
                # every call gets its answer, so the conversation stays one a model can read
                who = hooks.stopped.middleware if hooks.stopped else "a middleware"
                reason = (
                    f"Error: not run: {who} waits for a human's decision, and Swarm.run keeps no "
                    "state to resume from (a compiled graph with a checkpointer does)."
                )
                hooks.written += [
                    ToolMessage(content=reason, tool_call_id=c.get("id") or "", name=c["name"])
                    for c in reply.tool_calls
                ]
                return await self._stopped(turn, hooks)
            turn.ran, turn.answers = None, []
            update.update(hooks.written_update())  # type: ignore[typeddict-item]
            update[middleware.AFTER_MODEL_KEY] = reply.id  # type: ignore[literal-required]
            return Command(update=update, goto=self.name)
        after = hooks.written[written:]
        if after:
            update["messages"].extend(after)
            turn.control.new_messages += sum(1 for m in after if m.id != reply.id)
            now, answered = hooks.current(reply), hooks.answered()
            calls = [c for c in now.tool_calls if c.get("id") not in answered]
            turn.ran, turn.answers = None, []
            if turn.control.execute_tools and now.tool_calls:
                # every call a hook left unanswered runs; none left, the model is asked again
                self._admit(turn, now.model_copy(update={"tool_calls": calls}), call.tools)
        update.update(hooks.written_update())  # type: ignore[typeddict-item]
        if resumed:
            update[middleware.AFTER_MODEL_KEY] = None  # type: ignore[literal-required]
        return None

    async def _resume_after_model(
        self, turn: Turn, reply: AIMessage, hooks: StepHooks, io: Driver, config: RunnableConfig
    ) -> StateUpdate | Command:
        """The step after ``after_model`` hooks paused the run: they run again on the kept
        reply (a resumed ``interrupt()`` now returns the human's answer), then its calls run."""
        call = turn.call
        assert call is not None
        turn.call, turn.update = None, {"messages": []}
        if reply.tool_calls and turn.control.execute_tools:
            self._admit(turn, reply, call.tools)
        after = await self._after_model(turn, call, reply, hooks, resumed=True)
        if after is not None:
            return after
        if hooks.handed is not None:
            return await self._handed(turn, hooks, hooks.handed, io)
        if turn.ran is not None:
            await self._tools(turn, io, hooks, config)
        return await self._leaving(turn, hooks, self._next(turn))

    async def _stopped(self, turn: Turn, hooks: StepHooks) -> StateUpdate | Command:
        """A hook jumped to the end: the step writes what the hooks wrote and the run stops
        here, with the reason where ``Swarm.run``'s Response reads it."""
        control, agent = turn.control, turn.agent
        if control.exceeded is None and control.stop_error() is None:  # the first reason stands
            control.stopped = hooks.stopped
        control.debug_print(f"{hooks.stopped}")
        turn.call, turn.ran = None, None
        for message in hooks.written:  # the sender, as on any reply of this agent
            if isinstance(message, AIMessage) and message.name is None:
                message.name = agent.name
        known = {m.id for m in turn.update.get("messages", ())}
        new = [m for m in hooks.written if m.id not in known]
        turn.update.setdefault("messages", []).extend(new)
        control.new_messages += sum(1 for m in new if not isinstance(m, RemoveMessage))
        turn.update.update(hooks.written_update())  # type: ignore[typeddict-item]
        await hooks.leave(run_ends=True)
        self._wrote(turn, hooks, len(hooks.written))
        return turn.update

    async def _leaving(
        self, turn: Turn, hooks: StepHooks, result: StateUpdate | Command
    ) -> StateUpdate | Command:
        """``after_agent`` when the run ends on this agent or it hands off."""
        if not hooks.stack.leaves:  # no after_agent hook: nothing to call, nothing written
            return result
        ends = not isinstance(result, Command)
        switched = "active_agent" in turn.update and turn.update["active_agent"] != hooks.agent_key
        if ends or switched:
            if switched:  # the conversation it leaves holds its tools' answers, the handoff's
                booked = {id(m) for m in hooks.messages}
                answers = [
                    m
                    for m in turn.update.get("messages", ())
                    if isinstance(m, ToolMessage) and id(m) not in booked
                ]
                hooks.messages = [*hooks.messages, *answers]
            written = len(hooks.written)
            await hooks.leave(run_ends=ends)
            self._wrote(turn, hooks, written)
        return result

    @staticmethod
    def _wrote(turn: Turn, hooks: StepHooks, since: int) -> None:
        """Put what ``after_agent`` hooks wrote (from ``since`` on) into the step's update."""
        later = hooks.written[since:]
        if later:
            turn.update.setdefault("messages", []).extend(later)
            turn.control.new_messages += len(later)
        turn.update.update(hooks.written_update())  # type: ignore[typeddict-item]

    async def _handed(
        self, turn: Turn, hooks: StepHooks, to: HandTo, io: Driver
    ) -> StateUpdate | Command:
        """A ``before_model`` or ``after_model`` hook handed the conversation to ``to.agent``
        (``jump_to=HandTo(...)``): what the hooks wrote goes into the update, a tool call of
        the reply that has no answer is answered (nothing runs it now), and the agent switches
        through the target's ``before_handoff`` hooks; the step then goes to its node."""
        control, update = turn.control, turn.update
        known = {m.id for m in update.get("messages", ())}
        new = [m for m in hooks.written if m.id not in known]
        if turn.ran is not None:
            done = {*hooks.answered(), *(m.tool_call_id for m in turn.answers)}
            new += [
                ToolMessage(
                    content=f"Error: not run: the conversation went to {to.agent.name}.",
                    tool_call_id=c.get("id") or "",
                    name=c["name"],
                )
                for c in turn.ran.tool_calls
                if c.get("id") not in done
            ]
            new[:0] = turn.answers
        turn.call, turn.ran, turn.answers = None, None, []
        if new:
            update.setdefault("messages", []).extend(new)
            control.new_messages += sum(1 for m in new if not isinstance(m, RemoveMessage))
        update.update(hooks.written_update())  # type: ignore[typeddict-item]
        await self.runtime.hand_off(
            turn.agent,
            to.agent,
            turn.state,
            update,
            control,
            turn.context,
            io,
            way="jump",
            note=to.note,
        )
        return await self._leaving(turn, hooks, self._next(turn))

    def _admit_all(self, turn: Turn, reply: AIMessage, tools: list[AgentFunction]) -> None:
        """``_admit`` with no call held: calls that were decided (``StepStart.admit``)."""
        self._admit(turn, reply, tools, hold=False)

    async def _started(self, turn: Turn, config: RunnableConfig, io: Driver) -> bool:
        """The middleware's ``before_step`` hooks (graph/core/middleware.py), in order, up to
        the first that planned the step itself (calls an earlier step left waiting run or are
        answered now): True, the model is not asked."""
        stack = turn.stack
        assert stack is not None
        start = StepStart(turn, self.runtime, config, io, self.name, self._admit_all)
        agent = turn.agent
        for m in stack.step_starts:
            if await m.before_step(start):
                if turn.agent is not agent:  # the calls' owner's middleware, from here on
                    turn.stack = self.runtime.stack_for(turn.agent, turn.control)
                return True
        return False

    def _chosen(
        self,
        turn: Turn,
        choosers: Sequence[Any],
        target: Agent | None,
        context: dict[str, Any],
        call_id: str | None,
    ) -> tuple[Agent | None, str | None, str | None]:
        """Each middleware's ``next_agent`` hook, in order, on who takes over (graph/core/
        middleware.py's ``Takeover``: a route picks one, a hand-back resolves ``CALLER``); the
        handing call's answer is reworded where a hook says so."""
        control = turn.control
        added = turn.update.setdefault("messages", [])
        takeover = Takeover(
            turn.agent,
            target,
            context,
            turn.state["messages"],
            added,
            lambda name: self.runtime.agent_named(name, control),
            call_id=call_id,
        )
        for m in choosers:
            changed = m.next_agent(takeover)
            if changed is None:
                continue
            if changed.answer is not None:  # reworded now: a later hook may hand elsewhere
                reanswer(added, changed.call_id, changed.answer, only_if=changed.answer_if)
                changed = changed.replace(answer=None, answer_if=None)
            takeover = changed
        return takeover.target, takeover.label, takeover.call_id
