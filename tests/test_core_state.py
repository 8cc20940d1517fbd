"""The core's state objects (issue 29, items 2 and 3): a step takes no attribute in passing,
a feature's step state is optional, a plain run holds no feature state, and what a caller like
``Session`` hands a run travels as one ``RunHooks``. Which fields the objects have is the
code's to say (issue 37 item 5: no test pins field names or counts).
"""

from __future__ import annotations

import typing

import pytest
from langchain_core.messages import HumanMessage
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call
from swarmgraph.graph.core.run_control import NO_HOOKS, RunControl, RunHooks
from swarmgraph.graph.core.runtime import Turn
from swarmgraph.graph.prepared_run import RunRequest


def test_a_turn_takes_no_attribute_outside_its_fields():
    """Slotted: a feature cannot hang state on a step in passing (``turn.fanned = ...``)."""
    turn = Turn(Agent(), RunControl(), {"messages": []}, {})
    with pytest.raises(AttributeError):
        turn.fanned = None  # type: ignore[attr-defined]
    assert turn.states is None and turn.goto is None


def test_a_plain_run_holds_no_feature_state_but_the_marked_answer():
    """A plain Swarm.run: no hooks, and of the features only the (negative) answer to
    "does a tool of this run carry a mark?", read from the topology."""
    swarm = Swarm(chat_model=ScriptedChatModel(["Hello!"]))
    request = RunRequest(Agent(), [{"role": "user", "content": "hi"}])
    control = swarm._start(request).control
    assert control.hooks is NO_HOOKS
    assert control.features == {} and control.marked is False


def test_swarm_run_takes_the_hooks_as_one_object_or_one_by_one():
    def ask(**hooks: object) -> str:
        model = ScriptedChatModel(["ok"])
        Swarm(chat_model=model).run(Agent(name="A"), [{"role": "user", "content": "hi"}], **hooks)
        return str(model.calls[0][0].content)

    def recall(agent: Agent, messages: object) -> str:
        return f"{agent.name} knows you."

    one = ask(hooks=RunHooks(prompt_context=recall))
    assert one == ask(prompt_context=recall) == "You are a helpful agent.\n\nA knows you."
    # A hook passed by name goes on top of the object's.
    on_top = ask(hooks=RunHooks(prompt_context=recall), prompt_context=lambda a, m: "Monday.")
    assert on_top == "You are a helpful agent.\n\nMonday."


def test_a_session_hands_our_swarm_one_hooks_object_and_theirs_the_keywords(tmp_path):
    """Issue 29 item 3: what a Session passes a run travels as one ``RunHooks`` (its effect
    ledger, its long-term recall, the conversation id); a Swarm-like object of the caller's
    own (not a ``Swarm``) still gets the keywords it was written for."""
    from swarmgraph.memory import LongTermMemory, Session

    seen: list[dict] = []

    class Recording(Swarm):
        def run(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            seen.append(kwargs)
            return super().run(*args, **kwargs)

    url = f"sqlite:///{tmp_path / 'chat.db'}"
    memory = LongTermMemory(f"sqlite:///{tmp_path / 'ltm.db'}", user_id="u1")
    session = Session("c1", url=url, long_term=memory)
    session.run(Recording(chat_model=ScriptedChatModel(["ok"])), Agent(name="A"), "hi")
    [kwargs] = seen
    assert not {"effects", "prompt_context", "tool_inputs", "conversation_id"} & set(kwargs)
    hooks = kwargs["hooks"]
    assert isinstance(hooks, RunHooks) and hooks.conversation_id == "c1"
    assert hooks.effects is not None and hooks.prompt_context is not None

    class Theirs:
        """Swarm-shaped, not a Swarm: takes effects= (so the Session records its tools)."""

        def run(self, agent, messages, context_variables=None, *, effects=None, **rest):
            seen.append({"effects": effects, **rest})
            swarm = Swarm(chat_model=ScriptedChatModel(["ok"]))
            return swarm.run(agent, messages, context_variables, **rest)

    Session("c2", url=url).run(Theirs(), Agent(name="A"), "hi")
    assert seen[-1]["effects"] is not None and "hooks" not in seen[-1]


def test_a_hook_the_run_leaves_unset_is_the_graphs_own():
    """Per hook, not per object: a run's prompt context beside the graph's tool inputs."""
    taken: list[str] = []

    class Sink:
        def take(self, text: str) -> str:
            taken.append(text)
            return "noted"

    def note(text: str, long_term) -> str:  # long_term: injected by the run
        """Pass a note to whatever the run injects."""
        return long_term.take(text)

    model = ScriptedChatModel([scripted_tool_call("note", {"text": "x"}), "done"])
    app = build_swarm_graph(
        [Agent(name="A", functions=[note])],
        chat_model=model,
        tool_inputs=lambda agent: {"long_term": Sink()},
        prompt_context=lambda agent, messages: "the graph's recall",
    ).compile()
    control = RunControl(hooks=RunHooks(prompt_context=lambda agent, messages: "the run's"))
    app.invoke({"messages": [HumanMessage("hello")]}, control.config())
    assert taken == ["x"]  # the graph's tool inputs
    prompts = [call[0].content for call in model.calls]
    assert prompts == ["You are a helpful agent.\n\nthe run's"] * 2  # the run's recall
