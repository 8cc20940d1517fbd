"""A run's prompt context, as a middleware: text a ``prompt_context(agent, messages)`` function
gives, appended to the agent's system prompt at each of its model calls.

``Swarm.run(prompt_context=...)`` and ``build_swarm_graph(prompt_context=...)`` install it; a
``Session`` with long-term memory gives each run its recall this way (what it remembers about
the user that is relevant now: memory/long_term_turn.py). It is LangChain's
``@dynamic_prompt`` pattern, a ``wrap_model_call`` that changes the request's system message,
with what a swarm adds: the function is told which agent asks (a handoff changes the agent,
and so what it may be told) and what that agent reads of the conversation, and its helpers
read the run's context (:func:`current_call_context`: a recall screens facts with the agent's
input guardrails, which read ``context_variables``).

The middleware is one per agent: a run's is the outermost of the agent's stack, so every
other hook sees the system prompt with the text in it; a graph's own is the first of what
each agent's options install (inside the graph's ``middleware=`` and tracing). Either way a
history view is inside it and narrows only what the model reads. Which function it asks is
read at each call: the run's (``RunHooks``, where tracing puts its traced copy: a
``search_memory`` span per recall), else the graph's own.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> def today(agent, messages):
    ...     return f"{agent.name}: today is Monday."
    >>> model = ScriptedChatModel(["Happy Monday."])
    >>> _ = Swarm(chat_model=model).run(Agent(name="Clerk", instructions="Be brief."),
    ...                                 [{"role": "user", "content": "hi"}], prompt_context=today)
    >>> model.calls[0][0].content
    'Be brief.\\n\\nClerk: today is Monday.'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

from ..core.hook_context import step_control
from ..core.run_control import RunControl
from ..core.types import AGENTS_KEPT, Agent

if TYPE_CHECKING:
    from ..core.run_control import PromptContext

__all__ = [
    "PromptContextMiddleware",
    "call_context",
    "current_call_context",
    "prompt_context_of",
]

#: The context of the model call a prompt context is asked for (set around the ask): what the
#: function's helpers read as the run's context when not told.
_CALL_CONTEXT: ContextVar[Mapping[str, Any] | None] = ContextVar(
    "swarmgraph_call_context", default=None
)


@contextmanager
def call_context(context: Mapping[str, Any]) -> Iterator[None]:
    """While a prompt context is asked: ``context`` is the context the model call is built
    from (read back with :func:`current_call_context`).

    Example:
        >>> with call_context({"user": "Ming"}):
        ...     current_call_context()
        {'user': 'Ming'}
        >>> current_call_context() is None
        True
    """
    token = _CALL_CONTEXT.set(context)
    try:
        yield
    finally:
        _CALL_CONTEXT.reset(token)


def current_call_context() -> Mapping[str, Any] | None:
    """The context of the model call being prepared (inside a prompt context), else ``None``."""
    return _CALL_CONTEXT.get()


class PromptContextMiddleware(AgentMiddleware):
    """``agent``'s model calls with the prompt context appended to its system prompt (see the
    module). ``graph_hook``: the graph's own function (``build_swarm_graph(prompt_context=)``),
    asked when the run brings none.

    Example:
        >>> from langchain.agents.middleware import ModelRequest
        >>> from langchain_core.messages import HumanMessage
        >>> from swarmgraph.graph import Agent
        >>> told = PromptContextMiddleware(Agent(name="Vet"), lambda a, m: f"{len(m)} message")
        >>> request = ModelRequest(model=None, messages=[HumanMessage("hi")],
        ...                        system_message=SystemMessage("Be kind."))
        >>> told.wrap_model_call(request, lambda r: r.system_message.content)
        'Be kind.\\n\\n1 message'
    """

    def __init__(self, agent: Agent, graph_hook: PromptContext | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.graph_hook = graph_hook

    @property
    def name(self) -> str:
        return f"PromptContextMiddleware[{self.agent.name}]"

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self._told(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self._told(request))

    def _told(self, request: ModelRequest) -> ModelRequest:
        """``request`` with the prompt context's text after its system prompt (unchanged when
        there is none)."""
        control = step_control()
        hooks = control.hooks if isinstance(control, RunControl) else None
        ask = (hooks.prompt_context if hooks is not None else None) or self.graph_hook
        if ask is None:
            return request
        state: Mapping[str, Any] = request.state or {}
        with call_context(state.get("context_variables") or {}):
            text = ask(self.agent, request.messages)
        if not text:
            return request
        system = request.system_message
        said = system.text if system is not None else ""
        return request.override(system_message=SystemMessage(f"{said}\n\n{text}" if said else text))


def prompt_context_of(
    graph_hook: PromptContext | None = None,
) -> Callable[[Agent], Sequence[AgentMiddleware]]:
    """``(agent) -> (its PromptContextMiddleware,)``: what a run's or a graph's options give
    each agent, the same middleware for the same agent object each time (a stack is built
    once per agent, keyed by its middleware).

    Example:
        >>> from swarmgraph.graph import Agent
        >>> of, vet = prompt_context_of(), Agent(name="Vet")
        >>> of(vet) == of(vet) and of(vet)[0].agent is vet
        True
    """
    made: dict[int, tuple[Agent, tuple[PromptContextMiddleware]]] = {}

    def of(agent: Agent) -> Sequence[AgentMiddleware]:
        kept = made.get(id(agent))
        if kept is not None and kept[0] is agent:  # (the agent kept: its id is not reused)
            return kept[1]
        if len(made) > AGENTS_KEPT:
            made.clear()
        mine = (PromptContextMiddleware(agent, graph_hook),)
        made[id(agent)] = (agent, mine)
        return mine

    return of
