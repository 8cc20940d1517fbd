"""LangChain's tool callbacks for a swarm's tool calls (graph/core/tool_events.py): a handler, a
run collector and ``astream_events`` see each call start and end once, with its name, the
arguments the model sent and the text the model reads; on ``Swarm.run`` and the graph."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import collect_runs
from swarmgraph.graph.chat_models.scripted import scripted_tool_calls

from swarmgraph import Agent, ScriptedChatModel, Swarm, build_swarm_graph, scripted_tool_call

HI = [{"role": "user", "content": "weather?"}]


def lookup(city: str, context_variables: dict) -> str:
    context_variables["asked"] = city
    return f"sunny in {city}"


def broken() -> str:
    raise ValueError("no forecast")


class Seen(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_tool_start(self, serialized: dict, input_str: str, **kwargs: Any) -> None:
        self.events.append(("start", serialized["name"], kwargs["inputs"], kwargs["tool_call_id"]))

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.events.append(("end", output))

    def on_tool_error(self, error: BaseException, **kwargs: Any) -> None:
        self.events.append(("error", type(error).__name__))


def _script() -> list:
    two = scripted_tool_calls(
        [("lookup", {"city": "Oslo"}, "c1"), ("lookup", {"city": "Rome"}, "c2")]
    )
    return [two, "Sunny."]


def test_a_handler_on_the_graph_sees_each_call_once_with_the_models_arguments():
    seen = Seen()
    graph = build_swarm_graph([Agent(functions=[lookup])], chat_model=ScriptedChatModel(_script()))
    graph.compile().invoke({"messages": HI}, {"callbacks": [seen]})
    assert seen.events == [
        ("start", "lookup", {"city": "Oslo"}, "c1"),  # never the injected context_variables
        ("end", "sunny in Oslo"),
        ("start", "lookup", {"city": "Rome"}, "c2"),
        ("end", "sunny in Rome"),
    ]


def test_swarm_run_reports_tool_runs_to_a_run_collector():
    with collect_runs() as collected:
        Swarm(chat_model=ScriptedChatModel(_script())).run(Agent(functions=[lookup]), HI)
    runs = [*collected.traced_runs]
    runs += [c for r in collected.traced_runs for c in _descendants(r)]
    tools = [r for r in runs if r.run_type == "tool"]
    assert sorted((t.name, t.outputs["output"]) for t in tools) == [
        ("lookup", "sunny in Oslo"),
        ("lookup", "sunny in Rome"),
    ]


def _descendants(run: Any) -> list[Any]:
    found = []
    for child in run.child_runs:
        found += [child, *_descendants(child)]
    return found


def test_a_failing_tool_sends_an_error_event_and_the_model_still_reads_the_error():
    seen = Seen()
    model = ScriptedChatModel([scripted_tool_call("broken"), "Sorry."])
    graph = build_swarm_graph([Agent(functions=[broken])], chat_model=model).compile()
    state = graph.invoke({"messages": HI}, {"callbacks": [seen]})
    assert [e[0] for e in seen.events] == ["start", "error"]
    assert state["messages"][2].content.startswith("Error: broken raised ValueError")


def test_astream_events_shows_the_tool_runs():
    graph = build_swarm_graph([Agent(functions=[lookup])], chat_model=ScriptedChatModel(_script()))

    async def events() -> list[dict]:
        return [e async for e in graph.compile().astream_events({"messages": HI}, version="v2")]

    found = asyncio.run(events())
    starts = [e for e in found if e["event"] == "on_tool_start"]
    ends = [e for e in found if e["event"] == "on_tool_end"]
    assert [e["name"] for e in starts] == ["lookup", "lookup"]
    assert [e["data"]["input"] for e in starts] == [{"city": "Oslo"}, {"city": "Rome"}]
    assert [e["data"]["output"] for e in ends] == ["sunny in Oslo", "sunny in Rome"]


def test_no_handler_no_events_object():
    from swarmgraph.graph.core.tool_events import tool_events_for

    assert tool_events_for({}, False) is None
    assert tool_events_for({"callbacks": []}, True) is None
    assert tool_events_for({"callbacks": [Seen()]}, False) is not None
