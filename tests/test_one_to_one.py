"""OneToOne: the swarms pattern's semantics, the role-aware views, and the exchange graph."""

from __future__ import annotations

import copy
import json

import pytest
import swarmgraph.graph.onetoone.formats
import swarmgraph.graph.onetoone.pattern
import swarmgraph.graph.onetoone.views  # noqa: F401 - imported for the doctest runner below
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from swarmgraph.graph.core.types import Agent, Response
from swarmgraph.graph.onetoone.formats import OUTPUT_TYPES, format_history
from swarmgraph.graph.onetoone.pattern import OneToOne, build_one_to_one_graph, one_to_one
from swarmgraph.graph.onetoone.views import (
    NO_NEW_MESSAGES,
    agent_answer,
    messages_for,
    split_last_turn,
)


class EchoAgent:
    """Answers with its name and the task it was handed; records what it saw."""

    def __init__(self, name, *, attr="agent_name", reply=None):
        setattr(self, attr, name)
        self._name = name
        self.calls = []
        self.reply = reply

    def run(self, task=None, messages=None, **kwargs):
        self.calls.append({"task": task, "messages": copy.deepcopy(messages)})
        if self.reply is not None:
            return self.reply(task, messages)
        return f"{self._name} got: {task}"

    def request(self, index):
        """The whole chat request of call ``index``: history plus the task as a user turn."""
        call = self.calls[index]
        return [*call["messages"], {"role": "user", "content": call["task"]}]


def roles(history):
    return [m["role"] for m in history]


# --- the seed's tests, restated ---------------------------------------------------------


def test_one_to_one_records_user_sender_receiver():
    sender, receiver = EchoAgent("Sender"), EchoAgent("Receiver")

    result = one_to_one(sender, receiver, "hello", output_type="dict")

    assert roles(result) == ["User", "Sender", "Receiver"]
    assert result[0] == {"role": "User", "content": "hello"}
    assert result[1]["content"] == "Sender got: hello"
    # The receiver answers the sender's turn, not the original task.
    assert receiver.calls[0]["task"] == "Sender: Sender got: hello"
    assert result[2]["content"] == "Receiver got: Sender: Sender got: hello"


def test_one_to_one_loops_alternate():
    sender, receiver = EchoAgent("Sender"), EchoAgent("Receiver")

    result = one_to_one(sender, receiver, "hello", max_loops=2, output_type="dict")

    assert roles(result) == ["User", "Sender", "Receiver", "Sender", "Receiver"]
    assert len(sender.calls) == len(receiver.calls) == 2
    # On the second loop the sender is answering the receiver's reply.
    assert sender.calls[1]["task"] == f"Receiver: {result[2]['content']}"


@pytest.mark.parametrize("max_loops", [1, 3, 15])
def test_history_has_one_plus_two_per_loop_entries(max_loops):
    # 15 loops is 30 graph steps: past LangGraph's default recursion limit of 25.
    result = one_to_one(EchoAgent("S"), EchoAgent("R"), "go", max_loops=max_loops)
    assert roles(result) == ["User"] + ["S", "R"] * max_loops
    assert all(isinstance(m["content"], str) for m in result)


@pytest.mark.parametrize("task", ["", None, "   \n"])
def test_one_to_one_rejects_empty_task(task):
    sender, receiver = EchoAgent("A"), EchoAgent("B")
    with pytest.raises(ValueError, match=r"^Sender, receiver, and task cannot be empty\.$"):
        one_to_one(sender, receiver, task)
    assert sender.calls == [] and receiver.calls == []


@pytest.mark.parametrize("which", ["sender", "receiver"])
def test_missing_side_is_rejected_before_anything_runs(which):
    other = EchoAgent("B")
    sides = (
        {"sender": None, "receiver": other}
        if which == "sender"
        else {
            "sender": other,
            "receiver": None,
        }
    )
    with pytest.raises(ValueError, match=r"^Sender, receiver, and task cannot be empty\.$"):
        one_to_one(task="hi", **sides)
    assert other.calls == []


def test_one_to_one_class_matches_function():
    pair = OneToOne(EchoAgent("Sender"), EchoAgent("Receiver"), output_type="dict")

    result = pair.run("hello", max_loops=2)

    assert result == one_to_one(EchoAgent("Sender"), EchoAgent("Receiver"), "hello", max_loops=2)
    assert roles(result) == ["User", "Sender", "Receiver", "Sender", "Receiver"]
    assert pair.name == "OneToOne"
    assert pair.description == "A one-to-one communication pattern between two agents"
    assert pair.output_type == "dict"


def test_one_to_one_class_reusable_across_tasks():
    sender, receiver = EchoAgent("Sender"), EchoAgent("Receiver")
    pair = OneToOne(sender, receiver, output_type="dict")

    first = pair.run("one")
    second = pair.run("two")

    assert first[0]["content"] == "one"
    assert second[0]["content"] == "two"
    assert len(second) == 3
    # Nothing from the first task reaches the second one's agents.
    assert sender.calls[1] == {"task": "two", "messages": []}
    assert "one" not in json.dumps(receiver.calls[1])


def test_class_uses_its_output_type():
    pair = OneToOne(EchoAgent("Writer"), EchoAgent("Editor"), name="Pair", output_type="str")
    assert pair.run("hi") == (
        "User: hi\n\nWriter: Writer got: hi\n\nEditor: Editor got: Writer: Writer got: hi"
    )
    assert pair.name == "Pair"


# --- checked before anything runs -------------------------------------------------------


@pytest.mark.parametrize("max_loops", [0, -1, 1.5, True, "2", None])
def test_bad_max_loops_is_rejected_before_anything_runs(max_loops):
    sender, receiver = EchoAgent("A"), EchoAgent("B")
    with pytest.raises(ValueError, match="max_loops must be an integer >= 1"):
        one_to_one(sender, receiver, "hi", max_loops=max_loops)
    assert sender.calls == [] and receiver.calls == []


def test_unknown_output_type_is_rejected_before_any_agent_runs():
    sender, receiver = EchoAgent("A"), EchoAgent("B")
    with pytest.raises(ValueError, match=r"^Invalid type: html\. Valid output types: list, dict"):
        one_to_one(sender, receiver, "hi", output_type="html")
    assert sender.calls == [] and receiver.calls == []
    with pytest.raises(ValueError, match="Invalid type: html"):
        OneToOne(sender, receiver, output_type="html")


def test_same_names_are_rejected():
    with pytest.raises(ValueError, match=r"both named 'Twin'.*must differ"):
        one_to_one(EchoAgent("Twin"), EchoAgent("Twin"), "hi")
    with pytest.raises(ValueError, match="must differ"):
        OneToOne(EchoAgent("Twin"), EchoAgent("Twin", attr="name"))


@pytest.mark.parametrize("name", ["User", "user", "Human", "SYSTEM"])
def test_names_the_views_reserve_are_rejected(name):
    with pytest.raises(ValueError, match=f"named '{name}'"):
        one_to_one(EchoAgent(name), EchoAgent("B"), "hi")


def test_side_without_a_name_or_run_is_a_clear_error():
    class Nameless:
        def run(self, task, messages):
            return "x"

    class Mute:
        agent_name = "Mute"

    with pytest.raises(ValueError, match="Nameless has no usable name"):
        one_to_one(Nameless(), EchoAgent("B"), "hi")
    with pytest.raises(TypeError, match=r"'Mute' is neither a graph\.Agent nor"):
        one_to_one(Mute(), EchoAgent("B"), "hi")


def test_non_string_task_is_a_type_error():
    with pytest.raises(TypeError, match="task must be a string, got int"):
        one_to_one(EchoAgent("A"), EchoAgent("B"), 42)


# --- sides --------------------------------------------------------------------------------


def test_side_with_name_instead_of_agent_name():
    sender = EchoAgent("Analyst", attr="name")
    receiver = EchoAgent("Skeptic", attr="name")
    assert not hasattr(sender, "agent_name")

    result = one_to_one(sender, receiver, "Assess it.")

    assert roles(result) == ["User", "Analyst", "Skeptic"]
    assert receiver.calls[0]["task"] == "Analyst: Analyst got: Assess it."


def test_agent_name_wins_over_name():
    side = EchoAgent("Real")
    side.name = "Display"
    result = one_to_one(side, EchoAgent("Other"), "hi")
    assert roles(result) == ["User", "Real", "Other"]


def test_a_side_returning_a_transcript_records_only_its_answer():
    def transcript(task, messages):
        return [
            *messages,
            {"role": "user", "content": task},
            {"role": "assistant", "content": "mine"},
        ]

    sender = EchoAgent("Writer", reply=transcript)
    result = one_to_one(sender, EchoAgent("Editor"), "draft it")
    assert result[1] == {"role": "Writer", "content": "mine"}


def test_a_swarms_agent_answer_comes_from_its_short_memory():
    class ShortMemory:
        def get_final_message_content(self):
            return "the answer"

    class SwarmsAgent(EchoAgent):
        short_memory = ShortMemory()

    sender = SwarmsAgent("Writer", reply=lambda task, messages: f"Human: {task}\n\nWriter: ...")
    result = one_to_one(sender, EchoAgent("Editor"), "go")
    assert result[1]["content"] == "the answer"


def test_an_empty_answer_is_recorded_and_the_peer_is_told_nothing_is_new():
    sender = EchoAgent("Writer")
    silent = EchoAgent("Editor", reply=lambda task, messages: None)

    result = one_to_one(sender, silent, "draft it", max_loops=2)

    assert roles(result) == ["User", "Writer", "Editor", "Writer", "Editor"]
    assert result[2]["content"] == ""
    # The silent turn is invisible; the writer spoke last, so it gets the fallback task
    # and its own answer stays an assistant turn.
    assert sender.calls[1]["task"] == NO_NEW_MESSAGES
    assert sender.calls[1]["messages"] == [
        {"role": "user", "content": "draft it"},
        {"role": "assistant", "content": "Writer got: draft it"},
    ]


def test_graph_agent_without_a_swarm_uses_the_engine_lazily(monkeypatch):
    """A graph.Agent side is run through ``swarm.run(agent=..., messages=...)``."""
    seen = []

    class RecordingSwarm:
        def run(self, agent, messages, **kwargs):
            seen.append((agent.name, copy.deepcopy(messages)))
            return Response(
                messages=[
                    {"role": "assistant", "content": f"{agent.name} says hi", "sender": agent.name}
                ],
                agent=agent,
            )

    writer, editor = Agent(name="Writer"), Agent(name="Editor")
    result = one_to_one(writer, editor, "go", swarm=RecordingSwarm())

    assert [m["content"] for m in result] == ["go", "Writer says hi", "Editor says hi"]
    assert seen == [
        ("Writer", [{"role": "user", "content": "go"}]),
        (
            "Editor",
            [
                {"role": "user", "content": "go"},
                {"role": "user", "content": "Writer: Writer says hi"},
            ],
        ),
    ]


# --- graph.Agent sides on the real engine, offline -------------------------------------


def _seen(call):
    """A model call as (kind, content) pairs: what the model actually read."""
    return [(type(m).__name__, m.content) for m in call]


def test_two_graph_agents_on_a_scripted_model_see_role_aware_views():
    from swarmgraph.graph.chat_models.scripted import ScriptedChatModel
    from swarmgraph.graph.swarm import Swarm

    model = ScriptedChatModel(["W1", "E1", "W2", "E2"])
    writer = Agent(name="Writer", instructions="You write taglines.")
    editor = Agent(name="Editor", instructions="You edit taglines.")
    task = "Write a tagline for a password manager."

    result = one_to_one(writer, editor, task, max_loops=2, swarm=Swarm(chat_model=model))

    assert [(m["role"], m["content"]) for m in result] == [
        ("User", task),
        ("Writer", "W1"),
        ("Editor", "E1"),
        ("Writer", "W2"),
        ("Editor", "E2"),
    ]
    assert len(model.calls) == 4
    assert _seen(model.calls[0]) == [
        ("SystemMessage", "You write taglines."),
        ("HumanMessage", task),
    ]
    # The receiver sees the sender's answer as a plain user turn, labelled with its name.
    assert _seen(model.calls[1]) == [
        ("SystemMessage", "You edit taglines."),
        ("HumanMessage", task),
        ("HumanMessage", "Writer: W1"),
    ]
    # Loop 2: the writer's own answer is an assistant turn, the editor's a user turn.
    assert _seen(model.calls[2]) == [
        ("SystemMessage", "You write taglines."),
        ("HumanMessage", task),
        ("AIMessage", "W1"),
        ("HumanMessage", "Editor: E1"),
    ]
    assert _seen(model.calls[3]) == [
        ("SystemMessage", "You edit taglines."),
        ("HumanMessage", task),
        ("HumanMessage", "Writer: W1"),
        ("AIMessage", "E1"),
        ("HumanMessage", "Writer: W2"),
    ]
    # Stable prefix: each agent's second request starts with its first.
    assert _seen(model.calls[2])[:2] == _seen(model.calls[0])
    assert _seen(model.calls[3])[:3] == _seen(model.calls[1])


def test_a_graph_agents_tools_run_and_only_its_final_text_is_recorded():
    from swarmgraph.graph.chat_models.scripted import ScriptedChatModel, scripted_tool_call
    from swarmgraph.graph.swarm import Swarm

    def count_words(text: str) -> str:
        """Count the words in a text."""
        return str(len(text.split()))

    model = ScriptedChatModel(
        [
            "Never forget a key",
            scripted_tool_call("count_words", {"text": "Never forget a key"}),
            "4 words: fine.",
        ]
    )
    writer = Agent(name="Writer")
    editor = Agent(name="Editor", functions=[count_words])

    result = one_to_one(writer, editor, "Tagline?", swarm=Swarm(chat_model=model))

    assert result[2] == {"role": "Editor", "content": "4 words: fine."}
    tool_turns = [m for m in model.calls[2] if type(m).__name__ == "ToolMessage"]
    assert [m.content for m in tool_turns] == ["4"]


# --- what each agent sees -----------------------------------------------------------------


def test_each_turn_sees_a_role_aware_view():
    sender, receiver = EchoAgent("Writer"), EchoAgent("Editor")
    result = one_to_one(sender, receiver, "draft it", max_loops=2)
    s1, r1, s2 = (m["content"] for m in result[1:4])

    assert sender.calls[0] == {"task": "draft it", "messages": []}
    assert receiver.calls[0] == {
        "task": f"Writer: {s1}",
        "messages": [{"role": "user", "content": "draft it"}],
    }
    assert sender.calls[1] == {
        "task": f"Editor: {r1}",
        "messages": [
            {"role": "user", "content": "draft it"},
            {"role": "assistant", "content": s1},
        ],
    }
    assert receiver.calls[1] == {
        "task": f"Writer: {s2}",
        "messages": [
            {"role": "user", "content": "draft it"},
            {"role": "user", "content": f"Writer: {s1}"},
            {"role": "assistant", "content": r1},
        ],
    }


def test_prefix_is_stable_from_loop_to_loop():
    sender, receiver = EchoAgent("Writer"), EchoAgent("Editor")
    one_to_one(sender, receiver, "draft it", max_loops=3)

    for agent in (sender, receiver):
        for earlier, later in ((0, 1), (1, 2)):
            before, after = agent.request(earlier), agent.request(later)
            assert after[: len(before)] == before
            assert len(after) == len(before) + 2


def test_messages_for_rules():
    history = [
        {"role": "system", "content": "Team: Writer, Editor"},
        {"role": "System", "content": "also bookkeeping"},
        {"role": "User", "content": "task"},
        {"role": "human", "content": "a human aside"},
        {"role": "Writer", "content": "my draft"},
        {"role": "writer", "content": "not me: names match exactly"},
        {"role": "Editor", "content": None},
        {"role": "Editor", "content": ""},
        {"role": "Editor", "content": "  \n"},
        {"role": "Editor", "content": "tighten it"},
        {"role": "Critic", "content": 7},
        "not a dict",
        {"role": "assistant", "content": "someone else's assistant turn"},
    ]
    assert messages_for("Writer", history) == [
        {"role": "user", "content": "task"},
        {"role": "user", "content": "a human aside"},
        {"role": "assistant", "content": "my draft"},
        {"role": "user", "content": "writer: not me: names match exactly"},
        {"role": "user", "content": "Editor: tighten it"},
        {"role": "user", "content": "Critic: 7"},
        {"role": "user", "content": "assistant: someone else's assistant turn"},
    ]
    assert messages_for("Editor", history)[2:5] == [
        {"role": "user", "content": "Writer: my draft"},
        {"role": "user", "content": "writer: not me: names match exactly"},
        {"role": "assistant", "content": "tighten it"},
    ]


def test_messages_for_accepts_conversation_history_and_copies():
    class Conversation:
        def __init__(self):
            self.conversation_history = [
                {"role": "User", "content": "hi"},
                {"role": "Bot", "content": "yo"},
            ]

    conversation = Conversation()

    view = messages_for("Bot", conversation)
    assert view == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    view[0]["content"] = "changed"
    assert conversation.conversation_history[0]["content"] == "hi"
    assert messages_for("Bot", None) == []
    assert messages_for("Bot", []) == []


def test_split_last_turn_cases():
    user = {"role": "user", "content": "Editor: more"}
    mine = {"role": "assistant", "content": "draft"}
    task = {"role": "user", "content": "task"}

    assert split_last_turn([]) == ([], NO_NEW_MESSAGES)
    assert split_last_turn([task]) == ([], "task")
    assert split_last_turn([task, mine, user]) == ([task, mine], "Editor: more")
    assert split_last_turn([task, {"role": "user", "content": " "}]) == ([task], NO_NEW_MESSAGES)
    assert split_last_turn([task, {"role": "user", "content": None}], "go") == ([task], "go")
    # The agent spoke last: its words stay its own, the task is the fallback.
    assert split_last_turn([task, mine], "go on") == ([task, mine], "go on")


def test_split_last_turn_does_not_mutate_its_input():
    turns = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    snapshot = copy.deepcopy(turns)
    prior, _ = split_last_turn(turns)
    prior[0]["content"] = "changed"
    assert turns == snapshot


# --- agent_answer -------------------------------------------------------------------------


def test_agent_answer_from_a_response_takes_the_last_assistant_text():
    response = Response(
        messages=[
            {"role": "assistant", "content": "first", "sender": "A"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}], "sender": "A"},
            {"role": "tool", "tool_call_id": "1", "tool_name": "f", "content": "tool output"},
            {"role": "assistant", "content": "final", "sender": "B"},
        ]
    )
    assert agent_answer(response) == "final"
    tool_only = Response(
        messages=[{"role": "tool", "tool_call_id": "1", "tool_name": "f", "content": "out"}]
    )
    assert agent_answer(tool_only, "fb") == "out"  # no assistant text: last content of any
    assert agent_answer(Response(), "fb") == "fb"


def test_agent_answer_kinds():
    assert agent_answer("text") == "text"
    assert agent_answer(" \n", "fb") == "fb"
    assert agent_answer(None, "fb") == "fb"
    assert agent_answer({"content": "done"}) == "done"
    assert agent_answer({"content": ""}, "fb") == "fb"
    assert agent_answer({"messages": [HumanMessage("q"), AIMessage("a")]}) == "a"
    assert agent_answer(AIMessage("from a message")) == "from a message"
    assert agent_answer(
        AIMessage(content=[{"type": "text", "text": "blocks"}, {"type": "image"}])
    ) == ("blocks")
    assert agent_answer(["a: 1", "b: 2", ""]) == "b: 2"
    assert agent_answer(42, "fb") == "fb"
    assert agent_answer(object(), "fb") == "fb"


def test_agent_answer_prefers_the_agents_own_role_in_a_list():
    transcript = [
        {"role": "User", "content": "task"},
        {"role": "Writer", "content": "my answer"},
        {"role": "Editor", "content": "their reply"},
    ]
    assert agent_answer(transcript, name="Writer") == "my answer"
    assert agent_answer(transcript) == "their reply"  # no own role found: last non-empty
    assert (
        agent_answer([{"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}])
        == "a"
    )


def test_agent_answer_reads_a_swarms_agents_short_memory():
    class Memory:
        def __init__(self, final):
            self.final = final

        def get_final_message_content(self):
            if isinstance(self.final, Exception):
                raise self.final
            return self.final

    class SwarmsAgent:
        def __init__(self, final):
            self.short_memory = Memory(final)

    assert agent_answer(SwarmsAgent("answer")) == "answer"
    assert agent_answer(SwarmsAgent(IndexError("empty")), "fb") == "fb"
    assert agent_answer(SwarmsAgent(""), "fb") == "fb"


# --- output formats through the pattern --------------------------------------------------


@pytest.mark.parametrize("output_type", OUTPUT_TYPES)
def test_every_output_type_formats_the_exchange(output_type):
    history = one_to_one(EchoAgent("S"), EchoAgent("R"), "hi", output_type="dict")
    result = one_to_one(EchoAgent("S"), EchoAgent("R"), "hi", output_type=output_type)
    assert result == format_history(history, output_type)
    if output_type in ("final", "last"):
        assert result == "R got: S: S got: hi"


# --- the exchange as a graph --------------------------------------------------------------


def _input(task, max_loops):
    return {"conversation": [{"role": "User", "content": task}], "loop": 0, "max_loops": max_loops}


def test_graph_draws_both_nodes_and_the_loop_edge():
    mermaid = (
        build_one_to_one_graph(EchoAgent("Writer"), EchoAgent("Editor")).compile().get_graph()
    ).draw_mermaid()
    assert "Writer(Writer)" in mermaid and "Editor(Editor)" in mermaid
    assert "__start__ --> Writer;" in mermaid
    assert "Writer --> Editor;" in mermaid
    assert "Editor -.-> Writer;" in mermaid  # the loop edge, conditional
    assert "Editor -.-> __end__;" in mermaid


def test_graph_streams_sender_receiver_updates_in_order():
    app = build_one_to_one_graph(EchoAgent("Writer"), EchoAgent("Editor")).compile()
    updates = list(app.stream(_input("go", 2), stream_mode="updates"))
    assert [next(iter(u)) for u in updates] == ["Writer", "Editor", "Writer", "Editor"]
    assert [u["Editor"]["loop"] for u in updates if "Editor" in u] == [1, 2]
    assert updates[0]["Writer"]["conversation"] == [{"role": "Writer", "content": "Writer got: go"}]


def test_graph_checkpoints_with_in_memory_saver():
    app = build_one_to_one_graph(EchoAgent("Writer"), EchoAgent("Editor")).compile(
        checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "pair-1"}}
    app.invoke(_input("go", 2), config=config)

    saved = app.get_state(config)
    assert roles(saved.values["conversation"]) == ["User", "Writer", "Editor", "Writer", "Editor"]
    assert saved.values["loop"] == 2
    assert saved.next == ()
    steps = [s.metadata.get("step") for s in app.get_state_history(config)]
    assert max(steps) == 4  # one checkpoint per turn after the input


def test_checkpointed_exchange_continues_with_a_larger_max_loops():
    sender, receiver = EchoAgent("Writer"), EchoAgent("Editor")
    app = build_one_to_one_graph(sender, receiver).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "pair-2"}}
    app.invoke(_input("go", 1), config=config)

    state = app.invoke({"max_loops": 2}, config=config)

    assert roles(state["conversation"]) == ["User", "Writer", "Editor", "Writer", "Editor"]
    assert state["loop"] == 2
    # The resumed writer turn reads the saved conversation.
    assert sender.calls[1]["task"] == f"Editor: {state['conversation'][2]['content']}"


def test_graph_without_counter_defaults_to_one_loop():
    app = build_one_to_one_graph(EchoAgent("A"), EchoAgent("B")).compile()
    state = app.invoke({"conversation": [{"role": "User", "content": "go"}]})
    assert roles(state["conversation"]) == ["User", "A", "B"]


def test_names_langgraph_cannot_use_as_nodes_still_work():
    # ":" and "|" are reserved in node names; "conversation" is a state key.
    sender, receiver = EchoAgent("team:writer"), EchoAgent("conversation")
    result = one_to_one(sender, receiver, "go", max_loops=2)
    assert roles(result) == ["User", "team:writer", "conversation", "team:writer", "conversation"]
    assert receiver.calls[0]["task"] == "team:writer: team:writer got: go"
    nodes = set(build_one_to_one_graph(sender, receiver).compile().get_graph().nodes)
    assert {"team_writer", "conversation_"} <= nodes
