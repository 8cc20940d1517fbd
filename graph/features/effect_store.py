"""The effect ledger of a compiled graph: LangGraph's own store, per thread.

``build_swarm_graph(...).compile(checkpointer=..., store=...)`` runs effect tools through
:class:`StoreEffectLedger` on the node's runtime store (``compile(store=...)``, any
``BaseStore``: ``InMemoryStore``, ``SqliteStore``, ``PostgresStore``), in the namespace
``("swarmgraph", "effects", <thread_id>)``:

* ``before`` puts the call's ``started`` item and the step's reply under ``in-flight:<id of
  the last message before it>``. A process that dies mid-tool leaves the checkpoint before
  that step; resuming the thread (``invoke(None, config)``, any process) runs the step again
  from the same messages, and the node finds the reply there instead of asking the model
  again (a new reply would carry new call ids, and the effect would run twice);
* ``after`` puts ``done`` with the answer; the re-run step answers the call from it;
* a call started and never done is in doubt: the node calls ``interrupt()`` with it
  (``in_doubt: True``), and ``Command(resume=...)`` decides it.

Limits: a ``BaseStore`` has no compare-and-set, so two processes resuming one thread at the
very same moment can both record a decision (the graph's checkpointer still keeps one of the
two runs); ``Session`` keeps that promise through its own storage. Without a checkpointer there
is no thread to resume; without a store nothing is recorded.

Example:
    >>> from langgraph.store.memory import InMemoryStore
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.graph.features.effects import EffectCall, EffectOutcome, TurnSoFar
    >>> from swarmgraph.graph.core.types import Agent
    >>> ledger = StoreEffectLedger(InMemoryStore(), "thread-1")
    >>> ask = HumanMessage("refund 7", id="h1")
    >>> reply = AIMessage("", id="r1", tool_calls=[{"name": "refund", "args": {}, "id": "c1"}])
    >>> call = EffectCall("c1@r1", "c1", "refund", {}, "Refunds")
    >>> ledger.before(call, TurnSoFar([ask, reply], {}, Agent())) is None
    True
    >>> ledger.in_flight([ask]).id, ledger.prior([call])["c1@r1"].status
    ('r1', 'started')
    >>> ledger.after(call, EffectOutcome("done", value="refunded"))
    >>> ledger.prior([call])["c1@r1"].value
    'refunded'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict
from langchain_core.runnables import RunnableConfig

from ..core.run_control import RunControl
from .approvals import Decision
from .effects import (
    EffectCall,
    EffectLedger,
    EffectOutcome,
    TurnSoFar,
    default_idempotency_key,
    run_ledger,
)
from .errors import ApprovalAlreadyDecided

__all__ = ["StoreEffectLedger", "ledger_for"]

#: Where LangGraph keeps the node's runtime (its ``store``) in a node's config.
_RUNTIME_KEY = "__pregel_runtime"


def ledger_for(control: RunControl, config: RunnableConfig | None) -> EffectLedger | None:
    """The run's effect ledger: the one it was given (``Session``), else the compiled graph's
    store for this thread, else ``None``.

    Example:
        >>> ledger_for(RunControl(), {"configurable": {}}) is None
        True
    """
    given = run_ledger(control)  # Session's, for this run
    if given is not None:
        return given
    configurable = (config or {}).get("configurable") or {}
    runtime = configurable.get(_RUNTIME_KEY)
    store = getattr(runtime, "store", None)
    thread = configurable.get("thread_id")
    if store is None or thread is None:
        return None
    return StoreEffectLedger(store, str(thread), str(configurable.get("checkpoint_ns") or ""))


class StoreEffectLedger:
    """An :class:`~swarmgraph.graph.features.effects.EffectLedger` on a LangGraph ``BaseStore``, for
    one thread (and subgraph namespace); see the module docstring."""

    def __init__(self, store: Any, thread_id: str, checkpoint_ns: str = "") -> None:
        self.store = store
        self.thread_id = thread_id
        self.namespace: tuple[str, ...] = ("swarmgraph", "effects", thread_id)
        if checkpoint_ns:  # a swarm inside another graph: its own ledger per subgraph
            self.namespace += (checkpoint_ns.split(":", 1)[0],)

    def _get(self, key: str) -> Any:
        item = self.store.get(self.namespace, key)
        return None if item is None else item.value

    def before(self, call: EffectCall, turn: TurnSoFar) -> EffectOutcome | None:
        found = self._outcome(call.key)
        if (
            found is not None
            and found.status != "paused"
            and (found.status == "done" or found.attempt >= call.attempt)
        ):
            return found  # (a paused call runs again from its start: RunEffects.paused)
        messages = turn.messages
        reply = messages[-1]
        at = messages[-2].id if len(messages) > 1 else None
        self.store.put(self.namespace, f"in-flight:{at}", {"reply": message_to_dict(reply)})
        started = EffectOutcome("started", attempt=call.attempt)
        self.store.put(self.namespace, f"effect:{call.key}", started.as_record())
        return None

    def after(self, call: EffectCall, outcome: EffectOutcome) -> None:
        found = self._outcome(call.key)
        if found is None or found.status != "done":  # the first result stands
            self.store.put(self.namespace, f"effect:{call.key}", outcome.as_record())

    def prior(self, calls: Sequence[EffectCall]) -> dict[str, EffectOutcome]:
        found = {call.key: self._outcome(call.key) for call in calls}
        return {key: outcome for key, outcome in found.items() if outcome is not None}

    def _outcome(self, key: str) -> EffectOutcome | None:
        value = self._get(f"effect:{key}")
        return None if value is None else EffectOutcome.from_record(value)

    def settle(
        self, questions: Mapping[str, EffectCall], given: Mapping[str, Decision]
    ) -> dict[str, Decision]:
        decided: dict[str, Decision] = {}
        for question, call in questions.items():
            stored = self._get(f"approval:{question}")
            if stored is not None:  # (no compare-and-set on a BaseStore: see the docstring)
                if question in given and given[question] != stored["decision"]:
                    raise ApprovalAlreadyDecided(call.call_id, stored["decision"], call.tool)
                decided[question] = stored["decision"]
            elif question in given:
                self.store.put(
                    self.namespace, f"approval:{question}", {"decision": given[question]}
                )
                decided[question] = given[question]
        return decided

    def asked(self, question: str) -> bool:
        if self._get(f"asked:{question}") is not None:
            return True
        self.store.put(self.namespace, f"asked:{question}", {"asked": True})
        return False

    def in_flight(self, messages: Sequence[BaseMessage]) -> AIMessage | None:
        at = messages[-1].id if messages else None
        value = self._get(f"in-flight:{at}")
        if value is None:
            return None
        (reply,) = messages_from_dict([value["reply"]])
        return reply if isinstance(reply, AIMessage) else None

    def idempotency_key(self, call: EffectCall) -> str:
        return default_idempotency_key(call.key, self.thread_id)
