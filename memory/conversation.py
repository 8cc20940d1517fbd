"""What a ``Session`` keeps, read and changed outside a turn: its messages, context, active
agent, what waits for approval, the turns left unfinished; clearing it, handing it to another
agent. The turn itself (load, run, save) is :mod:`.session`.

Example:
    >>> from swarmgraph.memory import Session
    >>> session = Session("doc-conversation", url="memory://doc-conversation")
    >>> session.messages, session.context_variables, session.pending, session.unfinished
    ([], {}, [], [])
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage

from .chat_history import StoredChatHistory
from .errors import ContextVersionConflict
from .store import NO_MESSAGES, TurnWrite
from .turn_index import ranked

if TYPE_CHECKING:
    from ..graph.core.types import Agent
    from ..graph.features.approvals import PendingApproval
    from .policies import MemoryPolicy
    from .store import ConversationStore


HALVES = ("messages", "context")
#: What ``persist`` may name: the two halves of a conversation, and the user's long-term memory.
KINDS = (*HALVES, "long_term")


def persist_kinds(persist: str | Iterable[str]) -> tuple[str, ...]:
    """``persist=`` checked, in :data:`KINDS`' order.

    Example:
        >>> persist_kinds("context"), persist_kinds(["context", "messages"])
        (('context',), ('messages', 'context'))
    """
    if persist is HALVES:  # the default, as it is
        return HALVES
    chosen = (persist,) if isinstance(persist, str) else tuple(persist)
    unknown = [p for p in chosen if p not in KINDS]
    if unknown:
        raise ValueError(
            f"persist may only name 'messages', 'context' and 'long_term', got {unknown!r} "
            "(e.g. ('messages', 'context'), ('messages',), ('context',), ('long_term',) or ())"
        )
    return tuple(h for h in KINDS if h in chosen)


class StoredConversation:
    """One stored conversation: ``conversation_id`` in ``store``, keeping what ``persist``
    names (``Session`` sets the three, and ``memory``, its policy)."""

    conversation_id: str
    persist: tuple[str, ...]
    store: ConversationStore
    memory: MemoryPolicy

    def __repr__(self) -> str:
        return (
            f"Session({self.conversation_id!r}, persist={self.persist!r}, memory={self.memory!r})"
        )

    @cached_property
    def history(self) -> StoredChatHistory:
        """This conversation's messages as a LangChain chat history (the same store)."""
        return StoredChatHistory(self.store, self.conversation_id)

    @property
    def messages(self) -> list[BaseMessage]:
        """Every stored message of this conversation (LangChain messages)."""
        return self.store.messages(self.conversation_id)

    @property
    def context_variables(self) -> dict:
        """The stored context (a fresh copy; ``{}`` if none)."""
        return self.store.load(self.conversation_id, window=NO_MESSAGES).context

    @property
    def active_agent_name(self) -> str | None:
        """The name of the agent that held the conversation after the last saved run."""
        return self.store.load(self.conversation_id, window=NO_MESSAGES).active_agent

    @property
    def pending(self) -> list[PendingApproval]:
        """Tool calls of the last stored turn that wait for a decision (``PendingApproval``
        s): approval-marked calls, and effect calls in doubt (``in_doubt=True``: started, never
        finished). Read from the stored conversation, so another process sees them too (inside
        the branches of a fan-out: from the paused fan-out stored with the turn)."""
        if "messages" not in self.persist:
            return []
        from .approval_resume import PENDING_TAIL, stored_pending  # only when asked

        tail = self.store.messages(self.conversation_id, PENDING_TAIL)
        return stored_pending(self.store, self.conversation_id, tail)

    @property
    def unfinished(self) -> list[str]:
        """Turn ids that ran an effect tool and never finished (their process died, or runs
        now): retry each with ``run(swarm, agent, turn_id=...)`` (no message needed), which
        completes it or returns the calls left in doubt in ``response.pending``."""
        meta = self.store.load(self.conversation_id, window=NO_MESSAGES).meta
        return list(meta.get("open_turns", []))

    def clear(self) -> None:
        """Forget this conversation: messages, context, agent, turn log, in one write; then
        the events its turns kept for rejoining (memory/turn_events.py), which would
        otherwise show what was said until the conversation's next turn. A turn still
        running meanwhile writes its own log again."""
        from .event_log_backends import log_for

        self.store.clear(self.conversation_id)
        try:
            log = log_for(self.store)
        except TypeError:  # a store of another kind keeps no events
            return
        log.forget(self.conversation_id)

    def switch_agent(self, agent: Agent) -> None:
        """Hand the conversation to ``agent``: the next run starts with it, as if a handoff
        had left it there. One conditional write of the active agent (messages and context
        stay); a run that saved meanwhile is read again first, never overwritten.

        Example:
            >>> from swarmgraph.graph import Agent
            >>> from swarmgraph.memory import Session
            >>> session = Session("doc-switch", url="memory://doc-switch")
            >>> session.switch_agent(Agent(name="Sales"))
            >>> session.active_agent_name
            'Sales'
        """
        if "context" not in self.persist:
            raise ValueError(
                f"session {self.conversation_id!r} keeps no active agent: persist="
                f"{self.persist!r} leaves out 'context', which holds it"
            )
        while True:
            latest = self.store.load(self.conversation_id, window=NO_MESSAGES)
            # A name alone resumes the first of its namesakes (rank 0), as after a handoff.
            write = TurnWrite(active_agent=agent.name, meta=ranked(latest.meta, 0))
            try:
                self.store.save(self.conversation_id, write, expected_version=latest.version)
                return
            except ContextVersionConflict:  # a turn saved since the load: read it again
                continue

    async def aclear(self) -> None:
        """:meth:`clear` from async code (one thread hop; the backends are sync, pooled)."""
        await asyncio.to_thread(self.clear)
