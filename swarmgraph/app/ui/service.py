"""What ``swarmgraph ui`` serves, without HTTP: one swarm over one store, conversation by
conversation, each turn run in its own thread and kept in a rejoinable run log.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel
    >>> service = UiService(Swarm(chat_model=ScriptedChatModel(["Hi!"])), Agent(name="Doc"),
    ...                     url="memory://doc-ui")
    >>> log = service.start({"threadId": "t", "runId": "r1",
    ...                      "messages": [{"id": "u1", "role": "user", "content": "hey"}]})
    >>> [event["type"] for _, event in log.follow()][-2:]
    ['MESSAGES_SNAPSHOT', 'RUN_FINISHED']
    >>> [m.content for m in service.session("t").messages]
    ['hey', 'Hi!']
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from ag_ui.core import RunAgentInput, UserMessage
from langchain_core.messages import HumanMessage

from .messages import agui_messages, message_text
from .runs import RunLog, Runs
from .turn import TurnRequest, interrupts_of, start_turn, state_of

__all__ = ["UiService"]

#: This process: a client that sees it change knows the server was restarted.
BOOT_ID = uuid.uuid4().hex


class UiService:
    """One swarm (started at ``agent``), its conversations in the store at ``url``.

    ``session_options``: what every conversation's ``Session`` is made with (``persist``,
    ``memory``, ``user_id``, ``long_term``...).
    """

    def __init__(
        self,
        swarm: Any,
        agent: Any,
        *,
        url: str,
        agents: Sequence[Any] = (),
        runs: Runs | None = None,
        thread: str = "main",
        **session_options: Any,
    ) -> None:
        self.swarm, self.agent, self.url = swarm, agent, url
        #: The conversation a page opens first.
        self.thread = thread
        self.agents = list(agents)
        self.session_options = session_options
        self.runs = runs or Runs()
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    def session(self, thread_id: str) -> Any:
        """The conversation's ``Session`` (one object per conversation in this process)."""
        with self._lock:
            found = self._sessions.get(thread_id)
            if found is None:  # (imported here only: a package's import costs each call)
                from ...memory import Session

                found = Session(thread_id, url=self.url, agents=self.agents, **self.session_options)
                self._sessions[thread_id] = found
            return found

    # -- a run ---------------------------------------------------------------------------
    def start(self, received: dict[str, Any] | RunAgentInput, *, tokens: bool = False) -> RunLog:
        """Start the run an AG-UI ``RunAgentInput`` asks for; returns its log. The new
        message is the input's last user message (the Session keeps the history: the other
        messages a client sends are not taken as history); ``resume`` entries answer the
        waiting calls (``resolved``: approve, unless its payload says ``{"approved": false}``
        or gives a reason; ``cancelled``: deny). The input's ``state`` is not read: a client
        cannot set ``context_variables`` (tools and the stored turn do).

        ``tokens``: the model streams its replies token by token (the server asks for it: the
        client that posted reads the stream); else each reply is told whole, which a run no
        client watches costs next to nothing."""
        given = (
            received
            if isinstance(received, RunAgentInput)
            else RunAgentInput.model_validate(received)
        )
        approvals = _decisions(given)
        message = None
        if not approvals:
            users = [m for m in given.messages if isinstance(m, UserMessage)]
            if not users:
                raise ValueError("the input has no user message and no resume entries")
            last = users[-1]
            message = HumanMessage(message_text(_content(last.content)), id=last.id)
        session = self.session(given.thread_id)
        log = self.runs.open(given.run_id, given.thread_id, self.url)
        request = TurnRequest(given.thread_id, given.run_id, message, approvals)
        start_turn(session, self.swarm, self.agent, request, log, tokens=tokens)
        return log

    def stop(self, run_id: str) -> bool:
        """Ask a run to stop at its next event (nothing of it is saved)."""
        log = self.runs.get(run_id)
        if log is None or log.done:
            return False
        log.stop_requested.set()
        return True

    # -- what the page reads ---------------------------------------------------------------
    def view(self, thread_id: str) -> dict[str, Any]:
        """A conversation as stored now, for a page that (re)loads: state, messages, what
        waits, and the run going on it (to rejoin)."""
        session = self.session(thread_id)
        running = self.runs.running(thread_id)
        return {
            "boot": BOOT_ID,
            "thread_id": thread_id,
            "state": state_of(session, self.agent.name),
            "messages": [
                m.model_dump(mode="json", by_alias=True, exclude_none=True)
                for m in agui_messages(session.messages)
            ],
            "interrupts": [
                i.model_dump(mode="json", by_alias=True, exclude_none=True)
                for i in interrupts_of(session)
            ],
            "running": None if running is None else running.run_id,
        }

    def conversations(self) -> list[dict[str, Any]]:
        """The stored conversations, the last changed first."""
        from ...memory import open_store

        rows = open_store(self.url).conversations()
        return [
            {"id": row.conversation_id, "agent": row.active_agent, "messages": row.messages}
            for row in rows
        ]

    def graph(self) -> dict[str, Any]:
        """The swarm's agents (nodes) and handoff edges, from its compiled graph."""
        from ...graph.chat_models.scripted import ScriptedChatModel
        from ...graph.options import reachable_agents
        from ...graph.swarm_graph import build_swarm_graph

        agents = reachable_agents([self.agent, *self.agents])
        builder = build_swarm_graph(agents, chat_model=ScriptedChatModel([]))
        named = dict(getattr(builder, "agents", None) or {})
        drawn = builder.compile().get_graph()
        nodes = [
            {"id": node, "agent": getattr(named[node], "name", node)}
            for node in drawn.nodes
            if node in named
        ]
        edges = [
            {"from": edge.source, "to": edge.target}
            for edge in drawn.edges
            if edge.source in named and edge.target in named and edge.source != edge.target
        ]
        return {"nodes": nodes, "edges": edges, "start": self.agent.name, "thread": self.thread}


def _content(content: Any) -> Any:
    if isinstance(content, list):  # content parts: their text
        return [p.model_dump() if hasattr(p, "model_dump") else p for p in content]
    return content


def _decisions(given: RunAgentInput) -> dict[str, bool | str]:
    """``resume`` entries as ``Session.run(approvals=)`` decisions."""
    decisions: dict[str, bool | str] = {}
    for entry in given.resume or []:
        if entry.status == "cancelled":
            decisions[entry.interrupt_id] = False
            continue
        payload = entry.payload if isinstance(entry.payload, dict) else {}
        reason = payload.get("reason")
        if payload.get("approved", True) is False:
            decisions[entry.interrupt_id] = str(reason) if reason else False
        else:
            decisions[entry.interrupt_id] = True
    return decisions
