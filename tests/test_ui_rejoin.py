"""Rejoinable runs: a client that drops its connection and comes back with ``Last-Event-ID``
gets what it missed, then the live events; nothing twice, nothing skipped; and a client that
goes away stops nothing (the turn is still saved)."""

from __future__ import annotations

import random
import threading
import time

import httpx
import pytest
from swarmgraph.memory import Session

from tests.ui_helpers import handoff_script, run_input, served, sse

LONG = " ".join(f"word{i}" for i in range(60))  # 60 content events a turn


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'rejoin.db'}"


def _read(response: httpx.Response, count: int, into: list[tuple[int, dict]]) -> bool:
    """Read up to ``count`` events into ``into``; True once RUN_FINISHED came."""
    for number, event in sse(response.iter_lines()):
        into.append((number, event))
        if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            return True
        if len(into) and count <= 1:
            return False
        count -= 1
    return True


@pytest.mark.slow  # ~6 s: a dozen streamed turns
def test_fifty_reconnects_at_random_moments_miss_nothing_and_repeat_nothing(url: str) -> None:
    rng = random.Random(38)
    release = threading.Event()  # each turn's tool waits until the client reconnected once
    turns, reconnects, live_reconnects = 0, 0, 0
    with served(handoff_script(LONG) * 30, url, gate=release) as server:
        base = server.url
        service = server.service
        while reconnects < 50:
            turns += 1
            release.clear()
            run_id = f"turn-{turns}"
            got: list[tuple[int, dict]] = []
            # A conversation a turn: each starts at Triage, whose set_order waits for the gate
            # (a second turn of one conversation would start at Sales, and never wait).
            body = run_input(f"rejoin-{turns}", f"turn {turns}", run_id=run_id)
            with httpx.stream("POST", base + "agui", json=body, timeout=60) as first:
                done = _read(first, rng.randint(1, 6), got)  # then the client drops
            while not done:
                reconnects += 1
                log = service.runs.get(run_id)
                live_reconnects += not log.done
                headers = {"Last-Event-ID": str(got[-1][0])}
                with httpx.stream("GET", f"{base}agui/runs/{run_id}", headers=headers,
                                  timeout=60) as again:  # fmt: skip
                    assert again.status_code == 200
                    release.set()
                    done = _read(again, rng.randint(1, 25), got)
            numbers = [n for n, _ in got]
            assert numbers == list(range(1, len(numbers) + 1)), "a gap or a repeat"
            with httpx.stream("GET", f"{base}agui/runs/{run_id}?after=0", timeout=60) as full:
                whole = list(sse(full.iter_lines()))
            assert got == whole  # the same events, in the same order, each once
            assert got[-1][1]["type"] == "RUN_FINISHED"
    assert reconnects >= 50
    assert live_reconnects >= turns  # every turn was rejoined while it still ran
    for turn in range(1, turns + 1):
        assert len(Session(f"rejoin-{turn}", url=url).messages) == 6


def test_a_client_that_goes_away_stops_nothing(url: str) -> None:
    release = threading.Event()
    with served(handoff_script(), url, gate=release) as server:
        body = run_input("gone", "refund order 7", run_id="gone-1")
        with httpx.stream("POST", server.url + "agui", json=body, timeout=60) as response:
            next(sse(response.iter_lines()))  # RUN_STARTED, then the page closes
        release.set()
        assert server.service.runs.get("gone-1").wait(60)  # the run's end, server-side
    session = Session("gone", url=url)
    assert [m.type for m in session.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    assert session.context_variables == {"order_id": 7}


def test_a_reader_too_far_behind_is_told_so_not_given_a_gap(url: str) -> None:
    from swarmgraph.app.ui.runs import Runs

    release = threading.Event()  # the run waits in set_order (its 8th event) for the reader
    with served(handoff_script(LONG), url, gate=release) as server:
        server.service.runs = Runs(limit=10)
        body = run_input("far", "go", run_id="far-1")
        with httpx.stream("POST", server.url + "agui", json=body, timeout=60) as response:
            next(sse(response.iter_lines()))
        release.set()
        log = server.service.runs.get("far-1")
        assert log.wait(60)
        answer = httpx.get(server.url + "agui/runs/far-1", headers={"Last-Event-ID": "1"})
        assert answer.status_code == 410 and "keeps events from" in answer.json()["error"]
        tail = httpx.get(server.url + f"agui/runs/far-1?after={log.last_id - 3}")
        assert [n for n, _ in sse(iter(tail.text.split("\n")))] == [
            log.last_id - 2,
            log.last_id - 1,
            log.last_id,
        ]


def test_kept_turn_threads_never_make_one_turn_wait_for_another() -> None:
    """Turns reuse idle threads (swarmgraph/app/ui/turn.py's _Workers), but a turn that holds
    its thread never keeps the next one waiting, and a turn that fails leaves its thread able
    to drive the next."""
    from swarmgraph.app.ui.turn import _Workers

    workers = _Workers(keep=5.0)
    first_holds, second_ran = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []  # the objects: an ident may be a dead thread's

    def hold() -> None:
        threads.append(threading.current_thread())
        first_holds.wait(10)

    def fail() -> None:
        threads.append(threading.current_thread())
        second_ran.set()
        raise RuntimeError("a turn's own error")

    workers.run(hold)
    workers.run(fail)
    assert second_ran.wait(5)  # ran while the first still held its thread
    first_holds.set()
    reused = False
    for _ in range(50):  # a thread counts itself idle just after its turn: soon, not at once
        ran, seen = threading.Event(), list(threads)
        workers.run(lambda ran=ran: (threads.append(threading.current_thread()), ran.set()))
        assert ran.wait(5)
        # an idle thread drove it (the failed turn's, or another): not a new one
        if any(thread is threads[-1] for thread in seen):
            reused = True
            break
        time.sleep(0.02)
    assert reused
