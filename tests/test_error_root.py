"""One error root: every exception swarmgraph exports derives from ``SwarmgraphError`` (one
``except`` catches ours) and keeps the builtin base code catches today; every warning derives
from ``SwarmgraphWarning``."""

from __future__ import annotations

import importlib
import inspect
import warnings

import pytest
from swarmgraph.graph.core.errors import SwarmgraphError, SwarmgraphWarning

import swarmgraph

PUBLIC = ("swarmgraph", "swarmgraph.graph", "swarmgraph.memory")
#: The modules that hold our errors: every class they define is checked, exported or not.
ERROR_MODULES = (
    "swarmgraph.graph.core.errors",
    "swarmgraph.graph.features.errors",
    "swarmgraph.graph.chat_models.scripted",
    "swarmgraph.memory.errors",
    "swarmgraph.memory.approvals",
)

#: The builtin base each error had before the root existed (what ``except`` clauses catch).
BUILTIN_BASE = {
    "SwarmError": RuntimeError,
    "HandoffLoopError": RuntimeError,
    "StepLimitError": RuntimeError,
    "BudgetExceeded": RuntimeError,
    "ApprovalAlreadyDecided": RuntimeError,
    "GuardrailTripped": RuntimeError,
    "ContextConflict": RuntimeError,
    "BranchFailed": RuntimeError,
    "MissingModelError": RuntimeError,
    "ScriptExhaustedError": RuntimeError,
    "ScriptSharedError": RuntimeError,
    "ToolSchemaError": TypeError,
    "ToolArgumentError": ValueError,
    "ContextValidationError": ValueError,
    "StorageUnavailable": ConnectionError,
    "TurnOutcomeUnknown": ConnectionError,
    "StorageConfigurationError": ConnectionError,
    "ContextSerializationError": TypeError,
    "ContextVersionConflict": RuntimeError,
    "TurnInterrupted": RuntimeError,
    "RecordExists": RuntimeError,
    "TurnInProgress": RuntimeError,
    "ApprovalPendingError": ValueError,
    "UnknownAgentError": LookupError,
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in PUBLIC:
        module = importlib.import_module(name)
        for attr in module.__all__:
            value = getattr(module, attr)
            if isinstance(value, type) and issubclass(value, BaseException):
                found[attr] = value
    for name in ERROR_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[attr] = value
    return found


def test_the_root_is_exported_from_the_facade():
    assert swarmgraph.SwarmgraphError is SwarmgraphError
    assert "SwarmgraphError" in swarmgraph.__all__


def test_every_exported_error_derives_from_the_root_and_keeps_its_builtin_base():
    classes = _exception_classes()
    errors = {n: c for n, c in classes.items() if not issubclass(c, Warning)}
    errors.pop("SwarmgraphError")
    # A new error is listed above with the builtin base it promises, or this fails.
    assert set(errors) == set(BUILTIN_BASE), set(errors) ^ set(BUILTIN_BASE)
    for name, cls in errors.items():
        assert issubclass(cls, SwarmgraphError), name
        assert issubclass(cls, BUILTIN_BASE[name]), (name, BUILTIN_BASE[name])


def test_every_warning_derives_from_the_warning_root():
    found = {n: c for n, c in _exception_classes().items() if issubclass(c, Warning)}
    assert "ContextSchemaWarning" in found and "UnknownAgentWarning" in found
    for name, cls in found.items():
        assert issubclass(cls, SwarmgraphWarning) and issubclass(cls, UserWarning), name
        assert not issubclass(cls, SwarmgraphError), name  # a warning is not an error to catch


@pytest.mark.parametrize(
    ("make", "builtin"),
    [
        (lambda: swarmgraph.StorageUnavailable("redis://u:pw@h/0", "refused"), ConnectionError),
        (lambda: swarmgraph.ContextSerializationError("$.x", object()), TypeError),
        (lambda: swarmgraph.BudgetExceeded("max_model_calls", 3, "A"), RuntimeError),
    ],
)
def test_one_except_catches_a_raised_error_as_either_base(make, builtin):
    with pytest.raises(SwarmgraphError):
        raise make()
    with pytest.raises(builtin):
        raise make()


def test_errors_raised_by_the_library_are_caught_by_the_root():
    from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    from swarmgraph.memory import Session

    with pytest.raises(SwarmgraphError) as caught:  # a context JSON cannot hold
        Session("c", url="memory://error-root").run(
            Swarm(chat_model=ScriptedChatModel(["hi"])), Agent(), "hi", {"when": object()}
        )
    assert isinstance(caught.value, TypeError)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Session("c2", url="memory://error-root").switch_agent(Agent(name="Gone"))
        Session("c2", url="memory://error-root").run(
            Swarm(chat_model=ScriptedChatModel(["hi"])), Agent(name="Here"), "hi"
        )
    assert any(issubclass(w.category, SwarmgraphWarning) for w in seen), seen


def _guardrail_trip() -> swarmgraph.GuardrailTripped:
    error = swarmgraph.GuardrailTripped("Refunds", "no_threats", "a threat", kind="output")
    error.response = {"messages": ["kept"]}
    return error


def test_a_guardrail_trip_keeps_its_reason_in_str_repr_args_and_a_pickle_round_trip():
    import pickle

    error = _guardrail_trip()
    worded = "Guardrail no_threats of Refunds tripped (output): a threat."
    assert str(error).startswith(worded) and error.args == (str(error),)
    assert repr(error).startswith(f"GuardrailTripped('{worded}")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is swarmgraph.GuardrailTripped
    assert (str(back), repr(back), back.args) == (str(error), repr(error), error.args)
    assert (back.agent, back.guardrail, back.reason, back.kind) == (
        "Refunds", "no_threats", "a threat", "output"
    )  # fmt: skip
    assert back.response == {"messages": ["kept"]}


def test_every_error_with_fields_pickles_as_itself_with_its_message():
    import pickle

    from swarmgraph.graph.core.errors import HandoffLoopError, StepLimitError
    from swarmgraph.graph.features.errors import BudgetExceeded

    made = [
        HandoffLoopError(["A", "B", "A"], 3),
        BudgetExceeded("max_handoffs", 3, "Sales"),
        StepLimitError(1000, "Agent", {"lookup": 498}),
        _guardrail_trip(),
    ]
    for error in made:
        back = pickle.loads(pickle.dumps(error))
        assert (type(back), str(back), vars(back)) == (type(error), str(error), vars(error))


def test_a_served_graphs_error_reaches_the_sdk_as_its_name_and_message():
    """``langgraph dev`` publishes a run's error with its serde (orjson); the SDK client
    raises ``Exception(f"{error}: {message}")`` from it. orjson writes a dataclass as its
    fields, which read ``None: None`` there; our errors go as name and message."""
    serde = pytest.importorskip("langgraph_api.serde", reason="needs the dev extra")
    import json

    sent = json.loads(serde.json_dumpb(_guardrail_trip()))
    assert sent == {"error": "GuardrailTripped", "message": str(_guardrail_trip())}
