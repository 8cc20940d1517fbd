"""``swarmgraph worker --temporal HOST:PORT --task-queue Q app.py:triage``: a worker process.

It imports the agents (a bad spec fails before it polls), connects (a server that is down is
one clear line), prints one ``worker ready`` line, and serves until SIGINT/SIGTERM. The model
comes from ``--chat-model SPEC`` (an importable chat model, or a function that makes one: e.g.
an offline stand-in for tests) or, as for ``swarmgraph chat``, from ``--model`` /
``OPENAI_API_KEY`` (else the offline demo model).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["ChooseModel", "cmd_run", "cmd_worker", "load_object", "waiting_lines"]

#: ``choose(model names) -> (Swarm, label)``: the CLI's model choice (swarmgraph/app/cli.py).
ChooseModel = Callable[[Sequence[str]], tuple[Any, str]]


def load_object(spec: str) -> Any:
    """What ``path/to/file.py:name`` or ``package.module:name`` names (a dotted name is
    followed inside the module), loaded as ``swarmgraph chat`` loads agents.

    Example:
        >>> load_object("swarmgraph.temporal.marks:idempotent").__name__
        'idempotent'
    """
    from ..app.loading import AgentSpecError, _import, _is_path, _load_file

    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise AgentSpecError(f"{spec!r}: expected path/to/file.py:name or package.module:name")
    value: Any = _load_file(where) if _is_path(where) else _import(where)
    for part in name.split("."):
        if not hasattr(value, part):
            raise AgentSpecError(f"{where} has no {name!r}")
        value = getattr(value, part)
    return value


def cmd_worker(args: argparse.Namespace, out: TextIO, choose: ChooseModel) -> int:
    """Serve ``args.agents`` on ``args.task_queue`` until told to stop. ``choose(model
    names the agents ask for)`` gives ``(Swarm, label)`` when ``--chat-model`` is not given."""
    return asyncio.run(_serve(args, out, choose))


async def _serve(args: argparse.Namespace, out: TextIO, choose: ChooseModel) -> int:
    from ..graph.swarm import Swarm
    from .client import connect
    from .roster import Roster
    from .worker import worker

    rosters = [Roster.load(spec) for spec in args.agents]  # import errors before connecting
    slots = getattr(args, "max_concurrent_activities", None)
    if slots is not None and slots < 1:
        from .errors import TemporalInputError

        raise TemporalInputError(f"--max-concurrent-activities must be 1 or more, got {slots}")
    if args.chat_model:
        made = load_object(args.chat_model)
        swarm = Swarm(chat_model=made() if _is_factory(made) else made)
        label = args.chat_model
    else:  # --model / OPENAI_API_KEY / the demo model, as `swarmgraph chat` chooses
        swarm, label = choose([a.model for r in rosters for a in r.agents.values()])
    client = await connect(args.temporal, args.namespace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # a worker's capacity (its share of a model's rate limit, its memory): the activities it
    # takes from the queue at once; another worker on the queue adds its own
    options = {} if slots is None else {"max_concurrent_activities": slots}
    async with worker(client, args.task_queue, args.agents, swarm=swarm, **options):
        names = ", ".join(name for r in rosters for name in r.agents)
        print(
            f"worker ready: task queue {args.task_queue} at {args.temporal}, agents {names}, "
            f"model {label}",
            file=out,
            flush=True,
        )
        await stop.wait()
    return 0


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """Start one run of ``args.agent`` on ``args.message`` on Temporal and wait for it: its
    answer, agent and workflow id; a run that waits for approval says what waits (exit 3)."""
    return asyncio.run(_run(args, out))


async def _run(args: argparse.Namespace, out: TextIO) -> int:
    from .client import connect, pending_on_temporal, result_of, start_on_temporal

    client = await connect(args.temporal, args.namespace)
    handle = await start_on_temporal(
        client,
        args.agent,
        [{"role": "user", "content": args.message}],
        task_queue=args.task_queue,
        id=args.id,
        conversation_id=args.session,
        session_url=args.db if args.session else None,
    )
    print(f"workflow {handle.id}", file=out, flush=True)
    waiting = asyncio.ensure_future(result_of(handle, args.agent))
    while not waiting.done():  # a run that stops for approval waits for `decide`: say so
        await asyncio.wait({waiting}, timeout=0.5)
        if not waiting.done() and (pending := await pending_on_temporal(handle)):
            waiting.cancel()
            lines = waiting_lines(pending, args.temporal, args.namespace, handle.id)
            print("\n".join(lines), file=out)
            return 3
    response = waiting.result()
    name = response.agent.name if response.agent is not None else "?"
    print(f"{name}: {response.messages[-1].get('content') if response.messages else ''}", file=out)
    return 0


def waiting_lines(
    pending: Sequence[Any], address: str, namespace: str, workflow_id: str
) -> list[str]:
    """What ``swarmgraph run`` prints for a run that waits for approval: each call that waits,
    then the next step (the workflow waits, holding no worker, until it is decided).

    Example:
        >>> from swarmgraph.graph.features.approvals import PendingApproval
        >>> call = PendingApproval(id="c1", agent="Sales", tool="refund", arguments={"n": 7})
        >>> print("\\n".join(waiting_lines([call], "127.0.0.1:7233", "default", "swarm-1")))
        ... # doctest: +NORMALIZE_WHITESPACE
        waiting for approval: c1 refund(n=7)
        next: the run waits (no worker held) until it is decided; from Python:
          from swarmgraph.temporal import connect, decide_on_temporal
          client = await connect('127.0.0.1:7233', 'default')
          await decide_on_temporal(client.get_workflow_handle('swarm-1'), {'c1': True})
          (False, or a reason, denies; docs/temporal.md, "An approval holds no worker")
    """
    lines = [f"waiting for approval: {call.id} {call.describe()}" for call in pending]
    decisions = {call.id: True for call in pending}
    lines += [
        "next: the run waits (no worker held) until it is decided; from Python:",
        "  from swarmgraph.temporal import connect, decide_on_temporal",
        f"  client = await connect({address!r}, {namespace!r})",
        f"  await decide_on_temporal(client.get_workflow_handle({workflow_id!r}), {decisions!r})",
        '  (False, or a reason, denies; docs/temporal.md, "An approval holds no worker")',
    ]
    return lines


def _is_factory(value: Any) -> bool:
    from langchain_core.language_models import BaseChatModel

    return callable(value) and not isinstance(value, BaseChatModel)
