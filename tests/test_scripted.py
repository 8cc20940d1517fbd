"""ScriptedChatModel: the offline, deterministic, tool-calling chat model (graph/scripted.py)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import swarmgraph.graph.chat_models.scripted as scripted_module
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph import START, MessagesState, StateGraph
from pydantic import BaseModel, Field
from swarmgraph.graph.chat_models.scripted import (
    ScriptedChatModel,
    ScriptExhaustedError,
    scripted_tool_call,
    scripted_tool_calls,
)


def _sum(chunks):
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def test_replies_in_order_and_calls_recorded():
    model = ScriptedChatModel(["one", AIMessage(content="two"), lambda msgs: f"saw {len(msgs)}"])
    first = [HumanMessage("a")]
    assert model.invoke(first).content == "one"
    assert model.invoke([SystemMessage("s"), HumanMessage("b")]).content == "two"
    assert model.invoke([HumanMessage("c")] * 3).content == "saw 3"
    assert [len(c) for c in model.calls] == [1, 2, 3]
    assert model.calls[0] == first
    assert model.calls[0] is not first  # a copy of the list, not the caller's list
    assert model.bound_tools == [None, None, None]


def test_callable_reply_sees_the_messages_and_may_return_an_ai_message():
    def reply(messages):
        return scripted_tool_call("echo", {"text": messages[-1].content})

    model = ScriptedChatModel([reply])
    out = model.invoke("hello")
    assert out.tool_calls[0]["args"] == {"text": "hello"}


def test_exhausted_script_is_a_clear_error():
    model = ScriptedChatModel(["only"])
    model.invoke("first")
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke([HumanMessage("where is my reply?")])
    text = str(info.value)
    assert "1 scripted" in text
    assert "call 2" in text
    assert "where is my reply?" in text
    assert isinstance(info.value, RuntimeError)


def test_respond_takes_over_after_the_script():
    model = ScriptedChatModel(["scripted"], respond=lambda msgs: msgs[-1].content.upper())
    outs = [model.invoke(t).content for t in ["a", "b", "c"]]
    assert outs == ["scripted", "B", "C"]


def test_reset_starts_over():
    model = ScriptedChatModel(["x"])
    model.invoke("1")
    model.reset()
    assert model.calls == []
    assert model.invoke("2").content == "x"


def test_exception_items_are_raised_and_bad_items_rejected():
    model = ScriptedChatModel([ConnectionError("API down"), 42])
    with pytest.raises(ConnectionError, match="API down"):
        model.invoke("a")
    with pytest.raises(TypeError, match="reply 2 must be an AIMessage or str, got int"):
        model.invoke("b")


def test_deterministic_tool_call_ids_and_fresh_copies():
    template = scripted_tool_calls([("a", {"x": 1}), ("b", None)], content="calling")
    model = ScriptedChatModel([template, template, scripted_tool_call("c", id="mine")])
    first = model.invoke("1")
    second = model.invoke("2")
    third = model.invoke("3")
    assert [tc["id"] for tc in first.tool_calls] == ["call_0_0", "call_0_1"]
    assert [tc["id"] for tc in second.tool_calls] == ["call_1_0", "call_1_1"]
    assert third.tool_calls[0]["id"] == "mine"
    assert [tc["id"] for tc in template.tool_calls] == [None, None]  # template untouched
    assert first.id != second.id
    assert first.content == "calling"


def test_usage_metadata_counts_messages_and_reply():
    model = ScriptedChatModel(["a fairly short answer"])
    sent = [SystemMessage("You are a helpful agent."), HumanMessage("hello there")]
    out = model.invoke(sent)
    expected_in = count_tokens_approximately(sent)
    expected_out = count_tokens_approximately([AIMessage("a fairly short answer")])
    assert out.usage_metadata["input_tokens"] == expected_in
    assert out.usage_metadata["output_tokens"] == expected_out
    assert out.usage_metadata["total_tokens"] == expected_in + expected_out


def test_bind_tools_accepts_functions_models_and_dicts():
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Lookup(BaseModel):
        """Look something up."""

        query: str

    raw = {
        "type": "function",
        "function": {
            "name": "raw_tool",
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    model = ScriptedChatModel([scripted_tool_call("add", {"a": 1, "b": 2})])
    bound = model.bind_tools([add, Lookup, raw], tool_choice="auto", parallel_tool_calls=False)
    out = bound.invoke("1+2?")
    assert out.tool_calls[0]["name"] == "add"
    [tools] = model.bound_tools
    assert [t["function"]["name"] for t in tools] == ["add", "Lookup", "raw_tool"]
    assert tools[2] == raw
    # bound tools add to the counted input
    assert out.usage_metadata["input_tokens"] > count_tokens_approximately([HumanMessage("1+2?")])


def test_thread_safe_each_reply_served_once():
    replies = [f"r{i}" for i in range(200)]
    model = ScriptedChatModel(replies)
    with ThreadPoolExecutor(max_workers=16) as pool:
        outs = list(pool.map(lambda i: model.invoke(f"q{i}").content, range(200)))
    assert sorted(outs) == sorted(replies)
    assert len(model.calls) == 200


def test_async_path_is_native_and_concurrent_calls_overlap():
    loop_threads = set()
    in_flight = {"now": 0, "max": 0}

    def respond(messages):
        loop_threads.add(threading.get_ident())
        return "ok"

    model = ScriptedChatModel([], respond=respond, latency=0.01)
    original_sleep = asyncio.sleep

    async def counting_sleep(delay, *args, **kwargs):
        in_flight["now"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        try:
            return await original_sleep(delay, *args, **kwargs)
        finally:
            in_flight["now"] -= 1

    async def main():
        scripted_module.asyncio.sleep = counting_sleep
        try:
            return await asyncio.gather(*(model.ainvoke(f"q{i}") for i in range(200)))
        finally:
            scripted_module.asyncio.sleep = original_sleep

    outs = asyncio.run(main())
    assert [o.content for o in outs] == ["ok"] * 200
    assert loop_threads == {threading.get_ident()}  # no executor threads: native _agenerate
    assert in_flight["max"] == 200  # all 200 were sleeping at the same time


def test_stream_aggregates_to_the_same_reply():
    reply = scripted_tool_calls(
        [("lookup", {"q": "bees", "n": 3}), ("ping", {})], content="Let me  check\nthat for you."
    )
    streamed_model = ScriptedChatModel([reply])
    plain_model = ScriptedChatModel([reply])
    chunks = list(streamed_model.stream("hi"))
    assert len(chunks) > 3
    total = _sum(chunks)
    plain = plain_model.invoke("hi")
    assert total.content == plain.content
    assert total.tool_calls == plain.tool_calls
    assert total.usage_metadata == plain.usage_metadata


def _invalid(args, tc_id="z1"):
    return AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "f", "args": args, "id": tc_id, "error": "bad", "type": "invalid_tool_call"}
        ],
    )


def test_stream_keeps_malformed_arguments_invalid():
    total = _sum(list(ScriptedChatModel([_invalid("not json")]).stream("x")))
    assert total.tool_calls == []
    assert total.invalid_tool_calls[0]["args"] == "not json"
    assert total.invalid_tool_calls[0]["id"] == "z1"


def test_stream_aggregation_completes_truncated_json_like_langchain_does():
    # LangChain parses streamed tool-call chunks leniently (parse_partial_json), so a
    # truncated object is completed rather than reported; non-streamed calls stay invalid.
    plain = ScriptedChatModel([_invalid('{"a": 1')]).invoke("x")
    assert plain.invalid_tool_calls[0]["args"] == '{"a": 1'
    streamed = _sum(list(ScriptedChatModel([_invalid('{"a": 1')]).stream("x")))
    assert streamed.tool_calls[0]["args"] == {"a": 1}


def test_astream_matches_stream():
    reply = "one two three"

    async def collect():
        return [c async for c in ScriptedChatModel([reply]).astream("x")]

    chunks = asyncio.run(collect())
    assert [c.content for c in chunks if c.content] == ["one ", "two ", "three"]
    assert _sum(chunks).content == reply


def test_langgraph_messages_stream_mode_gets_tokens():
    model = ScriptedChatModel(["Bees are five dollars each."])

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    app = builder.compile()
    tokens = [
        chunk.content
        for chunk, meta in app.stream(
            {"messages": [HumanMessage("price?")]}, stream_mode="messages"
        )
        if meta["langgraph_node"] == "agent" and chunk.content
    ]
    assert len(tokens) == 5
    assert "".join(tokens) == "Bees are five dollars each."


def test_with_structured_output_through_a_scripted_tool_call():
    class Answer(BaseModel):
        """The answer."""

        city: str = Field(description="a city")
        population: int

    model = ScriptedChatModel([scripted_tool_call("Answer", {"city": "Lyon", "population": 5})])
    out = model.with_structured_output(Answer).invoke("which city?")
    assert out == Answer(city="Lyon", population=5)
    assert model.bound_tools[0][0]["function"]["name"] == "Answer"


def test_llm_type_and_name():
    model = ScriptedChatModel([], name="triage-model")
    assert model._llm_type == "scripted"
    assert model.name == "triage-model"
