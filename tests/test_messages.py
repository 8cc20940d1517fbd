"""Swarm/OpenAI dicts <-> LangChain messages (graph/core/messages.py)."""

from __future__ import annotations

import copy

import pytest
import swarmgraph.graph.core.messages as messages_module
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from swarmgraph.graph.core.messages import (
    message_to_openai,
    parse_tool_calls,
    to_langchain,
    to_openai,
)


def _assistant(content, tool_calls=None, sender="Triage", **extra):
    msg = {
        "content": content,
        "refusal": None,
        "role": "assistant",
        "audio": None,
        "function_call": None,
        "tool_calls": tool_calls,
        "sender": sender,
    }
    msg.update(extra)
    return msg


def _call(tc_id, name, arguments):
    return {"id": tc_id, "type": "function", "function": {"name": name, "arguments": arguments}}


SWARM_CONVERSATION = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "I want bees"},
    _assistant(None, [_call("call_1", "transfer_to_sales", "{}")]),
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "tool_name": "transfer_to_sales",
        "content": '{"assistant": "Sales"}',
    },
    _assistant(
        None,
        [
            _call("call_2", "lookup", '{"item":"bees","qty":3}'),  # compact, as OpenAI sends
            _call("call_3", "broken", '{"item": "bees"'),  # malformed, must survive
            _call("call_4", "ping", ""),  # empty arguments from some servers
        ],
        sender="Sales",
    ),
    {"role": "tool", "tool_call_id": "call_2", "tool_name": "lookup", "content": "in stock"},
    _assistant("Bees are $5.", sender="Sales"),
    _assistant(None, sender="Sales", refusal="I can't help with that."),
]


def test_round_trip_dict_to_langchain_to_dict_is_identity():
    original = copy.deepcopy(SWARM_CONVERSATION)
    back = to_openai(to_langchain(SWARM_CONVERSATION))
    assert back == original
    assert original == SWARM_CONVERSATION  # input untouched


def test_round_trip_keeps_invalid_call_position_between_valid_ones():
    msg = _assistant(None, [_call("a", "f", "{"), _call("b", "g", '{"x": 1}')])
    assert to_openai(to_langchain([msg])) == [msg]


def test_assistant_fields_map_to_ai_message():
    lc = to_langchain(SWARM_CONVERSATION)
    assert [m.type for m in lc] == ["system", "human", "ai", "tool", "ai", "tool", "ai", "ai"]
    ai = lc[4]
    assert isinstance(ai, AIMessage)
    assert ai.name == "Sales"
    assert ai.content == ""
    assert ai.tool_calls == [
        {"name": "lookup", "args": {"item": "bees", "qty": 3}, "id": "call_2", "type": "tool_call"},
        {"name": "ping", "args": {}, "id": "call_4", "type": "tool_call"},
    ]
    [bad] = ai.invalid_tool_calls
    assert bad["id"] == "call_3"
    assert bad["name"] == "broken"
    assert bad["args"] == '{"item": "bees"'
    assert "Invalid JSON" in bad["error"]
    tool = lc[3]
    assert isinstance(tool, ToolMessage)
    assert (tool.name, tool.tool_call_id) == ("transfer_to_sales", "call_1")
    assert lc[7].additional_kwargs["refusal"] == "I can't help with that."


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [("[1, 2]", "JSON object"), ("3", "JSON object"), ("nope", "Invalid JSON")],
)
def test_non_object_arguments_are_invalid_tool_calls(arguments, reason):
    ok, bad, raw = parse_tool_calls([_call("x", "f", arguments)])
    assert ok == []
    assert bad[0]["args"] == arguments
    assert reason in bad[0]["error"]
    assert raw[0]["function"]["arguments"] == arguments


def test_tool_call_without_name_is_invalid():
    ok, bad, _ = parse_tool_calls([{"id": "x", "function": {"arguments": "{}"}}])
    assert ok == []
    assert bad[0]["error"] == "Tool call has no function name"


def test_sdk_objects_are_read_like_dicts():
    from openai.types.chat import ChatCompletionMessage

    sdk = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [_call("c9", "add", '{"a":1,"b":2}')]}
    )
    ai = messages_module.ai_message_from_openai(sdk, name="Math")
    assert ai.tool_calls[0]["args"] == {"a": 1, "b": 2}
    out = message_to_openai(ai)
    assert out["tool_calls"] == [_call("c9", "add", '{"a":1,"b":2}')]
    assert out["content"] is None
    assert out["sender"] == "Math"


def test_message_objects_in_the_history_are_read_as_the_dicts_they_dump_to():
    """``completion.choices[0].message`` (pydantic: the fields it was given) and any object
    with ``model_dump()`` are messages; an object without one is a clear error."""
    from openai.types.chat import ChatCompletionMessage

    sdk = ChatCompletionMessage.model_validate({"role": "assistant", "content": "Hi."})

    class Note:
        def model_dump(self):
            return {"role": "user", "content": "from a note"}

    class Broken:
        def model_dump(self):
            return ["not", "a", "dict"]

    ai, human = to_langchain([sdk, Note()])
    assert (type(ai), ai.content, type(human), human.content) == (
        AIMessage,
        "Hi.",
        HumanMessage,
        "from a note",
    )
    with pytest.raises(TypeError, match=r"message 0: Broken.model_dump\(\) returned list"):
        to_langchain([Broken()])
    with pytest.raises(TypeError, match=r"message 1: expected a dict, .*OpenAI message object"):
        to_langchain([sdk, object()])


def test_content_none_becomes_empty_string_and_developer_is_system():
    lc = to_langchain(
        [
            {"role": "user", "content": None},
            {"role": "developer", "content": "Be brief."},
            {"role": "tool", "tool_call_id": "t", "content": None},
        ]
    )
    assert lc[0].content == ""
    assert isinstance(lc[1], SystemMessage)
    assert lc[2].content == ""
    # developer survives the way back (same marker langchain-openai uses)
    assert to_openai(lc[1:2]) == [{"role": "developer", "content": "Be brief."}]


def test_langchain_messages_pass_through_unchanged():
    human = HumanMessage("hi")
    mixed = to_langchain([human, {"role": "user", "content": "there"}])
    assert mixed[0] is human
    assert mixed[1].content == "there"


def test_unknown_role_names_role_and_index():
    with pytest.raises(ValueError, match=r"message 1: unknown role 'robot'"):
        to_langchain([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])
    with pytest.raises(ValueError, match=r"message 0: unknown role None"):
        to_langchain([{"content": "no role"}])


def test_bad_items_are_clear_errors():
    with pytest.raises(TypeError, match=r"message 0: expected a dict"):
        to_langchain(["just text"])
    with pytest.raises(ValueError, match=r"message 0: tool message has no 'tool_call_id'"):
        to_langchain([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="RemoveMessage"):
        to_openai([RemoveMessage(id="x")])


def test_langchain_to_dict_to_langchain_keeps_content_names_and_tool_calls():
    original = [
        SystemMessage("sys"),
        HumanMessage("hello", name="Ming"),
        AIMessage(
            content="Let me check.",
            name="Triage",
            tool_calls=[{"name": "lookup", "args": {"q": "bees", "n": [1, 2]}, "id": "t1"}],
            invalid_tool_calls=[{"name": "oops", "args": "{bad", "id": "t2", "error": "x"}],
        ),
        ToolMessage(content="found", tool_call_id="t1", name="lookup"),
        AIMessage(content="Done.", name="Triage"),
    ]
    back = to_langchain(to_openai(original))
    assert [type(m) for m in back] == [type(m) for m in original]
    for a, b in zip(original, back, strict=True):
        assert a.content == b.content
        assert a.name == b.name
    assert back[2].tool_calls == original[2].tool_calls
    assert back[2].invalid_tool_calls[0]["args"] == "{bad"
    assert back[2].invalid_tool_calls[0]["id"] == "t2"
    assert back[3].tool_call_id == "t1"


def test_edited_tool_calls_win_over_stale_raw_strings():
    [ai] = to_langchain([_assistant(None, [_call("c1", "f", '{"a":1}')])])
    edited = ai.model_copy(
        update={"tool_calls": [{"name": "f", "args": {"a": 2}, "id": "c1", "type": "tool_call"}]}
    )
    assert to_openai([edited])[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 2}'
    replaced = ai.model_copy(
        update={"tool_calls": [{"name": "g", "args": {}, "id": "c7", "type": "tool_call"}]}
    )
    assert to_openai([replaced])[0]["tool_calls"] == [_call("c7", "g", "{}")]


def test_assistant_dict_shape_without_tool_calls():
    assert message_to_openai(AIMessage(content="")) == _assistant("", sender=None)
    assert to_openai([ChatMessage(role="critic", content="meh")]) == [
        {"role": "critic", "content": "meh"}
    ]


def test_multimodal_user_content_is_kept():
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    msg = {"role": "user", "content": parts}
    assert to_openai(to_langchain([msg])) == [msg]


def test_an_input_messages_own_keys_ride_along_and_go_back_out():
    """Keys beyond a role's own (``timestamp``, ``id``, an assistant's ``name``) are kept on
    the LangChain message and written back by ``to_openai``; a value JSON cannot hold could
    be neither sent nor stored, so it stays out (as every extra key did before)."""
    import datetime

    given = [
        {"role": "user", "content": "hi", "timestamp": "t1", "when": datetime.date(2026, 12, 2)},
        {"role": "assistant", "content": "yo", "sender": "Bot", "name": "bot", "id": "m2"},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "f", "content": "ok", "name": "f"},
    ]
    back = to_openai(to_langchain(given))
    assert back[0] == {"role": "user", "content": "hi", "timestamp": "t1"}
    assert (back[1]["sender"], back[1]["name"], back[1]["id"]) == ("Bot", "bot", "m2")
    assert back[2] == {**given[2]}
    assert to_openai(to_langchain([{"role": "user", "content": "plain"}])) == [
        {"role": "user", "content": "plain"}
    ]
