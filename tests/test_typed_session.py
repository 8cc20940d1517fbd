"""A Session with a typed context (``Swarm(context_schema=Model)``): stored as JSON, restored
validated, and what happens when the schema changed since the context was stored."""

from __future__ import annotations

import datetime
import operator
import uuid
import warnings
from typing import Annotated

import pytest
from pydantic import BaseModel
from scale_helpers import BACKENDS
from swarmgraph.graph import ContextValidationError
from swarmgraph.graph.features.context_schema import ContextSchemaWarning
from swarmgraph.memory import Session

from swarmgraph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call


class Address(BaseModel):
    city: str
    zip: str


class Desk(BaseModel):
    order_id: int | None = None
    visits: Annotated[int, operator.add] = 0
    due: datetime.date | None = None
    address: Address | None = None


class DeskV2(BaseModel):
    """Desk after a release: ``visits`` renamed, ``order_id`` a string now, a new key."""

    order_id: str | None = None
    visit_count: int = 0
    due: datetime.date | None = None
    address: Address | None = None
    tier: str = "basic"


class DeskV3(BaseModel):
    """A new required key the stored context cannot have."""

    customer: str
    order_id: int | None = None


def note(order_id: int) -> Result:
    """Note the order, its due date and the customer's address."""
    return Result(
        value="noted",
        context_variables={
            "order_id": order_id,
            "visits": 1,
            "due": datetime.date(2024, 5, 1),
            "address": Address(city="Lyon", zip="69001"),
        },
    )


def first_turn(url: str, conversation: str) -> None:
    model = ScriptedChatModel([scripted_tool_call("note", {"order_id": 7}), "Noted."])
    swarm = Swarm(chat_model=model, context_schema=Desk)
    Session(conversation, url=url).run(swarm, Agent(name="Desk", functions=[note]), "order 7")


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_a_typed_context_is_stored_as_json_and_restored_validated(backend_url):
    conversation = f"typed-{uuid.uuid4().hex}"
    first_turn(backend_url, conversation)
    stored = Session(conversation, url=backend_url).context_variables
    assert stored == {
        "order_id": 7,
        "visits": 1,
        "due": "2024-05-01",
        "address": {"city": "Lyon", "zip": "69001"},
    }
    seen = []

    def look(context_variables: dict) -> str:
        """Look at the context."""
        seen.append(dict(context_variables))
        return "looked"

    model = ScriptedChatModel([scripted_tool_call("look"), "ok"])
    swarm = Swarm(chat_model=model, context_schema=Desk)
    agent = Agent(name="Desk", functions=[look])
    response = Session(conversation, url=backend_url).run(swarm, agent, "again")
    assert seen[0]["due"] == datetime.date(2024, 5, 1)  # a date again, not text
    assert seen[0]["address"] == Address(city="Lyon", zip="69001")
    assert response.context_variables["visits"] == 1


def test_a_schema_change_drops_removed_keys_and_resets_values_that_no_longer_fit(tmp_path):
    url = f"sqlite:///{tmp_path / 'desk.db'}"
    first_turn(url, "c1")
    model = ScriptedChatModel(["ok"])
    swarm = Swarm(chat_model=model, context_schema=DeskV2)
    with pytest.warns(ContextSchemaWarning) as caught:
        response = Session("c1", url=url).run(swarm, Agent(name="Desk"), "hi")
    message = str(caught[0].message)
    assert "dropped 'visits' (no longer in the schema)" in message
    # 7 (an int) does not fit str | None: pydantic refuses int -> str in lax mode
    assert "reset 'order_id' (7 no longer fits str | None)" in message
    assert response.context_variables == {
        "order_id": None,
        "visit_count": 0,
        "due": datetime.date(2024, 5, 1),
        "address": Address(city="Lyon", zip="69001"),
        "tier": "basic",
    }
    # the next turn reads what this one stored: no warning any more
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContextSchemaWarning)
        swarm = Swarm(chat_model=ScriptedChatModel(["ok"]), context_schema=DeskV2)
        Session("c1", url=url).run(swarm, Agent(name="Desk"), "again")


def test_a_required_key_the_store_lacks_is_a_clear_error_unless_the_caller_gives_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'desk.db'}"
    first_turn(url, "c1")
    model = ScriptedChatModel(["ok"])
    swarm = Swarm(chat_model=model, context_schema=DeskV3)
    with (
        pytest.warns(ContextSchemaWarning),
        pytest.raises(ContextValidationError, match="'customer' is required"),
    ):
        Session("c1", url=url).run(swarm, Agent(name="Desk"), "hi")
    assert model.calls == []  # before any model call; nothing was stored either
    with pytest.warns(ContextSchemaWarning):
        response = Session("c1", url=url).run(
            swarm, Agent(name="Desk"), "hi", context_variables={"customer": "Ming"}
        )
    assert response.context_variables == {"customer": "Ming", "order_id": 7}


def test_bad_caller_context_fails_before_the_model_and_stores_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'desk.db'}"
    model = ScriptedChatModel(["ok"])
    swarm = Swarm(chat_model=model, context_schema=Desk)
    session = Session("c1", url=url)
    with pytest.raises(ContextValidationError, match="'order_id' expects int"):
        session.run(swarm, Agent(), "hi", context_variables={"order_id": "seven"})
    assert model.calls == [] and session.messages == [] and session.context_variables == {}


def test_without_a_schema_the_session_stores_the_dict_as_before(tmp_path):
    url = f"sqlite:///{tmp_path / 'desk.db'}"
    model = ScriptedChatModel([scripted_tool_call("note", {"order_id": 7}), "Noted."])
    with pytest.raises(Exception, match="JSON cannot store"):  # a date: Swarm's dict as given
        Session("c1", url=url).run(Swarm(chat_model=model), Agent(functions=[note]), "order 7")
