"""``swarmgraph ui``: serve the page for a swarm, and start the run process anew on request.

The command is a small supervisor: it binds the socket, then runs the server in a child
process (``python -m swarmgraph ui ...`` again, with the socket handed down), and starts a
fresh child whenever one exits asking for it (the page's restart control). The socket stays
bound, so the page's address does not change. What a fresh process has is what the store
kept: the messages, and ``context_variables`` and the active agent only if ``--persist``
keeps the context; nothing else survives (the lesson docs/memory.md tells in words).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `swarmgraph --help` reads this module: nothing else is imported for it
    import argparse
    from typing import TextIO

__all__ = ["CliTools", "add_ui_parser", "cmd_ui"]

_CHILD_FD = "SWARMGRAPH_UI_FD"  # the socket a child serves on (set by the supervisor)


def add_ui_parser(commands: Any, storage: Any, model: Any, memory_spec: Any) -> None:
    """The ``ui`` subcommand's options (``swarmgraph ui --help``)."""
    ui = commands.add_parser(
        "ui", help="a local page: messages and context_variables side by side, live (extra ui)"
    )
    ui.add_argument(
        "--agents",
        metavar="AGENT",
        help="your start agent: path/to/file.py:name or package.module:name (default: the demo)",
    )
    ui.add_argument("--conversation", default="main", metavar="ID", help="the page opens this one")
    ui.add_argument("--user", metavar="ID", help="keep this user's long-term memory")
    ui.add_argument(
        "--memory", default="buffer", type=memory_spec, metavar="POLICY",
        help="what the model is shown: buffer, window:K, tokens:N, summary[:K]",
    )  # fmt: skip
    ui.add_argument(
        "--persist", default="messages,context", metavar="KINDS",
        help="what outlives a run: messages,context (default), messages, context, or none",
    )  # fmt: skip
    ui.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    ui.add_argument("--port", type=int, default=8765, help="port (0: any free one)")
    ui.add_argument(
        "--token", help="required for a non-loopback --host (default there: a random one)"
    )
    ui.add_argument(
        "--approve", action="append", default=[], metavar="TOOL",
        help="ask in the page before running this tool; repeat for more",
    )  # fmt: skip
    storage(ui)
    model(ui)


class CliTools:
    """What the run process borrows from the CLI (handed down: the CLI imports this module):
    loading ``--agents``, choosing the model, ``--approve``, preparing ``--db``."""

    def __init__(self, load_agent: Any, choose_model: Any, mark: Any, prepare: Any) -> None:
        self.load_agent, self.choose_model = load_agent, choose_model
        self.mark, self.prepare = mark, prepare


def cmd_ui(args: argparse.Namespace, out: TextIO, tools: CliTools) -> int:
    """Supervise (the command as typed) or serve (a child the supervisor started)."""
    import secrets
    import signal
    import socket
    import subprocess

    from ..extras import require_extra

    require_extra("ui", "ag_ui", purpose="swarmgraph ui")
    if os.environ.get(_CHILD_FD):
        return _serve(args, int(os.environ[_CHILD_FD]), tools)
    loopback = args.host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not args.token:
        args.token = secrets.token_urlsafe(16)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(64)
    host, port = sock.getsockname()[:2]
    link = f"http://{host}:{port}/" + (f"?token={args.token}" if args.token else "")
    print(f"swarmgraph ui: {link}", file=out, flush=True)
    env = {**os.environ, _CHILD_FD: str(sock.fileno())}
    if args.token:
        env["SWARMGRAPH_UI_TOKEN"] = args.token
    argv = [sys.executable, "-m", "swarmgraph", *sys.argv[1:]] if _argv_ok() else None
    if argv is None:
        raise RuntimeError("swarmgraph ui must be started as a command (it restarts itself)")
    starts = 0
    child: subprocess.Popen[bytes] | None = None

    stopping: list[int] = []

    def stop(signum: int, frame: Any) -> None:  # SIGTERM: the run process ends with us
        stopping.append(signum)  # (the loop's wait returns once the child has ended)
        if child is not None:
            child.terminate()

    signal.signal(signal.SIGTERM, stop)
    while True:
        starts += 1
        child = subprocess.Popen(argv, env=env, pass_fds=(sock.fileno(),))
        try:
            status = child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGINT)
            child.wait()
            return 130
        from .server import RESTART_EXIT

        if stopping:
            return 128 + stopping[0]
        if status != RESTART_EXIT:
            return status
        print(f"swarmgraph ui: restarted (run process {starts + 1})", file=out, flush=True)


def _argv_ok() -> bool:
    return bool(sys.argv) and "ui" in sys.argv[1:]


def _serve(args: argparse.Namespace, fd: int, tools: CliTools) -> int:
    """The run process: a fresh Session per conversation on the store, served on ``fd``."""
    import socket

    from .server import RESTART_EXIT, UiServer

    sock = socket.socket(fileno=fd)
    service = _service(args, tools)
    token = os.environ.get("SWARMGRAPH_UI_TOKEN") or None
    server = UiServer(sock.getsockname()[:2], service, token=token, sock=sock)
    _end_with_parent(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        return 130
    return RESTART_EXIT if server.restart_requested.is_set() else 0


def _end_with_parent(server: Any) -> None:
    """Shut ``server`` down if the supervisor goes away without ending it (killed): a run
    process must not outlive its command, holding the port."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while not server.restart_requested.wait(0.5):
            if os.getppid() != parent:
                server.shutdown()
                return

    threading.Thread(target=watch, name="swarmgraph-ui-parent", daemon=True).start()


def _service(args: argparse.Namespace, tools: CliTools) -> Any:
    from ...memory.policies import parse_memory
    from ..demo import demo_agents
    from .service import UiService

    if args.agents:
        from ...graph.options import reachable_agents

        start = tools.load_agent(args.agents)
        agents = reachable_agents([start])
    else:
        agents = list(demo_agents())
        start = agents[0]
    asked = [m for a in agents if isinstance(m := getattr(a, "model", None), str)]
    choice = tools.choose_model(args, asked)
    if args.approve:
        tools.mark(agents, args.approve)
    tools.prepare(args.db)
    persist = () if args.persist == "none" else tuple(p for p in args.persist.split(",") if p)
    options: dict[str, Any] = {"persist": persist}
    options["memory"] = parse_memory(args.memory, model=choice.chat_model)
    if args.user:
        options.update(user_id=args.user, long_term=True)
    return UiService(
        choice.swarm, start, url=args.db, agents=agents, thread=args.conversation, **options
    )
