"""Which chat model answers for ``agent.model``: an OpenAI-compatible client, a LangChain chat
model (or a factory of them), or by default ``ChatOpenAI``.

>>> from swarmgraph.graph.chat_models.scripted import ScriptedChatModel
>>> fixed = ScriptedChatModel(["hi"])
>>> resolve_chat_model("gpt-4o", chat_model=fixed) is fixed
True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from .core.errors import MissingModelError

__all__ = ["MissingModelError", "ModelResolver", "resolve_chat_model"]

# Local OpenAI-compatible servers (Ollama, vLLM, llama.cpp) ignore the key, but the openai
# client refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"


_MISSING_MODEL_TEXT = (
    "No chat model is configured for model {name!r}: OPENAI_API_KEY is not set and neither "
    "a client nor a chat_model was given. To run offline, pass a scripted model, e.g. "
    "Swarm(chat_model=ScriptedChatModel(['Hello!'])) "
    "(from swarmgraph import ScriptedChatModel); "
    "to use a local OpenAI-compatible server (Ollama, vLLM, llama.cpp), set OPENAI_BASE_URL, "
    "e.g. OPENAI_BASE_URL=http://localhost:11434/v1; or set OPENAI_API_KEY for OpenAI itself. "
    "Any LangChain chat model, or any OpenAI-compatible client via Swarm(client=...), works too."
)


def _default_chat_model(model_name: str) -> BaseChatModel:
    provider, colon, rest = model_name.partition(":")
    if colon and provider != "openai" and _langchain_provider(provider):
        return _init_chat_model(model_name, provider)
    if colon and provider == "openai":  # LangChain's "openai:<model>": the model's own name
        model_name = rest
    api_key = os.environ.get("OPENAI_API_KEY") or None
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    if api_key is None and base_url is None:
        raise MissingModelError(_MISSING_MODEL_TEXT.format(name=model_name))
    from .lazy import import_paused

    # Heavy (langchain_openai and openai: ~0.5 s), so only when actually needed. It is
    # ChatOpenAI keeping the nulls Swarm passes on (chat_models/default_openai.py).
    ChatOpenAI = import_paused(".chat_models.default_openai", __package__).SwarmChatOpenAI

    kwargs: dict[str, Any] = {"model": model_name, "api_key": api_key or _PLACEHOLDER_KEY}
    if base_url is not None:
        kwargs["base_url"] = base_url
    return ChatOpenAI(**kwargs)


def _langchain_provider(prefix: str) -> bool:
    """Whether ``prefix`` names a provider of LangChain's ``init_chat_model`` (``"anthropic"``
    in ``"anthropic:claude-sonnet-4-5"``). An OpenAI fine-tune's name (``"ft:gpt-4o-mini:..."``)
    has no such prefix and stays an OpenAI model's."""
    try:  # (LangChain's table of providers; without it, no name is taken for one)
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError:
        return False
    return prefix in _BUILTIN_PROVIDERS


def _init_chat_model(model_name: str, provider: str) -> BaseChatModel:
    """``init_chat_model(model_name)``, as ``create_agent`` resolves a ``"provider:model"``
    string; the provider's package missing is a :class:`MissingModelError` that names it."""
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(model_name)
    except ImportError as exc:
        raise MissingModelError(
            f"model {model_name!r} names LangChain's provider {provider!r}: {exc}. Or pass a "
            "chat model yourself: Swarm(chat_model=...)"
        ) from exc


def resolve_chat_model(
    model_name: str,
    *,
    client: Any = None,
    chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
) -> BaseChatModel:
    """The chat model for ``model_name``.

    - ``client`` (any object with ``chat.completions.create``): an ``OpenAIClientChatModel``.
    - ``chat_model`` a ``BaseChatModel``: that instance, for every name (so ``agent.model``
      and ``model_override`` cannot change a fixed instance).
    - ``chat_model`` another callable: ``chat_model(model_name)``, which must return a
      ``BaseChatModel``.
    - neither: ``ChatOpenAI(model=model_name)`` using ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``
      (a base URL alone is enough: local servers get a placeholder key); with neither set,
      ``MissingModelError``. A ``"provider:model"`` name of LangChain's (``"anthropic:..."``,
      ``"ollama:..."``) is LangChain's ``init_chat_model`` of it, as ``create_agent`` reads it;
      ``"openai:<model>"`` is that model's ``ChatOpenAI``.

    >>> from swarmgraph.graph.chat_models.scripted import ScriptedChatModel
    >>> resolve_chat_model("small", chat_model=lambda name: ScriptedChatModel([name])).invoke(
    ...     "hi").content
    'small'
    >>> resolve_chat_model("gpt-4o", chat_model=lambda name: "not a model")
    Traceback (most recent call last):
    ...
    TypeError: chat_model('gpt-4o') returned str; it must return a LangChain BaseChatModel
    """
    if client is not None and chat_model is not None:
        raise ValueError("pass either client= or chat_model=, not both")
    if client is not None:
        from .chat_models.openai_client import OpenAIClientChatModel

        # Swarm's own arguments, nothing more (no stream_options): the client may be a
        # hand-written object that takes exactly what Swarm sends.
        return OpenAIClientChatModel(client, model_name, stream_usage=False)
    if chat_model is not None:
        if isinstance(chat_model, BaseChatModel):
            return chat_model
        if not callable(chat_model):
            raise TypeError(
                "chat_model must be a LangChain BaseChatModel or a callable "
                f"model_name -> BaseChatModel, got {type(chat_model).__name__}"
            )
        model = chat_model(model_name)
        if not isinstance(model, BaseChatModel):
            raise TypeError(
                f"chat_model({model_name!r}) returned {type(model).__name__}; "
                "it must return a LangChain BaseChatModel"
            )
        return model
    return _default_chat_model(model_name)


class ModelResolver:
    """Resolve and cache one chat model per model name (thread-safe).

    >>> from swarmgraph.graph.chat_models.scripted import ScriptedChatModel
    >>> made = []
    >>> resolver = ModelResolver(chat_model=lambda name: made.append(name) or ScriptedChatModel([]))
    >>> resolver.get("a") is resolver.get("a"), made
    (True, ['a'])
    """

    def __init__(
        self,
        client: Any = None,
        chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
    ) -> None:
        if client is not None and chat_model is not None:
            raise ValueError("pass either client= or chat_model=, not both")
        self.client = client
        self.chat_model = chat_model
        self._cache: dict[str, BaseChatModel] = {}
        self._lock = threading.Lock()

    def get(self, model_name: str) -> BaseChatModel:
        """The chat model for ``model_name``, created on first use."""
        if isinstance(self.chat_model, BaseChatModel):
            return self.chat_model
        model = self._cache.get(model_name)
        if model is not None:
            return model
        with self._lock:
            model = self._cache.get(model_name)
            if model is None:
                model = resolve_chat_model(
                    model_name, client=self.client, chat_model=self.chat_model
                )
                self._cache[model_name] = model
        return model
