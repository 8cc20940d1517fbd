"""docs/langgraph.md, "What a checkpointer's context can hold": a custom object in
``context_variables`` under a LangGraph checkpointer fails msgpack serialisation; plain data
goes through, and a dataclass named in the serializer's allow-list reads back silently."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from swarmgraph import Agent, ScriptedChatModel, build_swarm_graph


class Cart:
    """A plain class: msgpack has no way to write it."""

    def __init__(self, items: list[str]) -> None:
        self.items = items


@dataclass
class Order:
    order_id: int


def _app(saver: InMemorySaver):
    model = ScriptedChatModel(["Noted."])
    return build_swarm_graph([Agent(name="Shop")], chat_model=model).compile(checkpointer=saver)


def _run(app, context: dict, thread_id: str) -> dict:
    thread = {"configurable": {"thread_id": thread_id}}
    app.invoke({"messages": [("user", "hi")], "context_variables": context}, thread)
    return app.get_state(thread).values["context_variables"]


def test_a_custom_object_in_the_context_fails_the_checkpointers_serialisation():
    with pytest.raises(TypeError, match="Type is not msgpack serializable: Cart"):
        _run(_app(InMemorySaver()), {"cart": Cart(["bees"])}, "cart")


def test_plain_data_goes_through_and_comes_back_equal():
    cart = Cart(["bees"])
    back = _run(_app(InMemorySaver()), {"cart": {"items": cart.items}}, "plain")
    assert back == {"cart": {"items": ["bees"]}}


def test_a_dataclass_reads_back_without_a_warning_only_when_the_serializer_allows_it(caplog):
    logger = "langgraph.checkpoint.serde.jsonplus"
    with caplog.at_level(logging.WARNING, logger=logger):
        back = _run(_app(InMemorySaver()), {"order": Order(7)}, "unlisted")
    assert back == {"order": Order(7)}
    assert any("unregistered type" in r.getMessage() for r in caplog.records)

    caplog.clear()
    serde = JsonPlusSerializer(allowed_msgpack_modules=[(Order.__module__, "Order")])
    with caplog.at_level(logging.WARNING, logger=logger):
        back = _run(_app(InMemorySaver(serde=serde)), {"order": Order(7)}, "listed")
    assert back == {"order": Order(7)}
    assert not [r.getMessage() for r in caplog.records if r.name == logger]
