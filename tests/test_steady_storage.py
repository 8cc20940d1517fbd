"""A steady ``Session`` turn does only the storage work it needs (issue 29): the store a URL
names is opened once per process (and anew after its engine is closed, after a ``chdir`` for a
relative path, in a forked child), and a turn whose run meets no marked tool makes no effect
ledger, while a turn that calls one always does, also when the tool was added after the
conversation's first turn (or belongs to an agent discovery never saw:
tests/test_unseen_agents_effects.py)."""

from __future__ import annotations

import os
from typing import Any

from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session
from swarmgraph.memory.backends import forget_stores, open_store
from swarmgraph.memory.backends.sqlite.engine import dispose_engine
from swarmgraph.memory.store import TurnWrite

from swarmgraph import effect


def test_a_url_opens_one_store_per_process_until_its_engine_closes(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    first = open_store(url)
    assert open_store(url) is first
    assert open_store(url, size_limit=10) is not first  # another size limit, another store
    first.save("c1", TurnWrite(context={"n": 1}), expected_version=0)
    dispose_engine(tmp_path / "chat.db")  # as a finished process leaves the file
    reopened = open_store(url)
    assert reopened is not first and reopened.engine is not first.engine
    assert reopened.load("c1").context == {"n": 1}
    forget_stores()
    assert open_store(url) is not reopened


def test_a_relative_sqlite_url_names_the_file_under_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    open_store("sqlite:///chat.db").save("c1", TurnWrite(context={"in": "a"}), expected_version=0)
    monkeypatch.chdir(tmp_path / "b")
    assert open_store("sqlite:///chat.db").load("c1").context == {}  # b's file, not a's
    assert (tmp_path / "a" / "chat.db").exists() and (tmp_path / "b" / "chat.db").exists()


def test_a_forked_child_opens_its_own_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    parent = open_store(url)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a store of its own, on an engine of its own
        child = open_store(url)
        child.save("c1", TurnWrite(context={"by": "child"}), expected_version=0)
        os.write(write, b"1" if child is not parent and child.engine is not parent.engine else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert parent.load("c1").context == {"by": "child"}


class _Recording(Swarm):
    """A Swarm that notes the effect ledger each run is given (a real run all the same)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ledgers: list[Any] = []

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.ledgers.append(kwargs["hooks"].effects)  # what a Session hands a run: one RunHooks
        return super().run(*args, **kwargs)


def test_a_turn_makes_its_effect_ledger_only_when_its_run_meets_a_marked_tool(tmp_path):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    paid: list[int] = []

    @effect
    def pay(order_id: int) -> str:
        """Pay an order."""
        paid.append(order_id)
        return f"paid {order_id}"

    def lookup(order_id: int) -> str:
        """Look an order up."""
        return f"order {order_id}"

    clerk = Agent(name="Clerk", functions=[lookup])
    replies = [scripted_tool_call("lookup", {"order_id": 7}, id="l1"), "found"]
    replies += [scripted_tool_call("pay", {"order_id": 7}, id="p1"), "paid"]
    swarm = _Recording(chat_model=ScriptedChatModel(replies))
    Session("c1", url=url).run(swarm, clerk, "where is order 7?")
    [unused] = swarm.ledgers  # handed over, made on first use (tests/test_unseen_agents_effects)
    assert unused.made is None  # nothing was recorded: no ledger made
    clerk.functions.append(pay)  # a marked tool, added after the first turn
    retry_id = "turn-pay-7"
    Session("c1", url=url).run(swarm, clerk, "pay it", turn_id=retry_id)
    assert swarm.ledgers[-1].made is not None and paid == [7]
    assert list(open_store(url).records("c1", "effect"))  # the call was recorded
    again = Session("c1", url=url).run(swarm, clerk, "pay it", turn_id=retry_id)  # a retry
    assert paid == [7] and again.messages[-1]["content"] == "paid"  # replayed, not run again


def test_a_turn_that_leaves_the_context_as_stored_writes_none_and_keeps_a_concurrent_change(
    tmp_path,
):
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    Session("c1", url=url).run(
        Swarm(chat_model=ScriptedChatModel(["hi"])), Agent(name="A"), "hi", {"n": 1}
    )

    def bump() -> str:
        """Another turn saves a new context while this one runs."""
        Session("c1", url=url).run(
            Swarm(chat_model=ScriptedChatModel(["ok"])), Agent(name="A"), "bump", {"n": 2}
        )
        return "bumped"

    saves: list[Any] = []
    store = open_store(url)
    original = store.save

    def noting(conversation_id: str, write: TurnWrite, **kwargs: Any) -> int:
        saves.append(write)
        return original(conversation_id, write, **kwargs)

    store.save = noting  # type: ignore[method-assign]  # the real save, its writes noted
    try:
        model = ScriptedChatModel([scripted_tool_call("bump", id="b1"), "done"])
        session = Session("c1", url=url)
        response = session.run(Swarm(chat_model=model), Agent(name="A", functions=[bump]), "go")
        assert response.context_variables == {"n": 1}  # what this run saw, and left alone
        assert saves[-1].context is None  # nothing to encode: the stored context stays ...
        assert session.context_variables == {"n": 2}  # ... and the other turn's change too
        assert [m.content for m in session.messages][-2:] == ["bumped", "done"]
        given = Session("c1", url=url)
        given.run(Swarm(chat_model=ScriptedChatModel(["ok"])), Agent(name="A"), "set", {"n": 3})
        assert saves[-1].context == {"n": 3} and given.context_variables == {"n": 3}  # written
    finally:
        del store.save


def test_a_store_opens_after_the_working_directory_is_removed(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # os.getcwd() now fails; an absolute URL still names its file
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    open_store(url).save("c1", TurnWrite(context={"n": 1}), expected_version=0)
    assert open_store(url).load("c1").context == {"n": 1}
