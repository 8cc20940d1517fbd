"""OpenAI-compatible clients as chat models, model resolution, and the loopback stub.

Covers graph/client_model.py and graph/models.py, against a duck-typed client, the real
``openai`` SDK clients and ``ChatOpenAI`` (both over tests/openai_stub.py, on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai_stub import (
    OpenAIStub,
    stub_error,
    stub_text,
    stub_tool_call,
    stub_tool_calls,
)
from pydantic import BaseModel
from swarmgraph.graph.chat_models.openai_client import OpenAIClientChatModel
from swarmgraph.graph.chat_models.scripted import ScriptedChatModel
from swarmgraph.graph.core.messages import to_openai
from swarmgraph.graph.models import MissingModelError, ModelResolver, resolve_chat_model

SWARM_KEYS = {"model", "messages", "tools", "tool_choice", "stream"}

ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


def _completion(content=None, tool_calls=None, usage=True):
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
            }
        ],
    }
    if usage:
        response["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return response


def _tc(tc_id, name, arguments):
    return {"id": tc_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _chunks(content_pieces=(), tool_deltas=()):
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}
    out = [
        dict(
            base,
            choices=[
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        )
    ]
    out += [
        dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}])
        for p in content_pieces
    ]
    out += [
        dict(base, choices=[{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}])
        for d in tool_deltas
    ]
    out.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    out.append(
        dict(
            base, choices=[], usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        )
    )
    return out


class DuckClient:
    """Only ``chat.completions.create``; records every call's keyword arguments."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []
        self.threads = []
        self.chat = self
        self.completions = self

    def create(self, **kwargs):
        self.calls.append(kwargs)
        self.threads.append(threading.get_ident())
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return iter(reply) if kwargs["stream"] else reply


class AsyncDuckClient(DuckClient):
    async def create(self, **kwargs):  # type: ignore[override]
        self.calls.append(kwargs)
        reply = self.replies.pop(0)
        if not kwargs["stream"]:
            return reply

        async def agen():
            for chunk in reply:
                await asyncio.sleep(0)
                yield chunk

        return agen()


def _sum(chunks):
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


HISTORY = [
    SystemMessage("You are a helpful agent."),
    HumanMessage("hi"),
    AIMessage(
        content="",
        name="Triage",
        tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "t1"}],
    ),
    ToolMessage(content="3", tool_call_id="t1", name="add"),
]


# -- the duck-typed client: Swarm's exact arguments ---------------------------------------


def test_swarm_keywords_without_tools():
    client = DuckClient([_completion("hello")])
    out = OpenAIClientChatModel(client, "gpt-4o-mini").invoke(HISTORY)
    [kwargs] = client.calls
    assert set(kwargs) == SWARM_KEYS  # no parallel_tool_calls without tools
    assert kwargs["model"] == "gpt-4o-mini"
    assert kwargs["tools"] is None
    assert kwargs["tool_choice"] is None
    assert kwargs["stream"] is False
    assert kwargs["messages"] == to_openai(HISTORY)
    assert kwargs["messages"][2]["sender"] == "Triage"
    assert kwargs["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b": 2}'
    assert out.content == "hello"
    assert out.usage_metadata == {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}
    assert out.response_metadata["finish_reason"] == "stop"


def test_swarm_keywords_with_tools():
    client = DuckClient([_completion("a"), _completion("b")])
    model = OpenAIClientChatModel(client, "gpt-4o")
    model.bind_tools([ADD_TOOL], tool_choice="required", parallel_tool_calls=False).invoke("x")
    model.bind_tools([ADD_TOOL]).invoke("y")
    first, second = client.calls
    assert set(first) == SWARM_KEYS | {"parallel_tool_calls"}
    assert first["tools"] == [ADD_TOOL]
    assert first["tool_choice"] == "required"
    assert first["parallel_tool_calls"] is False
    assert second["tool_choice"] is None
    assert second["parallel_tool_calls"] is True  # Swarm's Agent default


def test_tool_calls_parsed_and_malformed_arguments_kept():
    reply = _completion(None, [_tc("c1", "add", '{"a":1,"b":2}'), _tc("c2", "add", '{"a":')])
    out = OpenAIClientChatModel(DuckClient([reply]), "m").invoke("x")
    assert out.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
    ]
    assert out.invalid_tool_calls[0]["args"] == '{"a":'
    assert out.invalid_tool_calls[0]["id"] == "c2"
    # the exact strings the server sent come back in Swarm's dict shape
    assert to_openai([out])[0]["tool_calls"] == reply["choices"][0]["message"]["tool_calls"]


def test_sdk_objects_work_like_dicts():
    reply = ChatCompletion.model_validate(_completion("hey", [_tc("c1", "add", '{"a":1}')]))
    out = OpenAIClientChatModel(DuckClient([reply]), "m").invoke("x")
    assert out.content == "hey"
    assert out.tool_calls[0]["args"] == {"a": 1}
    assert out.usage_metadata["total_tokens"] == 18


def test_response_without_usage_has_no_usage_metadata():
    out = OpenAIClientChatModel(DuckClient([_completion("x", usage=False)]), "m").invoke("x")
    assert out.usage_metadata is None


def test_streaming_with_dict_chunks():
    deltas = [
        {"index": 0, "id": "c1", "type": "function", "function": {"name": "add", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"a": '}},
        {"index": 0, "function": {"arguments": "1}"}},
    ]
    client = DuckClient([_chunks(["Hel", "lo"], deltas)])
    model = OpenAIClientChatModel(client, "m").bind_tools([ADD_TOOL])
    chunks = list(model.stream("x"))
    total = _sum(chunks)
    assert client.calls[0]["stream"] is True
    # the adapter alone asks for the usage chunk; Swarm(client=...) sends Swarm's keys only
    assert set(client.calls[0]) == SWARM_KEYS | {"parallel_tool_calls", "stream_options"}
    assert client.calls[0]["stream_options"] == {"include_usage": True}
    assert total.content == "Hello"
    assert total.tool_calls == [{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]
    assert total.usage_metadata["total_tokens"] == 7


def test_streaming_sdk_chunk_objects_through_invoke_path():
    raw = [ChatCompletionChunk.model_validate(c) for c in _chunks(["a", "b"])]
    client = DuckClient([raw])
    total = _sum(list(OpenAIClientChatModel(client, "m").stream("x")))
    assert total.content == "ab"


def test_async_client_is_awaited_natively():
    client = AsyncDuckClient([_completion("async hi"), _chunks(["x", "y", "z"])])
    model = OpenAIClientChatModel(client, "m")

    async def main():
        out = await model.ainvoke("q")
        chunks = [c async for c in model.astream("q")]
        return out, chunks

    out, chunks = asyncio.run(main())
    assert out.content == "async hi"
    assert _sum(chunks).content == "xyz"
    assert [c["stream"] for c in client.calls] == [False, True]


def test_sync_client_on_async_path_runs_in_a_worker_thread():
    client = DuckClient([_completion("threaded"), _chunks(["p", "q"])])
    model = OpenAIClientChatModel(client, "m")

    async def main():
        loop_thread = threading.get_ident()
        out = await model.ainvoke("q")
        chunks = [c async for c in model.astream("q")]
        return loop_thread, out, chunks

    loop_thread, out, chunks = asyncio.run(main())
    assert out.content == "threaded"
    assert _sum(chunks).content == "pq"
    assert loop_thread not in client.threads


def test_async_client_on_sync_path_is_a_clear_error():
    model = OpenAIClientChatModel(AsyncDuckClient([_completion("x")]), "m")
    with pytest.raises(TypeError, match="async"):
        model.invoke("q")


def test_client_errors_propagate():
    model = OpenAIClientChatModel(DuckClient([RuntimeError("rate limited")]), "m")
    with pytest.raises(RuntimeError, match="rate limited"):
        model.invoke("q")


def test_empty_choices_is_a_clear_error():
    model = OpenAIClientChatModel(DuckClient([{"choices": []}]), "m")
    with pytest.raises(ValueError, match="no choices"):
        model.invoke("q")


def test_needs_a_client():
    with pytest.raises(ValueError, match=r"chat\.completions\.create"):
        OpenAIClientChatModel(model_name="m")


# -- the real openai SDK and ChatOpenAI over the loopback stub ----------------------------


def test_openai_sdk_client_over_stub_plain_and_streaming():
    replies = [
        stub_text("Hello from the stub"),
        stub_tool_call("add", {"a": 2, "b": 3}, id="call_x"),
        stub_tool_calls([("add", '{"a": 1, "b": 1}'), ("add", "not json")], content="Two."),
        stub_text("streamed words here"),
    ]
    with OpenAIStub(replies) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        model = OpenAIClientChatModel(client, "gpt-4o")
        bound = model.bind_tools([ADD_TOOL])
        assert model.invoke(HISTORY).content == "Hello from the stub"
        call = bound.invoke("2+3")
        assert call.tool_calls == [
            {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_x", "type": "tool_call"}
        ]
        total = _sum(list(bound.stream("two calls")))
        text = _sum(list(model.stream("words")))
        requests = list(stub.requests)
    assert requests[0]["messages"] == to_openai(HISTORY)
    assert requests[0]["tool_choice"] is None
    assert "parallel_tool_calls" not in requests[0]
    assert requests[1]["tools"] == [ADD_TOOL]
    assert requests[1]["parallel_tool_calls"] is True
    assert [r["stream"] for r in requests] == [False, False, True, True]
    assert total.content == "Two."
    assert total.tool_calls[0]["args"] == {"a": 1, "b": 1}
    assert total.invalid_tool_calls[0]["args"] == "not json"
    assert text.content == "streamed words here"


def test_async_openai_client_over_stub():
    async def main(url):
        client = openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0)
        model = OpenAIClientChatModel(client, "gpt-4o")
        out = await model.ainvoke("hi")
        chunks = [c async for c in model.astream("hi")]
        await client.close()
        return out, chunks

    with OpenAIStub([stub_text("one"), stub_tool_call("add", '{"a":1,"b":2}', id="k")]) as stub:
        out, chunks = asyncio.run(main(stub.base_url))
    assert out.content == "one"
    assert _sum(chunks).tool_calls[0] == {
        "name": "add",
        "args": {"a": 1, "b": 2},
        "id": "k",
        "type": "tool_call",
    }


def test_real_chat_openai_over_stub_with_tools_and_streaming():
    replies = [
        stub_tool_call("add", '{"a": 4, "b": 5}', id="c_add"),
        stub_text("It is nine."),
        stub_tool_call("add", '{"a": 6, "b": 7}', id="c_s"),
    ]
    with OpenAIStub(replies) as stub:
        llm = ChatOpenAI(base_url=stub.base_url, api_key="test", model="gpt-4o", max_retries=0)
        bound = llm.bind_tools([ADD_TOOL])
        first = bound.invoke([HumanMessage("4+5?")])
        answer = bound.invoke(
            [
                HumanMessage("4+5?"),
                first,
                ToolMessage(content="9", tool_call_id="c_add", name="add"),
            ]
        )
        streamed = _sum(list(bound.stream("6+7?")))
        requests = list(stub.requests)
    assert first.tool_calls == [
        {"name": "add", "args": {"a": 4, "b": 5}, "id": "c_add", "type": "tool_call"}
    ]
    assert answer.content == "It is nine."
    assert streamed.tool_calls[0]["args"] == {"a": 6, "b": 7}
    assert requests[0]["tools"][0]["function"]["name"] == "add"
    assert requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c_add", "content": "9"}
    assert requests[2]["stream"] is True


def test_default_resolution_uses_chat_openai_against_openai_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub([stub_text("local server says hi")]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        model = resolve_chat_model("llama3")
        assert isinstance(model, ChatOpenAI)
        assert model.invoke("hi").content == "local server says hi"
        assert stub.requests[0]["model"] == "llama3"


# -- the stub itself ----------------------------------------------------------------------


def test_stub_unscripted_call_is_http_500_and_shuts_down():
    with OpenAIStub(["only reply", stub_error(429, "slow down")]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        port = int(stub.base_url.rsplit(":", 1)[1].split("/")[0])
        ok = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        assert ok.choices[0].message.content == "only reply"
        with pytest.raises(openai.RateLimitError, match="slow down"):
            client.chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.InternalServerError, match="unscripted call 3"):
            client.chat.completions.create(model="m", messages=[])
        assert stub.remaining == 0
        assert len(stub.requests) == 3
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_stub_callable_reply_sees_the_request():
    def reply(body):
        return stub_text(f"{len(body['messages'])} messages")

    with OpenAIStub([reply]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        out = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "a"}] * 3
        )
    assert out.choices[0].message.content == "3 messages"


def test_stub_sse_shape_and_usage_chunk():
    with OpenAIStub([stub_tool_call("f", '{"k": "v"}', id="i1", content="ok")]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        chunks = list(
            client.chat.completions.create(
                model="m", messages=[], stream=True, stream_options={"include_usage": True}
            )
        )
    assert chunks[0].choices[0].delta.role == "assistant"
    tool_deltas = [
        c.choices[0].delta.tool_calls[0]
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    ]
    assert tool_deltas[0].function.name == "f"
    assert tool_deltas[0].id == "i1"
    assert "".join(d.function.arguments for d in tool_deltas) == '{"k": "v"}'
    assert len(tool_deltas) > 2  # name first, then argument fragments
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.total_tokens > 0


# -- resolve_chat_model and ModelResolver -------------------------------------------------


def test_resolve_with_client_and_with_chat_model():
    client = DuckClient([])
    model = resolve_chat_model("gpt-4o-mini", client=client)
    assert isinstance(model, OpenAIClientChatModel)
    assert model.client is client
    assert model.model_name == "gpt-4o-mini"
    fixed = ScriptedChatModel([])
    assert resolve_chat_model("anything", chat_model=fixed) is fixed
    made = resolve_chat_model("small", chat_model=lambda name: ScriptedChatModel([], name=name))
    assert made.name == "small"


def test_resolve_rejects_bad_chat_model_arguments():
    with pytest.raises(TypeError, match=r"chat_model\('m'\) returned dict"):
        resolve_chat_model("m", chat_model=lambda name: {})
    with pytest.raises(TypeError, match="got int"):
        resolve_chat_model("m", chat_model=3)
    with pytest.raises(ValueError, match="not both"):
        resolve_chat_model("m", client=DuckClient([]), chat_model=ScriptedChatModel([]))


def test_missing_model_error_names_the_offline_option(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingModelError) as info:
        resolve_chat_model("gpt-4o")
    text = str(info.value)
    assert "Swarm(chat_model=ScriptedChatModel(" in text
    assert "OPENAI_BASE_URL" in text
    assert "OPENAI_API_KEY" in text
    assert "'gpt-4o'" in text
    assert isinstance(info.value, RuntimeError)


def test_api_key_gives_chat_openai_without_network(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = resolve_chat_model("gpt-4o-mini")
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"
    assert model.openai_api_key.get_secret_value() == "sk-test"


def test_base_url_without_key_uses_a_placeholder_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = resolve_chat_model("qwen2.5")
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key.get_secret_value() == "not-needed"


def test_model_resolver_caches_one_model_per_name_across_threads():
    created = []
    lock = threading.Lock()

    def factory(name):
        with lock:
            created.append(name)
        return ScriptedChatModel([], name=name)

    resolver = ModelResolver(chat_model=factory)
    names = ["a", "b", "a", "c", "b"] * 40
    with ThreadPoolExecutor(max_workers=16) as pool:
        models = list(pool.map(resolver.get, names))
    assert sorted(created) == ["a", "b", "c"]
    assert all(m.name == n for m, n in zip(models, names, strict=True))
    assert resolver.get("a") is models[0]


def test_model_resolver_fixed_instance_and_client():
    fixed = ScriptedChatModel([])
    assert ModelResolver(chat_model=fixed).get("x") is fixed
    resolver = ModelResolver(client=DuckClient([]))
    assert resolver.get("m1") is resolver.get("m1")
    assert resolver.get("m2").model_name == "m2"


def test_model_resolver_missing_model_is_raised_on_use(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    resolver = ModelResolver()
    with pytest.raises(MissingModelError):
        resolver.get("gpt-4o")


def test_swarm_client_path_streams_with_swarms_keys_only():
    """``Swarm(client=c)`` calls ``create`` exactly as Swarm does: no ``stream_options``."""
    from swarmgraph.graph.models import resolve_chat_model

    client = DuckClient([_chunks(["Hi"])])
    model = resolve_chat_model("m", client=client)
    assert "".join(str(c.content) for c in model.stream("x")) == "Hi"
    assert set(client.calls[0]) == SWARM_KEYS


# -- LangChain's tool_choice and structured output, as OpenAI accepts them ----------------


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("any", "required"),  # what with_structured_output and create_agent send
        (True, "required"),
        ("add", {"type": "function", "function": {"name": "add"}}),
        ("required", "required"),
        ("auto", "auto"),
        ("none", "none"),
        ({"type": "function", "function": {"name": "add"}}, None),  # a dict as it is
    ],
)
def test_tool_choice_is_sent_as_openai_accepts_it(given, sent):
    client = DuckClient([_completion("a")])
    OpenAIClientChatModel(client, "gpt-4o").bind_tools([ADD_TOOL], tool_choice=given).invoke("x")
    assert client.calls[0]["tool_choice"] == (given if sent is None else sent)


def test_tool_choice_naming_no_bound_tool_is_a_clear_error():
    model = OpenAIClientChatModel(DuckClient([]), "gpt-4o")
    with pytest.raises(ValueError, match=r"'mul' names no bound tool \(tools: add\)"):
        model.bind_tools([ADD_TOOL], tool_choice="mul")


def test_structured_output_by_function_calling_requires_the_tool():
    class Sum(BaseModel):
        total: int

    reply = _completion(None, [_tc("c1", "Sum", '{"total": 3}')])
    client = DuckClient([reply])
    out = OpenAIClientChatModel(client, "gpt-4o").with_structured_output(Sum).invoke("1+2")
    assert out == Sum(total=3)
    assert client.calls[0]["tool_choice"] == "required"  # LangChain sent "any"
    assert "response_format" not in client.calls[0]


@pytest.mark.parametrize("stream", [False, True])
def test_json_mode_sends_response_format(stream):
    class Joke(BaseModel):
        setup: str

    body = '{"setup": "Why?"}'
    reply = _chunks(content_pieces=[body[:5], body[5:]]) if stream else _completion(body)
    client = DuckClient([reply])
    chat = OpenAIClientChatModel(client, "gpt-4o").with_structured_output(Joke, method="json_mode")
    out = list(chat.stream("joke as JSON"))[-1] if stream else chat.invoke("joke as JSON")
    assert out == Joke(setup="Why?")
    assert client.calls[0]["response_format"] == {"type": "json_object"}
    assert client.calls[0]["tools"] is None


def test_json_schema_sends_the_schema_and_include_raw_keeps_the_message():
    schema = {
        "title": "Answer",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    client = DuckClient([_completion('{"n": 4}')])
    chat = OpenAIClientChatModel(client, "gpt-4o").with_structured_output(
        schema, method="json_schema", strict=True, include_raw=True
    )
    out = chat.invoke("2+2")
    assert out["parsed"] == {"n": 4} and out["parsing_error"] is None
    assert out["raw"].content == '{"n": 4}'
    sent = client.calls[0]["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": schema, "strict": True},
    }


def test_unknown_structured_output_method_is_a_clear_error():
    with pytest.raises(ValueError, match="'xml' is not one of function_calling"):
        OpenAIClientChatModel(DuckClient([]), "m").with_structured_output({}, method="xml")


def test_empty_content_beside_tool_calls_is_sent_back_as_empty():
    """vLLM, Ollama and Swarm's own test mock send ``content: ""`` beside tool calls; it
    goes back as ``""`` (as Swarm does), while OpenAI's null stays null."""
    for content in ("", None):
        reply = _completion(content, [_tc("c1", "add", '{"a":1,"b":2}')])
        out = OpenAIClientChatModel(DuckClient([reply]), "m").invoke("x")
        assert to_openai([out])[0]["content"] == content


def test_standard_content_blocks_go_out_in_openais_shape_as_chatopenai_sends_them():
    """LangChain's standard ``image`` / ``audio`` / ``file`` blocks (base64 or url) reach
    the server in OpenAI's chat-completions shape, the body ChatOpenAI sends for them;
    OpenAI's own blocks go as given."""
    content = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
        {"type": "image", "url": "https://example.com/bee.png"},
        {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
        {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf", "filename": "a.pdf"},
        {"type": "image_url", "image_url": {"url": "https://example.com/hive.png"}},
    ]
    sent = []
    for make in (
        lambda url: OpenAIClientChatModel(openai.OpenAI(base_url=url, api_key="t", max_retries=0)),
        lambda url: ChatOpenAI(model="gpt-4o", base_url=url, api_key="t", max_retries=0),
    ):
        with OpenAIStub([stub_text("bees")]) as stub:
            assert make(stub.base_url).invoke([HumanMessage(content)]).content == "bees"
            sent.append(stub.requests[0]["messages"][0]["content"])
    ours, chat_openai = sent
    assert ours == chat_openai
    assert ours[1:] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.com/bee.png"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=",
                                  "filename": "a.pdf"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/hive.png"}},
    ]  # fmt: skip


def test_langchains_provider_model_names_resolve_as_create_agent_reads_them(monkeypatch):
    # "openai:<model>" is that model's ChatOpenAI (before, OpenAI was sent "openai:gpt-4o-mini");
    # another provider's name goes to LangChain's init_chat_model; a fine-tune's name
    # ("ft:...") is not taken for a provider.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIStub([stub_text("hi"), stub_text("tuned")]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        model = resolve_chat_model("openai:gpt-4o-mini")
        assert isinstance(model, ChatOpenAI) and model.invoke("hi").content == "hi"
        tuned = resolve_chat_model("ft:gpt-4o-mini:acme::7")
        assert tuned.invoke("hi").content == "tuned"
        assert [r["model"] for r in stub.requests] == ["gpt-4o-mini", "ft:gpt-4o-mini:acme::7"]
    with pytest.raises(MissingModelError, match=r"'anthropic'.*langchain-anthropic"):
        resolve_chat_model("anthropic:claude-sonnet-4-5")
