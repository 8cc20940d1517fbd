"""A running turn's events kept in the Session's store (memory/turn_events.py): any Session on
the same store rejoins it by turn id, while it runs, with nothing missed and nothing twice; the
log is bounded, replaced by the conversation's next turn, and a dead writer is reported, not
waited for. On every backend (SQLite, Postgres, Redis, memory://)."""

from __future__ import annotations

import random
import threading
import time
import uuid

import pytest
from swarmgraph.memory import Session
from swarmgraph.memory.turn_events import (
    EventsDropped,
    NoTurnEvents,
    TurnEventsAbandoned,
    TurnEventWriter,
    _flusher,
    follow_turn_events,
)

from swarmgraph import ScriptedChatModel, Swarm
from tests.ui_helpers import handoff_script, swarm_agents

URL_BACKENDS = ("sqlite", "postgres", "redis", "memory")
LONG = " ".join(f"word{i}" for i in range(40))


def _cid() -> str:
    return f"events-{uuid.uuid4().hex[:10]}"


def test_another_session_rejoins_a_running_turn_again_and_again_missing_nothing(url: str) -> None:
    rng = random.Random(38)
    gate = threading.Event()  # set_order waits until the reader has rejoined once
    triage, sales = swarm_agents(gate)
    swarm = Swarm(chat_model=ScriptedChatModel(handoff_script(LONG)))
    cid = _cid()
    running = Session(cid, url=url, agents=[sales]).start(swarm, triage, "go", turn_id="t-1")
    reader = Session(cid, url=url)  # another object on the same store: reads it from there
    got: list[tuple[int, dict]] = []
    rejoins, while_running = 0, 0
    done = False
    while not done:
        after = got[-1][0] if got else 0
        rejoins += 1
        while_running += not running.done
        events = reader.rejoin("t-1", after=after, poll=0.05)
        for _ in range(rng.randint(1, 8)):
            item = next(events, None)
            if item is None:
                done = True
                break
            got.append(item)
            gate.set()
        else:
            events.close()  # the reader goes away mid-turn: the turn goes on
    numbers = [number for number, _ in got]
    assert numbers == list(range(1, len(numbers) + 1)), "a gap or a repeat"
    assert got == list(Session(cid, url=url).rejoin("t-1"))  # the whole log, same order
    assert rejoins >= 5 and while_running >= 1
    text = "".join(event.get("content") or "" for _, event in got)
    assert text == LONG
    assert got[-1][1]["saved"] == {"agent": "Sales", "context_variables": {"order_id": 7}}
    stored = Session(cid, url=url)
    assert [m.type for m in stored.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert running.result(10).context_variables == {"order_id": 7}


def test_a_log_keeps_its_newest_events_and_refuses_older_ones(url: str) -> None:
    cid = _cid()
    writer = TurnEventWriter(url, cid, "t", limit=5)
    assert [writer.append({"n": n}) for n in range(12)] == list(range(1, 13))
    writer.finish()
    with pytest.raises(EventsDropped, match="keeps events from 8"):
        list(follow_turn_events(url, cid, "t", after=0))
    tail = list(follow_turn_events(url, cid, "t", after=9))
    assert tail == [(10, {"n": 9}), (11, {"n": 10}), (12, {"n": 11})]
    assert next(follow_turn_events(url, cid, "t", after=7)) == (8, {"n": 7})


def test_a_log_cuts_a_batch_longer_than_its_limit_and_one_cut_by_its_writer(url: str) -> None:
    """The writer cuts a batch to the newest ``limit`` before the backend sees it; a
    backend given a longer batch (a caller of the log itself) keeps the newest ``limit`` of
    it too: either way the log holds the same events and refuses the same older ones."""
    from swarmgraph.memory.turn_events import event_log

    log, whole, cut = event_log(url), _cid(), _cid()
    for cid, sent in ((whole, range(1, 8)), (cut, range(5, 8))):
        assert log.open(cid, "t") == 0
        log.append(cid, "t", [(n, {"n": n}) for n in sent], 3, time.time())
        page = log.read(cid, "t", 0, 10)
        assert page is not None
        assert (page.first, page.last) == (5, 7), cid
        assert page.events == [(n, {"n": n}) for n in (5, 6, 7)], cid
        log.append(cid, "t", [(8, {"n": 8})], 3, time.time(), done=True)
        with pytest.raises(EventsDropped, match="keeps events from 6"):
            list(follow_turn_events(url, cid, "t", after=4))
        assert list(follow_turn_events(url, cid, "t", after=5)) == [
            (6, {"n": 6}), (7, {"n": 7}), (8, {"n": 8})
        ]  # fmt: skip


def test_a_turns_last_events_and_its_end_are_written_together(url: str) -> None:
    """The end of a turn is one write with its last events (each backend's ``append(...,
    done=True)``): whatever a reader in another process (which polls the store) reads after
    each write, the log is over only with every event in; a log with nothing left to write
    is just marked over."""
    from swarmgraph.memory.turn_events import DONE, RUNNING, event_log

    cid = _cid()
    writer = TurnEventWriter(url, cid, "t", flush_every=60.0)  # nothing flushed before the end
    _flusher.remove(writer)
    writer.append("a")
    writer.flush()
    writer.append("b")
    writer.append("c")
    log = event_log(url)
    mid = log.read(cid, "t", 0, 10)
    assert mid is not None and mid.status == RUNNING and mid.events == [(1, "a")]

    class Watched:  # what a reader polling the store reads right after each write
        def __init__(self, inner: object) -> None:
            self.inner, self.seen = inner, []

        def __getattr__(self, name: str) -> object:
            method = getattr(self.inner, name)

            def called(*args: object, **kwargs: object) -> object:
                out = method(*args, **kwargs)
                if name in ("append", "finish", "touch"):
                    self.seen.append(log.read(cid, "t", 0, 10))
                return out

            return called

    watched = Watched(log)
    writer._log = watched  # type: ignore[assignment]
    writer.finish()
    assert watched.seen, "the end was never written"
    for page in watched.seen:  # every state a reader could read: over only with every event
        assert page is not None
        assert page.status != DONE or page.events == [(1, "a"), (2, "b"), (3, "c")]
    assert watched.seen[-1].status == DONE
    assert list(follow_turn_events(url, cid, "t")) == [(1, "a"), (2, "b"), (3, "c")]
    empty = TurnEventWriter(url, _cid(), "t2")
    empty.finish()  # nothing appended: marked over all the same
    assert list(follow_turn_events(url, empty.conversation_id, "t2")) == []


def test_a_reader_in_another_process_sees_events_while_the_turn_runs(url: str) -> None:
    """What a reader with no bell to wake it (another process: it polls the store) gets of a
    running turn: each event once the flusher wrote it (``flush_every`` after its append at
    most, the run's thread never waiting for it), while the log still says running."""
    from swarmgraph.memory.turn_events import RUNNING, event_log

    cid = _cid()
    writer = TurnEventWriter(url, cid, "t", flush_every=0.02)
    writer.append({"n": 1})
    log = event_log(url)  # read as another process does: the store alone
    deadline = time.monotonic() + 30  # (a bound for a stalled store, not a speed check)
    page = log.read(cid, "t", 0, 10)
    while page is not None and not page.events and time.monotonic() < deadline:
        time.sleep(0.01)
        page = log.read(cid, "t", 0, 10)
    assert page is not None and page.events == [(1, {"n": 1})] and page.status == RUNNING
    writer.finish()


def test_the_next_turn_replaces_a_finished_log_and_a_dead_writer_is_reported(url: str) -> None:
    cid = _cid()
    first = TurnEventWriter(url, cid, "first")
    first.append("a")
    first.finish()
    assert list(follow_turn_events(url, cid, "first")) == [(1, "a")]  # kept after its end
    second = TurnEventWriter(url, cid, "second")  # the conversation's next turn starts
    with pytest.raises(NoTurnEvents):
        list(follow_turn_events(url, cid, "first"))
    second.append("b")
    second.flush()
    _flusher.remove(second)  # as if its process died: no more writes, no heartbeat
    time.sleep(0.3)
    seen = follow_turn_events(url, cid, "second", stale_after=0.2, poll=0.05)
    assert next(seen) == (1, "b")  # what was written before the crash is there
    with pytest.raises(TurnEventsAbandoned, match="process running it is gone"):
        next(seen)
    other = _cid()
    with pytest.raises(NoTurnEvents):
        list(follow_turn_events(url, other, "never"))


def test_clearing_a_conversation_forgets_its_turns_events_and_no_one_elses(url: str) -> None:
    cid, other = _cid(), _cid()
    for conversation in (cid, other):
        writer = TurnEventWriter(url, conversation, "t1")
        writer.append("what was said")
        writer.finish()
    Session(cid, url=url).clear()
    with pytest.raises(NoTurnEvents):  # a rejoin shows nothing of a cleared conversation
        list(follow_turn_events(url, cid, "t1"))
    assert list(follow_turn_events(url, other, "t1")) == [(1, "what was said")]


@pytest.mark.parametrize("url", ["sqlite"], indirect=True)
def test_a_stopped_turn_ends_its_events_and_saves_nothing(url: str) -> None:
    gate = threading.Event()
    triage, sales = swarm_agents(gate)
    swarm = Swarm(chat_model=ScriptedChatModel(handoff_script()))
    cid = _cid()
    running = Session(cid, url=url, agents=[sales]).start(swarm, triage, "go", turn_id="t")
    events = Session(cid, url=url).rejoin("t", poll=0.05)
    for _, event in events:
        if event.get("tool_calls"):  # set_order is asked for: the run is about to wait in it
            running.stop()
            gate.set()
            break
    rest = [event for _, event in events]
    assert rest[-1] == {"stopped": True}
    assert running.wait(10)
    with pytest.raises(RuntimeError, match="stopped"):
        running.result()
    assert Session(cid, url=url).messages == []
