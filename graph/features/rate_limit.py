"""A per-agent rate limit, written as one middleware: the example docs/internals.md walks.

``RateLimitMiddleware(max_calls=2, window=60.0)`` lets each agent make at most ``max_calls``
tool calls (of ``tool``, or of any tool) in any ``window`` seconds, across runs and threads of
the process. A call past the limit is not run: it is answered with a message the model reads
("Error: rate limit ..."), so the model can say so or try something else; with
``exit_behavior="end"`` the run stops there instead, and ``Response.stopped`` says why.

It is an ``after_model`` hook, as LangChain's ``ToolCallLimitMiddleware`` is: once the reply is
booked, before its calls run, it answers the calls it refuses with ``ToolMessage``s (the step
runs only the calls nobody answered) or jumps to the end. Its state is its own: the times of
each agent's recent calls, kept in the middleware object (a wall-clock window outlives one run,
so it cannot live in a run's state).

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
    >>> def lookup(city: str) -> str:
    ...     return f"sunny in {city}"
    >>> limit = RateLimitMiddleware(max_calls=2, window=60.0, clock=lambda: 0.0)
    >>> agent = Agent(name="Weather", functions=[lookup], middleware=[limit])
    >>> calls = [scripted_tool_call("lookup", {"city": c}) for c in ("Oslo", "Rome", "Lima")]
    >>> model = ScriptedChatModel([*calls, "Two of three."])
    >>> response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "weather"}])
    >>> for message in response.messages[1::2]:
    ...     print(message["content"])
    sunny in Oslo
    sunny in Rome
    Error: rate limit: Weather may call lookup 2 times in 60 s; try again later.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

__all__ = ["RateLimitMiddleware"]


class RateLimitMiddleware(AgentMiddleware):
    """At most ``max_calls`` tool calls per agent in any ``window`` seconds (see the module).

    ``tool``: count and refuse only this tool's calls (default: every tool). ``clock``: the
    time source, ``time.monotonic`` by default (a test passes its own).
    """

    def __init__(
        self,
        max_calls: int,
        window: float,
        *,
        tool: str | None = None,
        exit_behavior: Literal["continue", "end"] = "continue",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        if max_calls < 1 or window <= 0:
            raise ValueError(f"max_calls must be >= 1 and window > 0, got {max_calls}, {window}")
        if exit_behavior not in ("continue", "end"):
            raise ValueError(f"exit_behavior must be 'continue' or 'end', got {exit_behavior!r}")
        self.max_calls, self.window, self.tool = max_calls, window, tool
        self.exit_behavior = exit_behavior
        self.clock = clock
        self._calls: defaultdict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()  # one object serves every run of the process

    @property
    def name(self) -> str:
        return f"RateLimitMiddleware[{self.tool}]" if self.tool else "RateLimitMiddleware"

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        reply = state["messages"][-1]
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return None
        agent = reply.name or "agent"
        counted = [c for c in reply.tool_calls if self.tool in (None, c["name"])]
        refused = self._admit(agent, len(counted), all_or_none=self.exit_behavior == "end")
        if not refused:
            return None
        refused = min(refused, len(counted))
        answers: list[ToolMessage | AIMessage] = [
            ToolMessage(
                content=f"Error: rate limit: {agent} may call {call['name']} {self.max_calls} "
                f"times in {self.window:g} s; try again later.",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
            for call in counted[-refused:]
        ]
        if self.exit_behavior == "continue":
            return {"messages": answers}
        refused_ids = {m.tool_call_id for m in answers if isinstance(m, ToolMessage)}
        answers += [  # the run stops: every call of the reply gets its answer
            ToolMessage(
                content="Error: not run: the run stopped at the rate limit.",
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
            for call in reply.tool_calls
            if call["id"] not in refused_ids
        ]
        order = {call["id"]: i for i, call in enumerate(reply.tool_calls)}
        answers.sort(key=lambda m: order[m.tool_call_id] if isinstance(m, ToolMessage) else 0)
        said = f"{agent} reached its rate limit ({self.max_calls} calls in {self.window:g} s)."
        return {"messages": [*answers, AIMessage(content=said)], "jump_to": "end"}

    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def _admit(self, agent: str, wanted: int, *, all_or_none: bool = False) -> int:
        """Book ``wanted`` calls of ``agent`` now; how many of them are over the limit
        (``all_or_none``: a batch that does not fit books nothing, as none of it will run)."""
        now = self.clock()
        with self._lock:
            recent = self._calls[agent]
            while recent and recent[0] <= now - self.window:
                recent.popleft()
            allowed = max(0, min(wanted, self.max_calls - len(recent)))
            if all_or_none and allowed < wanted:
                return wanted
            recent.extend([now] * allowed)
        return wanted - allowed
