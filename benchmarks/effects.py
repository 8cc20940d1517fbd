"""What an ``@effect`` call costs a Session turn (issue 22's effect ledger), on every backend.

    python -m benchmarks.effects [--turns N] [--backends memory,sqlite,postgres,redis]

One turn: the user asks, the zero-latency scripted model calls ``pay`` once, then answers.
Two conversations on one store run it side by side, their turns alternating (plain, effect,
effect, plain, ...) so drift hits both alike; they differ only in the tool:

- **plain**: ``pay`` as any tool;
- **effect**: the same ``pay`` marked ``@effect``: through a ``Session`` the call is recorded
  ``started`` before it runs (a conditional save of the turn so far: its open entry and the
  ``effect`` record) and ``done`` after (a second save: the ``effect.done`` record), on top of
  the turn's one load and one final save.

**storage ms per turn** is ``Session.run`` minus the engine's own time: the time inside
``swarm.run`` *less* the time inside the ledger's calls, which run inside ``swarm.run`` but
are storage (benchmarks/backend_turns.py subtracts all of ``swarm.run``, which would hide
them). Medians and p90 over the turns; the ratio effect / plain and the extra ms per effect
call come from the same run. Store calls per turn (loads, saves, record reads) and, on
Postgres and Redis, the driver's round trips are counted on one extra turn of each.

A sanity row runs the same turn with no Session (stateless ``Swarm.run``: no ledger, so the
mark must cost ~nothing), CPU time of interleaved batches.

Postgres and Redis are throwaway loopback servers (tests/servers.py):
Postgres runs there with ``fsync=off``, Redis with ``appendfsync always``; SQLite is a WAL
file with ``synchronous=NORMAL`` (a commit writes the WAL without fsync).

Example:
    >>> out = run_effects(turns=2, stateless=(2, 2), backends=("memory",))
    >>> row = out["session"]["memory"]
    >>> row["records"]["effect.done"] == row["records"]["expected"], row["store_calls"]["effect"]
    (True, {'load': 1, 'save': 3})
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, effect, scripted_tool_call
from swarmgraph.graph.features.effects import EffectLedger
from swarmgraph.memory import Session
from swarmgraph.memory.effect_ledger import DONE, EFFECT

from benchmarks.backend_turns import TimedSwarm, _p90, _servers
from benchmarks.timing import interleaved

VARIANTS = ("plain", "effect")
BACKENDS = ("memory", "sqlite", "postgres", "redis")
WARM_UP = 3
#: Store methods counted per turn (what a Session turn and its ledger call).
STORE_CALLS = ("load", "save", "records", "count", "messages")


def make_pay(marked: bool) -> Callable[[int], str]:
    """A fresh ``pay`` tool, ``@effect`` when ``marked`` (two functions: the mark is set on
    the function itself)."""

    def pay(order_id: int) -> str:
        """Pay out a refund."""
        return f"paid {order_id}"

    return effect(pay) if marked else pay


def _rules(messages: list[BaseMessage]) -> Any:
    if isinstance(messages[-1], HumanMessage):
        return scripted_tool_call("pay", {"order_id": len(messages)})
    return "Paid."


class _TimedLedger:
    """The Session's ledger, with the time inside its calls summed (storage, though it runs
    inside ``swarm.run``)."""

    def __init__(self, inner: EffectLedger, owner: _TimedSwarm) -> None:
        self.inner, self.owner = inner, owner

    def _timed(self, name: str, *args: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return getattr(self.inner, name)(*args)
        finally:
            self.owner.ledger += time.perf_counter() - start
            self.owner.ledger_cpu += time.process_time() - cpu

    def before(self, call: Any, turn: Any) -> Any:
        return self._timed("before", call, turn)

    def after(self, call: Any, outcome: Any) -> None:
        self._timed("after", call, outcome)

    def prior(self, calls: Any) -> Any:
        return self._timed("prior", calls)

    def settle(self, questions: Any, given: Any) -> Any:
        return self._timed("settle", questions, given)

    def asked(self, question: str) -> bool:
        return bool(self.inner.asked(question))

    def in_flight(self, messages: Any) -> Any:
        return self.inner.in_flight(messages)

    def idempotency_key(self, call: Any) -> str:
        return str(self.inner.idempotency_key(call))


class _TimedSwarm(TimedSwarm):
    """A :class:`TimedSwarm` that also sums the ledger's share of ``run`` (the ledger's saves
    run inside it, and are storage)."""

    def __init__(self) -> None:
        super().__init__(model=ScriptedChatModel(respond=_rules))
        self.ledger = self.ledger_cpu = 0.0

    def reset(self) -> None:
        self.spent = self.spent_cpu = self.ledger = self.ledger_cpu = 0.0
        if len(self.model.calls) > 1000:  # the scripted model records every call
            self.model.reset()

    def run(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("effects") is not None:
            kwargs["effects"] = _TimedLedger(kwargs["effects"], self)
        return super().run(*args, **kwargs)


def _turn(session: Session, swarm: _TimedSwarm, agent: Agent, text: str) -> tuple[float, ...]:
    """(storage ms, storage CPU ms, ledger ms, whole turn ms) of one checked turn."""
    swarm.reset()
    start, cpu = time.perf_counter(), time.process_time()
    response = session.run(swarm, agent, text)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert response.messages[-1]["content"] == "Paid.", response.messages
    engine, engine_cpu = swarm.spent - swarm.ledger, swarm.spent_cpu - swarm.ledger_cpu
    return (
        (wall - engine) * 1000,
        (cpu - engine_cpu) * 1000,
        swarm.ledger * 1000,
        wall * 1000,
    )


@contextlib.contextmanager
def _counting(session: Session, counts: dict[str, int]) -> Iterator[None]:
    """Count the store calls (by method) and the driver's round trips (``"wire"``) while the
    block runs. Postgres: psycopg's exchanges with the server (``Connection.wait``), less the
    COMMITs on an idle connection (they send nothing); Redis: command sends (a pipeline or a
    MULTI/EXEC block is one send)."""
    store = session.store
    patches: dict[tuple[Any, str], Callable[..., Any]] = {}

    def counted(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[key] = counts.get(key, 0) + 1
            return fn(*args, **kwargs)

        return wrapper

    if store.url.startswith("postgres"):
        import psycopg

        commit = psycopg.Connection.commit

        def idle_commit(conn: psycopg.Connection, *args: Any) -> None:
            if conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                counts["wire"] = counts.get("wire", 0) - 1  # its wait() sends nothing
            commit(conn, *args)

        patches[psycopg.Connection, "wait"] = counted("wire", psycopg.Connection.wait)
        patches[psycopg.Connection, "commit"] = idle_commit
    elif store.url.startswith("redis"):
        from redis.connection import AbstractConnection

        send = AbstractConnection.send_packed_command
        patches[AbstractConnection, "send_packed_command"] = counted("wire", send)
    originals = {key: getattr(*key) for key in patches}
    for name in STORE_CALLS:
        setattr(store, name, counted(name, getattr(store, name)))
    for (owner, name), fn in patches.items():
        setattr(owner, name, fn)
    try:
        yield
    finally:
        for (owner, name), fn in originals.items():
            setattr(owner, name, fn)
        for name in STORE_CALLS:
            delattr(store, name)  # the class's method again


def session_turns(url: str, turns: int) -> dict[str, Any]:
    """One backend's rows: storage ms per turn for each variant over ``turns`` alternating
    turns, their ratio and difference, the store calls and round trips of one more turn each,
    and the ledger's records (``effect`` started, ``effect.done``) counted in the store."""
    tag = uuid.uuid4().hex[:8]
    runs = {
        variant: (
            Session(f"fx-{variant}-{tag}", url=url, window=20),
            _TimedSwarm(),
            Agent(name="Cashier", functions=[make_pay(variant == "effect")]),
        )
        for variant in VARIANTS
    }
    for i in range(WARM_UP):  # graph compiled, statements prepared, pools filled
        for session, swarm, agent in runs.values():
            _turn(session, swarm, agent, f"warm up {i}")
    samples: dict[str, list[tuple[float, ...]]] = {v: [] for v in VARIANTS}
    for i in range(turns):
        order = VARIANTS if i % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            session, swarm, agent = runs[variant]
            samples[variant].append(_turn(session, swarm, agent, f"refund {i}"))
    out: dict[str, Any] = {"store_calls": {}, "wire": {}}
    for variant, rows in samples.items():
        storage, cpu, ledger, whole = (list(column) for column in zip(*rows, strict=True))
        out[variant] = {
            "median_ms": statistics.median(storage),
            "p90_ms": _p90(storage),
            "cpu_median_ms": statistics.median(cpu),
            "ledger_median_ms": statistics.median(ledger),
            "turn_median_ms": statistics.median(whole),
        }
        session, swarm, agent = runs[variant]
        counts: dict[str, int] = {}
        with _counting(session, counts):
            _turn(session, swarm, agent, "counted")
        wire = counts.pop("wire", None)
        out["store_calls"][variant] = counts
        if wire is not None:
            out["wire"][variant] = wire
    plain, marked = out["plain"], out["effect"]
    out["ratio"] = marked["median_ms"] / plain["median_ms"]
    out["extra_ms"] = marked["median_ms"] - plain["median_ms"]
    out["extra_cpu_ms"] = marked["cpu_median_ms"] - plain["cpu_median_ms"]
    if not out["wire"]:
        del out["wire"]
    effect_session, plain_session = runs["effect"][0], runs["plain"][0]
    store, cid = effect_session.store, effect_session.conversation_id
    out["records"] = {
        EFFECT: len(store.records(cid, EFFECT)),
        DONE: len(store.records(cid, DONE)),
        "expected": WARM_UP + turns + 1,  # one effect call per turn, the counted one too
        "plain": len(plain_session.store.records(plain_session.conversation_id, DONE)),
    }
    return out


def stateless_row(number: int, repeat: int) -> dict[str, Any]:
    """CPU ms per stateless ``Swarm.run`` of the same turn, plain vs ``@effect`` (no ledger:
    the tool just runs), ``repeat`` interleaved batches of ``number`` runs."""

    def contender(marked: bool) -> Callable[[], Any]:
        model = ScriptedChatModel(respond=_rules)
        swarm = Swarm(chat_model=model)
        agent = Agent(name="Cashier", functions=[make_pay(marked)])
        messages = [{"role": "user", "content": "refund order 7"}]

        def run() -> Any:
            response = swarm.run(agent, messages)
            assert response.messages[-2]["content"] == "paid 2", response.messages
            if len(model.calls) > 1000:
                model.reset()
            return response

        return run

    stats = interleaved(
        {v: contender(v == "effect") for v in VARIANTS},
        number=number,
        repeat=repeat,
        clock=time.process_time,
    )
    out: dict[str, Any] = {
        v: {k: x * 1000 for k, x in s.as_dict().items()} for v, s in stats.items()
    }
    out["ratio"] = stats["effect"].median / stats["plain"].median
    out["number"], out["repeat"] = number, repeat
    return out


def run_effects(
    *,
    turns: int = 150,
    stateless: tuple[int, int] = (20, 9),
    backends: Sequence[str] = BACKENDS,
) -> dict[str, Any]:
    """``make bench``'s view of this module: per backend (throwaway loopback servers for
    Postgres and Redis; one whose binaries are missing reports why), the session rows of
    :func:`session_turns`; and the stateless sanity row (``stateless`` = batch size, batches).
    """
    number, repeat = stateless
    out: dict[str, Any] = {"turns": turns, "warm_up": WARM_UP, "session": {}}
    wanted = argparse.Namespace(
        postgres="" if "postgres" in backends else "none",
        redis="" if "redis" in backends else "none",
    )
    with _servers(wanted, tolerate=True) as urls:
        out["unavailable"] = urls.pop("unavailable", {})
        urls = {"memory": f"memory://fx-{uuid.uuid4().hex[:8]}", **urls}
        for name in backends:
            if name in urls:
                out["session"][name] = session_turns(urls[name], turns)
    out["stateless"] = stateless_row(number, repeat)
    return out


def table(out: dict[str, Any]) -> str:
    """The rows as text (the command line's view)."""
    lines = [
        f"{'backend':<10}{'plain ms':>10}{'p90':>7}{'effect ms':>11}{'p90':>7}"
        f"{'x plain':>9}{'extra ms':>10}  store calls plain -> effect"
    ]
    for name, r in out["session"].items():
        calls = f"{r['store_calls']['plain']} -> {r['store_calls']['effect']}"
        lines.append(
            f"{name:<10}{r['plain']['median_ms']:>10.2f}{r['plain']['p90_ms']:>7.2f}"
            f"{r['effect']['median_ms']:>11.2f}{r['effect']['p90_ms']:>7.2f}"
            f"{r['ratio']:>9.2f}{r['extra_ms']:>10.2f}  {calls}"
        )
    s = out["stateless"]
    lines.append(
        f"{'no Session':<10}{s['plain']['median']:>10.2f}{'':>7}{s['effect']['median']:>11.2f}"
        f"{'':>7}{s['ratio']:>9.3f}  (CPU ms per whole Swarm.run)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.effects")
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    args = parser.parse_args(argv)
    out = run_effects(turns=args.turns, backends=args.backends.split(","))
    print(table(out))
    for name, why in out["unavailable"].items():
        print(f"{name}: not measured ({why})")
    print(json.dumps({k: v["records"] for k, v in out["session"].items()}))


if __name__ == "__main__":
    main()
