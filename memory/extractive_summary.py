"""A generic extractive summariser dressed as a chat model: an offline stand-in for an LLM.

:class:`~swarmgraph.memory.SummaryMemory` needs a chat model to write its running summary.
Offline, the notebooks and benchmarks used a scripted one that was written to keep exactly
the "my X is Y" facts they later ask about, which decides the result in advance.
:class:`ExtractiveSummaryModel` knows nothing of the test: it copies the most informative
sentences of the text it is given, verbatim, within a word budget. It follows no instruction
(it never reads the system prompt); what it keeps is decided by one generic rule:

* the document is the last human message (SummaryMemory's "Existing summary ... New lines"),
  split into sentences at line breaks and ``.``, ``!``, ``?``; fragments of fewer than three
  words ("New lines:", "(none yet)") are not sentences;
* a sentence scores the mean inverse document frequency of its words (tokenized as for fact
  search: case-folded, stemmed, stop words dropped), taking the sentences as documents:
  words that recur across many sentences (small talk, boilerplate) weigh little, words
  said once weigh most;
* the best sentences are kept (ties: the earlier one) while they fit ``max_words``, and are
  returned in their original order; a sentence said twice is kept once.

What it shows: how far a bounded summary carries without a model. What it cannot do: merge,
paraphrase, resolve "actually, I moved" against an older sentence (both may be kept), or
keep a fact phrased in common words once the budget is spent on rarer ones.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> text = ("User: the parcel is late again. User: the parcel is late again, sorry. "
    ...         "User: my sister Ines lives in Porto. User: the parcel is late again?")
    >>> ExtractiveSummaryModel(max_words=8).invoke([HumanMessage(text)]).content
    'User: my sister Ines lives in Porto.'
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from .fact_search import tokenize

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")
MIN_WORDS = 3


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (line breaks and ``. ! ?`` end one), fragments of fewer
    than :data:`MIN_WORDS` words dropped.

    Example:
        >>> sentences("Existing summary:\\n(none yet)\\n\\nNew lines:\\nUser: hi there you. Ok.")
        ['User: hi there you.']
    """
    found = []
    for line in str(text).splitlines():
        for sentence in _SENTENCE_END.split(line.strip()):
            sentence = sentence.strip()
            if len(_WORD.findall(sentence)) >= MIN_WORDS:
                found.append(sentence)
    return found


def summarise(text: str, max_words: int = 120) -> str:
    """The most informative sentences of ``text`` (mean idf of their words) that fit in
    ``max_words`` words, in their original order. When not even one sentence fits, the best
    one is cut to ``max_words`` words; no sentence at all gives ``""``.

    Example:
        >>> summarise("Rain again today here. Rain again today there. Maya adopted a ferret.",
        ...           max_words=5)
        'Maya adopted a ferret.'
    """
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ValueError(f"max_words must be an int >= 1, got {max_words!r}")
    unique: list[str] = []
    seen: set[str] = set()
    for sentence in sentences(text):
        norm = " ".join(_WORD.findall(sentence.casefold()))
        if norm not in seen:
            seen.add(norm)
            unique.append(sentence)
    if not unique:
        return ""
    terms = [tokenize(s) for s in unique]
    frequency: dict[str, int] = {}
    for words in terms:
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    n = len(unique)

    def score(i: int) -> float:
        if not terms[i]:
            return 0.0
        return sum(math.log((1 + n) / (1 + frequency[w])) + 1 for w in terms[i]) / len(terms[i])

    order = sorted(range(n), key=lambda i: (-score(i), i))
    kept: list[int] = []
    used = 0
    for i in order:
        size = len(_WORD.findall(unique[i]))
        if used + size <= max_words:
            kept.append(i)
            used += size
    if not kept:
        return " ".join(_WORD.findall(unique[order[0]])[:max_words])
    return " ".join(_ended(unique[i]) for i in sorted(kept))


def _ended(sentence: str) -> str:
    return sentence if sentence[-1] in ".!?" else sentence + "."


def _document(messages: Sequence[BaseMessage]) -> str:
    human = [m for m in messages if isinstance(m, HumanMessage)]
    chosen = human[-1:] if human else list(messages)
    return "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in chosen)


class ExtractiveSummaryModel(BaseChatModel):
    """A chat model that answers with an extractive summary of the last human message.

    An offline stand-in for an LLM summariser, for ``SummaryMemory(model, k)``: generic
    (nothing about the facts a test asks for), deterministic, free. See the module
    docstring for its rule and its limits.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from swarmgraph.memory import SummaryMemory
        >>> policy = SummaryMemory(ExtractiveSummaryModel(max_words=30), keep_last=2)
        >>> chat = [HumanMessage("My cat Miso hates the vacuum cleaner."), AIMessage("Noted."),
        ...         HumanMessage("Where is my parcel?"), AIMessage("On its way.")]
        >>> print(policy.select(chat)[0].content)
        Summary of the earlier conversation: User: My cat Miso hates the vacuum cleaner.
    """

    max_words: int = 120

    @property
    def _llm_type(self) -> str:
        return "extractive-summary"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"max_words": self.max_words}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        summary = summarise(_document(messages), self.max_words)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(summary))])
