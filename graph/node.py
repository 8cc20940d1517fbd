"""One agent node: a Swarm turn as one graph step.

Read :class:`AgentNode` top-down; the three places the seed's sequence diagram names are:

- **instructions are built** in :meth:`AgentNode._prompt` (``agent.instructions``, called with
  the current ``context_variables`` when it is a function), which also picks the model;
- **tools run** in :func:`swarmgraph.graph.tool_calls.execute_tool_calls` (or its async twin),
  called from :meth:`AgentNode.step` / :meth:`AgentNode.astep` once the model replied;
- **the active agent switches** in :meth:`AgentNode._apply`, where a tool returned an Agent and
  ``update["active_agent"]`` is set; the conditional edges made by
  :func:`swarmgraph.graph.builder.build_swarm_graph` then route to that agent's node.
"""

from __future__ import annotations

import re
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langgraph.types import Command, Overwrite

from .errors import HandoffLoopError
from .messages import to_openai
from .models import ModelResolver
from .node_names import DYNAMIC_NODE
from .run_control import RunControl, current_control
from .schema import tool_spec
from .tool_calls import ToolOutcome, aexecute_tool_calls, execute_tool_calls
from .types import Agent

__all__ = ["DYNAMIC_NODE", "AgentNode", "GraphRuntime", "ModelCall"]

# OpenAI rejects a message "name" with whitespace or <|\\/>; ChatOpenAI sends
# AIMessage.name (our sender) as that field, so unsafe senders are rewritten for it.
_UNSAFE_NAME = re.compile(r"[\s<|\\/>]")
_SENDS_NAMES = {"ChatOpenAI", "AzureChatOpenAI"}

# Chat models known to accept Swarm's parallel_tool_calls argument in bind_tools;
# others would forward an unknown keyword to their API, so they only get it when False.
_PARALLEL_AWARE = {"ChatOpenAI", "AzureChatOpenAI", "OpenAIClientChatModel", "ScriptedChatModel"}


#: Unforeseen agents remembered per graph when it runs outside ``Swarm`` (no run roster):
#: one slot per name, the oldest names forgotten first, so the map cannot grow forever.
MAX_DYNAMIC_AGENTS = 256


class GraphRuntime:
    """What the nodes of one compiled swarm graph share: agents by node name, models, caches.

    ``agents`` are the agents the graph was built from, by node name (see
    :mod:`swarmgraph.graph.node_names`: an agent's own name unless LangGraph cannot take it
    or another agent holds it). ``Swarm`` compiles one graph per
    topology and hands each run its own agents (``RunControl.agents``, same names), so the
    run's objects, not the first ones, are what the nodes read.
    """

    def __init__(
        self, agents: dict[str, Agent], resolver: ModelResolver, max_consecutive_handoffs: int
    ) -> None:
        self.agents = agents
        self.dynamic: OrderedDict[str, Agent] = OrderedDict()
        self.resolver = resolver
        self.max_consecutive_handoffs = max_consecutive_handoffs
        self._bound: dict[tuple, tuple[tuple, Runnable, dict[str, Any]]] = {}
        self.default_node, self.default = next(iter(agents.items()))

    # -- names <-> agents ------------------------------------------------------
    def _maps(self, control: RunControl | None) -> tuple[dict[str, Agent], dict[str, Agent]]:
        """(agents by node name, unforeseen agents by key) for this run."""
        if control is not None and control.agents is not None:
            return control.agents, control.dynamic
        return self.agents, self.dynamic

    def key_for(self, agent: Agent, control: RunControl | None = None) -> str:
        """The state key for ``agent``: its node name, or a unique key for unforeseen agents."""
        agents, dynamic = self._maps(control)
        if agents.get(agent.name) is agent:  # the usual case: the node has the agent's name
            return agent.name
        for node, known in agents.items():  # a mapped node name ("Sales|EU", a second "Agent")
            if known is agent:
                return node
        # One slot per name, newest object wins: a tool that builds a fresh Agent on every
        # call must not grow this map (and the process) forever.
        key = agent.name
        while key in agents:
            key += "#dynamic"
        dynamic[key] = agent
        if dynamic is self.dynamic:
            self.dynamic.move_to_end(key)
            while len(self.dynamic) > MAX_DYNAMIC_AGENTS:
                self.dynamic.popitem(last=False)
        return key

    def agent_for(self, key: str | None, control: RunControl | None = None) -> Agent:
        agents, dynamic = self._maps(control)
        default = agents.get(self.default_node) or self.default
        if key is None:
            return default
        return agents.get(key) or dynamic.get(key) or default

    def node_for(self, key: str, control: RunControl | None = None) -> str:
        agents, dynamic = self._maps(control)
        if key in agents:
            return key
        if key in dynamic:
            return DYNAMIC_NODE
        # A checkpoint written by another process may name an unforeseen agent this
        # process never saw; the default agent picks the conversation up.
        return self.default_node

    # -- routing -------------------------------------------------------------------
    def next_node(
        self, name: str, update: dict, state: dict, control: RunControl
    ) -> dict | Command:
        """Where node ``name`` goes after ``update``: a plain update ends the run (the model
        answered, or ``max_turns`` is used up); otherwise ``Command(goto=...)`` to the same
        node (tools ran, nobody handed off) or to the active agent's node (a handoff)."""
        added = update.get("messages")
        last = added[-1] if added else (state["messages"][-1] if state["messages"] else None)
        if last is None or isinstance(last, AIMessage) or not control.turns_left():
            return update
        key = update.get("active_agent", state.get("active_agent"))
        return Command(update=update, goto=name if key is None else self.node_for(key, control))

    # -- models ------------------------------------------------------------------
    def model_for(self, agent: Agent, control: RunControl) -> ModelCall:
        """How to call ``agent``'s model: the runnable, the keyword arguments that carry
        its bound tools, the tool functions. Cached per model and tool set."""
        model = self.resolver.get(control.model_override or agent.model)
        tools = agent.tools
        safe_names = type(model).__name__ in _SENDS_NAMES
        if not tools:
            return ModelCall(model, _NO_KWARGS, tools, safe_names)
        # Keyed by the tools' specs, not the functions: agents built per request bring fresh
        # functions with the same schemas, and binding them again every turn costs.
        specs = tuple(tool_spec(f) for f in tools)
        key = (id(model), tuple(map(id, specs)), agent.tool_choice, agent.parallel_tool_calls)
        cached = self._bound.get(key)
        if cached is not None and cached[0][0] is model and cached[0][1] == specs:
            return ModelCall(cached[1], cached[2], tools, safe_names)
        kwargs: dict[str, Any] = {}
        if agent.tool_choice is not None:
            kwargs["tool_choice"] = agent.tool_choice
        if type(model).__name__ in _PARALLEL_AWARE or not agent.parallel_tool_calls:
            kwargs["parallel_tool_calls"] = agent.parallel_tool_calls
        bound = model.bind_tools([spec.schema for spec in specs], **kwargs)
        runnable, call_kwargs = _unwrap_binding(bound)
        if len(self._bound) > 512:  # agents created per request must not grow this forever
            self._bound.clear()
        self._bound[key] = ((model, specs), runnable, call_kwargs)
        return ModelCall(runnable, call_kwargs, tools, safe_names)


class ModelCall(NamedTuple):
    """One model call's recipe: ``runnable.invoke(prompt, config, **kwargs)``."""

    runnable: Runnable
    kwargs: dict[str, Any]
    tools: list[Any]
    safe_names: bool  # the model sends senders as OpenAI "name"s: rewrite unsafe ones


_NO_KWARGS: dict[str, Any] = {}


def _unwrap_binding(bound: Runnable) -> tuple[Runnable, dict[str, Any]]:
    """``(runnable, kwargs)`` such that ``runnable.invoke(x, config, **kwargs)`` is
    ``bound.invoke(x, config)``.

    ``bind_tools`` returns a ``RunnableBinding`` (or LangChain's typing-only subclass of
    it) with no config of its own; its ``invoke`` only re-merges that empty config into
    ours and forwards the bound kwargs, about 6% of a zero-latency handoff. Calling the
    chat model with the kwargs is the same call. Anything else (a config, config
    factories, a subclass that overrides invoke) is called as given.
    """
    kind = type(bound)
    if (
        isinstance(bound, RunnableBinding)
        and kind.invoke is RunnableBinding.invoke
        and kind.ainvoke is RunnableBinding.ainvoke
        and not bound.config
        and not bound.config_factories
        and isinstance(bound.bound, BaseChatModel)
    ):
        return bound.bound, dict(bound.kwargs)
    return bound, _NO_KWARGS


class AgentNode:
    """The node for one agent, or (``agent=None``) for whichever unforeseen agent is active.

    A step returns ``Command(goto=...)`` to the next node (itself after tools ran, the
    target after a handoff) or a plain update when the turn is over; the builder declares
    every possible destination, so the drawn graph still shows each handoff edge.
    """

    def __init__(self, runtime: GraphRuntime, agent: Agent | None, name: str) -> None:
        self.runtime = runtime
        self.agent = agent
        self.name = name

    def _prompt(
        self, state: dict, config: RunnableConfig
    ) -> tuple[Agent, RunControl, ModelCall, list[BaseMessage], dict]:
        control = current_control(config)
        if self.agent is None:
            agent = self.runtime.agent_for(state.get("active_agent"), control)
        elif control.agents is not None:  # the run's own Agent objects (Swarm)
            agent = control.agents[self.name]
        else:
            agent = self.agent
        context = state.get("context_variables") or {}
        # Instructions are rebuilt on every model call from the current context;
        # missing keys read as "" exactly as in Swarm.
        instructions = agent.instructions
        if callable(instructions):
            instructions = instructions(defaultdict(str, context))
        prompt = [SystemMessage(content=instructions), *state["messages"]]
        if control.debug:  # Swarm prints the plain message dicts it sends
            control.debug_print("Getting chat completion for...:", to_openai(prompt))
        call = self.runtime.model_for(agent, control)
        if call.safe_names:
            prompt = [_api_safe_name(m) for m in prompt]
        return agent, control, call, prompt, context

    def step(self, state: dict, config: RunnableConfig) -> dict | Command:
        agent, control, call, prompt, context = self._prompt(state, config)
        reply = call.runnable.invoke(prompt, config, **call.kwargs)
        update, reply = self._reply(agent, control, prompt, reply, state)
        if not self._runs_tools(reply, control):
            return update  # no destination: the run ends here
        outcome = execute_tool_calls(reply, call.tools, context, debug=_debug_lines(control))
        return self._next(self._apply(agent, control, outcome, update, state), state, control)

    async def astep(self, state: dict, config: RunnableConfig) -> dict | Command:
        agent, control, call, prompt, context = self._prompt(state, config)
        reply = await call.runnable.ainvoke(prompt, config, **call.kwargs)
        update, reply = self._reply(agent, control, prompt, reply, state)
        if not self._runs_tools(reply, control):
            return update
        outcome = await aexecute_tool_calls(reply, call.tools, context, debug=_debug_lines(control))
        return self._next(self._apply(agent, control, outcome, update, state), state, control)

    def _next(self, update: dict, state: dict, control: RunControl) -> dict | Command:
        """Tools ran: the same agent speaks again, or the handoff target does."""
        return self.runtime.next_node(self.name, update, state, control)

    # -- after the model answered ---------------------------------------------------
    @staticmethod
    def _runs_tools(reply: AIMessage, control: RunControl) -> bool:
        if (reply.tool_calls or reply.invalid_tool_calls) and control.execute_tools:
            return True
        control.debug_print("Ending turn.")
        return False

    @staticmethod
    def _reply(
        agent: Agent, control: RunControl, prompt: list[BaseMessage], reply: Any, state: dict
    ) -> tuple[dict, AIMessage]:
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        if reply.name != agent.name:  # the sender, as Swarm stamps it
            # Assigned, not copied: the reply is this call's own object (add_messages
            # stamps its id the same way), and a copy cost ~3% of a handoff.
            reply.name = agent.name
        usage = control.usage
        usage["model_calls"] += 1
        meta = reply.usage_metadata
        if meta:
            usage["input_tokens"] += meta.get("input_tokens", 0)
            usage["output_tokens"] += meta.get("output_tokens", 0)
        else:  # the model reported nothing: estimate what was sent
            usage["input_tokens"] += count_tokens_approximately(prompt)
            usage["output_tokens"] += count_tokens_approximately([reply])
        control.new_messages += 1
        if control.debug:
            control.debug_print("Received completion:", to_openai([reply])[0])
        update: dict[str, Any] = {"messages": [reply]}
        if not (reply.tool_calls or reply.invalid_tool_calls) and state.get("handoff_trail"):
            update["handoff_trail"] = []  # someone answered: the handoff chain is over
        return update, reply

    def _apply(
        self, agent: Agent, control: RunControl, outcome: ToolOutcome, update: dict, state: dict
    ) -> dict:
        update["messages"].extend(outcome.messages)
        control.new_messages += len(outcome.messages)
        new_context = outcome.context_variables
        if new_context is not None:
            old = state.get("context_variables") or {}
            if any(key not in new_context for key in old):
                # A tool deleted a key in place (Swarm hands tools the live dict). The
                # channel's reducer merges key by key and cannot forget, so replace it.
                update["context_variables"] = Overwrite(new_context)
            else:
                update["context_variables"] = new_context
        target = outcome.handoff
        if target is not None:
            trail = [*state.get("handoff_trail", ()), agent.name]
            if len(trail) >= self.runtime.max_consecutive_handoffs:
                raise HandoffLoopError([*trail, target.name], self.runtime.max_consecutive_handoffs)
            update["handoff_trail"] = trail
            update["active_agent"] = self.runtime.key_for(target, control)  # the switch
        return update


def _debug_lines(control: RunControl) -> Callable[[str], None] | None:
    return control.debug_print if control.debug else None


def _api_safe_name(message: BaseMessage) -> BaseMessage:
    """A copy whose ``name`` OpenAI accepts (``"Spanish Agent"`` -> ``"Spanish_Agent"``)."""
    name = message.name
    if not name or not _UNSAFE_NAME.search(name):
        return message
    return message.model_copy(update={"name": _UNSAFE_NAME.sub("_", name)})
