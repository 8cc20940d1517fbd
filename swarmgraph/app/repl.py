"""The chat REPL: a line editor with history, /commands, and turns that Ctrl-C stops at once.

:func:`chat_loop` talks to any agent through a :class:`memory.Session`; ``swarmgraph chat``
is this loop on the demo agents. Pieces another front end can reuse:

- :class:`LineReader` reads lines: on a terminal with prompt_toolkit (arrow keys, Ctrl-R,
  a history file, and no 4,095-character cut: the terminal's canonical mode is off while
  prompt_toolkit reads), elsewhere with plain ``input()``. :meth:`LineReader.confirm` asks a
  yes/no question.
- :func:`run_interruptible` runs one turn in a worker thread, so Ctrl-C returns to the prompt
  at once even while the model is still thinking; the abandoned turn is never saved.
- :data:`COMMANDS` is the table of /commands; ``chat_loop(commands=...)`` adds or replaces.

Example (stdin is not a terminal here, so lines come from ``input()``):
    >>> import io, sys, tempfile
    >>> from swarmgraph.app.demo import demo_agents, demo_model
    >>> from swarmgraph.graph import Swarm
    >>> from swarmgraph.memory import Session
    >>> triage, _, _ = demo_agents()
    >>> session = Session("doc", url="sqlite:///" + tempfile.mkdtemp() + "/chat.db")
    >>> sys.stdin, saved = io.StringIO("I'm Ada, refund order 12\\n/context\\n"), sys.stdin
    >>> out = io.StringIO()
    >>> chat_loop(triage, session, Swarm(chat_model=demo_model()), out=out)
    0
    >>> print(out.getvalue().splitlines()[0])   # piped lines are not echoed
    you ›   Triage ⚙ set_name(name="Ada")
    >>> sys.stdin = saved
    >>> "Refunds › Done, Ada: the refund for order 12 is approved." in out.getvalue()
    True
    >>> session.context_variables["order_id"]
    12
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ..memory.approvals import ApprovalPendingError
from .terminal import (
    Spinner,
    StreamingSwarm,
    Style,
    TurnInterrupted,
    context_text,
    conversation_lines,
    fact_lines,
    one_line,
)

__all__ = [
    "COMMANDS",
    "Command",
    "LineReader",
    "Repl",
    "TurnInterrupted",
    "chat_loop",
    "run_interruptible",
]

T = TypeVar("T")
PROMPT = "you › "


# -- reading lines --------------------------------------------------------------------------------
class LineReader:
    """Reads the user's lines; ``EOFError`` on Ctrl-D, ``KeyboardInterrupt`` on Ctrl-C.

    On a terminal (stdin and stdout both ttys) this is a prompt_toolkit session: line
    editing, arrow-up history kept in ``history_file`` across runs, and lines of any length.
    Otherwise (a pipe, a test, a notebook) it reads ``sys.stdin`` and writes the prompt to
    ``out`` (default: ``sys.stdout``).

    Example:
        >>> import io, sys
        >>> sys.stdin, saved = io.StringIO("hello\\ny\\n"), sys.stdin
        >>> shown = io.StringIO()
        >>> reader = LineReader(out=shown)
        >>> reader.interactive, reader.read("> "), reader.confirm("sure?"), shown.getvalue()
        (False, 'hello', True, '> sure? [y/N] ')
        >>> sys.stdin = saved
    """

    def __init__(self, history_file: Path | None = None, *, out: TextIO | None = None) -> None:
        self.history_file = history_file
        self.out = out
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self._prompt: Any = None
        if self.interactive:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory, InMemoryHistory

            history: Any = InMemoryHistory()
            if history_file is not None:
                try:
                    history_file.parent.mkdir(parents=True, exist_ok=True)
                    history = FileHistory(str(history_file))
                except OSError:  # a read-only folder: edit lines, but forget them at exit
                    pass
            self._prompt = PromptSession(history=history)

    def read(self, prompt: str = PROMPT) -> str:
        """One line, without its newline."""
        if self._prompt is not None:
            return self._prompt.prompt(prompt)
        return self._plain(prompt)

    def _plain(self, prompt: str) -> str:
        out = self.out if self.out is not None else sys.stdout
        out.write(prompt)
        out.flush()
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def confirm(self, question: str, *, default: bool = False) -> bool:
        """Ask ``question`` [y/N]; Enter gives ``default``, Ctrl-C or Ctrl-D mean no."""
        hint = " [Y/n] " if default else " [y/N] "
        try:
            if self._prompt is not None:
                from prompt_toolkit import prompt as ask  # not in the chat's history

                answer = ask(question + hint)
            else:
                answer = self._plain(question + hint)
        except (EOFError, KeyboardInterrupt):
            return False
        answer = answer.strip().lower()
        return default if not answer else answer in ("y", "yes")


# -- one turn, interruptible ----------------------------------------------------------------------
class _Cancellable:
    """A swarm wrapper whose result is thrown away once the turn is cancelled.

    ``Session.run`` saves only after ``swarm.run`` returns; raising instead of returning is
    how a cancelled turn leaves the store untouched. The lock makes "cancelled" and "handed
    the response to the Session" mutually exclusive, so the REPL always knows which happened.
    """

    def __init__(self, swarm: Any) -> None:
        self.swarm = swarm
        self._lock = threading.Lock()
        self.cancelled = False
        self.committed = False

    def run(self, **kwargs: Any) -> Any:
        if self.cancelled:
            raise TurnInterrupted
        response = self.swarm.run(**kwargs)
        with self._lock:
            if self.cancelled:
                raise TurnInterrupted
            self.committed = True
        return response

    def cancel(self) -> bool:
        """Cancel unless the response already went to the Session; True if cancelled."""
        with self._lock:
            if not self.committed:
                self.cancelled = True
            return self.cancelled


def run_interruptible(work: Callable[[], T], cancel: Callable[[], bool]) -> T:
    """``work()`` in a worker thread; Ctrl-C calls ``cancel()`` and raises at once.

    The main thread only waits, in short slices, so the KeyboardInterrupt of Ctrl-C arrives
    within a fraction of a second, even while ``work`` blocks on a socket. If ``cancel()``
    returns False (too late: the result is being saved), the work is awaited and returned.

    Example:
        >>> run_interruptible(lambda: 6 * 7, cancel=lambda: True)
        42
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as error:  # handed to the main thread below
            box["error"] = error
        finally:
            done.set()

    # A daemon thread: an abandoned turn waiting on a slow server never holds up exiting.
    threading.Thread(target=target, name="swarmgraph-turn", daemon=True).start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        if cancel():
            raise TurnInterrupted from None
        done.wait()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- the loop -------------------------------------------------------------------------------------
@dataclass
class Repl:
    """What a /command or a turn needs: the agent, its Session, where to print, how to ask."""

    agent: Any
    session: Any
    swarm: Any
    out: TextIO
    style: Style
    reader: LineReader
    #: Turns a model error into one line (None: not a model error); set by the CLI.
    describe_error: Callable[[BaseException], str | None] = lambda error: None
    commands: dict[str, Command] = field(default_factory=dict)
    #: Stored messages this REPL has shown (None: the session keeps no messages).
    seen: int | None = None

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def stored_count(self) -> int | None:
        """How many messages the session stores now (None when it keeps none)."""
        if "messages" not in getattr(self.session, "persist", ("messages",)):
            return None
        return int(self.session.store.count(self.session.conversation_id))

    def catch_up(self) -> None:
        """Show what another client (a second REPL, a worker) stored since this REPL last
        looked: ``2 new messages from another client``, then the messages."""
        if self.seen is None:
            return
        count = self.stored_count()
        if count is None or count == self.seen:
            return
        if count < self.seen:
            self.say("(another client cleared this conversation)")
        else:
            from ..graph.core.messages import to_openai

            new = self.session.store.messages(self.session.conversation_id)[self.seen :]
            many = f"{len(new)} new message" + ("s" if len(new) != 1 else "")
            self.say(self.style.dim(f"({many} from another client)"))
            for line in conversation_lines(to_openai(new), self.style):
                self.say(line)
        self.seen = count

    def mark_seen(self) -> None:
        """What is stored now was shown here (after this REPL's own turn or /clear)."""
        if self.seen is not None:
            self.seen = self.stored_count()

    def turn(self, text: str) -> bool:
        """Run one user message; Ctrl-C stops it and stores nothing. A tool call that needs
        approval is asked about (``approve process_refund(order_id=7)? [y/N/reason]``).
        True when the user left at that question (Ctrl-D): the REPL ends."""
        response = self._run(lambda swarm: self.session.run(swarm, self.agent, text))
        return self.settle(response)

    def settle(self, response: Any = None) -> bool:
        """Ask about each tool call waiting for approval and resume, until nothing waits.

        Ctrl-D at the question leaves the REPL (True): the call stays waiting in the session,
        and the next ``swarmgraph chat`` on it asks again before anything else. A turn typed
        while a call waits could not run (the conversation must be resumed first), so the
        REPL never goes back to its prompt with a call undecided.
        """
        if response is None:  # a turn an earlier process left inside an effect tool goes first
            for turn_id in self.session.unfinished:

                def retry(swarm: Any, turn_id: str = turn_id) -> Any:
                    return self.session.run(swarm, self.agent, turn_id=turn_id)

                response = self._run(retry) or response
        pending = response.pending if response is not None else self.session.pending
        while pending:
            decisions = {}
            for call in pending:
                decision = self.ask_approval(call)
                if decision is None:
                    self.say(
                        f"(left waiting: {call.describe()} is asked about again when "
                        f"session {self.session.conversation_id!r} is opened)"
                    )
                    return True
                decisions[call.id] = decision

            def resume(swarm: Any, decided: dict[str, bool | str] = decisions) -> Any:
                return self.session.run(swarm, self.agent, approvals=decided)

            response = self._run(resume)
            if response is None:
                return False
            pending = response.pending
        return False

    def ask_approval(self, call: Any) -> bool | str | None:
        """``approve process_refund(order_id=7)? [y/N/reason]``: True, False, the reason
        (a denial that says why), or None when the user pressed Ctrl-D. Ctrl-C drops what
        was typed and asks again, as it drops a line at the prompt. A call in doubt (its
        process died while it ran) is asked whether it happened instead."""
        if getattr(call, "in_doubt", False):
            return self.ask_in_doubt(call)
        while True:
            try:
                answer = self.reader.read(f"approve {call.describe()}? [y/N/reason] ").strip()
            except EOFError:
                self.say()
                return None
            except KeyboardInterrupt:
                self.say("^C" if not self.reader.interactive else "")
                continue
            break
        if answer.lower() in ("y", "yes"):
            return True
        if answer.lower() in ("", "n", "no"):
            return False
        return answer

    def ask_in_doubt(self, call: Any) -> bool | str | None:
        """``did process_refund(order_id=7) happen? [y/n/result]``: "y" answers the model that
        it did (it is not run again), "n" runs it again, other text is its result; nothing,
        Ctrl-C or Ctrl-D leave it waiting (never run again on a guess)."""
        try:
            answer = self.reader.read(f"did {call.describe()} happen? [y/n/result] ").strip()
        except (EOFError, KeyboardInterrupt):
            return None
        if answer.lower() in ("y", "yes"):
            return f"{call.describe()} happened (confirmed by the user)."
        if answer.lower() in ("n", "no"):
            return True
        return answer or None

    def _run(self, turn: Callable[[Any], Any]) -> Any:
        """One run of the session through a streaming, cancellable swarm; its Response, or
        None when it was interrupted or failed (the error is printed)."""
        spinner = Spinner(self.out, self.out.isatty())
        streaming = StreamingSwarm(self.swarm, self.out, self.style, spinner)
        guarded = _Cancellable(streaming)
        streaming.stopped = lambda: guarded.cancelled

        def cancel() -> bool:
            cancelled = guarded.cancel()
            if cancelled:
                spinner.close()
            return cancelled

        try:
            return run_interruptible(lambda: turn(guarded), cancel)
        except TurnInterrupted:
            self.say("\n(interrupted; nothing of this turn was saved)")
        except ApprovalPendingError:
            # Session's advice is written for Python; here the REPL asks again (settle).
            waits = ", ".join(p.describe() for p in self.session.pending)
            self.say(f"({waits} waits for your decision first: answer y, n or a reason)")
        except Exception as error:
            if os.environ.get("SWARMGRAPH_DEBUG"):
                raise
            line = self.describe_error(error) or one_line(error)
            print(f"error: {line}", file=sys.stderr, flush=True)
        return None


@dataclass(frozen=True)
class Command:
    """A /command: ``run(repl, argument) -> True to quit``."""

    help: str
    run: Callable[[Repl, str], bool]


def _help(repl: Repl, _: str) -> bool:
    width = max(len(name) for name in repl.commands)
    for name, command in repl.commands.items():
        repl.say(f"  {name.ljust(width)}  {command.help}")
    repl.say("  Ctrl-C stops a turn (nothing of it is saved); Ctrl-D quits; ↑/↓ recall lines")
    return False


def _context(repl: Repl, _: str) -> bool:
    repl.say(f"context_variables: {context_text(repl.session.context_variables)}")
    return False


def _history(repl: Repl, _: str) -> bool:
    from ..graph.features.branches import history_dicts

    lines = conversation_lines(history_dicts(repl.session.messages), repl.style)
    repl.say("\n".join(lines) if lines else "(no stored messages)")
    return False


def _memories(repl: Repl, _: str) -> bool:
    memory = getattr(repl.session, "long_term", None)
    if memory is None:
        repl.say("long-term memory is off (start the chat with --user ID to keep it)")
        return False
    agent = repl.session.active_agent_name or repl.agent.name
    lines = fact_lines(memory.facts(agent))
    repl.say(f"long-term memory of user {memory.user_id!r}, as {agent} sees it:")
    repl.say("\n".join(lines) if lines else "(nothing remembered yet)")
    return False


def _agent(repl: Repl, argument: str) -> bool:
    """``/agent``: who answers next; ``/agent Sales``: hand the conversation to Sales, one of
    the agents reachable from the one the chat started with."""
    if not argument:
        name = repl.session.active_agent_name
        repl.say(f"active agent: {name or repl.agent.name + ' (nobody has answered yet)'}")
        return False
    reachable = _reachable(repl)
    wanted = [a for a in reachable if a.name == argument]
    if not wanted:
        wanted = [a for a in reachable if a.name.lower() == argument.lower()]
    if len(wanted) != 1:
        names = ", ".join(a.name for a in reachable)
        why = "no agent" if not wanted else "more than one agent"
        repl.say(f"cannot switch: {why} named {argument!r} here; agents: {names}")
        return False
    repl.session.switch_agent(wanted[0])
    repl.say(f"active agent: {wanted[0].name} (answers your next message)")
    return False


def _reachable(repl: Repl) -> list[Any]:
    """The agents this chat can reach from its start agent (the swarm's own discovery)."""
    swarm = repl.swarm
    while not hasattr(swarm, "reachable_agents") and hasattr(swarm, "swarm"):
        swarm = swarm.swarm  # a wrapper (LoopSwarm) around the Swarm
    if hasattr(swarm, "reachable_agents"):
        return list(swarm.reachable_agents(repl.agent))
    from ..graph.options import reachable_agents

    return reachable_agents([repl.agent])


def _clear(repl: Repl, _: str) -> bool:
    count = len(repl.session.messages)
    question = (
        f"delete the {count} stored messages and the context of session "
        f"{repl.session.conversation_id!r}?"
    )
    if repl.reader.confirm(question):
        repl.session.clear()
        repl.say("cleared: stored messages and context of this session are gone")
    else:
        repl.say("kept: nothing was deleted")
    return False


def _quit(repl: Repl, _: str) -> bool:
    return True


#: The built-in /commands, in the order /help lists them.
COMMANDS: dict[str, Command] = {
    "/help": Command("this list", _help),
    "/context": Command("the stored context_variables", _context),
    "/history": Command("the stored messages", _history),
    "/memories": Command("the user's long-term facts the active agent may read", _memories),
    "/agent": Command("who answers next; /agent NAME hands the conversation to NAME", _agent),
    "/clear": Command("delete this session's messages and context (asks first)", _clear),
    "/quit": Command("leave (also /exit, Ctrl-D)", _quit),
}
_ALIASES = {"/exit": "/quit", "/q": "/quit", "/?": "/help"}


def chat_loop(
    agent: Any,
    session: Any,
    swarm: Any,
    *,
    out: TextIO | None = None,
    style: Style | None = None,
    reader: LineReader | None = None,
    commands: dict[str, Command] | None = None,
    describe_error: Callable[[BaseException], str | None] | None = None,
) -> int:
    """Read lines and run each as a turn of ``session`` with ``agent`` until Ctrl-D or /quit.

    ``commands`` adds /commands to (or replaces some of) :data:`COMMANDS`. Returns the exit
    status (0). The banner is the caller's: this prints only turns and command output.
    """
    out = out if out is not None else sys.stdout
    repl = Repl(
        agent=agent,
        session=session,
        swarm=swarm,
        out=out,
        style=style or Style.for_stream(out),
        reader=reader or LineReader(out=out),
        commands={**COMMANDS, **(commands or {})},
    )
    if describe_error is not None:
        repl.describe_error = describe_error
    repl.seen = repl.stored_count()
    if repl.settle():  # a turn stored while it waited for approval (an earlier process) first
        return 0
    repl.mark_seen()
    while True:
        try:
            text = repl.reader.read(PROMPT).strip()
        except EOFError:
            repl.say()
            return 0
        except KeyboardInterrupt:  # Ctrl-C at the prompt drops the line, as in Python's REPL
            repl.say("^C" if not repl.reader.interactive else "")
            continue
        if not text:
            continue
        repl.catch_up()  # another client's turns first, in the order they were stored
        if text.startswith("/"):
            name, _, argument = text.partition(" ")
            name = _ALIASES.get(name.lower(), name.lower())
            command = repl.commands.get(name)
            if command is None:
                repl.say(f"unknown command {name}; /help lists them")
            elif command.run(repl, argument.strip()):
                return 0
            repl.mark_seen()
            continue
        left = repl.turn(text)
        repl.mark_seen()
        if left:
            return 0
