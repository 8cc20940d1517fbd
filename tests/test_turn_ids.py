"""Idempotent turns: every turn carries a turn id saved with it. A commit whose reply is lost
(a TCP proxy on loopback forwards the commit, then drops the connection before the answer)
raises TurnOutcomeUnknown, and retrying with the same turn id stores the turn exactly once
and never calls the model again. Real Postgres and Redis, no mocks of our storage."""

from __future__ import annotations

import pytest
from drop_proxy import DropReplyProxy
from scale_helpers import BACKENDS, fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session, StorageUnavailable

from swarmgraph import TurnOutcomeUnknown


def _clerk() -> Agent:
    def note(n: int) -> Result:
        """Note a number."""
        return Result(value=f"noted {n}", context_variables={"n": n})

    return Agent(name="Clerk", functions=[note])


def _reply(n: int, msgs: list):
    return f"noted {n} for you" if msgs[-1].type == "tool" else scripted_tool_call("note", {"n": n})


def _model(n: int) -> ScriptedChatModel:
    return ScriptedChatModel(respond=lambda msgs: _reply(n, msgs))


def _humans(url: str, cid: str) -> list[str]:
    return [m.content for m in Session(cid, url=url).messages if m.type == "human"]


def _lose_the_commit_reply_then_retry(url: str, proxy: DropReplyProxy) -> None:
    cid = fresh_id("lost-reply")
    session, agent, model = Session(cid, url=url), _clerk(), _model(7)
    proxy.arm()
    with pytest.raises(TurnOutcomeUnknown) as caught:
        session.run(Swarm(chat_model=model), agent, "refund order 7")
    error = caught.value
    assert proxy.dropped == 1 and isinstance(error, StorageUnavailable)
    assert error.turn_id and "retrying with the same turn id is safe" in str(error)
    assert _humans(url, cid) == ["refund order 7"]  # the commit did go through
    calls = len(model.calls)

    retried = session.run(Swarm(chat_model=model), agent, "refund order 7", turn_id=error.turn_id)
    assert len(model.calls) == calls  # the stored turn came back, the model was not called
    assert retried.agent.name == "Clerk" and retried.context_variables == {"n": 7}
    assert [m["role"] for m in retried.messages] == ["assistant", "tool", "assistant"]
    assert retried.messages[-1]["content"] == "noted 7 for you"
    assert _humans(url, cid) == ["refund order 7"]  # stored exactly once
    assert Session(cid, url=url).store.load(cid).version == 1

    session.run(Swarm(chat_model=_model(8)), agent, "and order 8")  # life goes on
    assert _humans(url, cid) == ["refund order 7", "and order 8"]


@pytest.mark.postgres
def test_a_lost_commit_reply_on_postgres_is_retried_exactly_once(postgres_server):
    proxy = DropReplyProxy(postgres_server.port, b"COMMIT")
    try:
        url = f"postgresql://postgres@127.0.0.1:{proxy.port}/swarmgraph_test?pool_timeout=5"
        _lose_the_commit_reply_then_retry(url, proxy)
    finally:
        proxy.close()


@pytest.mark.redis
def test_a_lost_exec_reply_on_redis_is_retried_exactly_once(redis_server):
    # A load is a MULTI/EXEC of reads too: the save's is the one that pushes messages.
    proxy = DropReplyProxy(redis_server.port, b"LPUSH")
    try:
        _lose_the_commit_reply_then_retry(f"redis://127.0.0.1:{proxy.port}/0", proxy)
    finally:
        proxy.close()


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
@pytest.mark.parametrize("persist", [("messages", "context"), ("messages",)])
def test_a_save_whose_turn_id_is_already_stored_is_a_no_op(backend_url, persist):
    """The first attempt is still saving when its retry runs (both loaded before either
    saved): whichever saves second finds the turn id stored and writes nothing."""
    cid, agent = fresh_id("twice"), _clerk()
    retry_responses = []

    def slow_first_attempt(msgs):
        if not retry_responses:  # the retry runs, start to end, inside the first's model call
            retry = Session(cid, url=backend_url, persist=persist)
            retry_responses.append(
                retry.run(Swarm(chat_model=_model(1)), agent, "once", turn_id="turn-1")
            )
        return _reply(1, msgs)

    first = Session(cid, url=backend_url, persist=persist)
    response = first.run(
        Swarm(chat_model=ScriptedChatModel(respond=slow_first_attempt)),
        agent,
        "once",
        turn_id="turn-1",
    )
    assert response.context_variables == {"n": 1}  # success, although nothing was written
    assert _humans(backend_url, cid) == ["once"]
    stored = Session(cid, url=backend_url)
    assert len(stored.messages) == 4
    if "context" in persist:
        assert stored.context_variables == {"n": 1} and stored.store.load(cid).version == 1


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
def test_turn_ids_are_generated_and_a_stored_one_is_never_run_again(backend_url):
    cid, agent = fresh_id("ids"), _clerk()
    session = Session(cid, url=backend_url)
    model = _model(3)
    first = session.run(Swarm(chat_model=model), agent, "three", turn_id="t-3")
    session.run(Swarm(chat_model=_model(4)), agent, "four")  # an id is generated for it
    calls = len(model.calls)
    again = Session(cid, url=backend_url).run(Swarm(chat_model=model), agent, "3", turn_id="t-3")
    assert len(model.calls) == calls
    assert [(m["role"], m["content"]) for m in again.messages] == [
        (m["role"], m["content"]) for m in first.messages
    ]
    assert again.agent.name == "Clerk"
    assert _humans(backend_url, cid) == ["three", "four"]
    with pytest.raises(ValueError, match="turn_id"):
        session.run(Swarm(chat_model=model), agent, "x", turn_id="")


BOTH, MESSAGES_ONLY = ("messages", "context"), ("messages",)


@pytest.mark.parametrize("backend_url", BACKENDS, indirect=True)
@pytest.mark.parametrize(
    "slow, quick",
    [(BOTH, MESSAGES_ONLY), (MESSAGES_ONLY, BOTH)],
    ids=["context-saver-slow", "messages-only-slow"],
)
def test_no_turn_id_is_lost_when_sessions_with_different_persist_interleave(
    backend_url, slow, quick
):
    """One Session's whole turn runs between another's load and save, on one conversation,
    one keeping the context and one not. Both turn ids stay in the log: the context-saving
    Session's conditional save used to succeed on the version it loaded (the meta-only
    write had not bumped it) and write back the log it loaded, dropping the other turn's
    id, so a retry of that id ran the model again and stored the turn twice."""
    cid, agent = fresh_id("mixed"), _clerk()
    Session(cid, url=backend_url).run(Swarm(chat_model=_model(0)), agent, "zero", turn_id="t-0")
    quick_session = Session(cid, url=backend_url, persist=quick)

    def slow_reply(msgs):
        if msgs[-1].type == "human":  # the other turn runs, start to end, inside this one
            quick_session.run(Swarm(chat_model=_model(1)), agent, "one", turn_id="t-1")
        return _reply(2, msgs)

    slow_session = Session(cid, url=backend_url, persist=slow)
    model = ScriptedChatModel(respond=slow_reply)
    slow_session.run(Swarm(chat_model=model), agent, "two", turn_id="t-2")
    turns = Session(cid, url=backend_url).store.load(cid).meta["turns"]
    assert [turn["id"] for turn in turns] == ["t-0", "t-1", "t-2"]

    for session, turn_id, n in [(quick_session, "t-1", 1), (slow_session, "t-2", 2)]:
        retry_model = _model(n)
        session.run(Swarm(chat_model=retry_model), agent, "again", turn_id=turn_id)
        assert retry_model.calls == []  # both stored turns came back without a model call
    assert _humans(backend_url, cid) == ["zero", "one", "two"]
    assert Session(cid, url=backend_url).context_variables == {"n": 2 if "context" in slow else 1}
