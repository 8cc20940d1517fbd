"""Exactly-once for agents discovery cannot see (issue 29/30 follow-up).

A Session turn whose discovered tools are all unmarked gets no effect ledger up front (the
steady path). A tool may still hand the conversation to an agent discovery never saw: one it
builds at run time, one it looks up in a directory object, one it names in ``Result(agent=)``.
That agent's ``@effect`` and ``@needs_approval`` tools must keep their promises all the same:
recorded before and after they run (never twice for one call, across crashes and retries, a
key injected), and an approval-marked call waits in ``session.pending`` instead of running.

The crash is an exception no ``except Exception`` catches, raised where a killed process would
stop (tests/test_effects.py does the same; the process-level matrix is test_effect_faults.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.graph.core.discovery import reachable_agents
from swarmgraph.graph.features.parallel import Parallel
from swarmgraph.memory import Session
from swarmgraph.memory.backends import open_store
from swarmgraph.memory.errors import UnknownAgentError, UnknownAgentWarning

from swarmgraph import ApprovalAlreadyDecided, effect, needs_approval

#: The backends each test taking ``url`` runs on (the ``url`` fixture of conftest.py).
URL_BACKENDS = ("sqlite", "memory", "postgres", "redis")


class Crash(BaseException):
    """Where a kill -9 would stop the process: nothing after it runs."""


class Provider:
    """A payment provider: each payment is logged with the idempotency key it came with;
    ``crash_after`` makes the next payment die right after the money moved."""

    def __init__(self) -> None:
        self.paid: list[tuple[int, str]] = []
        self.crash_after = False

    def pay_tool(self) -> Callable[..., str]:
        provider = self

        @effect
        def pay(order_id: int, idempotency_key: str) -> str:
            """Pay out a refund for an order."""
            provider.paid.append((order_id, idempotency_key))
            if provider.crash_after:
                provider.crash_after = False
                raise Crash("killed after paying")
            return f"Paid order {order_id}."

        return pay


class Directory:
    """Agents by name, looked up at run time (discovery reads no object's attributes)."""

    def __init__(self) -> None:
        self._agents: dict[str, Agent] = {}

    def add(self, agent: Agent) -> None:
        self._agents[agent.name] = agent

    def find(self, name: str) -> Agent:
        return self._agents[name]


#: Each builder gives a front desk and the Billing agent a later process names in
#: ``Session(agents=)`` to resume a conversation Billing holds (discovery cannot find it).
Desk = tuple[Agent, Agent]


def built_at_run_time(tools: Callable[[], list]) -> Desk:
    """A front desk whose handoff builds a fresh Billing agent on every call."""

    def transfer_to_billing() -> Agent:
        """Hand the customer to billing."""
        return Agent(name="Billing", functions=tools())

    return Agent(name="Front", functions=[transfer_to_billing]), transfer_to_billing()


def looked_up(tools: Callable[[], list]) -> Desk:
    """A front desk whose handoff looks Billing up in a directory object."""
    directory = Directory()
    directory.add(Agent(name="Billing", functions=tools()))

    def transfer_to_billing() -> Agent:
        """Hand the customer to billing."""
        return directory.find("Billing")

    return Agent(name="Front", functions=[transfer_to_billing]), directory.find("Billing")


def in_a_result(tools: Callable[[], list]) -> Desk:
    """A front desk whose handoff is a ``Result(agent=)`` to an agent it builds."""

    def transfer_to_billing() -> Result:
        """Hand the customer to billing."""
        return Result(value="Billing takes it.", agent=Agent(name="Billing", functions=tools()))

    return Agent(name="Front", functions=[transfer_to_billing]), Agent(
        name="Billing", functions=tools()
    )


HANDOFFS = [built_at_run_time, looked_up, in_a_result]


def _swarm(*replies) -> tuple[Swarm, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    return Swarm(chat_model=model), model


def _to_billing_then(name: str, args: dict, call_id: str, *rest) -> tuple[Swarm, ScriptedChatModel]:
    """A scripted model (an offline stand-in): hand off, then call ``name``, then ``rest``."""
    handoff = scripted_tool_call("transfer_to_billing", {}, id="h1")
    return _swarm(handoff, scripted_tool_call(name, args, id=call_id), *rest)


def _unseen(front: Agent) -> bool:
    """The premise of every test here: discovery from ``front`` never meets Billing."""
    return "Billing" not in [a.name for a in reachable_agents([front])]


@pytest.mark.parametrize("handoff", HANDOFFS, ids=lambda h: h.__name__)
def test_an_effect_of_an_unseen_agent_is_recorded_once_with_its_key(url, handoff):
    provider = Provider()
    front, billing = handoff(lambda: [provider.pay_tool()])
    assert _unseen(front)
    cid = fresh_id("unseen")
    swarm, _ = _to_billing_then("pay", {"order_id": 7}, "p1", "Paid.")
    response = Session(cid, url=url).run(swarm, front, "refund order 7", turn_id="t-1")
    assert response.agent.name == "Billing" and response.messages[-1]["content"] == "Paid."
    [(order, key)] = provider.paid
    assert order == 7 and len(key) == 32  # the ledger's key, injected (not the model's)
    assert list(open_store(url).records(cid, "effect"))  # the call was recorded
    # The same call in a later turn is another call: its own key (stable per call, as a
    # recorded key is; a missing ledger would derive it from the bare call id).
    swarm, _ = _swarm(scripted_tool_call("pay", {"order_id": 7}, id="p1"), "Paid again.")
    later = Session(cid, url=url, agents=[billing])  # Billing holds the conversation now
    assert later.run(swarm, front, "once more", turn_id="t-2").agent.name == "Billing"
    assert len(provider.paid) == 2 and provider.paid[0][1] != provider.paid[1][1]


@pytest.mark.parametrize("handoff", HANDOFFS, ids=lambda h: h.__name__)
def test_a_crash_after_an_unseen_agent_paid_never_pays_again_on_the_retry(url, handoff):
    provider = Provider()
    front, billing = handoff(lambda: [provider.pay_tool()])
    assert _unseen(front)
    cid = fresh_id("unseen-crash")
    provider.crash_after = True
    swarm, _ = _to_billing_then("pay", {"order_id": 7}, "p1", "Paid.")
    with pytest.raises(Crash):
        Session(cid, url=url).run(swarm, front, "refund order 7", turn_id="t")
    assert len(provider.paid) == 1
    assert Session(cid, url=url).unfinished == ["t"]  # the ledger opened the turn
    retry, model = _swarm("never called")
    resumed = Session(cid, url=url, agents=[billing])  # the agent holding the conversation
    response = resumed.run(retry, front, "refund order 7", turn_id="t")
    assert len(provider.paid) == 1  # not paid a second time
    [doubt] = response.pending  # in doubt: a human decides
    assert (doubt.tool, doubt.arguments, doubt.in_doubt) == ("pay", {"order_id": 7}, True)
    assert model.calls == []  # resumed from the call in flight: no new reply


@pytest.mark.parametrize("handoff", HANDOFFS, ids=lambda h: h.__name__)
def test_an_approval_marked_tool_of_an_unseen_agent_waits_and_is_decided_once(url, handoff):
    refunded: list[int] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        refunded.append(order_id)
        return f"Refunded order {order_id}."

    front, billing = handoff(lambda: [refund])
    assert _unseen(front)
    cid = fresh_id("unseen-approve")
    ask, _ = _to_billing_then("refund", {"order_id": 7}, "r1")
    [waiting] = Session(cid, url=url).run(ask, front, "refund order 7").pending
    assert waiting.tool == "refund" and refunded == []  # it waits: nothing ran
    assert Session(cid, url=url).pending == [waiting]  # a later process sees it waiting
    later = Session(cid, url=url, agents=[billing])  # the agent holding the conversation
    done = later.run(_swarm("Refund sent.")[0], front, approvals={waiting.id: True})
    assert done.messages[0]["content"] == "Refunded order 7." and refunded == [7]
    # A second answer, from another process and turn id: the first decision stands.
    with pytest.raises(ApprovalAlreadyDecided) as late:
        again = Session(cid, url=url, agents=[billing])
        again.run(_swarm("x")[0], front, approvals={waiting.id: False})
    assert late.value.decision is True and refunded == [7]


def test_an_effect_of_an_agent_a_fan_out_builds_is_recorded_in_its_branch(url):
    provider = Provider()
    tech = Agent(name="Tech", model="tech")

    def ask_both() -> Parallel:
        """Ask billing and tech at once."""
        return Parallel(
            Agent(name="Billing", model="billing", functions=[provider.pay_tool()]), tech
        )

    desk = Agent(name="Desk", model="desk", functions=[ask_both])
    assert _unseen(desk)
    models = {
        "desk": ScriptedChatModel([scripted_tool_call("ask_both"), "Both done."]),
        "billing": ScriptedChatModel([scripted_tool_call("pay", {"order_id": 7}), "Refunded."]),
        "tech": ScriptedChatModel(["Router fine."]),
    }
    cid = fresh_id("unseen-branch")
    response = Session(cid, url=url).run(Swarm(chat_model=models.__getitem__), desk, "refund 7?")
    assert response.messages[-1]["content"] == "Both done."
    [(order, key)] = provider.paid
    assert order == 7 and len(key) == 32
    assert len(open_store(url).records(cid, "effect.done")) == 1  # recorded in its branch
    assert Session(cid, url=url).unfinished == []


@pytest.mark.parametrize("change", ["appended", "replaced in place"])
def test_a_marked_tool_given_to_a_reachable_agent_between_turns_is_recorded(url, change):
    provider = Provider()

    def balance() -> str:
        """The account's balance."""
        return "0 due"

    billing = Agent(name="Billing", functions=[balance])

    def transfer_to_billing() -> Agent:
        """Hand the customer to billing."""
        return billing

    front = Agent(name="Front", functions=[transfer_to_billing])
    cid = fresh_id("marked-later")
    pay = scripted_tool_call("pay", {"order_id": 7}, id="p1")
    # One Swarm for both turns: its discovery of Front is cached from the first.
    swarm, _ = _to_billing_then("balance", {}, "b1", "Nothing due.", pay, "Paid.")
    Session(cid, url=url).run(swarm, front, "what do I owe?")
    if change == "appended":
        billing.functions.append(provider.pay_tool())
    else:  # the same number of tools: only their identity says it changed
        billing.functions[0] = provider.pay_tool()
    Session(cid, url=url).run(swarm, front, "refund order 7", turn_id="t-pay")
    [(order, key)] = provider.paid
    assert order == 7 and len(key) == 32
    assert list(open_store(url).records(cid, "effect"))
    again = Session(cid, url=url).run(swarm, front, "refund order 7", turn_id="t-pay")
    assert again.messages[-1]["content"] == "Paid." and len(provider.paid) == 1  # replayed


def test_arun_records_an_unseen_agents_effect_too(url):
    provider = Provider()
    front, _ = built_at_run_time(lambda: [provider.pay_tool()])
    cid = fresh_id("unseen-async")
    swarm, _ = _to_billing_then("pay", {"order_id": 7}, "p1", "Paid.")
    response = asyncio.run(Session(cid, url=url).arun(swarm, front, "refund order 7"))
    assert response.messages[-1]["content"] == "Paid." and len(provider.paid) == 1
    assert list(open_store(url).records(cid, "effect.done"))  # recorded, off the event loop


#: How a turn is driven: ``Session.run``, ``Session.arun`` and ``Session.stream`` share one
#: turn (``Session._turn``); each must refuse the same way.
def _by_run(session: Session, swarm: Swarm, agent: Agent, *args, **kwargs):
    return session.run(swarm, agent, *args, **kwargs)


def _by_arun(session: Session, swarm: Swarm, agent: Agent, *args, **kwargs):
    return asyncio.run(session.arun(swarm, agent, *args, **kwargs))


def _by_stream(session: Session, swarm: Swarm, agent: Agent, *args, **kwargs):
    [*_, last] = session.stream(swarm, agent, *args, **kwargs)
    return last["response"]


DRIVERS = [_by_run, _by_arun, _by_stream]


def _crashed_in_doubt(url: str, cid: str, provider: Provider) -> Agent:
    """A turn 't' that died right after Billing (an agent discovery cannot see) paid."""
    front, _ = built_at_run_time(lambda: [provider.pay_tool()])
    provider.crash_after = True
    swarm, _ = _to_billing_then("pay", {"order_id": 7}, "p1", "Paid.")
    with pytest.raises(Crash):
        Session(cid, url=url).run(swarm, front, "refund order 7", turn_id="t")
    return front


@pytest.mark.parametrize("drive", DRIVERS, ids=lambda d: d.__name__)
def test_a_retry_that_cannot_find_the_agent_of_a_call_in_doubt_does_not_go_past_it(url, drive):
    provider = Provider()
    cid = fresh_id("unknown-doubt")
    front = _crashed_in_doubt(url, cid, provider)
    stored_before = [m.content for m in Session(cid, url=url).messages]
    retry, model = _swarm("past the call in doubt")
    with pytest.raises(UnknownAgentError) as refused:
        drive(Session(cid, url=url), retry, front, "refund order 7", turn_id="t")
    assert isinstance(refused.value, LookupError)  # what code that looks agents up catches
    message = str(refused.value)
    assert "'Billing'" in message and "agents=[" in message and "pay (call 'p1')" in message
    assert len(provider.paid) == 1 and model.calls == []  # nothing run: not paid, not asked
    later = Session(cid, url=url)
    assert later.unfinished == ["t"]  # the turn stays open, its doubt kept for the retry
    assert [m.content for m in later.messages] == stored_before  # nothing saved
    # The retry the error asks for: the agent named, the call in doubt comes back for a human.
    _, billing = built_at_run_time(lambda: [provider.pay_tool()])
    resumed = Session(cid, url=url, agents=[billing]).run(retry, front, turn_id="t")
    [doubt] = resumed.pending
    assert (doubt.tool, doubt.in_doubt) == ("pay", True) and model.calls == []
    assert len(provider.paid) == 1


@pytest.mark.parametrize("drive", DRIVERS, ids=lambda d: d.__name__)
def test_an_approval_waiting_on_an_agent_the_session_cannot_find_is_not_decided(url, drive):
    refunded: list[int] = []

    @needs_approval
    def refund(order_id: int) -> str:
        """Refund an order."""
        refunded.append(order_id)
        return f"Refunded order {order_id}."

    front, billing = built_at_run_time(lambda: [refund])
    cid = fresh_id("unknown-approve")
    ask, _ = _to_billing_then("refund", {"order_id": 7}, "r1")
    [waiting] = Session(cid, url=url).run(ask, front, "refund order 7").pending
    answer, model = _swarm("Refund sent.")
    with pytest.raises(UnknownAgentError, match=r"refund \(call 'r1'\)"):
        drive(Session(cid, url=url), answer, front, approvals={waiting.id: True})
    assert refunded == [] and model.calls == []  # nothing ran
    assert Session(cid, url=url).pending == [waiting]  # still waiting, undecided
    # Named, the same decision goes through: the refusal recorded no decision of its own.
    done = Session(cid, url=url, agents=[billing]).run(answer, front, approvals={waiting.id: True})
    assert refunded == [7] and done.messages[-1]["content"] == "Refund sent."


@pytest.mark.parametrize("drive", DRIVERS, ids=lambda d: d.__name__)
def test_an_unknown_agent_with_no_open_call_still_warns_and_carries_on(url, drive):
    provider = Provider()
    front, _ = built_at_run_time(lambda: [provider.pay_tool()])
    cid = fresh_id("unknown-settled")
    swarm, _ = _to_billing_then("pay", {"order_id": 7}, "p1", "Paid.")
    assert Session(cid, url=url).run(swarm, front, "refund 7").agent.name == "Billing"
    later, model = _swarm("Front here.")
    with pytest.warns(UnknownAgentWarning, match="'Billing'"):
        response = drive(Session(cid, url=url), later, front, "anything else?")
    assert response.agent is front and response.messages[-1]["content"] == "Front here."
    assert len(model.calls) == 1 and len(provider.paid) == 1
    assert Session(cid, url=url).messages[-1].content == "Front here."  # saved as usual
