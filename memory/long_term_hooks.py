"""Long-term memory in a compiled swarm graph, the LangGraph way: the graph's own ``store=``
and the user in ``config["configurable"]``, no ``Session``.

:func:`long_term_hooks` gives ``build_swarm_graph`` the two hooks a ``Session`` gives each run
(``prompt_context``: recall into each system prompt; ``tool_inputs``: the memory tools'
``long_term``), reading at every model call the store the graph was compiled with
(``langgraph.config.get_store()``) and the user id from ``config["configurable"]``. Without
a store or a user id they add nothing, and the memory tools answer ``Error:``. What recall
adds is data, as with a Session (:mod:`.recall_block`: delimited, escaped, capped, and
screened by the agent's input guardrails).

Writes here go straight to the store (there is no Session turn to commit them with); each
is atomic, but not tied to a turn: use a ``Session`` for turn-and-memory crash safety.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph
    >>> from swarmgraph.memory import LongTermMemory
    >>> memory = LongTermMemory("memory://doctest-ltm-hooks", user_id="ming")
    >>> _ = memory.remember("dog_name", "Rex")
    >>> model = ScriptedChatModel(["Rex is a good dog."])
    >>> app = build_swarm_graph([Agent(name="Vet")], chat_model=model,
    ...                         **long_term_hooks(recall=3)).compile(store=memory.store)
    >>> _ = app.invoke({"messages": [HumanMessage("How is my dog?")]},
    ...                {"configurable": {"user_id": "ming"}})
    >>> model.calls[0][0].content.splitlines()[-2:]
    ['- dog_name: "Rex"', '</memory>']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from .long_term import LongTermMemory
from .long_term_turn import LongTermTurn

if TYPE_CHECKING:
    from ..graph.core.types import Agent


def long_term_hooks(*, recall: int = 3, user_key: str = "user_id") -> dict[str, Any]:
    """``{"prompt_context": ..., "tool_inputs": ...}`` for ``build_swarm_graph(**...)``: the
    ``recall`` facts most relevant to the last user message in each system prompt, and the
    memory tools, for the user ``config["configurable"][user_key]`` names, in the graph's
    ``store``."""
    if isinstance(recall, bool) or not isinstance(recall, int) or recall < 0:
        raise ValueError(f"recall must be an int >= 0, got {recall!r}")

    def prompt_context(agent: Agent, messages: Sequence[BaseMessage]) -> str | None:
        turn = _run_memory(user_key, recall)
        return turn.prompt_context(agent, messages) if turn is not None else None

    def tool_inputs(agent: Agent) -> Mapping[str, Any]:
        turn = _run_memory(user_key, recall)
        return turn.tool_inputs(agent) if turn is not None else {}

    return {"prompt_context": prompt_context, "tool_inputs": tool_inputs}


def _run_memory(user_key: str, recall: int) -> LongTermTurn | None:
    """This graph run's user memory, from its config and store (``None``: either missing)."""
    from langgraph.config import get_config, get_store

    try:
        configurable = get_config().get("configurable") or {}
        store = get_store()
    except RuntimeError:  # called outside a graph run
        return None
    user = configurable.get(user_key)
    if store is None or user is None:
        return None
    memory = LongTermMemory.from_store(store, user_id=str(user))
    thread = configurable.get("thread_id")
    return LongTermTurn(memory, str(thread) if thread else None, None, k=recall, direct=True)
