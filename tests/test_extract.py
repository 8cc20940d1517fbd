"""extract_context: rules and one structured-extraction call, offline."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel
from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
from swarmgraph.memory.extract import extract_context, user_texts


class Customer(BaseModel):
    name: str | None = None
    order_id: int | None = None
    school: str | None = None


SEED = "我叫小明，我在 A 高中上学，order 7, 帮我找个近点的好吃的店"
RULES = {
    "name": r"我叫(?P<value>[^，,\s]+)",
    "order_id": r"order #?(\d+)",
    "school": lambda text: "A 高中" if "A 高中" in text else None,
}


def test_rules_fill_typed_fields_from_user_text_only():
    messages = [
        HumanMessage(SEED),
        AIMessage("我叫助手, order 99"),  # assistant text is never a source
    ]
    assert extract_context(messages, Customer, rules=RULES) == {
        "name": "小明",
        "order_id": 7,
        "school": "A 高中",
    }


def test_newest_user_message_wins_and_missing_fields_are_left_out():
    messages = [
        {"role": "user", "content": "order 7 please"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "sorry, order 8"},
    ]
    assert extract_context(messages, Customer, rules={"order_id": r"order (\d+)"}) == {
        "order_id": 8
    }


def test_bad_rules_are_clear_errors():
    with pytest.raises(ValueError, match="no field named"):
        extract_context("x", Customer, rules={"email": r".+"})
    with pytest.raises(ValueError, match="'order_id' matched 'seven'"):
        extract_context("order seven", Customer, rules={"order_id": r"order (\w+)"})
    with pytest.raises(TypeError, match="pydantic model class"):
        extract_context("x", {"name": str})


def test_one_structured_call_fills_what_the_rules_missed():
    model = ScriptedChatModel(
        [scripted_tool_call("Customer", {"name": "Xiaoming", "order_id": 99, "school": "A High"})]
    )
    found = extract_context(
        ["ignored non-message", HumanMessage("I'm Xiaoming from A High, order 7")],
        Customer,
        model=model,
        rules={"order_id": r"order (\d+)"},
    )
    assert found == {"order_id": 7, "name": "Xiaoming", "school": "A High"}  # the rule wins
    assert len(model.calls) == 1
    sent = model.calls[0][-1].content
    assert sent == "User: I'm Xiaoming from A High, order 7"
    assert model.bound_tools[0][0]["function"]["name"] == "Customer"


def test_model_is_not_called_when_rules_found_everything_or_nothing_was_said():
    model = ScriptedChatModel([])  # any call would raise ScriptExhaustedError
    assert extract_context(SEED, Customer, model=model, rules=RULES)["order_id"] == 7
    assert extract_context([AIMessage("hello")], Customer, model=model) == {}
    assert model.calls == []


def test_user_texts_reads_content_blocks():
    blocks = HumanMessage([{"type": "text", "text": "order"}, {"type": "text", "text": "7"}])
    assert user_texts(blocks) == ["order 7"]


def _structured_metadata(runnable) -> tuple[dict, object]:
    """What a structured call tells its callbacks (LangSmith reads this) and what it returns."""
    from langchain_core.callbacks import BaseCallbackHandler

    told: list[dict] = []

    class Heard(BaseCallbackHandler):
        def on_chat_model_start(self, serialized, messages, *, options=None, **kwargs):
            told.append(options["ls_structured_output_format"])

    result = runnable.invoke([HumanMessage("I'm Ming, order 7")], {"callbacks": [Heard()]})
    return told[0], result


def test_a_kept_structured_call_tells_tracing_the_same_schema_without_converting_it_each_call():
    """Structured converts the schema LangChain keeps for its tracing metadata once; a call's
    callbacks hear the same metadata as through with_structured_output, and the model's answer
    is parsed the same."""
    from unittest import mock

    from langchain_core.language_models import chat_models
    from swarmgraph.memory.extract import Structured

    reply = scripted_tool_call("Customer", {"name": "Ming", "order_id": 7})
    plain = ScriptedChatModel([reply]).with_structured_output(Customer)
    kept = Structured(ScriptedChatModel([reply, reply]), Customer)
    assert _structured_metadata(kept.runnable) == _structured_metadata(plain)
    with mock.patch.object(
        chat_models, "convert_to_json_schema", wraps=chat_models.convert_to_json_schema
    ) as converted:
        kept.invoke([HumanMessage("again")])
    assert (
        converted.call_args.args[0]
        == kept.runnable.first.kwargs["ls_structured_output_format"]["schema"]
    )  # a dict: the pydantic class is converted once, in Structured
    assert isinstance(converted.call_args.args[0], dict)
