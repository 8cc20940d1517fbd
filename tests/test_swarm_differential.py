"""The same programs through OpenAI's Swarm and through swarmgraph, with one scripted client.

The reference is PyPI's ``openai-swarm`` 0.1.1 (import name ``swarm``; OpenAI's own
``swarm/core.py``), installed by ``make test`` with ``--no-deps`` because its declared
dependencies (numpy, instructor, pre-commit, ...) are not needed to run it. Both sides get
the same duck-typed client: ``chat.completions.create(**kwargs)`` returns scripted openai SDK
objects and records every request. We compare what a user sees (messages, context, final
agent, streamed events, debug output) and what the provider sees (model, tools, tool_choice,
parallel_tool_calls, stream, messages).

Where the two differ on purpose, a test below pins the difference, and README's
"How it differs from OpenAI Swarm" lists it with the reason.
"""

# No ``from __future__ import annotations`` here: Swarm reads annotations as they are, so
# string annotations would turn every typed parameter into "string" on Swarm's side (one of
# the pinned differences below, made on purpose there).
import __future__

import copy
import datetime
import enum
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pydantic
import pytest

swarm = pytest.importorskip(
    "swarm",
    reason="the reference implementation: `python -m pip install --no-deps openai-swarm==0.1.1` "
    "(make test installs it)",
)
# Swarm 0.1.1 streams with pydantic v1's ``.json()``; the warning is about its code, not ours.
pytestmark = pytest.mark.filterwarnings("ignore:The `json` method is deprecated")

from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402
from swarm import Agent as RefAgent  # noqa: E402
from swarm import Swarm as RefSwarm  # noqa: E402
from swarm.types import Result as RefResult  # noqa: E402

import swarmgraph  # noqa: E402

# --------------------------------------------------------------------------- the client


@dataclass
class Reply:
    """One scripted completion: text and/or tool calls ``(id, name, arguments JSON)``."""

    content: str | None = None
    calls: tuple[tuple[str, str, str], ...] = ()


def text(content: str) -> Reply:
    return Reply(content=content)


def call(name: str, args: dict | None = None, id: str = "call_1") -> Reply:
    return Reply(calls=((id, name, json.dumps(args or {})),))


def calls(*items: tuple[str, str, dict]) -> Reply:
    return Reply(calls=tuple((id, name, json.dumps(args)) for id, name, args in items))


class ScriptedClient:
    """``client.chat.completions.create`` answering from a script; ``requests`` records all."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **kwargs: Any) -> Any:
        self.requests.append(copy.deepcopy(kwargs))
        reply = self.replies.pop(0)
        if kwargs.get("stream"):
            return iter(_chunks(reply))
        return _completion(reply)


def _tool_calls(reply: Reply) -> list[dict] | None:
    return [
        {"id": id, "type": "function", "function": {"name": name, "arguments": args}}
        for id, name, args in reply.calls
    ] or None


def _completion(reply: Reply) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                    "message": {
                        "role": "assistant",
                        "content": reply.content,
                        "tool_calls": _tool_calls(reply),
                    },
                }
            ],
        }
    )


def _chunks(reply: Reply) -> Iterator[ChatCompletionChunk]:
    """What OpenAI streams: a text reply opens with ``{"role", "content": ""}``; a tool-call
    reply opens with the role, ``content: null`` and its first call; the reply ends with an
    empty delta that carries ``finish_reason``."""
    deltas: list[dict] = []
    if reply.content:
        deltas.append({"role": "assistant", "content": ""})
        words = reply.content.split(" ")
        deltas += [{"content": w if i == 0 else " " + w} for i, w in enumerate(words)]
    for index, (id, name, args) in enumerate(reply.calls):
        head = {"index": index, "id": id, "type": "function"}
        delta: dict = {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}
        if not deltas:
            delta = {"role": "assistant", "content": None, **delta}
        deltas.append(delta)
        deltas.append({"tool_calls": [{"index": index, "function": {"arguments": args}}]})
    deltas.append({})
    for i, delta in enumerate(deltas):
        last = i == len(deltas) - 1
        finish = ("tool_calls" if reply.calls else "stop") if last else None
        yield ChatCompletionChunk.model_validate(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )


# --------------------------------------------------------------------------- the two sides


@dataclass(frozen=True)
class Impl:
    name: str
    Swarm: Any
    Agent: Any
    Result: Any


REFERENCE = Impl("swarm", RefSwarm, RefAgent, RefResult)
OURS = Impl("swarmgraph", swarmgraph.Swarm, swarmgraph.Agent, swarmgraph.Result)


@dataclass
class Outcome:
    response: Any  # the Response (for a stream: the final one)
    requests: list[dict]
    agents: dict[str, Any]  # the program's agents by role, to map the final agent back
    events: list[dict] | None = None


def run_both(
    program: Callable[[Impl], tuple[Any, dict[str, Any]]],
    replies: list[Reply],
    messages: list[dict],
    **run_kwargs: Any,
) -> tuple[Outcome, Outcome]:
    """Run ``program`` (builds the start agent and a ``role -> agent`` map) on both sides."""
    outcomes = []
    for impl in (REFERENCE, OURS):
        start, agents = program(impl)
        client = ScriptedClient(replies)
        out = impl.Swarm(client=client).run(
            agent=start, messages=copy.deepcopy(messages), **run_kwargs
        )
        events = None
        if run_kwargs.get("stream"):
            # copied as they come: Swarm edits each delta dict after yielding it
            events = [e if "response" in e else copy.deepcopy(e) for e in out]
            out = events[-1]["response"]
        assert not client.replies, f"{impl.name} left scripted replies unused"
        outcomes.append(Outcome(out, client.requests, agents, events))
    return outcomes[0], outcomes[1]


# Swarm keeps whatever fields the installed openai SDK's ChatCompletionMessage has; SDKs
# newer than Swarm 0.1.1 added ``annotations`` (None here). Our dicts keep the fields of
# Swarm's time (README, deviations).
_NEWER_SDK_FIELDS = ("annotations",)


def normalise(messages: list[dict]) -> list[dict]:
    out = []
    for message in messages:
        message = dict(message)
        for key in _NEWER_SDK_FIELDS:
            if message.get(key) is None:
                message.pop(key, None)
        out.append(message)
    return out


def final_role(outcome: Outcome) -> str:
    roles = [role for role, agent in outcome.agents.items() if agent is outcome.response.agent]
    assert len(roles) == 1, roles
    return roles[0]


def assert_same(ref: Outcome, ours: Outcome) -> None:
    """Messages, context, final agent and every request sent are equal."""
    assert normalise(ours.response.messages) == normalise(ref.response.messages)
    assert ours.response.context_variables == ref.response.context_variables
    assert final_role(ours) == final_role(ref)
    for mine, theirs in zip(ours.requests, ref.requests, strict=True):
        theirs = {**theirs, "messages": normalise(theirs["messages"])}
        assert mine == theirs


def user(content: str) -> dict:
    return {"role": "user", "content": content}


# --------------------------------------------------------------------------- programs


def bare(impl: Impl):
    agent = impl.Agent(name="Agent", instructions="You are a helpful agent.")
    return agent, {"agent": agent}


def weather(impl: Impl):
    def get_weather(location, time="now"):
        """Get the current weather in a given location."""
        return "{'temp':67, 'unit':'F'}"

    def set_units(celsius: bool, days: int = 1, ratio: float = 1.0, tags: list = None):  # noqa: RUF013
        """Set the units."""
        return f"celsius={celsius} days={days}"

    agent = impl.Agent(name="Weather", model="gpt-4o-mini", functions=[get_weather, set_units])
    return agent, {"weather": agent}


def triage_and_sales(impl: Impl):
    def instructions(context_variables):
        return f"Help {context_variables['name']} (tier: {context_variables['tier']})."

    sales = impl.Agent(name="Sales Agent", instructions=instructions)

    def transfer_to_sales():
        """Hand the customer to sales."""
        return sales

    def remember_order(order_id: int, context_variables):
        """Remember the order."""
        return impl.Result(
            value=f"Noted {order_id}.",
            context_variables={"order_id": order_id, "seen": context_variables["name"]},
        )

    triage = impl.Agent(
        name="Triage", instructions="Route.", functions=[remember_order, transfer_to_sales]
    )
    return triage, {"triage": triage, "sales": sales}


def handoff_with_result(impl: Impl):
    refunds = impl.Agent(name="Refunds", instructions="Refund.", parallel_tool_calls=False)

    def escalate(reason):
        return impl.Result(value="escalated", agent=refunds, context_variables={"why": reason})

    def lookup(context_variables):
        context_variables["looked_up"] = True  # in place, as Swarm allows
        del context_variables["stale"]
        return "found"

    refunds.functions = [lookup]
    start = impl.Agent(name="Start", tool_choice="required", functions=[escalate])
    return start, {"start": start, "refunds": refunds}


# --------------------------------------------------------------------------- the same


def test_plain_reply():
    ref, ours = run_both(bare, [text("Hello! How can I help?")], [user("Hi!")])
    assert_same(ref, ours)


def test_tools_with_swarms_own_schemas_and_parallel_calls():
    replies = [
        calls(
            ("c1", "get_weather", {"location": "NYC"}),
            ("c2", "set_units", {"celsius": True, "days": 3}),
        ),
        text("It's 67F in NYC."),
    ]
    ref, ours = run_both(weather, replies, [user("Weather in NYC?")])
    assert_same(ref, ours)
    tools = ours.requests[0]["tools"]
    assert [t["function"]["name"] for t in tools] == ["get_weather", "set_units"]


def test_handoff_instructions_function_and_result_context():
    replies = [
        call("remember_order", {"order_id": 7}, id="c1"),
        call("transfer_to_sales", id="c2"),
        text("Bees are $5."),
    ]
    ref, ours = run_both(
        triage_and_sales, replies, [user("I want bees")], context_variables={"name": "Ming"}
    )
    assert_same(ref, ours)
    # the missing key reads as "" in both, and the new context reached the instructions
    assert ours.requests[2]["messages"][0]["content"] == "Help Ming (tier: )."
    assert final_role(ours) == "sales"


def test_result_handoff_in_place_context_edits_and_agent_options():
    replies = [call("escalate", {"reason": "broken"}, id="c1"), call("lookup", id="c2"), text("ok")]
    ref, ours = run_both(
        handoff_with_result,
        replies,
        [user("refund me")],
        context_variables={"stale": 1, "keep": 2},
    )
    assert_same(ref, ours)
    assert ours.response.context_variables == {"keep": 2, "why": "broken", "looked_up": True}
    assert ours.requests[0]["tool_choice"] == "required"
    assert ours.requests[1]["parallel_tool_calls"] is False


def test_unknown_tool_model_override_and_history():
    earlier = {
        "content": "Earlier answer.",
        "refusal": None,
        "role": "assistant",
        "audio": None,
        "function_call": None,
        "tool_calls": None,
        "sender": "Agent",
    }  # as an earlier Response gave it
    history = [user("earlier"), earlier, user("now")]
    replies = [call("nope", id="c1"), text("Sorry.")]
    ref, ours = run_both(bare, replies, history, model_override="gpt-4.1")
    assert_same(ref, ours)
    assert ours.response.messages[1]["content"] == "Error: Tool nope not found."
    assert {r["model"] for r in ours.requests} == {"gpt-4.1"}


@pytest.mark.parametrize(("max_turns", "execute_tools"), [(1, True), (float("inf"), False)])
def test_max_turns_and_execute_tools(max_turns, execute_tools):
    replies = [call("get_weather", {"location": "Oslo"})]
    ref, ours = run_both(
        weather,
        replies,
        [user("Weather?")],
        max_turns=max_turns,
        execute_tools=execute_tools,
    )
    assert_same(ref, ours)
    assert len(ours.response.messages) == (2 if execute_tools else 1)


def test_debug_output(capsys):
    stamp = re.compile(r"\[\x1b\[90m[0-9: -]+\x1b\[97m\]")

    def lines(impl: Impl) -> list[str]:
        start, _ = triage_and_sales(impl)
        client = ScriptedClient([call("transfer_to_sales", id="c1"), text("Hi.")])
        impl.Swarm(client=client).run(start, [user("bees")], {"name": "Ming"}, debug=True)
        out = stamp.sub("[time]", capsys.readouterr().out)
        # Swarm prints the SDK's ChatCompletionMessage object on receipt; we print its dict
        # (README, deviations): compare the other lines exactly.
        return [
            line.replace(", 'annotations': None", "")
            for line in out.splitlines()
            if "Received completion:" not in line
        ]

    theirs, mine = lines(REFERENCE), lines(OURS)
    assert mine == theirs
    assert any("Processing tool call: transfer_to_sales with arguments {}" in x for x in mine)


def _delta(event: dict) -> dict:
    event = dict(event)
    if event.get("audio", "absent") is None:  # a newer SDK's ChoiceDelta field (see above)
        del event["audio"]
    return event


def _gist(message: dict) -> tuple:
    """What a message says, whatever dict shape carries it."""
    calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in message.get("tool_calls") or []
    ]
    return message["role"], message.get("content") or None, calls, message.get("tool_call_id")


def test_streamed_events_match_delta_for_delta():
    replies = [
        call("remember_order", {"order_id": 7}, id="c1"),
        call("transfer_to_sales", id="c2"),
        text("Bees are $5 today."),
    ]
    ref, ours = run_both(
        triage_and_sales, replies, [user("bees")], context_variables={"name": "Ming"}, stream=True
    )
    assert [_delta(e) for e in ours.events[:-1]] == [_delta(e) for e in ref.events[:-1]]
    assert ours.response.context_variables == ref.response.context_variables
    assert final_role(ours) == final_role(ref) == "sales"
    assert [_gist(m) for m in ours.response.messages] == [_gist(m) for m in ref.response.messages]
    for mine, theirs in zip(ours.requests, ref.requests, strict=True):
        assert [_gist(m) for m in mine.pop("messages")[1:]] == [
            _gist(m) for m in theirs.pop("messages")[1:]
        ]
        assert mine == theirs


def test_streamed_response_has_the_non_streamed_shape():
    """Pinned difference: Swarm's streamed run builds sparser message dicts and stamps the
    *first* agent's name as every message's sender; ours is the non-streamed Response."""
    replies = [call("transfer_to_sales", id="c1"), text("Hi.")]
    ref, ours = run_both(triage_and_sales, replies, [user("x")], stream=True)
    assert ref.response.messages[-1]["sender"] == "Triage"  # Swarm's, after the handoff
    assert ours.response.messages[-1]["sender"] == "Sales Agent"
    assert ref.response.messages[0]["content"] == "" and "refusal" not in ref.response.messages[0]
    transfer = {"arguments": "{}", "name": "transfer_to_sales"}
    assert ours.response.messages[0] == {
        "content": None,
        "refusal": None,
        "role": "assistant",
        "audio": None,
        "function_call": None,
        "tool_calls": [{"id": "c1", "function": transfer, "type": "function"}],
        "sender": "Triage",
    }


# --------------------------------------------------------------------------- differences


def _returns(value: Any):
    def program(impl: Impl):
        def report():
            return value

        agent = impl.Agent(functions=[report])
        return agent, {"agent": agent}

    return program


@pytest.mark.parametrize("value", [{"ok": True, "name": "Zoë"}, [1, "two", None], (1, 2)])
def test_dict_and_list_results_are_sent_as_json(value):
    """Pinned difference: Swarm sends ``str(value)`` (Python repr, not JSON)."""
    ref, ours = run_both(_returns(value), [call("report"), text("ok")], [user("x")])
    assert ref.response.messages[1]["content"] == str(value)
    assert ours.response.messages[1]["content"] == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("value", ["text", 42, 1.5, None, True])
def test_other_results_are_str_as_in_swarm(value):
    ref, ours = run_both(_returns(value), [call("report"), text("ok")], [user("x")])
    assert_same(ref, ours)


def _schemas(func: Callable) -> tuple[dict, dict]:
    return swarm.util.function_to_json(func), swarmgraph.function_to_json(func)


def test_untyped_parameters_gain_docstring_descriptions():
    """Pinned difference: per-argument docstring descriptions are added; the rest of Swarm's
    output is kept, including "string" for untyped parameters."""

    def book(city, nights=1):
        """Book a hotel.

        Args:
            city: Where to stay.
            nights: How many nights.
        """

    theirs, ours = _schemas(book)
    assert theirs["function"]["parameters"]["properties"] == {
        "city": {"type": "string"},
        "nights": {"type": "string"},
    }
    assert ours["function"]["parameters"]["properties"] == {
        "city": {"type": "string", "description": "Where to stay."},
        "nights": {"type": "string", "description": "How many nights."},
    }
    for schema in (theirs, ours):
        schema["function"]["parameters"]["properties"] = {}
    assert ours == theirs


def test_postponed_annotations_give_real_types():
    """Pinned difference: under ``from __future__ import annotations`` Swarm sees strings and
    says "string" for every parameter; the annotations are resolved here."""
    namespace: dict[str, Any] = {}
    source = 'def pay(amount: int, urgent: bool = False):\n    "Pay."\n'
    flags = __future__.annotations.compiler_flag
    exec(compile(source, "<tool>", "exec", flags=flags, dont_inherit=True), namespace)
    theirs, ours = _schemas(namespace["pay"])
    assert theirs["function"]["parameters"]["properties"] == {
        "amount": {"type": "string"},
        "urgent": {"type": "string"},
    }
    assert ours["function"]["parameters"]["properties"] == {
        "amount": {"type": "integer"},
        "urgent": {"type": "boolean"},
    }


def test_sparse_history_messages_are_sent_in_full_shape():
    """Pinned difference: an assistant message you pass in the history is re-sent in Swarm's
    full assistant shape (missing fields as null); Swarm forwards the dict as given."""
    history = [user("a"), {"role": "assistant", "content": "b", "sender": "Agent"}, user("c")]
    ref, ours = run_both(bare, [text("d")], history)
    assert ref.requests[0]["messages"][2] == history[1]
    assert ours.requests[0]["messages"][2] == {
        "content": "b",
        "refusal": None,
        "role": "assistant",
        "audio": None,
        "function_call": None,
        "tool_calls": None,
        "sender": "Agent",
    }
    assert normalise(ours.response.messages) == normalise(ref.response.messages)


def test_streamed_text_reply_opens_with_empty_content_and_ends_with_the_empty_delta():
    """OpenAI opens a text reply with ``{"role", "content": ""}`` and closes it with an empty
    delta carrying ``finish_reason``; Swarm yields both, and so do we."""
    ref, ours = run_both(bare, [text("Hello there.")], [user("Hi!")], stream=True)
    assert [_delta(e) for e in ours.events[:-1]] == [_delta(e) for e in ref.events[:-1]]
    opening, closing = ours.events[1], ours.events[-3]
    assert opening["content"] == "" and opening["role"] == "assistant"
    assert opening["sender"] == "Agent"
    assert closing == {
        "content": None,
        "function_call": None,
        "refusal": None,
        "role": None,
        "tool_calls": None,
    }
    assert ours.events[-2] == {"delim": "end"}


def _greeter(impl: Impl):
    ran: list[str] = []

    def greet(name):
        """Greet someone."""
        ran.append(name)
        return f"Hi {name}"

    agent = impl.Agent(name="Greeter", functions=[greet])
    return agent, {"greeter": agent, "ran": ran}


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_arguments_are_an_error_streamed_or_not(stream):
    """Pinned difference: Swarm's ``json.loads`` raises on ``'{"name": "Bo"'`` and the run
    crashes; here the call is answered ``Error: ... not valid JSON`` and the tool does not
    run, streamed or not (LangChain's streaming would repair the text: one rule for both)."""
    broken = Reply(calls=(("c1", "greet", '{"name": "Bo"'),))
    with pytest.raises(json.JSONDecodeError):
        start, _ = _greeter(REFERENCE)
        out = RefSwarm(client=ScriptedClient([broken, text("x")])).run(
            agent=start, messages=[user("greet Bo")], stream=stream
        )
        if stream:
            list(out)
    start, agents = _greeter(OURS)
    client = ScriptedClient([broken, text("Sorry, let me retry.")])
    out = swarmgraph.Swarm(client=client).run(start, [user("greet Bo")], stream=stream)
    response = list(out)[-1]["response"] if stream else out
    assert agents["ran"] == []  # the tool never saw arguments the model did not finish
    answer = response.messages[1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "c1"
    assert answer["content"].startswith("Error: greet: arguments are not valid JSON")
    call = response.messages[0]["tool_calls"][0]["function"]
    assert call == {"arguments": '{"name": "Bo"', "name": "greet"}  # as the model sent it
    assert client.requests[1]["messages"][-1]["content"] == answer["content"]


def test_tool_results_are_streamed_only_when_asked_after_the_reply_that_called_them():
    """Ours: ``tool_results=True`` adds ``{"tool_result": message}`` events (a terminal shows
    them live); without it the stream is Swarm's, event for event."""
    replies = [call("remember_order", {"order_id": 7}, id="c1"), text("Noted.")]

    def events(**kwargs: Any) -> list[dict]:
        start, _ = triage_and_sales(OURS)
        out = OURS.Swarm(client=ScriptedClient(replies)).run(
            start, [user("order 7")], {"name": "Ming"}, stream=True, **kwargs
        )
        return [e for e in out if "response" not in e]

    plain, with_results = events(), events(tool_results=True)
    assert [e for e in with_results if "tool_result" not in e] == plain
    at = next(i for i, e in enumerate(with_results) if "tool_result" in e)
    assert with_results[at - 1] == {"delim": "end"} and with_results[at + 1] == {"delim": "start"}
    assert with_results[at]["tool_result"] == {
        "role": "tool",
        "tool_call_id": "c1",
        "tool_name": "remember_order",
        "content": "Noted 7.",
    }


def test_empty_content_beside_tool_calls_is_kept_as_swarm_keeps_it():
    """vLLM, Ollama and Swarm's own test mock send ``content: ""`` beside tool calls: the
    message, and the next request's copy of it, keep ``""`` on both sides (null stays null)."""
    for content in ("", None):
        replies = [
            Reply(content=content, calls=(("c1", "remember_order", '{"order_id": 7}'),)),
            text("Noted."),
        ]
        ref, ours = run_both(
            triage_and_sales, replies, [user("7")], context_variables={"name": "Ming"}
        )
        assert_same(ref, ours)
        assert ours.response.messages[0]["content"] == content
        assert ours.requests[1]["messages"][2]["content"] == content


def test_streamed_tool_call_reply_opens_with_null_content():
    """OpenAI opens a tool-call reply with the role, ``content: null`` and its first call;
    Swarm yields that delta as it is, and so do we (not ``""``, a text reply's opening)."""
    replies = [call("remember_order", {"order_id": 7}, id="c1"), text("Noted.")]
    ref, ours = run_both(
        triage_and_sales, replies, [user("7")], context_variables={"name": "Ming"}, stream=True
    )
    assert _delta(ours.events[1]) == _delta(ref.events[1])
    assert ours.events[1]["content"] is None and ours.events[1]["tool_calls"]


def _forced(choice: Any):
    def program(impl: Impl):
        def lookup(order_id: int):
            """Look an order up."""
            return f"order {order_id}"

        agent = impl.Agent(name="Desk", functions=[lookup], tool_choice=choice)
        return agent, {"desk": agent}

    return program


def test_openai_tool_choices_are_sent_as_swarm_sends_them():
    for choice in ("required", "auto", "none"):  # Swarm's Agent.tool_choice is a str
        replies = [text("ok")]
        ref, ours = run_both(_forced(choice), replies, [user("order 7")])
        assert_same(ref, ours)
        assert ours.requests[0]["tool_choice"] == choice


def test_a_bare_tool_name_as_tool_choice_is_sent_as_openai_accepts_it():
    """Pinned difference: Swarm sends ``Agent(tool_choice="lookup")`` as the bare string,
    which OpenAI refuses (it accepts none, auto, required or a function object); we send
    what ``ChatOpenAI`` sends for a tool's name. LangChain's ``"any"`` becomes ``required``."""
    ref, ours = run_both(_forced("lookup"), [text("ok")], [user("order 7")])
    assert ref.requests[0]["tool_choice"] == "lookup"
    assert ours.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    _, ours = run_both(_forced("any"), [text("ok")], [user("order 7")])
    assert ours.requests[0]["tool_choice"] == "required"


class _RoleFirstClient(ScriptedClient):
    """A provider that opens a streamed tool-call reply with the role alone, ``content:
    null`` (no tool call yet), as some OpenAI-compatible servers do."""

    def _create(self, **kwargs: Any) -> Any:
        out = super()._create(**kwargs)
        if not kwargs.get("stream"):
            return out
        chunks = list(out)
        if not chunks[0].choices[0].delta.tool_calls:  # a text reply: OpenAI's opening
            return iter(chunks)
        opening = chunks[0].model_copy(deep=True)
        delta = opening.choices[0].delta
        delta.content, delta.tool_calls, delta.refusal = None, None, None
        first = chunks[0].choices[0].delta
        first.role = None
        return iter([opening, *chunks])


def test_a_reply_opened_by_the_role_alone_and_null_is_yielded_with_null():
    """The opening delta's null reaches the stream as Swarm yields it (LangChain's chunk
    content is a str: the adapter marks the null); the text reply opens with OpenAI's ""."""
    replies = [call("remember_order", {"order_id": 7}, id="c1"), text("Noted.")]
    streams = []
    for impl in (REFERENCE, OURS):
        start, _ = triage_and_sales(impl)
        client = _RoleFirstClient(replies)
        out = impl.Swarm(client=client).run(
            agent=start, messages=[user("7")], context_variables={"name": "Ming"}, stream=True
        )
        streams.append([e if "response" in e else copy.deepcopy(e) for e in out])
    ref, ours = streams
    assert [_delta(e) for e in ours[:-1]] == [_delta(e) for e in ref[:-1]]
    openings = [e for e in ours if e.get("role") == "assistant"]
    assert [e["content"] for e in openings] == [None, ""]
    assert ours[-1]["response"].messages[0]["content"] is None  # the message as non-streamed


# ------------------------------------------- issue 30: arguments, context, handoffs in a reply


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def _painter(impl: Impl):
    got: list[tuple] = []

    def paint(colour: Colour, day: datetime.date, count: int):
        """Paint."""
        got.append((colour, day, count))
        return f"{colour == 'blue'} {colour!r} {day!r} {count!r}"

    @pydantic.validate_call  # a tool that asks for conversion itself, the same in both
    def paint_typed(colour: Colour, day: datetime.date):
        """Paint, typed."""
        got.append((colour, day))
        return f"{colour!r} {day!r}"

    agent = impl.Agent(name="Painter", functions=[paint, paint_typed])
    return agent, {"painter": agent, "got": got}


def assert_same_run(ref: Outcome, ours: Outcome) -> None:
    """Messages, context and final agent equal (the requests may differ: our schemas say more)."""
    assert normalise(ours.response.messages) == normalise(ref.response.messages)
    assert ours.response.context_variables == ref.response.context_variables
    assert final_role(ours) == final_role(ref)


def test_tool_arguments_reach_the_tool_as_the_model_sent_them():
    """Swarm passes ``json.loads`` of the arguments: an Enum parameter gets ``"blue"`` (so
    ``colour == "blue"`` holds), a date its text, ``"5"`` for an int stays ``"5"``. A tool
    that wants conversion says so (``@pydantic.validate_call``), and gets it in both."""
    sent = {"colour": "blue", "day": "2026-12-24", "count": "5"}
    replies = [
        calls(("c1", "paint", sent), ("c2", "paint_typed", {"colour": "red", "day": "2026-12-25"})),
        text("Painted."),
    ]
    ref, ours = run_both(_painter, replies, [user("paint")])
    assert_same_run(ref, ours)
    assert ours.agents["got"] == ref.agents["got"]
    assert ours.agents["got"][0] == tuple(sent.values())  # the JSON values, unconverted
    assert ours.response.messages[1]["content"].startswith("True ")
    assert ours.agents["got"][1] == (Colour.RED, datetime.date(2026, 12, 25))  # the opt-in


def test_arguments_that_cannot_fit_are_refused_where_swarm_passes_them_on():
    """Pinned difference: ``"abc"`` for an ``int`` reaches the tool under Swarm; here the call
    is answered with an error the model reads, and the tool does not run."""
    replies = [call("paint", {"colour": "blue", "day": "2026-12-24", "count": "abc"}), text("x")]
    ref, ours = run_both(_painter, replies, [user("paint")])
    assert ref.agents["got"] == [(Colour.BLUE.value, "2026-12-24", "abc")]
    assert ours.agents["got"] == []
    answer = ours.response.messages[1]["content"]
    assert answer.startswith("Error: paint: argument 'count': Input should be a valid integer")


def _order_desk(impl: Impl):
    def instructions(context_variables):
        return f"Order {context_variables.get('order_id')}, {context_variables.get('both')}."

    def set_order(context_variables):
        """Set the order."""
        context_variables["in_place"] = "set"
        return impl.Result(value="set", context_variables={"order_id": 7, "both": "result"})

    def read_order(context_variables):
        """Read the order."""
        seen = f"{context_variables.get('order_id')} {context_variables.get('in_place')}"
        context_variables["both"] = "in place"  # written after set_order's Result: loses
        return seen

    agent = impl.Agent(name="Desk", instructions=instructions, functions=[set_order, read_order])
    return agent, {"desk": agent}


@pytest.mark.parametrize("stream", [False, True])
def test_result_context_is_applied_after_every_call_of_the_reply(stream):
    """Swarm collects each call's ``Result.context_variables`` and updates the context after
    the batch: a later call of the same reply sees in-place writes only, and a Result update
    beats an in-place write of the same key made after it."""
    replies = [calls(("c1", "set_order", {}), ("c2", "read_order", {})), text("Done.")]
    ref, ours = run_both(
        _order_desk, replies, [user("order")], context_variables={"k": 1}, stream=stream
    )
    if stream:  # Swarm's streamed messages are sparser (a pinned difference): compare the gist
        assert [_gist(m) for m in ours.response.messages] == [
            _gist(m) for m in ref.response.messages
        ]
        assert ours.response.context_variables == ref.response.context_variables
    else:
        assert_same(ref, ours)  # the tool messages, the context, the next request's prompt
    assert ours.response.messages[2]["content"] == "None set"
    assert ours.response.context_variables == {
        "k": 1,
        "in_place": "set",
        "order_id": 7,
        "both": "result",
    }
    assert ours.requests[1]["messages"][0]["content"] == "Order 7, result."


def _two_transfers(impl: Impl):
    ran: list[str] = []
    a = impl.Agent(name="A", instructions="A.")
    b = impl.Agent(name="B", instructions="B.")

    def transfer_to_a(context_variables):
        """To A."""
        ran.append("a")
        context_variables["went"] = [*context_variables.get("went", []), "a"]
        return a

    def transfer_to_b(reason):
        """To B."""
        ran.append("b")
        return impl.Result(value=f"B: {reason}", agent=b, context_variables={"why": reason})

    start = impl.Agent(name="Start", functions=[transfer_to_a, transfer_to_b])
    return start, {"start": start, "a": a, "b": b, "ran": ran}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_two_handoffs_in_one_reply_every_tool_runs_and_the_last_agent_wins(order, stream):
    """Swarm runs every call of the reply; each tool message is that tool's own result, both
    tools' context changes land, and the agent the last call returned takes over."""
    args = {"a": {}, "b": {"reason": "refund"}}
    reply = calls(*((f"c_{x}", f"transfer_to_{x}", args[x]) for x in order))
    ref, ours = run_both(_two_transfers, [reply, text("Here.")], [user("help")], stream=stream)
    if stream:  # Swarm's streamed messages are sparser (a pinned difference): compare the gist
        assert [_gist(m) for m in ours.response.messages] == [
            _gist(m) for m in ref.response.messages
        ]
        assert ours.response.context_variables == ref.response.context_variables
        assert final_role(ours) == final_role(ref)
    else:
        assert_same(ref, ours)
    assert final_role(ours) == order[-1]
    assert ours.agents["ran"] == list(order)
    answers = {m["tool_call_id"]: m["content"] for m in ours.response.messages[1:3]}
    assert answers == {"c_a": '{"assistant": "A"}', "c_b": "B: refund"}
    assert ours.response.context_variables == {"went": ["a"], "why": "refund"}


# --------------------------------------------------------------------------- issue 30 audit


def _run_ours(program: Callable[[Impl], tuple[Any, dict[str, Any]]], replies: list[Reply],
              stream: bool) -> tuple[Any, dict[str, Any], ScriptedClient]:  # fmt: skip
    start, agents = program(OURS)
    client = ScriptedClient(replies)
    out = swarmgraph.Swarm(client=client).run(start, [user("hi")], stream=stream)
    return (list(out)[-1]["response"] if stream else out), agents, client


def _counter(impl: Impl):
    ran: list[int] = []

    def count(step: int = 1):
        """Count."""
        ran.append(step)
        return f"counted {step}"

    agent = impl.Agent(name="Counter", functions=[count])
    return agent, {"counter": agent, "ran": ran}


@pytest.mark.parametrize("stream", [False, True])
def test_empty_argument_text_is_no_arguments_where_swarm_raises(stream):
    """Pinned difference: ``arguments: ""`` (some providers send it for a call without
    arguments) ends Swarm's run in ``json.loads``; here it is ``{}`` and the tool runs with
    its defaults, streamed or not."""
    empty = Reply(calls=(("c1", "count", ""),))
    with pytest.raises(json.JSONDecodeError):
        start, _ = _counter(REFERENCE)
        out = RefSwarm(client=ScriptedClient([empty, text("x")])).run(
            agent=start, messages=[user("hi")], stream=stream
        )
        if stream:
            list(out)
    response, agents, client = _run_ours(_counter, [empty, text("Counted.")], stream)
    assert agents["ran"] == [1]
    assert response.messages[1]["content"] == "counted 1"
    assert client.requests[1]["messages"][-1]["content"] == "counted 1"


@pytest.mark.parametrize("stream", [False, True])
def test_null_arguments_are_answered_as_not_an_object_where_swarm_raises(stream):
    """Pinned difference: ``arguments: "null"`` is valid JSON but no object: Swarm calls
    ``f(**None)`` and the run ends in ``TypeError``; here the call is answered with what is
    wrong (not "not valid JSON") and the tool does not run."""
    null = Reply(calls=(("c1", "count", "null"),))
    with pytest.raises(TypeError):
        start, _ = _counter(REFERENCE)
        out = RefSwarm(client=ScriptedClient([null, text("x")])).run(
            agent=start, messages=[user("hi")], stream=stream
        )
        if stream:
            list(out)
    response, agents, _ = _run_ours(_counter, [null, text("Sorry.")], stream)
    assert agents["ran"] == []
    assert response.messages[1]["content"] == (
        "Error: count: arguments must be a JSON object, got null"
    )


def test_a_bare_null_reply_comes_back_as_empty_text():
    """Pinned difference: a reply of ``content: null`` with nothing else (no tool call,
    refusal or audio: OpenAI does not send one) stays ``None`` in Swarm's message and is
    ``""`` here (a LangChain ``AIMessage`` holds text); the run ends the same way."""
    ref, ours = run_both(bare, [Reply(content=None)], [user("Hi!")])
    assert ref.response.messages[0]["content"] is None
    assert ours.response.messages[0]["content"] == ""
    rest = [
        {k: v for k, v in m.items() if k != "content"} for m in normalise(ours.response.messages)
    ]
    assert rest == [
        {k: v for k, v in m.items() if k != "content"} for m in normalise(ref.response.messages)
    ]
    assert ours.requests == [{**r, "messages": normalise(r["messages"])} for r in ref.requests]


def test_a_tool_that_raises_is_answered_where_swarm_raises():
    """Pinned difference: Swarm lets a tool's exception end the run; here the call is
    answered with an ``Error:`` the model reads and the run goes on to its answer."""

    def program(impl: Impl):
        def lookup(order_id: int):
            """Look an order up."""
            raise KeyError(order_id)

        agent = impl.Agent(name="Clerk", functions=[lookup])
        return agent, {"clerk": agent}

    replies = [call("lookup", {"order_id": 7}), text("I could not find order 7.")]
    with pytest.raises(KeyError):
        start, _ = program(REFERENCE)
        RefSwarm(client=ScriptedClient(replies)).run(agent=start, messages=[user("order 7?")])
    start, _ = program(OURS)
    client = ScriptedClient(replies)
    response = swarmgraph.Swarm(client=client).run(start, [user("order 7?")])
    answer = response.messages[1]
    assert answer["role"] == "tool" and answer["content"].startswith("Error: ")
    assert "KeyError" in answer["content"] and "7" in answer["content"]
    assert response.messages[-1]["content"] == "I could not find order 7."


def test_agents_with_equal_fields_are_two_agents_where_swarms_are_equal():
    """Pinned difference: Swarm's pydantic agents with equal fields are equal; ours are two
    agents (two graph nodes), and a handoff cycle recurses neither in ``==`` nor ``repr``."""
    assert RefAgent(name="Twin") == RefAgent(name="Twin")
    one, two = swarmgraph.Agent(name="Twin"), swarmgraph.Agent(name="Twin")
    assert one != two and one == one and len({one, two}) == 2
    one.functions, two.functions = [lambda: two], [lambda: one]
    assert "Twin" in repr(one) and one != two


# --------------------------------------------------------------------------- issue 40: on the wire


def run_both_on_stub(
    program: Callable[[Impl], tuple[Any, dict[str, Any]]],
    replies: list[Any],
    messages: list[Any],
    **run_kwargs: Any,
) -> tuple[Outcome, Outcome]:
    """``run_both`` through a real ``openai.OpenAI`` client and the loopback server: what
    each side sends is the JSON body the server received."""
    import openai
    from openai_stub import OpenAIStub

    outcomes = []
    for impl in (REFERENCE, OURS):
        start, agents = program(impl)
        with OpenAIStub(replies) as stub:
            client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
            out = impl.Swarm(client=client).run(
                agent=start, messages=copy.deepcopy(messages), **run_kwargs
            )
            assert stub.remaining == 0, f"{impl.name} left scripted replies unused"
            requests = stub.requests
        outcomes.append(Outcome(out, requests, agents))
    return outcomes[0], outcomes[1]


def assert_sent_as_swarm_sends(theirs: dict, mine: dict) -> None:
    """Every key Swarm sent, with its value; a key only ours sent is a field of the full
    assistant shape, null (the pinned "Message dicts have the fields of Swarm's time")."""
    assert {k: mine.get(k, "<missing>") for k in theirs} == theirs
    assert {k: mine[k] for k in mine.keys() - theirs.keys()} == dict.fromkeys(
        mine.keys() - theirs.keys()
    )


def _sdk_message(reply: Any, tools: list[dict] | None = None) -> Any:
    """``completion.choices[0].message`` from a real openai call (the Swarm idiom)."""
    import openai
    from openai_stub import OpenAIStub

    with OpenAIStub([reply]) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        extra = {"tools": tools} if tools else {}
        completion = client.chat.completions.create(
            model="gpt-4o", messages=[user("earlier")], **extra
        )
    return completion.choices[0].message


def test_an_openai_message_object_in_the_history_is_sent_as_swarm_sends_it():
    """``messages.append(completion.choices[0].message)``: Swarm forwards the SDK object,
    which the openai client sends as the fields it holds; so do we (in the full shape)."""
    from openai_stub import stub_text, stub_tool_call

    answer = _sdk_message(stub_text("Earlier answer."))
    tools = [swarm.util.function_to_json(lambda location: None)]
    tools[0]["function"]["name"] = "get_weather"
    asked = _sdk_message(stub_tool_call("get_weather", {"location": "Oslo"}, id="c9"), tools)
    assert type(answer).__name__ == type(asked).__name__ == "ChatCompletionMessage"
    history = [
        user("earlier"),
        answer,
        user("and the weather?"),
        asked,
        {"role": "tool", "tool_call_id": "c9", "content": "cold"},
        user("thanks"),
    ]
    ref, ours = run_both_on_stub(weather, [stub_text("You're welcome.")], history)
    assert normalise(ours.response.messages) == normalise(ref.response.messages)
    (theirs,), (mine,) = ref.requests, ours.requests
    assert len(mine["messages"]) == len(theirs["messages"]) == 7
    for sent_by_swarm, sent_by_us in zip(theirs["messages"], mine["messages"], strict=True):
        assert_sent_as_swarm_sends(sent_by_swarm, sent_by_us)
    assert mine["messages"][4]["tool_calls"][0]["function"] == {
        "arguments": '{"location": "Oslo"}',
        "name": "get_weather",
    }
    assert {k: v for k, v in mine.items() if k != "messages"} == {
        k: v for k, v in theirs.items() if k != "messages"
    }


def run_both_default_path(
    program: Callable[[Impl], tuple[Any, dict[str, Any]]],
    replies: list[Any],
    messages: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    **run_kwargs: Any,
) -> tuple[Outcome, Outcome]:
    """Swarm with an ``openai.OpenAI`` client, ours on its default model (``ChatOpenAI``
    from ``OPENAI_BASE_URL``), both against the loopback server."""
    import openai
    from openai_stub import OpenAIStub

    outcomes = []
    for impl in (REFERENCE, OURS):
        start, agents = program(impl)
        with OpenAIStub(replies) as stub:
            monkeypatch.delenv("OPENAI_API_KEY", raising=False)
            monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
            client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
            swarm_ = impl.Swarm(client=client) if impl is REFERENCE else impl.Swarm()
            out = swarm_.run(agent=start, messages=copy.deepcopy(messages), **run_kwargs)
            events = None
            if run_kwargs.get("stream"):
                events = [e if "response" in e else copy.deepcopy(e) for e in out]
                out = events[-1]["response"]
            assert stub.remaining == 0, f"{impl.name} left scripted replies unused"
            requests = stub.requests
        outcomes.append(Outcome(out, requests, agents, events))
    return outcomes[0], outcomes[1]


def test_default_model_yields_a_null_opening_of_a_tool_call_reply_as_swarm_does(monkeypatch):
    """A server that opens a streamed tool-call reply with ``{"role", "content": null}``
    alone: Swarm yields that null (its REPL prints no ``S: :`` for it), and so does the
    default ``ChatOpenAI`` path, whose chunks hold text only."""
    from openai_stub import stub_text, stub_tool_call

    opened = stub_tool_call("remember_order", {"order_id": 7}, id="c1")
    opened.opening = {"role": "assistant", "content": None}
    ref, ours = run_both_default_path(
        triage_and_sales,
        [opened, stub_text("Noted.")],
        [user("7")],
        monkeypatch,
        context_variables={"name": "Ming"},
        stream=True,
    )
    assert ours.events is not None and ref.events is not None
    assert [_delta(e) for e in ours.events[:-1]] == [_delta(e) for e in ref.events[:-1]]
    openings = [e for e in ours.events if e.get("role") == "assistant"]
    assert [e["content"] for e in openings] == [None, ""]  # the tool-call reply, the text one


def test_default_model_keeps_empty_content_beside_tool_calls_as_swarm_does(monkeypatch):
    """Not streamed, a provider's ``content: ""`` beside tool calls stays ``""`` in the
    message and in the next request on the default ``ChatOpenAI`` path too (ChatOpenAI alone
    would send ``null``); OpenAI's ``null`` stays ``null``."""
    from openai_stub import stub_text, stub_tool_call

    for content in ("", None):
        reply = stub_tool_call("remember_order", {"order_id": 7}, id="c1", content=content)
        ref, ours = run_both_default_path(
            triage_and_sales,
            [reply, stub_text("Noted.")],
            [user("7")],
            monkeypatch,
            context_variables={"name": "Ming"},
        )
        assert normalise(ours.response.messages) == normalise(ref.response.messages)
        assert ours.response.messages[0]["content"] == content
        theirs, mine = ref.requests[1]["messages"][2], ours.requests[1]["messages"][2]
        assert theirs["content"] == mine["content"] == content


def test_extra_keys_on_input_messages_are_sent_as_swarm_sends_them():
    """``timestamp``, ``id``, an assistant's ``name``: Swarm sends the dicts it was given,
    and so does ``Swarm(client=...)``, which claims to send Swarm's own request."""
    transfer = {"arguments": "{}", "name": "transfer_to_sales"}
    history = [
        {**user("earlier"), "timestamp": "2026-12-01T09:00:00Z", "id": "m1"},
        {
            "content": None,
            "refusal": None,
            "role": "assistant",
            "audio": None,
            "function_call": None,
            "tool_calls": [{"id": "c0", "function": transfer, "type": "function"}],
            "sender": "Triage",
            "name": "triage_bot",
            "timestamp": "2026-12-01T09:00:01Z",
        },
        {
            "role": "tool",
            "tool_call_id": "c0",
            "tool_name": "transfer_to_sales",
            "content": '{"assistant": "Sales Agent"}',
            "id": "m3",
        },
        {**user("now"), "timestamp": "2026-12-01T09:05:00Z", "metadata": {"channel": "web"}},
    ]
    ref, ours = run_both(
        triage_and_sales, [text("Bees.")], history, context_variables={"name": "Ming"}
    )
    assert_same(ref, ours)
    sent = ours.requests[0]["messages"]
    assert [m.get("timestamp") for m in sent[1:]] == [m.get("timestamp") for m in history]
    assert sent[2]["name"] == "triage_bot" and sent[3]["id"] == "m3"


def test_tool_choice_without_functions_is_sent_as_swarm_sends_it():
    """``Agent(tool_choice="required")`` with no functions: Swarm sends ``tools=None`` and
    ``tool_choice="required"``; so does ``Swarm(client=...)``."""

    def program(impl: Impl):
        agent = impl.Agent(name="Forced", tool_choice="required")
        return agent, {"forced": agent}

    ref, ours = run_both(program, [text("ok")], [user("hi")])
    assert_same(ref, ours)
    assert (ours.requests[0]["tools"], ours.requests[0]["tool_choice"]) == (None, "required")


# ------------------------------------------------ issue 40: tool signatures Swarm cannot call


def _tool_program(*tools: Callable) -> Callable[[Impl], tuple[Any, dict[str, Any]]]:
    def program(impl: Impl):
        agent = impl.Agent(name="Tools", functions=list(tools))
        return agent, {"tools": agent}

    return program


def test_a_star_args_tool_is_refused_before_any_request_where_swarm_fails_on_the_call():
    """Pinned difference: Swarm tells the model ``args`` is a required string, then calls
    ``f(args=...)``, a ``TypeError`` that ends the run; here the tool is refused with a
    ``ToolSchemaError`` before the model is asked anything."""

    def tag(*args):
        """Tag things."""
        return ",".join(args)

    replies = [call("tag", {"args": "a"}), text("x")]
    with pytest.raises(TypeError, match="unexpected keyword argument 'args'"):
        RefSwarm(client=ScriptedClient(replies)).run(RefAgent(functions=[tag]), [user("tag")])
    assert swarm.util.function_to_json(tag)["function"]["parameters"]["required"] == ["args"]
    client = ScriptedClient(replies)
    with pytest.raises(swarmgraph.ToolSchemaError, match=r"'\*args' cannot be filled"):
        swarmgraph.Swarm(client=client).run(swarmgraph.Agent(functions=[tag]), [user("tag")])
    assert client.requests == []


def test_kwargs_is_left_out_of_the_schema_and_extra_arguments_reach_it():
    """Pinned difference: Swarm lists ``**kwargs`` as a required string parameter named
    ``kwargs``; here it is not in the schema, and arguments the model sends beyond the
    named ones reach it (unvalidated)."""
    got: list[dict] = []

    def note(topic: str, **kwargs):
        """Note a topic."""
        got.append(kwargs)
        return f"noted {topic}"

    theirs, ours = _schemas(note)
    assert theirs["function"]["parameters"]["required"] == ["topic", "kwargs"]
    assert ours["function"]["parameters"] == {
        "type": "object",
        "properties": {"topic": {"type": "string"}},
        "required": ["topic"],
    }
    replies = [call("note", {"topic": "bees", "colour": "gold"}), text("ok")]
    response, _, _ = _run_ours(_tool_program(note), replies, stream=False)
    assert got == [{"colour": "gold"}] and response.messages[1]["content"] == "noted bees"


def test_a_partial_is_a_tool_where_swarm_cannot_describe_it():
    """Pinned difference: ``functools.partial`` has no ``__name__``, so Swarm's schema
    step raises ``AttributeError``; here it is a tool named after its function, the
    keywords it binds hidden from the model."""
    import functools

    def greet(greeting: str, name: str):
        """Greet someone."""
        return f"{greeting}, {name}"

    hello = functools.partial(greet, greeting="Hello")
    with pytest.raises(AttributeError, match="__name__"):
        RefSwarm(client=ScriptedClient([text("x")])).run(RefAgent(functions=[hello]), [user("hi")])
    replies = [call("greet", {"name": "Ming"}), text("Done.")]
    response, _, client = _run_ours(_tool_program(hello), replies, stream=False)
    assert response.messages[1]["content"] == "Hello, Ming"
    assert client.requests[0]["tools"][0]["function"]["parameters"]["properties"] == {
        "name": {"type": "string"}
    }


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited")
def test_an_async_tool_is_awaited_where_swarm_sends_the_coroutine_repr():
    """Pinned difference: Swarm calls an ``async def`` tool and sends ``str()`` of the
    coroutine it gets (``<coroutine object ...>``), never running it; here it is awaited
    (in ``Swarm.run`` too) and its result is the answer."""
    ran: list[str] = []

    async def lookup(order_id: int):
        """Look an order up."""
        ran.append("ran")
        return f"order {order_id}: shipped"

    replies = [call("lookup", {"order_id": 7}), text("Shipped.")]
    ref, ours = run_both(_tool_program(lookup), replies, [user("order 7?")])
    assert ref.response.messages[1]["content"].startswith("<coroutine object")
    assert ours.response.messages[1]["content"] == "order 7: shipped"
    assert ran == ["ran"]  # once, ours: Swarm's coroutine never ran
