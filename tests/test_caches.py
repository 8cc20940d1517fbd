"""Caches keyed by agents or functions stay bounded or weak, so a service that builds its
agents per request stays flat; and one compiled graph serves every agent set of a topology
without mixing one request's agents into another's run."""

from __future__ import annotations

import asyncio
import gc
import weakref

from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core import schema
from swarmgraph.graph.core.schema import tool_spec
from swarmgraph.graph.core.types import transfer_tool


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _handoff_then_answer(messages: list) -> object:
    if messages[-1].type == "human":
        return scripted_tool_call("transfer_to_sales")
    return f"answer from {messages[0].content}"


def _per_request_agents(user_name: str) -> tuple[Agent, Agent]:
    """A fresh triage -> sales pair with per-user instructions and a fresh tool function."""

    def lookup(order_id: str, context_variables: dict) -> Result:
        """Look an order up."""
        return Result(value="found", context_variables={"order": order_id})

    sales = Agent(name="Sales", instructions=f"Sell to {user_name}.", functions=[lookup])
    triage = Agent(name="Triage", instructions=f"Greet {user_name}.", handoffs=[sales])
    return triage, sales


def test_a_dropped_agent_set_is_garbage_collected_after_runs():
    swarm = Swarm(chat_model=ScriptedChatModel([], respond=_handoff_then_answer))
    # The first set of a topology is what its compiled graph was built from (kept with the
    # graph, one per topology, bounded); every later request's set must die with the request.
    first = _per_request_agents("first")
    swarm.run(first[0], [_user("hi")])
    refs = []
    for n in range(3):
        triage, sales = _per_request_agents(f"user{n}")
        response = swarm.run(triage, [_user("hi")])
        assert response.agent is sales
        refs += [weakref.ref(triage), weakref.ref(sales), weakref.ref(sales.functions[0])]
        del triage, sales, response
    # The Swarm's bounded start cache keeps the most recent request alive; push it out.
    swarm._starts.clear()
    gc.collect()
    dead = [ref() is None for ref in refs]
    assert all(dead), dead


def test_a_transfer_tool_lives_as_long_as_its_target():
    target = Agent(name="Refunds")
    tool = transfer_tool(target)
    assert transfer_tool(target) is tool  # cached: the schema is built once
    target_ref, tool_ref = weakref.ref(target), weakref.ref(tool)
    del target, tool
    gc.collect()
    assert target_ref() is None and tool_ref() is None


def test_functions_made_per_request_share_one_spec_and_the_cache_is_bounded():
    def make(default: int = 1):
        def lookup(order_id: str, limit: int = default) -> str:
            """Look an order up."""
            return order_id

        return lookup

    first, second, other = make(), make(), make(2)
    assert tool_spec(first) is tool_spec(second)  # same code, defaults and annotations
    assert tool_spec(other) is not tool_spec(first)  # a different default: its own spec
    for n in range(schema._BY_CODE_MAX + 50):  # distinct docstrings: distinct entries
        func = make()
        func.__doc__ = f"doc {n}"
        tool_spec(func)
    assert len(schema._by_code) <= schema._BY_CODE_MAX


def test_a_copied_agent_gets_its_own_transfer_tool():
    sales = Agent(name="Sales")
    copy = sales.model_copy()
    assert transfer_tool(copy)() is copy
    assert transfer_tool(sales)() is sales


def test_one_graph_per_topology_and_each_run_reads_its_own_agents():
    model = ScriptedChatModel([], respond=_handoff_then_answer)
    swarm = Swarm(chat_model=model)
    answers = []
    for name in ("ann", "bob", "cy"):
        triage, sales = _per_request_agents(name)
        response = swarm.run(triage, [_user("hi")])
        assert response.agent is sales
        answers.append(response.messages[-1]["content"])
    assert answers == [
        "answer from Sell to ann.",
        "answer from Sell to bob.",
        "answer from Sell to cy.",
    ]
    assert len(swarm._graphs) == 1


def test_concurrent_runs_on_one_topology_never_swap_agents():
    model = ScriptedChatModel([], respond=_handoff_then_answer, latency=0.001)
    swarm = Swarm(chat_model=model)

    async def one(name: str) -> tuple[str, str, str]:
        triage, sales = _per_request_agents(name)
        response = await swarm.arun(triage, [_user("hi")])
        assert response.agent is sales
        return name, response.messages[-1]["content"], response.messages[-1]["sender"]

    async def many() -> list[tuple[str, str, str]]:
        return await asyncio.gather(*(one(f"u{n}") for n in range(40)))

    for name, answer, sender in asyncio.run(many()):
        assert answer == f"answer from Sell to {name}." and sender == "Sales"
    assert len(swarm._graphs) == 1


def test_unforeseen_agents_belong_to_their_run():
    def fresh(name: str):
        def make_helper():
            """Hand off to a helper nobody could see in advance."""
            return Agent(name="Helper", instructions=f"Help {name}.")

        return make_helper

    def respond(messages: list) -> object:
        if messages[-1].type == "human":
            return scripted_tool_call("make_helper")
        return f"answer from {messages[0].content}"

    swarm = Swarm(chat_model=ScriptedChatModel([], respond=respond))
    for name in ("ann", "bob"):
        start = Agent(name="Start", functions=[fresh(name)])
        response = swarm.run(start, [_user("hi")])
        assert response.agent.name == "Helper"
        assert response.messages[-1]["content"] == f"answer from Help {name}."
    assert all(not runtime.dynamic for _, runtime in swarm._graphs.values())


def test_max_turns_zero_returns_before_any_model_call():
    model = ScriptedChatModel(["never"])
    agent = Agent()
    response = Swarm(chat_model=model).run(agent, [_user("hi")], {"a": 1}, max_turns=0)
    assert response.messages == [] and response.agent is agent
    assert response.context_variables == {"a": 1} and model.calls == []
    events = list(Swarm(chat_model=model).run(agent, [_user("hi")], max_turns=0, stream=True))
    assert len(events) == 1 and events[0]["response"].messages == []


def test_langgraph_members_of_one_topology_are_read_per_run():
    from langchain.agents import create_agent

    def pair(fact: str) -> Agent:
        research = create_agent(ScriptedChatModel([fact]), tools=[], name="research")
        return Agent(name="Triage", handoffs=[research])

    triage_model = ScriptedChatModel(
        [], respond=lambda m: scripted_tool_call("transfer_to_research")
    )
    swarm = Swarm(chat_model=triage_model)
    answers = []
    for fact in ("Bees see ultraviolet.", "Ants farm aphids."):
        response = swarm.run(pair(fact), [_user("tell me")])
        assert response.agent.name == "research"
        answers.append(response.messages[-1]["content"])
    assert answers == ["Bees see ultraviolet.", "Ants farm aphids."]
    assert len(swarm._graphs) == 1


def test_discovery_runs_once_per_start_agent_and_reachable_agents_reads_it(monkeypatch):
    import swarmgraph.graph.swarm as swarm_module

    discovered: list[list[str]] = []
    find_topology = swarm_module.find_topology

    def counted(start):
        discovered.append([agent.name for agent in start])
        return find_topology(start)

    monkeypatch.setattr(swarm_module, "find_topology", counted)
    triage, sales = _per_request_agents("ming")
    swarm = Swarm(chat_model=ScriptedChatModel([], respond=_handoff_then_answer))
    for _ in range(3):  # steady state; each run ends on another agent, as a Session turn may
        assert swarm.run(triage, [_user("hi")]).agent is sales
    # What a Session asks to resume with a namesake: the same cache, in discovery order.
    assert swarm.reachable_agents(triage) == [triage, sales]
    assert discovered == [["Triage"]]
    assert swarm.reachable_agents(sales) == [sales]  # a new start agent: discovered once
    assert swarm.reachable_agents(sales) == [sales]
    assert discovered == [["Triage"], ["Sales"]]
