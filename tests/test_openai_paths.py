"""The real OpenAI paths, offline: ChatOpenAI and openai.OpenAI against a loopback stub,
and a duck-typed client object that only has ``chat.completions.create``."""

from __future__ import annotations

import json

import openai
import pytest
from langchain_openai import ChatOpenAI
from openai_stub import OpenAIStub, stub_text, stub_tool_call
from swarmgraph.graph import Agent, MissingModelError, Swarm


def _bees():
    sales = Agent(name="Sales Agent", instructions="Sell bees.")

    def transfer_to_sales():
        """Hand the customer to sales."""
        return sales

    def lookup_order(order_id: int, context_variables: dict) -> str:
        return f"order {order_id} for {context_variables['name']}"

    triage = Agent(
        name="Triage",
        instructions=lambda ctx: f"Greet {ctx['name']}.",
        functions=[lookup_order, transfer_to_sales],
    )
    return triage, sales


def user(text: str) -> dict:
    return {"role": "user", "content": text}


@pytest.mark.parametrize("stream", [False, True])
def test_chat_openai_over_loopback_stub(stream):
    triage, sales = _bees()
    replies = [
        stub_tool_call("lookup_order", '{"order_id": 7}'),
        stub_tool_call("transfer_to_sales", "{}"),
        stub_text("Bees are $5."),
    ]
    with OpenAIStub(replies) as stub:
        model = ChatOpenAI(model="gpt-4o", base_url=stub.base_url, api_key="test", max_retries=0)
        result = Swarm(chat_model=model).run(
            triage, [user("I want bees")], {"name": "Ming"}, stream=stream
        )
        if stream:
            events = list(result)
            assert {"delim": "start"} in events
            response = events[-1]["response"]
        else:
            response = result
        requests = stub.requests
    assert response.agent is sales
    assert [m["content"] for m in response.messages if m["role"] == "tool"] == [
        "order 7 for Ming",
        '{"assistant": "Sales Agent"}',
    ]
    assert response.messages[-1] == {
        "content": "Bees are $5.",
        "refusal": None,
        "role": "assistant",
        "audio": None,
        "function_call": None,
        "tool_calls": None,
        "sender": "Sales Agent",
    }
    first, last = requests[0], requests[-1]
    assert first["messages"][0] == {"role": "system", "content": "Greet Ming."}
    tools = {t["function"]["name"]: t for t in first["tools"]}
    assert set(tools) == {"lookup_order", "transfer_to_sales"}
    assert "context_variables" not in json.dumps(tools["lookup_order"])
    assert first["parallel_tool_calls"] is True
    assert "tools" not in last  # Sales has no tools
    # OpenAI rejects names with spaces: the sender is sent in an API-safe form.
    names = [m.get("name") for m in last["messages"] if m["role"] == "assistant"]
    assert all(n is None or " " not in n for n in names)


def test_openai_client_object_gets_swarms_exact_arguments():
    triage, sales = _bees()
    with OpenAIStub([stub_tool_call("transfer_to_sales", "{}"), stub_text("Hi!")]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        response = Swarm(client=client).run(triage, [user("bees")], {"name": "Ming"})
        requests = stub.requests
    assert response.agent is sales and response.messages[-1]["content"] == "Hi!"
    first = requests[0]
    assert {"model", "messages", "tools", "tool_choice", "parallel_tool_calls"} <= set(first)
    # Swarm sends its history dicts as they are, sender and tool_name included.
    second_history = requests[1]["messages"]
    assert second_history[2]["sender"] == "Triage"
    assert second_history[3]["tool_name"] == "transfer_to_sales"


class _DuckClient:
    """Only ``chat.completions.create``: what Swarm(client=...) may rely on."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.kwargs = []
        outer = self

        class _Completions:
            def create(self, **kwargs):
                outer.kwargs.append(kwargs)
                return outer.replies.pop(0)

        class _Chat:
            completions = _Completions()

        self.chat = _Chat()


def _completion(content=None, tool_calls=None):
    return {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
            }
        ]
    }


def test_duck_typed_client_drives_a_handoff():
    triage, sales = _bees()
    client = _DuckClient(
        [
            _completion(
                tool_calls=[
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "transfer_to_sales", "arguments": "{}"},
                    }
                ]
            ),
            _completion("Bees!"),
        ]
    )
    response = Swarm(client=client).run(
        triage, [user("bees")], {"name": "M"}, model_override="gpt-test"
    )
    assert response.agent is sales and response.messages[-1]["content"] == "Bees!"
    first, second = client.kwargs
    assert set(first) == {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "stream",
        "parallel_tool_calls",
    }
    assert first["model"] == "gpt-test" and first["stream"] is False
    assert first["tool_choice"] is None
    assert set(second) == {"model", "messages", "tools", "tool_choice", "stream"}
    assert second["tools"] is None


def test_no_key_is_a_clear_error_naming_the_offline_option(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingModelError, match="ScriptedChatModel"):
        Swarm().run(Agent(), [user("hi")])


def test_openai_base_url_routes_the_default_model_to_a_local_server(monkeypatch):
    with OpenAIStub([stub_text("local hello")]) as stub:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        response = Swarm().run(Agent(model="llama3"), [user("hi")])
        assert stub.requests[0]["model"] == "llama3"
    assert response.messages[-1]["content"] == "local hello"


@pytest.mark.parametrize("stream", [False, True])
def test_default_path_sends_assistant_messages_without_a_name_as_swarm_does(monkeypatch, stream):
    """Swarm's assistant dicts carry ``sender`` and never ``name``; through ChatOpenAI an
    AIMessage's name would reach the model as OpenAI's ``name`` (``Triage_Agent``)."""
    tier1 = Agent(name="Support: Tier 1", instructions="Help.")

    def transfer_to_support():
        """Hand over."""
        return tier1

    triage = Agent(name="Triage Agent", instructions="Route.", functions=[transfer_to_support])
    history = [
        user("hello"),
        {"role": "assistant", "content": "Hi!", "sender": "Triage Agent"},
        user("my printer"),
    ]
    replies = [stub_tool_call("transfer_to_support", "{}"), stub_text("Which model?")]
    with OpenAIStub(replies) as stub:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        result = Swarm().run(
            triage, [*history, {"role": "user", "content": "x", "name": "Ming Li"}], stream=stream
        )
        response = list(result)[-1]["response"] if stream else result
        requests = stub.requests
    assert response.agent is tier1
    sent = [m for r in requests for m in r["messages"] if m["role"] == "assistant"]
    assert len(sent) == 3  # the earlier answer twice, then Triage's transfer call
    assert all("name" not in m for m in sent), sent
    # a user's own name is kept, made API-safe as before
    assert requests[0]["messages"][-1]["name"] == "Ming_Li"


def test_streamed_argument_text_is_listened_to_only_where_a_call_can_stream():
    """The listener that holds streamed tool-call arguments to the strict rule costs each model
    call the callback manager's work, so it rides only on calls that may stream: a bound
    ``ChatOpenAI(streaming=True)``, ``stream=True``, or LangGraph's "messages" streaming."""
    from langchain_openai import ChatOpenAI
    from langgraph.pregel._messages import StreamMessagesHandler
    from swarmgraph.graph.features.streamed_arguments import listener_for

    def greet(name: str) -> str:
        """Greet someone."""
        return name

    plain = ChatOpenAI(api_key="offline", model="gpt-4o").bind_tools([greet])
    streaming = ChatOpenAI(api_key="offline", model="gpt-4o", streaming=True).bind_tools([greet])
    assert listener_for(plain, {}, {}) is None
    assert listener_for(streaming, {}, {}) is not None
    assert listener_for(plain, {}, {"stream": True}) is not None
    messages_mode = {"callbacks": [StreamMessagesHandler(lambda chunk: None, subgraphs=False)]}
    assert listener_for(plain, messages_mode, {}) is not None


def test_default_path_sends_openais_fields_only_and_no_tool_choice_without_tools(monkeypatch):
    """Keys of your own on an input message stay on it but are not sent through ChatOpenAI,
    and an agent's ``tool_choice`` without functions is not sent (OpenAI refuses one)."""
    history = [
        {"role": "user", "content": "earlier", "timestamp": "t1", "id": "m1"},
        {"role": "assistant", "content": "Hi!", "sender": "Agent", "name": "bot", "id": "m2"},
        {"role": "user", "content": "now", "timestamp": "t3"},
    ]
    with OpenAIStub([stub_text("ok")]) as stub:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        Swarm().run(Agent(tool_choice="required"), history)
        (request,) = stub.requests
    assert "tool_choice" not in request and "tools" not in request
    assert request["messages"][1:] == [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "now"},
    ]
