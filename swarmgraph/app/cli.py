"""``swarmgraph``: the demo, a chat REPL with persistent memory, stored history, the graph.

    swarmgraph demo                                    # offline, no API key
    swarmgraph chat [AGENT] --session ID [--db URL] [--model NAME]
                    [--memory buffer|window:K|tokens:N|summary[:K]] [--user ID]
    swarmgraph history [--session ID] [--db URL] [--user ID]  # without --session: the list
    swarmgraph sessions [--db URL]                    # id, agent, messages, last change
    swarmgraph graph [AGENT] [--format mermaid|png] [--output PATH]
    swarmgraph ui [--agents AGENT] [--db URL] [--conversation ID] [--user ID] [--memory POLICY]

``AGENT`` is your own agent, ``path/to/file.py:triage`` or ``package.module:triage``
(:mod:`swarmgraph.app.loading`); without it, ``chat`` and ``graph`` use the demo swarm.

Storage defaults to the same store as ``Session("x")``: an embedded SQLite file,
``.swarmgraph/swarmgraph.db`` under the current directory (``$SWARMGRAPH_DB`` or ``--db``
point elsewhere: any URL ``memory.Session`` takes). Without ``OPENAI_API_KEY`` (and without
``--model``) the agents run on the offline demo model (:func:`swarmgraph.app.demo.demo_model`).
A mistake a user can make prints one line on stderr and exits non-zero;
``SWARMGRAPH_DEBUG=1`` shows tracebacks.

Example:
    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = main(["graph", "--format", "mermaid"])
    >>> code, "Triage -.-> Refunds" in out.getvalue()
    (0, True)
"""

from __future__ import annotations

# Only what parsing the command line needs is imported here: ``swarmgraph --help`` and
# ``--version`` must not pay for LangChain/LangGraph (seconds on a cold disk). Each command
# imports its own tools.
import argparse
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing itself costs ~10 ms of every --help; annotations are strings
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn, TextIO

__all__ = ["UserError", "build_parser", "main"]

DEFAULT_DIR = ".swarmgraph"
DEFAULT_MODEL = "gpt-4o-mini"
DEMO_SESSION = "demo"
#: URLs this run was given (``--db``): their secrets are masked in anything printed.


class UserError(Exception):
    """A mistake the user can fix; printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (exit 2), not usage + error."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# -- model and storage choices -------------------------------------------------------------------
def default_db_url() -> str:
    """``$SWARMGRAPH_DB``, else ``sqlite:///<cwd>/.swarmgraph/swarmgraph.db`` (as ``Session``)."""
    from ..memory.urls import default_url

    return default_url()


def history_file(url: str) -> Path:
    """The REPL's line history, beside the database file (or in ``.swarmgraph/``).

    Example:
        >>> history_file("sqlite:////data/chat.db").as_posix()
        '/data/chat.db.history'
    """
    path = _sqlite_file(url)
    if path is None:
        return Path.cwd() / DEFAULT_DIR / "chat.history"
    return path.with_name(path.name + ".history")


def _sqlite_file(url: str) -> Path | None:
    from ..memory.urls import sqlite_path, url_scheme

    return sqlite_path(url) if url_scheme(url) == "sqlite" else None


#: The default store before 0.2.0, in the working directory itself.
OLD_DEFAULT_DB = "swarmgraph.db"


def old_store_hint(url: str) -> str:
    """Where an upgrade left earlier conversations: ``./swarmgraph.db`` (the default store
    before 0.2.0) when it exists and ``url``, the default store now, does not yet; else "".

    Example:
        >>> old_store_hint("memory://")
        ''
    """
    if os.environ.get("SWARMGRAPH_DB") or url != default_db_url():
        return ""
    path = _sqlite_file(url)
    if path is None or path.exists() or not Path(OLD_DEFAULT_DB).is_file():
        return ""
    return (
        f"conversations stored before swarmgraph 0.2 are in ./{OLD_DEFAULT_DB}; "
        f"read them with --db sqlite:///{OLD_DEFAULT_DB}"
    )


def _where(url: str) -> str:
    """The store for humans: a path relative to the working directory when it is under it."""
    from ..memory.urls import redact_url

    path = _sqlite_file(url)
    if path is None:
        return redact_url(url)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _prepare_store(url: str) -> None:
    path = _sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


class ModelChoice:
    """The model of a run: the swarm, the name the agents ask for, and how to show it.

    ``chat_model`` is the chat model itself (the summariser of ``--memory summary`` uses the
    same one); ``base_url`` the server's (None: OpenAI itself, or offline), for error
    messages; ``note`` a line to show before the first turn (why the demo model answers).
    A plain class, not a dataclass: ``dataclasses`` (with ``inspect``) would cost every
    ``swarmgraph --help`` ~10 ms.
    """

    def __init__(
        self,
        swarm: Any,
        name: str,
        label: str,
        chat_model: Any,
        base_url: str | None = None,
        note: str | None = None,
    ) -> None:
        self.swarm, self.name, self.label, self.chat_model = swarm, name, label, chat_model
        self.base_url, self.note = base_url, note

    @property
    def offline(self) -> bool:
        from .demo import DEMO_MODEL_LABEL

        return self.label == DEMO_MODEL_LABEL


def _choose_model(args: argparse.Namespace, asked: Sequence[str] = ()) -> ModelChoice:
    """A real model when ``--model`` or ``OPENAI_API_KEY`` asks for one, else the demo model.

    ``asked``: the model names the user's agents ask for (their ``Agent.model``); without
    ``--model`` those are what every request sends, so they are what the banner names.
    """
    from ..graph.swarm import Swarm
    from .demo import DEMO_MODEL_LABEL, demo_model
    from .provider import endpoint_text, server_chat_model

    key, base = os.environ.get("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL")
    if args.model is None and (args.offline or not key):
        tty = sys.stdout.isatty()
        model = demo_model(latency=0.15 if tty else 0.0)
        note = None
        if base and not args.offline:
            note = (
                f"OPENAI_BASE_URL is set ({endpoint_text(base)}) but --model is not, so the "
                "offline demo model answers; add --model NAME to talk to that server"
            )
        return ModelChoice(
            Swarm(chat_model=model), DEFAULT_MODEL, DEMO_MODEL_LABEL, model, None, note
        )
    if not key and not base:
        raise UserError(
            f"--model {args.model} needs OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local "
            "OpenAI-compatible server); leave out --model to use the offline demo model"
        )
    names = [args.model] if args.model else list(dict.fromkeys(asked)) or [DEFAULT_MODEL]
    name = names[0]
    where = f"at {endpoint_text(base)}" if base else "on OpenAI"
    # One client per model name, built here so its errors and retries can be reported.
    models: dict[str, Any] = {}

    def chat_model(model_name: str) -> Any:
        if model_name not in models:
            models[model_name] = server_chat_model(model_name, base_url=base, api_key=key)
        return models[model_name]

    # The banner names what requests send: --model, else each agent's own model.
    label = f"{', '.join(names)} {where}"
    return ModelChoice(Swarm(chat_model=chat_model), name, label, chat_model(name), base)


def _session(args: argparse.Namespace, conversation_id: str, agents: Sequence[Any], **kw: Any):
    from ..memory import Session

    _prepare_store(args.db)
    return Session(conversation_id, url=args.db, agents=list(agents), **kw)


def _stored_dicts(session: Any) -> list[dict]:
    from ..graph.features.branches import history_dicts

    return history_dicts(session.messages)  # joined answers keep their parallel branches


def _user_agent(spec: str) -> Any:
    """The agent ``spec`` names (``file.py:name`` or ``module:name``), or a UserError."""
    from .loading import AgentSpecError, load_agent

    try:
        return load_agent(spec)
    except AgentSpecError as error:
        raise UserError(str(error)) from None


def _default_session(agent: Any) -> str:
    """A user agent's conversation id when ``--session`` is left out: its name, as a slug."""
    slug = "".join(c if c.isalnum() else "-" for c in str(agent.name).lower()).strip("-")
    return slug or "chat"


# -- demo ----------------------------------------------------------------------------------------
def _new_demo_session(args: argparse.Namespace, agents: Sequence[Any]) -> Any:
    """A Session on the first of ``demo``, ``demo-2``, ``demo-3``... that holds nothing yet.

    The demo only ever writes to a conversation it starts, and never clears one: ``--db`` may
    name a store that holds a user's own conversation called "demo".
    """
    import itertools

    from ..memory.store import Window

    for number in itertools.count(1):
        cid = DEMO_SESSION if number == 1 else f"{DEMO_SESSION}-{number}"
        session = _session(args, cid, agents)
        record = session.store.load(cid, window=Window(last=1))
        if not record.messages and record.version == 0 and not record.active_agent:
            return session
    raise AssertionError("unreachable")  # pragma: no cover


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from ..memory.compare import WITH_LONG_TERM, compare_persistence, format_table
    from .demo import DEMO_CONVERSATION, PERSIST_TABLE_NOTE, demo_agents
    from .terminal import Style, context_text, conversation_lines

    style = Style.for_stream(out, args.no_color)
    choice = _choose_model(args)
    swarm, label = choice.swarm, choice.label
    triage, sales, refunds = demo_agents(model=choice.name)
    session = _new_demo_session(args, [triage, sales, refunds])
    cid = session.conversation_id
    p = lambda text="": print(text, file=out)  # noqa: E731

    p(style.bold("swarmgraph demo") + ": a customer-service swarm, Triage → Sales / Refunds")
    p(f"model:  {label}")
    if choice.note:
        p(f"note:   {choice.note}")
    p(f"store:  {_where(args.db)} (conversation {cid!r}, new)")
    spans = _demo_spans() if getattr(args, "trace", False) else None
    try:
        for number, text in enumerate(DEMO_CONVERSATION, 1):
            p()
            p(style.dim(f"── turn {number} " + "─" * 40))
            response = session.run(swarm, triage, text)
            for line in conversation_lines([{"role": "user", "content": text}], style):
                p(line)
            for line in conversation_lines(response.messages, style):
                p(line)
            p(style.dim(f"   context_variables: {context_text(response.context_variables)}"))
            if spans is not None:  # --trace: this turn's spans, then a clean exporter
                from .span_tree import span_tree

                p(style.dim("   trace (OpenTelemetry spans, docs/tracing.md):"))
                for line in span_tree(spans.get_finished_spans()):
                    p("   " + line)
                spans.clear()
    finally:
        if spans is not None:
            from ..graph.features.tracing import use_tracer_provider

            use_tracer_provider(None)

    p()
    p(style.dim("── refresh " + "─" * 44))
    p("A new Session object on the same file, as after reloading the page:")
    later = _session(args, cid, [triage, sales, refunds])
    stored = later.messages
    p(f"  messages restored:  {len(stored)} (the model can read what was said)")
    p(f"  context restored:   {context_text(later.context_variables)} (tools get these)")
    p(f"  active agent:       {later.active_agent_name}")

    p()
    p(style.dim("── what survives a refresh, per persist choice " + "─" * 10))
    p(
        "Measured by swarmgraph.memory.compare: turn 1, a new Session, "
        "then turn 2 'Did my refund go through?'"
    )
    import tempfile

    # Files of its own, in a folder this run creates and removes: nothing next to --db.
    with tempfile.TemporaryDirectory(prefix="swarmgraph-compare-") as folder:
        rows = compare_persistence(folder, choices=WITH_LONG_TERM)
    p(format_table(rows))
    for line in PERSIST_TABLE_NOTE:
        p(style.dim(line))
    p()
    p(f"stored in {_where(args.db)}; see it with: {command_name()} history --session {cid}")
    return 0


def _demo_spans() -> Any:
    """``demo --trace``: trace the demo's runs into an in-memory exporter (returned)."""
    from .extras import require_extra

    require_extra("tracing", "opentelemetry.sdk", purpose="demo --trace")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ..graph.features.tracing import use_tracer_provider

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    use_tracer_provider(provider)
    return exporter


def cmd_chat(args: argparse.Namespace, out: TextIO) -> int:
    from ..memory.policies import parse_memory
    from .demo import demo_agents
    from .provider import describe_model_error
    from .repl import LineReader, chat_loop
    from .terminal import Style, one_line

    style = Style.for_stream(out, args.no_color)
    user_agent = _user_agent(args.agent) if args.agent else None
    reachable: list[Any] = []
    if user_agent is not None:
        from ..graph.options import reachable_agents

        reachable = reachable_agents([user_agent])
    # Your agents ask for their own models (the start agent's first); a LangGraph member
    # brings its own model, which is not ours to name.
    asked = [m for a in reachable if isinstance(m := getattr(a, "model", None), str)]
    choice = _choose_model(args, asked)
    # summary[:K] writes its summary with the chat model of the run (offline: the demo model).
    memory = parse_memory(args.memory, model=choice.chat_model)
    swarm: Any = choice.swarm
    if user_agent is None:
        # --user: the demo agents remember (the memory tools; offline, demo_memory's rules).
        start, *others = demo_agents(model=choice.name, memory_tools=bool(args.user))
        agents = [start, *others]
    else:
        from .demo_loop import LoopSwarm

        start = user_agent
        agents = reachable
        if args.model:  # your agents name their own models; --model overrides them all
            swarm = LoopSwarm(choice.swarm, model_override=args.model)
        if choice.offline:
            choice.note = choice.note or (
                "no OPENAI_API_KEY: the offline demo model answers, and it only knows the demo "
                "agents; set OPENAI_API_KEY (or OPENAI_BASE_URL and --model NAME)"
            )
    _mark_for_approval(agents, args.approve)
    conversation = args.session or _default_session(start)
    old_store = old_store_hint(args.db)  # before the session creates the new store
    # --user: the user's long-term memory (facts recalled into each prompt, /memories).
    long_term = {"user_id": args.user, "long_term": True} if args.user else {}
    session = _session(args, conversation, agents, memory=memory, **long_term)
    waiting = _mark_waiting(agents, session, args.approve)
    stored = len(session.messages)
    print(
        f"{style.bold('swarmgraph chat')}: session {conversation!r} in {_where(args.db)}", file=out
    )
    if user_agent is not None:
        print(f"agents: {', '.join(a.name for a in agents)} (from {args.agent})", file=out)
    print(f"model: {choice.label}; memory: {args.memory}", file=out)
    if choice.note:
        print(f"note: {choice.note}", file=out)
    if old_store and not stored:
        print(f"note: {old_store}", file=out)
    if stored:
        who = session.active_agent_name or start.name
        print(f"resuming: {stored} stored messages, talking to {who}", file=out)
    if waiting:
        print(f"note: {waiting} waits for your decision from an earlier chat", file=out)
    print("type /help for commands; Ctrl-C stops a turn, Ctrl-D quits", file=out)
    out.flush()
    return chat_loop(
        start,
        session,
        swarm,
        out=out,
        style=style,
        reader=LineReader(history_file(args.db), out=out),
        # The REPL's own fallback masks the environment's URLs; --db's too, here.
        describe_error=lambda e: (
            (None if choice.offline else describe_model_error(e, choice.base_url))
            or one_line(e, args.db)
        ),
    )


def _mark_waiting(agents: list, session: Any, approve: list[str]) -> str:
    """A call left waiting for a decision (Ctrl-D at the question) is asked about again even
    when this chat was started without ``--approve`` for its tool: the tool is marked for
    this chat, so the answer resumes the turn. Returns what waits, for the banner."""
    calls = [p for p in session.pending if not p.in_doubt]
    known = {f.__name__ for agent in agents for f in agent.functions}
    tools = sorted({p.tool for p in calls if p.tool in known and p.tool not in approve})
    if tools:
        _mark_for_approval(agents, tools)
    return ", ".join(p.describe() for p in calls)


def _mark_for_approval(agents: list, names: list[str]) -> None:
    """``--approve process_refund``: those tools wait for a yes in the REPL. The demo's own
    functions stay unmarked (a marked copy replaces each in these agents only)."""
    import functools

    from ..graph.features.decisions import needs_approval

    known = {f.__name__ for agent in agents for f in agent.functions}
    unknown = sorted(set(names) - known)
    if unknown:
        raise UserError(f"--approve: no tool named {', '.join(unknown)}; tools: {sorted(known)}")

    def marked(func: Any) -> Any:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        return needs_approval(call)

    for agent in agents:
        agent.functions = [marked(f) if f.__name__ in names else f for f in agent.functions]


# -- sessions ------------------------------------------------------------------------------------
def _when(stamp: float | None) -> str:
    """A last-change time in local time, to the second; "-" when the store has none.

    Example:
        >>> _when(None)
        '-'
    """
    import time

    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def cmd_sessions(args: argparse.Namespace, out: TextIO) -> int:
    """The stored conversations, the last changed first: id, agent, messages, last change."""
    from ..memory import open_store
    from .terminal import Style

    style = Style.for_stream(out, getattr(args, "no_color", False))
    path = _sqlite_file(args.db)
    if path is not None and not path.exists():  # reading must not create the file
        hint = old_store_hint(args.db)
        print(f"no stored conversations: {_where(args.db)} does not exist", file=out)
        if hint:
            print(f"note: {hint}", file=out)
        return 0
    rows = open_store(args.db).conversations()
    if not rows:
        print(f"no stored conversations in {_where(args.db)}", file=out)
        return 0
    table = [("conversation", "agent", "messages", "last change")] + [
        (row.conversation_id, row.active_agent or "-", str(row.messages), _when(row.updated_at))
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(4)]
    many = f"{len(rows)} conversation" + ("s" if len(rows) != 1 else "")
    print(f"{many} in {_where(args.db)}, the last changed first:", file=out)
    for number, line in enumerate(table):
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [line[2].rjust(widths[2]), line[3]]
        text = "  ".join(cells).rstrip()
        print(style.bold(text) if number == 0 else text, file=out)
    return 0


def command_name() -> str:
    """How to run ``swarmgraph`` again from here, for the hints commands print: the bare name
    when that is what the shell finds, else the path this process was started by
    (``.venv/bin/swarmgraph``, not on PATH until the venv is activated) or ``python -m``.

    Example:
        >>> command_name().endswith("swarmgraph")
        True
    """
    import shutil

    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    found = shutil.which("swarmgraph")
    if started is None or started.name != "swarmgraph":  # python -m swarmgraph, or embedded
        if found is not None:
            return "swarmgraph"
        return f"{_shown_path(Path(sys.executable))} -m swarmgraph"
    if found is not None and Path(found).resolve() == started.resolve():
        return "swarmgraph"
    return _shown_path(started)


def _shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (``.venv/bin/x``)."""
    try:
        return path.absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.absolute().as_posix()


# -- history -------------------------------------------------------------------------------------
def cmd_history(args: argparse.Namespace, out: TextIO) -> int:
    import json
    import shutil

    from .demo import demo_agents
    from .terminal import Style, conversation_lines

    if args.session is None:  # which conversations there are, and how to show one
        cmd_sessions(args, out)
        print(f"show one with: {command_name()} history --session ID", file=out)
        return 0
    path = _sqlite_file(args.db)
    if path is not None and not path.exists():
        hint = old_store_hint(args.db)
        raise UserError(
            f"no stored session {args.session!r}: {_where(args.db)} does not exist"
            + (f" ({hint})" if hint else "")
        )
    triage, sales, refunds = demo_agents()
    session = _session(args, args.session, [triage, sales, refunds])
    messages = _stored_dicts(session)
    context = session.context_variables
    agent = session.active_agent_name
    if not messages and not context and agent is None:
        raise UserError(f"no stored session {args.session!r} in {_where(args.db)}")
    memories = _long_term_lines(args, session)
    style = Style.for_stream(out, args.no_color)
    plain = Style(False)
    left_lines = conversation_lines(messages, plain)
    coloured = conversation_lines(messages, style)
    right = [
        "context_variables",
        "─" * 17,
        *json.dumps(context, indent=2, ensure_ascii=False, sort_keys=True).splitlines(),
        "",
        f"active agent: {agent or '-'}",
        *memories,
    ]
    width = shutil.get_terminal_size((120, 24)).columns
    right_w = max(len(line) for line in right) + 2
    left_w = max(30, width - right_w - 3)
    title = f"messages ({len(messages)}) of session {args.session!r} in {_where(args.db)}"
    print(f"{title[:left_w].ljust(left_w)} │ {right[0]}", file=out)
    print(f"{'─' * left_w}─┼─{right[1]}", file=out)
    rows = max(len(left_lines), len(right) - 2)
    for i in range(rows):
        raw = left_lines[i] if i < len(left_lines) else ""
        shown = coloured[i] if i < len(coloured) else ""
        if len(raw) > left_w:  # cut plain text; colour codes would miscount the width
            shown = raw[: left_w - 1] + "…"
            raw = shown
        side = right[i + 2] if i + 2 < len(right) else ""
        print(f"{shown}{' ' * (left_w - len(raw))} │ {side}".rstrip(), file=out)
    return 0


def _long_term_lines(args: argparse.Namespace, session: Any) -> list[str]:
    """The third kind beside messages and context: the long-term facts of the session's user
    (``--user``, else the user its turns wrote memories for)."""
    from ..memory.long_term import LongTermMemory
    from ..memory.long_term_session import USER_KEY
    from ..memory.store import NO_MESSAGES
    from .terminal import fact_lines

    meta = session.store.load(args.session, window=NO_MESSAGES).meta
    user = args.user or meta.get(USER_KEY)
    if not user:
        return ["", "long-term memory: - (no user; --user ID)"]
    try:
        facts = LongTermMemory(args.db, user_id=user).all_facts()
    except ValueError as error:  # a store with no long-term memory (redis://)
        return ["", f"long-term memory: - ({str(error).split(';')[0]})"]
    title = f"long-term memory of {user!r}"
    return ["", title, "─" * len(title), *(fact_lines(facts) or ["(nothing remembered)"])]


# -- graph ---------------------------------------------------------------------------------------
def demo_app() -> Any:
    """The demo swarm compiled as a LangGraph app (offline model; only drawn, not run)."""
    from ..graph.swarm_graph import build_swarm_graph
    from .demo import demo_agents, demo_model

    return build_swarm_graph(list(demo_agents()), chat_model=demo_model()).compile()


def user_app(agent: Any) -> Any:
    """The user's swarm compiled for drawing (a scripted model: nothing runs). A compiled
    LangGraph graph that is not one of our agents is drawn as it is."""
    from ..graph.chat_models.scripted import ScriptedChatModel
    from ..graph.core.types import Agent
    from ..graph.swarm_graph import build_swarm_graph

    if not isinstance(agent, Agent):
        return agent
    return build_swarm_graph([agent], chat_model=ScriptedChatModel([])).compile()


def cmd_graph(args: argparse.Namespace, out: TextIO) -> int:
    if args.format == "png":  # before any work: name every missing module at once
        from .extras import require_extra

        require_extra("draw", "matplotlib", "grandalf", purpose="swarmgraph graph --format png")
    agent = _user_agent(args.agent) if args.agent else None
    app = demo_app() if agent is None else user_app(agent)
    if args.format == "mermaid":
        text = app.get_graph().draw_mermaid()
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            print(f"wrote {args.output}", file=out)
        else:
            out.write(text)
        return 0
    from .drawing import draw_png

    name = "demo" if agent is None else _default_session(agent)
    target = Path(args.output or Path(DEFAULT_DIR) / f"{name}_graph.png")
    exclude = () if args.all_nodes else ("dynamic_handoff",)
    title = "demo swarm" if agent is None else f"{agent.name}'s swarm"
    draw_png(app, target, title=f"{title}: handoffs are conditional edges", exclude=exclude)
    print(f"wrote {target}", file=out)
    return 0


# -- entry point ---------------------------------------------------------------------------------
def _memory_spec(text: str) -> str:
    from ..memory.policies import parse_memory

    try:  # only the spelling is checked here; the summariser is the run's model (cmd_chat)
        parse_memory(text, model=object())
    except (ValueError, TypeError) as error:
        from .terminal import one_line

        raise argparse.ArgumentTypeError(one_line(error)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``swarmgraph --help``)."""
    parser = _Parser(
        prog="swarmgraph",
        description="OpenAI Swarm's ideas as a LangGraph state machine, with memory side by side.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"swarmgraph {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def storage(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--db",
            default=None,
            metavar="URL",
            help="where sessions live (default: $SWARMGRAPH_DB, else sqlite:///.swarmgraph/"
            "swarmgraph.db, the same store Session() uses; also memory://, postgresql://...)",
        )
        sub.add_argument("--no-color", action="store_true", help="plain text output")

    def model(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--model",
            metavar="NAME",
            help="a real model (needs OPENAI_API_KEY or OPENAI_BASE_URL); default: the offline "
            "demo model unless OPENAI_API_KEY is set",
        )
        sub.add_argument(
            "--offline", action="store_true", help="use the offline demo model even with a key"
        )

    demo = commands.add_parser("demo", help="play the customer-service demo and the persist table")
    storage(demo)
    model(demo)
    demo.add_argument(
        "--trace",
        action="store_true",
        help="print each turn's OpenTelemetry span tree (docs/tracing.md; needs opentelemetry-sdk)",
    )
    agent_help = "your agent: path/to/file.py:name or package.module:name (default: the demo swarm)"
    chat = commands.add_parser(
        "chat", help="chat with your agents (or the demo's), with persistent memory"
    )
    chat.add_argument("agent", nargs="?", metavar="AGENT", help=agent_help)
    chat.add_argument(
        "--session",
        metavar="ID",
        help="conversation id (required for the demo; default for your agent: its name)",
    )
    chat.add_argument(
        "--memory",
        default="buffer",
        type=_memory_spec,
        metavar="POLICY",
        help="what the model is shown: buffer, window:K, tokens:N, or summary[:K] (the last K "
        "messages, default 10, after a summary the run's own model writes)",
    )
    chat.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="TOOL",
        help="ask before running this tool (e.g. process_refund); repeat for more",
    )
    chat.add_argument(
        "--user",
        metavar="ID",
        help="keep this user's long-term memory: facts recalled into each prompt across "
        "sessions (/memories shows them)",
    )
    storage(chat)
    model(chat)
    history = commands.add_parser(
        "history",
        help="stored messages, context and long-term facts of a session (without --session: "
        "the list)",
    )
    history.add_argument(
        "--session", metavar="ID", help="conversation id (left out: list the conversations)"
    )
    history.add_argument(
        "--user", metavar="ID", help="whose long-term facts to show (default: the session's)"
    )
    storage(history)
    sessions = commands.add_parser(
        "sessions", help="the stored conversations: id, agent, messages, last change"
    )
    storage(sessions)
    drawing = commands.add_parser(
        "graph", help="your swarm's graph, or the demo's (mermaid text or PNG)"
    )
    drawing.add_argument("agent", nargs="?", metavar="AGENT", help=agent_help)
    drawing.add_argument("--format", choices=("mermaid", "png"), default="mermaid")
    drawing.add_argument(
        "--output", metavar="PATH", help="file to write (PNG default: .swarmgraph/<name>_graph.png)"
    )
    drawing.add_argument(
        "--all-nodes", action="store_true", help="PNG: also draw the dynamic_handoff helper node"
    )
    serving = commands.add_parser(
        "worker", help="a Temporal worker for your agents' runs (extra temporal; docs/temporal.md)"
    )
    serving.add_argument(
        "agents", nargs="+", metavar="AGENT",
        help="your agents, one or more (required; no demo default): path/to/file.py:name or "
        "package.module:name, importable the same way by every worker",
    )  # fmt: skip
    serving.add_argument("--temporal", required=True, metavar="HOST:PORT", help="the server")
    serving.add_argument("--task-queue", required=True, metavar="Q", help="the queue to serve")
    serving.add_argument("--namespace", default="default", help="Temporal namespace")
    serving.add_argument(
        "--chat-model", metavar="SPEC",
        help="file.py:name of a chat model or a function making one (default: --model / "
        "OPENAI_API_KEY, else the offline demo model, which only knows the demo agents)",
    )  # fmt: skip
    serving.add_argument(
        "--max-concurrent-activities", type=int, metavar="N",
        help="model and tool calls this worker runs at once (its capacity; default Temporal's)",
    )  # fmt: skip
    model(serving)
    durable = commands.add_parser(
        "run", help="one run of your agent on Temporal, answered by its workers (extra temporal)"
    )
    durable.add_argument("agent", metavar="AGENT", help="path/to/file.py:name or module:name")
    durable.add_argument("message", metavar="MESSAGE", help="the user's message")
    durable.add_argument("--temporal", required=True, metavar="HOST:PORT", help="the server")
    durable.add_argument("--task-queue", required=True, metavar="Q", help="the workers' queue")
    durable.add_argument("--namespace", default="default", help="Temporal namespace")
    durable.add_argument("--id", metavar="ID", help="the workflow id (default: swarm-<uuid>)")
    durable.add_argument(
        "--session", metavar="ID", help="a turn of this stored conversation (saved by a worker)"
    )
    storage(durable)
    from .ui.command import add_ui_parser  # its options only; the server loads on use

    add_ui_parser(commands, storage, model, _memory_spec)
    return parser


def _cmd_worker(args: argparse.Namespace, out: TextIO) -> int:
    from ..temporal.cli import cmd_worker  # temporalio only for this command

    def choose(asked: Sequence[str]) -> tuple[Any, str]:
        choice = _choose_model(args, asked)
        if choice.offline:  # say why the worker's replies will only echo, before it serves
            print(
                "no OPENAI_API_KEY: the offline demo model answers, and it only knows the demo "
                "agents, so your agents' runs get echoes (no tool calls, no handoffs); give "
                "--chat-model file.py:name (a model, or a function making one), or set "
                "OPENAI_API_KEY (or OPENAI_BASE_URL and --model NAME)",
                file=out,
                flush=True,
            )
        return choice.swarm, choice.label

    return cmd_worker(args, out, choose)


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    from ..temporal.cli import cmd_run  # temporalio only for this command

    return cmd_run(args, out)


def _cmd_ui(args: argparse.Namespace, out: TextIO) -> int:
    from .ui.command import CliTools, cmd_ui  # ag-ui-protocol only for this command

    tools = CliTools(_user_agent, _choose_model, _mark_for_approval, _prepare_store)
    return cmd_ui(args, out, tools)


def _user_errors() -> tuple[type[BaseException], ...]:
    import sqlite3

    from ..graph.core.errors import SwarmError
    from ..graph.models import MissingModelError
    from ..memory import ContextSerializationError, ContextVersionConflict

    errors: list[type[BaseException]] = [
        UserError,
        SwarmError,
        MissingModelError,
        ContextSerializationError,
        ContextVersionConflict,
        sqlite3.Error,
        OSError,
        ValueError,
        ImportError,
    ]
    try:
        from sqlalchemy.exc import SQLAlchemyError

        errors.append(SQLAlchemyError)
    except ImportError:  # pragma: no cover - SQLAlchemy is a dependency
        pass
    return tuple(errors)


def _describe(error: BaseException, url: str | None) -> str:
    from .terminal import one_line

    text = one_line(error, url)
    low = text.lower()
    if "database is locked" in low:
        return "the database is locked by another process; try again when it is done"
    if "unable to open database" in low:
        return f"cannot open the database file ({text})"
    if isinstance(error, ImportError):  # the extra that brings the module, if any
        from .extras import MissingExtra, install_hint

        return (
            text
            if isinstance(error, MissingExtra)
            else one_line(ImportError(install_hint(error)), url)
        )
    orig = getattr(error, "orig", None)  # SQLAlchemy wraps the driver's error
    if orig is not None:
        return one_line(orig, url)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``swarmgraph`` command line; returns the exit status."""
    try:
        status = _main(argv)
    finally:
        if argv is None:  # the process exits next (console script, python -m swarmgraph)
            # Interpreter shutdown would walk the ~100k objects LangChain/LangGraph leave
            # behind in one last full collection (~0.5 s); frozen objects are skipped.
            # Not when called with argv (tests, embedding): the caller's process goes on.
            import gc

            gc.freeze()
    if argv is None and "temporalio.bridge.temporal_sdk_bridge" in sys.modules:
        _exit_without_finalising(status)
    return status


def _exit_without_finalising(status: int) -> NoReturn:
    """End a process that loaded temporalio's Rust core without Python's finalisation.

    The core's threads can still take the GIL while the interpreter finalises, which aborts
    the process ("PyGILState_Release: thread state ... must be current", SIGABRT, rc -6;
    temporalio/sdk-python#300): ``swarmgraph worker`` stopped by SIGTERM did so now and
    then. The ``atexit`` hooks (SQLite checkpoints among them) and the stream flushes that
    finalisation would do still run first.
    """
    import atexit
    from contextlib import suppress

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(status)


def _main(argv: Sequence[str] | None) -> int:
    import warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "chat" and not args.agent and not args.session:
        parser.error("the following arguments are required: --session (the demo needs one)")
    if getattr(args, "db", "unset") is None:
        args.db = default_db_url()
    handlers = {
        "demo": cmd_demo,
        "chat": cmd_chat,
        "history": cmd_history,
        "sessions": cmd_sessions,
        "graph": cmd_graph,
        "worker": _cmd_worker,
        "run": _cmd_run,
        "ui": _cmd_ui,
    }
    debug = bool(os.environ.get("SWARMGRAPH_DEBUG"))
    try:
        with warnings.catch_warnings():
            if not debug:  # LangChain deprecation notes are ours to handle, not the user's
                from langchain_core._api import LangChainDeprecationWarning

                warnings.simplefilter("ignore", LangChainDeprecationWarning)
            return handlers[args.command](args, sys.stdout)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:
        if debug:
            raise
        from .provider import describe_model_error

        about_model = describe_model_error(error, os.environ.get("OPENAI_BASE_URL"))
        if about_model is not None:
            print(f"swarmgraph: error: {about_model}", file=sys.stderr)
            return 1
        if isinstance(error, _user_errors()):
            print(
                f"swarmgraph: error: {_describe(error, getattr(args, 'db', None))}", file=sys.stderr
            )
            return 1
        from .terminal import one_line

        print(
            f"swarmgraph: internal error: {type(error).__name__}: "
            f"{one_line(error, getattr(args, 'db', None))} "
            "(set SWARMGRAPH_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
