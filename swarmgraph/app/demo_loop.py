"""``run_demo_loop``: Swarm's REPL helper (``swarm.repl.run_demo_loop``), for any agent.

Same name and arguments as Swarm's, so a Swarm script that ends with
``run_demo_loop(triage_agent, context_variables=..., stream=True)`` keeps working after the
one-line import change. Underneath it is the ``swarmgraph chat`` loop: a line editor with
history, /commands (``/help`` lists them), Ctrl-C that stops a turn without saving it, and a
:class:`~swarmgraph.memory.Session` that keeps the conversation (in this process unless you
pass one that stores elsewhere).

Example (stdin is not a terminal here, so lines come from ``input()``):
    >>> import io, sys
    >>> from swarmgraph import Agent, ScriptedChatModel, Swarm
    >>> sys.stdin, saved = io.StringIO("hello\\n/agent\\n"), sys.stdin
    >>> swarm = Swarm(chat_model=ScriptedChatModel(["Hi there!"]))
    >>> run_demo_loop(Agent(name="Helper"), swarm=swarm, out=sys.stdout)
    ... # doctest: +NORMALIZE_WHITESPACE
    Starting swarmgraph REPL with Helper (/help for commands, Ctrl-D quits)
    you › Helper › Hi there!
    you › active agent: Helper
    you ›
    >>> sys.stdin = saved
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["LoopSwarm", "run_demo_loop"]


class LoopSwarm:
    """What the loop runs each turn: ``swarm`` with this loop's fixed run arguments.

    ``context_variables`` fill the keys the conversation has not set yet (what tools wrote
    wins); ``debug`` and ``model_override`` go to every run; with ``stream=False`` a turn
    runs whole and is then printed message by message, as Swarm's loop does.

    Example:
        >>> from swarmgraph import Agent, ScriptedChatModel, Swarm
        >>> loop = LoopSwarm(Swarm(chat_model=ScriptedChatModel(["ok"])), {"user": "Ada"})
        >>> loop.run(agent=Agent(), messages=[{"role": "user", "content": "hi"}],
        ...          context_variables={}).context_variables
        {'user': 'Ada'}
    """

    def __init__(
        self,
        swarm: Any,
        context_variables: dict | None = None,
        *,
        stream: bool = True,
        debug: bool = False,
        model_override: str | None = None,
    ) -> None:
        self.swarm = swarm
        self.context = dict(context_variables or {})
        self.stream = stream
        self.debug = debug
        self.model_override = model_override

    def run(self, *, stream: bool = False, **kwargs: Any) -> Any:
        kwargs["context_variables"] = {**self.context, **(kwargs.get("context_variables") or {})}
        if self.debug:
            kwargs["debug"] = True
        if self.model_override:
            kwargs["model_override"] = self.model_override
        if stream and self.stream:
            return self.swarm.run(stream=True, **kwargs)
        kwargs.pop("tool_results", None)  # a stream's option; a replay has the results anyway
        response = self.swarm.run(**kwargs)
        return _replayed(response) if stream else response


def _replayed(response: Any) -> Iterator[dict]:
    """A finished ``Response`` as Swarm's stream events: one delta per assistant message."""
    for message in response.messages:
        if message.get("role") == "tool":
            yield {"tool_result": message}
            continue
        if message.get("role") != "assistant":
            continue
        yield {"delim": "start"}
        calls = [
            {"index": i, "id": c.get("id"), "type": "function", "function": dict(c["function"])}
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        yield {
            "role": "assistant",
            "sender": message.get("sender"),
            "content": message.get("content"),
            "tool_calls": calls or None,
        }
        yield {"delim": "end"}
    yield {"response": response}


def run_demo_loop(
    agent: Any,
    context_variables: dict | None = None,
    stream: bool = False,
    debug: bool = False,
    session: Any = None,
    *,
    swarm: Any = None,
    out: TextIO | None = None,
) -> None:
    """Chat with ``agent`` in the terminal until Ctrl-D or ``/quit`` (Swarm's arguments).

    ``session``: a :class:`~swarmgraph.memory.Session` (its store keeps the conversation
    between runs), a conversation id (kept in the default store, ``$SWARMGRAPH_DB`` or
    ``.swarmgraph/swarmgraph.db``), or None (in this process only, as in Swarm).
    ``swarm`` (ours): the :class:`~swarmgraph.Swarm` to run; default ``Swarm()``, which needs
    ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL``.
    """
    from ..graph.options import reachable_agents
    from ..graph.swarm import Swarm
    from ..memory import Session
    from .repl import chat_loop
    from .terminal import Style

    out = out if out is not None else sys.stdout
    if swarm is None:
        swarm = Swarm()
    agents = reachable_agents([agent])
    if session is None:
        session = Session(f"repl-{uuid.uuid4().hex[:8]}", url="memory://", agents=agents)
    elif isinstance(session, str):
        session = Session(session, agents=agents)
    style = Style.for_stream(out)
    print(f"Starting swarmgraph REPL with {getattr(agent, 'name', agent)} "
          "(/help for commands, Ctrl-D quits)", file=out)  # fmt: skip
    loop = LoopSwarm(swarm, context_variables, stream=stream, debug=debug)
    chat_loop(agent, session, loop, out=out, style=style)
