"""The workflow's stand-in for a chat model: it names the model, and never calls it.

Inside a Temporal workflow nothing may do I/O; the run's model calls go to an activity
(swarmgraph/temporal/driver.py). The workflow's ``Swarm`` resolves every model name to a
:class:`RemoteModel`; binding tools records their schemas, which the activity binds to the
worker's real model. Calling one directly is an error that says so.

Example:
    >>> model = RemoteModel(model_name="gpt-4o")
    >>> bound = model.bind_tools([{"type": "function", "function": {"name": "f"}}])
    >>> bound.kwargs["tools"][0]["function"]["name"], bound.bound.model_name
    ('f', 'gpt-4o')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable

__all__ = ["RemoteModel"]


class RemoteModel(BaseChatModel):
    """A model by name only: the run's driver sends its calls to the model activity."""

    model_name: str

    @property
    def _llm_type(self) -> str:
        return "swarmgraph-temporal-remote"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable:
        """The tools' schemas as they are (JSON), for the activity to bind to the real model."""
        return self.bind(tools=list(tools), **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise RuntimeError(
            f"model {self.model_name!r} was called inside a Temporal workflow: model calls of a "
            "swarm on Temporal run as activities (swarmgraph.temporal); a guardrail or "
            "instruction function that calls a model is not supported there"
        )
