"""The peers our figures are compared with, driven by scripted models so only framework
work is measured: the OpenAI Agents SDK (``openai-agents``, a scripted ``Model`` the way its
own tests fake one) and real openai/swarm (PyPI ``openai-swarm``, over a client whose
``chat.completions.create`` returns real ``openai`` completion objects).

Both are optional (the ``bench`` extra installs them); a missing one is reported, not fatal.

Example:
    >>> run = openai_swarm_handoff()
    >>> run()["agent"]
    'B'
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

PING = "ping"
PONG = "pong"


# --------------------------------------------------------------------------- openai/swarm
def _completion(content: str | None, tool_call: str | None = None) -> Any:
    """A real ``ChatCompletion`` object, as the openai client would parse it."""
    from openai.types.chat import ChatCompletion

    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_call:
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool_call, "arguments": "{}"},
            }
        ]
    return ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if tool_call else "stop",
                    "message": message,
                }
            ],
        }
    )


class _ScriptedCompletions:
    """``client.chat.completions.create``: a user turn gets a handoff, anything else pong."""

    def __init__(self, target: str = "transfer_to_b", latency: float = 0.0) -> None:
        self.target, self.latency = target, latency

    def create(self, *, messages: list[dict], **_: Any) -> Any:
        if messages[-1]["role"] == "user" and self.target:
            return _completion(None, self.target)
        return _completion(PONG)


class _Client:
    def __init__(self, completions: Any) -> None:
        self.chat = type("Chat", (), {"completions": completions})()


def openai_swarm_handoff() -> Callable[[], Any]:
    """openai/swarm's ``Swarm.run``: A hands off to B, B answers."""
    from swarm import Agent, Swarm

    swarm = Swarm(client=_Client(_ScriptedCompletions()))
    a = Agent(name="A", instructions="You are A.")
    b = Agent(name="B", instructions="You are B.")
    a.functions = [lambda: b]
    a.functions[0].__name__ = "transfer_to_b"

    def run() -> dict:
        response = swarm.run(a, [{"role": "user", "content": PING}])
        assert response.agent is b and response.messages[-1]["content"] == PONG
        return {"agent": response.agent.name}

    return run


# --------------------------------------------------------------------------- Agents SDK
def _sdk_items() -> tuple[Any, Any]:
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    def text(content: str) -> Any:
        return ResponseOutputMessage(
            id="m1",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=content, annotations=[])],
        )

    def call(name: str) -> Any:
        return ResponseFunctionToolCall(
            id="f1", call_id="call_1", type="function_call", name=name, arguments="{}"
        )

    return text, call


def scripted_sdk_model(respond: Callable[[Any], tuple[str, str]], latency: float = 0.0) -> Any:
    """An Agents SDK ``Model`` whose reply is ``respond(input) -> ("text"|"call", value)``,
    built like the SDK's own test ``FakeModel`` (no network, no tracing export)."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage

    text, call = _sdk_items()
    ids = itertools.count()

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):
            if latency:
                await asyncio.sleep(latency)
            kind, value = respond(input)
            item = call(value) if kind == "call" else text(value)
            return ModelResponse(output=[item], usage=Usage(), response_id=f"r{next(ids)}")

        def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover - unused
            raise NotImplementedError

    return ScriptedModel()


def _last_is_user(items: Any) -> bool:
    if isinstance(items, str):
        return True
    last = items[-1]
    role = last.get("role") if isinstance(last, dict) else getattr(last, "role", None)
    return role == "user"


def agents_sdk_handoff() -> Callable[[], Any]:
    """``Runner.run`` on one reused event loop: A hands off to B (an SDK handoff), B answers."""
    from agents import Agent, Runner, set_tracing_disabled

    set_tracing_disabled(True)  # tracing would export to OpenAI: no network here
    model = scripted_sdk_model(
        lambda items: ("call", "transfer_to_b") if _last_is_user(items) else ("text", PONG)
    )
    b = Agent(name="B", instructions="You are B.", model=model)
    a = Agent(name="A", instructions="You are A.", model=model, handoffs=[b])
    loop = asyncio.new_event_loop()

    def run() -> dict:
        result = loop.run_until_complete(Runner.run(a, PING))
        assert result.last_agent is b and result.final_output == PONG
        return {"agent": result.last_agent.name}

    return run
