"""A research desk: the editor asks three specialists at once (``Parallel``) and writes the brief.

What notebook 08, the README and ``langgraph dev`` show of parallel handoffs:

- **Editor** reads the question and calls ``ask_specialists(question)``, which returns
  ``Parallel({economist: question, historian: question, scientist: question},
  merge={"sources": operator.add})``: each specialist gets the question as its only message;
- each **specialist** calls ``cite(source)`` (its contribution to ``sources``, a list the
  join concatenates in the order the specialists were given) and answers in one sentence;
- the join answers ``ask_specialists`` with ``{"Economist": ..., "Historian": ...,
  "Scientist": ...}``, and the Editor writes the brief from it.

:func:`research_model` is an offline, rule-based stand-in for a chat model (each specialist
waits ``latency`` seconds per call, different for each, so a timeline of the branches shows
them overlap); with ``offline=False`` the agents run on ``ChatOpenAI``.

Example:
    >>> from swarmgraph.graph import Swarm
    >>> editor, specialists = research_desk()
    >>> response = Swarm(chat_model=research_model(latency=0)).run(
    ...     editor, [{"role": "user", "content": "Why did the bee population fall?"}])
    >>> list(json.loads(response.messages[1]["content"]))
    ['Economist', 'Historian', 'Scientist']
    >>> response.context_variables["sources"]
    ['FAO honey market report', 'Beekeeping records 1900-2000', 'Pesticide field studies']
    >>> response.messages[-1]["content"].splitlines()[0]
    'Brief: Why did the bee population fall?'
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..graph.chat_models.scripted import ScriptedChatModel, scripted_tool_call
from ..graph.core.types import Agent, Result
from ..graph.features.parallel import Parallel

__all__ = ["FINDINGS", "research_desk", "research_model"]

#: Each specialist's source and one-sentence finding (what the offline model says).
FINDINGS = {
    "Economist": ("FAO honey market report", "Cheap imported honey made small apiaries close."),
    "Historian": ("Beekeeping records 1900-2000", "Hive counts fell each time farms merged."),
    "Scientist": ("Pesticide field studies", "Neonicotinoids weaken the bees' navigation."),
}
#: Seconds each specialist's offline model waits per call: different, so they finish apart.
LATENCY = {"Economist": 0.3, "Historian": 0.5, "Scientist": 0.4}


def cite(source: str) -> Result:
    """Add a source to the brief's bibliography."""
    return Result(value=f"cited {source}", context_variables={"sources": [source]})


def research_desk() -> tuple[Agent, list[Agent]]:
    """The Editor and its three specialists (fresh objects on every call)."""
    specialists = [
        Agent(
            name=name,
            model=name.lower(),
            instructions=f"You are the desk's {name.lower()}. Cite one source, then answer in "
            "one sentence.",
            functions=[cite],
        )
        for name in FINDINGS
    ]

    def ask_specialists(question: str) -> Parallel:
        """Ask the economist, the historian and the scientist the question, all at once."""
        return Parallel(dict.fromkeys(specialists, question), merge={"sources": operator.add})

    editor = Agent(
        name="Editor",
        model="editor",
        instructions="You edit a research desk. Ask the specialists, then write a short brief.",
        functions=[ask_specialists],
    )
    return editor, specialists


def _editor(messages: list[BaseMessage]) -> AIMessage | str:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        answers = json.loads(str(last.content))
        question = next(
            (str(m.content) for m in reversed(messages) if m.type == "human"), "the question"
        )
        lines = [f"Brief: {question}", *(f"- {who}: {said}" for who, said in answers.items())]
        return "\n".join(lines)
    return scripted_tool_call("ask_specialists", {"question": str(last.content)})


def _specialist(name: str) -> Callable[[list[BaseMessage]], AIMessage | str]:
    source, finding = FINDINGS[name]

    def reply(messages: list[BaseMessage]) -> AIMessage | str:
        if isinstance(messages[-1], ToolMessage):
            return finding
        return scripted_tool_call("cite", {"source": source})

    return reply


def research_model(
    latency: float | None = None, offline: bool = True
) -> Callable[[str], BaseChatModel]:
    """``model name -> chat model`` for :func:`research_desk`: the offline rule-based models
    (each specialist waits ``LATENCY[name]`` seconds per call, or ``latency`` if given), or
    ``ChatOpenAI`` when ``offline=False``."""
    if not offline:
        from langchain_openai import ChatOpenAI

        return lambda name: ChatOpenAI(model="gpt-4o-mini")
    models: dict[str, BaseChatModel] = {"editor": ScriptedChatModel([], respond=_editor)}
    for name in FINDINGS:
        wait = LATENCY[name] if latency is None else latency
        models[name.lower()] = ScriptedChatModel([], respond=_specialist(name), latency=wait)
    return models.__getitem__
