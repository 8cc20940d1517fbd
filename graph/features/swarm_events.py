"""Swarm's stream events from LangGraph's ``messages`` + ``values`` stream.

``Swarm.run(..., stream=True)`` yields what openai/swarm yields from OpenAI: ``{"delim":
"start"}``, the deltas of one reply (the first carries the role and ``sender``, with content
``""`` for a text reply; the last is the empty delta of the chunk with ``finish_reason``),
``{"delim": "end"}``, and at last ``{"response": Response}``.

Parallel branches (graph/features/branches.py) speak at the same time, so their replies' deltas
interleave: one ``{"delim": "start"}`` / ``{"delim": "end"}`` pair wraps all the branches of a
fan-out, and every delta of a branch carries ``sender`` and ``branch`` (its label), so a reader
can tell them apart (``role`` marks the first delta of each reply).

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    >>> events = Swarm(chat_model=ScriptedChatModel(["Hi!"])).run(
    ...     Agent(), [{"role": "user", "content": "hey"}], stream=True)
    >>> [(e.get("delim") or e.get("content")) if "response" not in e else "response"
    ...  for e in events]
    ['start', '', 'Hi!', None, 'end', 'response']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage

from ..core.messages import OPENED_WITH_NULL, to_openai
from ..core.node_names import HELPER_NODES

if TYPE_CHECKING:
    from ..core.run_control import RunControl
    from ..core.runtime import GraphRuntime
    from ..core.state import SwarmState


class StreamedRun(Protocol):
    """What the events read of the run they stream (``prepared_run.PreparedRun``): its
    runtime and control, and ``final``, the last state (set here as the stream goes)."""

    runtime: GraphRuntime
    control: RunControl
    final: SwarmState


__all__ = ["SwarmEvents"]

BRANCH_NODE = HELPER_NODES[0]


class SwarmEvents:
    """Turns one run's LangGraph stream items into Swarm's event shapes; the last top-level
    ``values`` item becomes the run's ``final`` state."""

    def __init__(self, run: StreamedRun, *, tool_results: bool = False) -> None:
        self.run = run
        #: Also yield ``{"tool_result": message}`` for each tool answer (ours, not Swarm's).
        self.tool_results = tool_results
        self.open_id: str | None = None
        self.streamed: set[str] = set()  # ids of replies already streamed
        self.in_branches = False  # between a fan-out's first branch delta and its join

    def feed(self, item: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
        """One item of the stream: ``(mode, payload)``, or ``(ns, mode, payload)`` when it
        reads inside subgraphs; ``ns`` is the namespace of a LangGraph member's own graph
        (``("research:<task id>",)``) when the item comes from inside it."""
        ns, mode, payload = item if len(item) == 3 else ((), *item)
        if mode == "values":
            if not ns:  # a member's own state is not the swarm's
                yield from self.close()
                self.run.final = payload
            return
        chunk, meta = payload
        if not isinstance(chunk, AIMessage):
            # Swarm streams no tool results (they arrive in the final response); asked for,
            # each comes after the reply that called it, as the message dict it is stored as.
            if self.tool_results and not ns and isinstance(chunk, ToolMessage):
                yield from self.close()
                yield {"tool_result": to_openai([chunk])[0]}
            return
        branch = meta.get("swarmgraph_branch") if ns else None
        if branch is not None:
            yield from self._branch_delta(ns, chunk, meta, branch)
            return
        if not isinstance(chunk, AIMessageChunk):  # a LangGraph member's reply, whole
            if chunk.id in self.streamed:
                return  # its model streamed it already, token by token, from inside
            chunk = _as_chunk(chunk)
        first = chunk.id != self.open_id
        content = chunk.content if isinstance(chunk.content, str) else None
        if not first and not content and not chunk.tool_call_chunks:
            return  # the closing chunk: close() yields Swarm's empty delta for it
        if first:
            yield from self.close()
            self.open_id = chunk.id
            if chunk.id is not None:
                self.streamed.add(chunk.id)
            yield {"delim": "start"}
            if content and not chunk.tool_call_chunks:
                # OpenAI opens a text reply with a delta of its own (role, content ""),
                # which Swarm yields; a model whose first chunk already has text gets one.
                yield self._delta("", None, first=True, ns=ns, meta=meta)
                first = False
        tool_calls = _tool_call_deltas(chunk)
        if first and not content:
            # OpenAI's opening delta: content "" for a text reply, null beside tool calls (or
            # where the provider opened with the role alone and null: OPENED_WITH_NULL)
            null = tool_calls or chunk.additional_kwargs.get(OPENED_WITH_NULL)
            content = None if null else ""
        yield self._delta(content if first else (content or None), tool_calls, first, ns, meta)

    def _delta(
        self,
        content: str | None,
        tool_calls: list[dict[str, Any]] | None,
        first: bool,
        ns: tuple[str, ...],
        meta: dict[str, Any],
    ) -> dict[str, Any]:
        """One delta in the shape Swarm yields (the openai SDK's ``ChoiceDelta`` as a dict)."""
        delta: dict[str, Any] = {
            "content": content,
            "function_call": None,
            "refusal": None,
            "role": "assistant" if first else None,
            "tool_calls": tool_calls,
        }
        if first:  # Swarm stamps the sender on the delta that carries the role
            run = self.run
            # The node that runs it: ours, or the member whose graph the namespace names.
            node = ns[0].split(":")[0] if ns else str(meta.get("langgraph_node", ""))
            agent = run.runtime.roster(run.control).get(node)  # None: the dynamic node
            if agent is None:
                agent = run.runtime.agent_for(run.final.get("active_agent"), run.control)
            delta["sender"] = agent.name  # the real name, not the node name it runs under
        return delta

    def close(self) -> Iterator[dict[str, Any]]:
        """The reply being streamed, if one is, ends as it does from OpenAI through Swarm:
        the empty delta of the chunk that carries ``finish_reason``, then ``{"delim": "end"}``;
        a fan-out's branches end with ``{"delim": "end"}``."""
        if self.open_id is not None:
            self.open_id = None
            yield dict(_EMPTY_DELTA)
            yield {"delim": "end"}
        elif self.in_branches:
            self.in_branches = False
            yield {"delim": "end"}

    def _branch_delta(
        self, ns: tuple[str, ...], chunk: AIMessage, meta: dict[str, Any], branch: str
    ) -> Iterator[dict[str, Any]]:
        """A delta of a parallel branch's reply: ``sender`` and ``branch`` on every one."""
        if not isinstance(chunk, AIMessageChunk):  # a LangGraph member's reply, whole
            if chunk.id in self.streamed:
                return
            chunk = _as_chunk(chunk)
        first = chunk.id not in self.streamed
        content = chunk.content if isinstance(chunk.content, str) else None
        if not first and not content and not chunk.tool_call_chunks:
            return
        if not self.in_branches:
            yield from self.close()
            self.in_branches = True
            yield {"delim": "start"}
        if chunk.id is not None:
            self.streamed.add(chunk.id)
        # The node that runs it inside the branch: a member's (its namespace) or ours.
        nodes = [part.split(":")[0] for part in ns if not part.startswith(BRANCH_NODE)]
        node = nodes[0] if nodes else str(meta.get("langgraph_node", ""))
        agent = self.run.runtime.roster(self.run.control).get(node)
        yield {
            "content": content or None,
            "function_call": None,
            "refusal": None,
            "role": "assistant" if first else None,
            "tool_calls": _tool_call_deltas(chunk),
            "sender": agent.name if agent is not None else node,
            "branch": branch,
        }


#: The last delta of every OpenAI reply (``{}`` with ``finish_reason``), as Swarm yields it.
_EMPTY_DELTA: dict[str, Any] = {
    "content": None,
    "function_call": None,
    "refusal": None,
    "role": None,
    "tool_calls": None,
}


def _tool_call_deltas(chunk: AIMessageChunk) -> list[dict[str, Any]] | None:
    """The chunk's tool-call pieces as Swarm's delta ``tool_calls``."""
    return [
        {
            "index": c.get("index") or 0,
            "id": c.get("id"),
            "function": {"arguments": c.get("args") or "", "name": c.get("name")},
            # the provider names the type on a call's first delta only, as here
            "type": "function" if c.get("id") else None,
        }
        for c in chunk.tool_call_chunks
    ] or None


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    """A whole reply as one chunk: its text, and each tool call with its arguments as JSON."""
    return AIMessageChunk(
        content=message.content,
        id=message.id,
        name=message.name,
        tool_call_chunks=[
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(message.tool_calls)
        ],
    )
