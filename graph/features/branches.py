"""How the graph runs a :class:`~swarmgraph.graph.features.parallel.Parallel`: fan out, branch,
join.

Three steps, each one place in the graph:

- **fan out** (:meth:`FanOut.__call__`, called by the agent node whose tool returned
  ``Parallel``): the node returns ``Command(goto=[Send("parallel_branch", task), ...])``, one
  :class:`BranchTask` per branch; the fan-out call stays unanswered until the join;
- **branch** (:class:`BranchNode`, one task per ``Send``, run concurrently by LangGraph: its
  thread pool for ``run``, asyncio tasks for ``arun``): a small nested swarm run over the
  branch's own messages and context, until an agent answers without tool calls (its tools run,
  it may hand off, budgets, routes, ``CALLER`` and history views apply inside), as a subgraph,
  so a checkpointer keeps it and an approval inside it interrupts the whole run;
- **join** (:class:`JoinNode`, once every branch is done): the fan-out call is answered with
  every branch's answer in the order the agents were given, never the order they finished
  (``{"Billing": "...", "Tech": "..."}``; a transfer call of ``parallel_handoffs="all"`` with
  its own branch's answer), the branches' context changes are merged
  (:func:`~swarmgraph.graph.features.parallel.merge_contexts`), and the agent that fanned out (or
  ``join=``) speaks next. A branch that raised, or context writes that conflict, stop the run
  here with :class:`~swarmgraph.graph.features.errors.BranchFailed` /
  :class:`~swarmgraph.graph.features.errors.ContextConflict` (``.response`` holds everything).

Each branch's own messages are kept in ``Response.branches`` (see :func:`branch_records`),
never in the main conversation: it gets the one joined answer.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
    >>> from swarmgraph.graph.features.parallel import Parallel
    >>> billing = Agent(name="Billing", model="billing")
    >>> tech = Agent(name="Tech", model="tech")
    >>> def ask_both():
    ...     '''Ask billing and tech at once.'''
    ...     return Parallel(billing, tech)
    >>> desk = Agent(name="Desk", model="desk", functions=[ask_both])
    >>> models = {"desk": ScriptedChatModel([scripted_tool_call("ask_both"), "Both checked."]),
    ...           "billing": ScriptedChatModel(["Invoice 7 is paid."]),
    ...           "tech": ScriptedChatModel(["The router is fine."])}
    >>> response = Swarm(chat_model=models.__getitem__).run(
    ...     desk, [{"role": "user", "content": "invoice 7 and my router?"}])
    >>> response.messages[1]["content"]
    '{"Billing": "Invoice 7 is paid.", "Tech": "The router is fine."}'
    >>> response.messages[-1]["content"], [b["branch"] for b in response.branches]
    ('Both checked.', ['Billing', 'Tech'])
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, Overwrite, Send
from typing_extensions import NotRequired, TypedDict

from ..core.drivers import ASYNC, SYNC, Driver, drive
from ..core.errors import SwarmError
from ..core.handoffs import Handoff, HandTo, handoff_verdict
from ..core.marks import loaded
from ..core.messages import open_calls, to_langchain, to_openai
from ..core.middleware import AFTER_MODEL_KEY, ENTERED_KEY
from ..core.node_names import HELPER_NODES
from ..core.run_control import RunControl, RunState, current_control
from ..core.state import StateUpdate, SwarmState, branch_scope, current_branch
from ..core.types import CALLER, Agent
from .approvals import PendingApproval
from .errors import BranchFailed, BranchStateWarning, ContextConflict
from .fan_out_scope import fan_out_scope
from .parallel import (
    MergeRule,
    Parallel,
    branch_labels,
    merge_contexts,
    rule_by_reference,
    rule_reference,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from ..core.runtime import GraphRuntime, ToolOutcome, Turn
    from .effects import FanOutSoFar
    from .tracing import TracedRun

__all__ = [
    "BRANCHES_KEY",
    "BRANCH_NODE",
    "JOIN_NODE",
    "BranchEntry",
    "BranchNode",
    "BranchResult",
    "BranchTask",
    "FanOut",
    "FanOutPlan",
    "JoinNode",
    "ParallelState",
    "branch_records",
    "history_dicts",
    "progress_of",
    "resume_fan_out",
    "resume_from_records",
]

#: The node every branch runs in (one task per ``Send``) and the node that joins them.
BRANCH_NODE, JOIN_NODE = HELPER_NODES


@dataclass
class FanOutRun(RunState):
    """One run's fan-outs (this feature's state, ``RunControl.own(FanOutRun)``): each
    finished branch's record, in the order they finished (``Response.branches`` sorts them),
    the fan-outs' ids in the order they happened, what a branch raised (the join re-raises
    it), and the fan-out a resumed run picks up (``Swarm.run(..., branches=)``)."""

    branches: list[BranchRecord] = field(default_factory=list)
    fan_outs: list[str] = field(default_factory=list)
    branch_errors: dict[tuple[str, int], BaseException] = field(default_factory=dict)
    resume: Any = None  # the Sends that pick a paused fan-out up
    resumed: Any = None  # (plan, results of the branches that had answered) for its join
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: For effect calls inside top-level branches (see :func:`progress_of`): each branch's
    #: task by label, each fan-out's start (main messages, context, the agent's key) and
    #: every branch's latest resumable record, by fan-out id and branch index.
    live: dict[str, BranchTask] = field(default_factory=dict)
    started: dict[str, tuple[list[BaseMessage], dict[str, Any], str]] = field(default_factory=dict)
    progress: dict[str, dict[int, BranchEntry]] = field(default_factory=dict)


def fan_out_run(control: RunControl) -> FanOutRun:
    """The run's :class:`FanOutRun` (made on first use)."""
    return control.own(FanOutRun)


#: Where a joined answer (a ToolMessage) keeps its branches: ``additional_kwargs[BRANCHES_KEY]``,
#: a list of ``Response.branches`` entries (their public keys; messages as Swarm dicts).
BRANCHES_KEY = "swarmgraph_branches"

#: Fan-outs whose merge rules this process keeps, by fan-out id (a rule is a function, which
#: no checkpointer stores; another process imports it by name, see ``rule_reference``).
MAX_REMEMBERED_RULES = 256

BranchStatus = Literal["answered", "waiting", "stopped", "failed", "refused"]


class FanOutPlan(TypedDict):
    """What the join needs to know about a fan-out (kept in the state until the join)."""

    id: str  # this fan-out's own id (a fan-out call's id repeats across models)
    agent: str  # the state key of the agent that fanned out
    join: str  # the state key of the agent that speaks after the join
    #: each fan-out call: [call id, tool name, "json" | "text", [its branches' indexes]]
    calls: list[list[Any]]
    labels: list[str]  # every branch's label, in the order the agents were given
    merge: dict[str, str | None]  # the merge rules' keys -> importable name (None: a lambda)


class BranchTask(TypedDict):
    """One ``Send`` to the branch node: where the branch starts (or, resumed, where it is)."""

    plan: FanOutPlan
    index: int
    label: str
    agent: str  # the state key of the agent the branch starts with
    task: str | None
    handoff: str  # how the fan-out call reads in this branch (a handoff's answer)
    messages: list[AnyMessage]  # the branch's input, then (resumed) its own messages so far
    start: int  # messages before this index are the input
    context_variables: dict[str, Any]
    active_agent: str
    handoff_trail: list[str]


class BranchResult(TypedDict):
    """What one branch hands the join."""

    index: int
    label: str
    agent: str  # the name of the agent the branch started with
    status: BranchStatus
    answer: str | None
    error: str | None
    messages: list[AnyMessage]  # the branch's own messages
    context_variables: dict[str, Any]
    active_agent: str  # the name of the agent holding the branch when it ended
    #: State keys the branch wrote that the join does not carry back (:func:`_unjoined`).
    unjoined: NotRequired[list[str]]


class BranchOutcome(TypedDict):
    """How one branch ended, as ``Response.branches`` and a joined answer show it (its
    ``messages`` are added by the shapes below, as LangChain messages or Swarm dicts)."""

    branch: str  # its label; "Outer/Inner" inside a nested fan-out
    agent: str  # the name of the agent it started with
    status: BranchStatus
    answer: str | None
    error: str | None
    context_variables: dict[str, Any]  # where it left them
    active_agent: str  # the name of the agent holding it when it ended


class ResumableBranch(BranchOutcome):
    """A branch's outcome with what a run that picks its fan-out up needs
    (``Swarm.run(..., branches=response.branches)``, :func:`resume_from_records`)."""

    plan: FanOutPlan
    index: int
    task: str | None
    handoff: str
    start_key: str  # the state key of the agent it started with
    active_key: str  # the state key of the agent holding it
    handoff_trail: list[str]


class BranchRecord(ResumableBranch):
    """A branch as the run keeps it (``FanOutRun.branches``): its own messages."""

    messages: list[AnyMessage]


class BranchEntry(ResumableBranch):
    """One entry of ``Response.branches`` (:func:`branch_records`): its own messages as
    Swarm-style dicts, and their ids beside them (an effect call is named by the id of the reply
    that asked for it, so a resumed branch must find its reply under the same id)."""

    messages: list[dict[str, Any]]
    message_ids: list[str | None]


class BranchShown(BranchOutcome):
    """A branch as a joined answer keeps it (``additional_kwargs[BRANCHES_KEY]``)."""

    messages: list[dict[str, Any]]


#: The keys :func:`resume_from_records` cannot do without in an entry a caller passes back.
_RESUME_KEYS = ("branch", "agent", "status", "answer", "plan", "index", "handoff", "start_key",
                "active_key")  # fmt: skip


def gather_results(
    left: list[BranchResult] | None, right: list[BranchResult] | None
) -> list[BranchResult]:
    """Reducer of the branches' results: each branch adds its own (the join empties it)."""
    return [*(left or []), *(right or [])]


class ParallelState(SwarmState):
    """:class:`SwarmState` plus what a fan-out keeps until its join: the plan, and each
    branch's result as it comes in (the join empties both). In the graph's output too, so a
    server streaming ``updates`` shows each branch's result; ``Response`` leaves them out."""

    parallel_fan_out: NotRequired[FanOutPlan | None]
    # (typed as a plain list: LangGraph reads a channel's type on every run)
    parallel_results: NotRequired[Annotated[list, gather_results]]


# -- fan out ------------------------------------------------------------------------------
class FanOut:
    """The fan-out step and what the branches of one graph share: the nested graph a branch
    runs (compiled on first use, from the same agents and runtime), the merge rules by fan-out.

    ``mode`` is ``Swarm(parallel_handoffs=)``: ``"all"`` also fans out a reply that calls
    several transfer tools.
    """

    def __init__(
        self,
        runtime: GraphRuntime,
        build_branch_graph: Callable[[], CompiledStateGraph],
        mode: str = "first",
        *,
        nested: bool = True,
    ) -> None:
        self.runtime = runtime
        self.mode = mode
        #: whether a branch's own graph has the branch and join nodes (an agent a branch can
        #: reach fans out); a fan-out inside a branch of a graph without them is refused
        self.nested = nested
        self._build = build_branch_graph
        self._app: CompiledStateGraph | None = None
        self._lock = threading.Lock()
        self._rules: OrderedDict[str, dict[str, MergeRule]] = OrderedDict()

    def branch_app(self) -> CompiledStateGraph:
        """The graph one branch runs: this swarm's agents, entered at the branch's agent."""
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = self._build()
        return self._app

    def __call__(self, turn: Turn, outcome: ToolOutcome, context: dict[str, Any]) -> Command | None:
        """The fan-out of ``turn``'s tool calls, or ``None`` when nothing fans out (one
        ordinary handoff). The agent node calls it once its tools ran, with the context they
        left: what every branch starts from."""
        calls = self._fan_out_calls(outcome)
        if not calls or (not self.nested and current_branch() is not None):
            return None
        agent, control = turn.agent, turn.control
        added = turn.update.setdefault("messages", [])
        fan_ids = {call.id for call in calls}
        targets = [target for call in calls for target, _, _ in call.branches]
        stop = control.exceeded or (None if control.turns_left() else _NOT_RUN)
        if stop is None:
            stop = _fan_out_refused(self.runtime, turn, targets)
            if stop is not None:  # refused: the agent carries on, its answer is the refusal
                outcome.handoff = None
        if stop is not None:
            _answer_calls(added, fan_ids, f"Error: {stop}")
            return None
        plan = self._plan(turn, calls, targets)
        base = _open_until_joined(turn, fan_ids)
        tasks = _tasks(self.runtime, plan, calls, base, context, control)
        if control.hooks.effects is not None and current_branch() is None:
            _track(self.runtime, control, plan, (base, context), tasks, [])
        sends = [Send(BRANCH_NODE, task) for task in tasks]
        control.ledger.fanned_out(agent.name, ", ".join(c.tool for c in calls), plan["labels"])
        with fan_out_run(control).lock:
            fan_out_run(control).fan_outs.append(plan["id"])
        control.debug_print(f"{agent.name} \u21c9 {', '.join(plan['labels'])} (parallel)")
        update = cast("dict[str, Any]", turn.update)
        update["parallel_fan_out"] = plan
        update["parallel_results"] = Overwrite([])
        return Command(update=update, goto=sends)

    def _plan(self, turn: Turn, calls: list[_FanOutCall], targets: list[Agent]) -> FanOutPlan:
        """What the join will need: who fanned out, who speaks after, each call's branches."""
        agent, control = turn.agent, turn.control
        join = next((c.parallel.join for c in calls if c.parallel and c.parallel.join), agent)
        rules: dict[str, MergeRule] = {}
        plan_calls: list[list[Any]] = []
        index = 0
        for call in calls:
            indexes = list(range(index, index + len(call.branches)))
            plan_calls.append([call.id, call.tool, call.kind, indexes])
            index += len(call.branches)
            if call.parallel is not None:
                rules.update(call.parallel.merge)
        plan: FanOutPlan = {
            "id": uuid.uuid4().hex,
            "agent": self.runtime.key_for(agent, control),
            "join": self.runtime.key_for(join, control),
            "calls": plan_calls,
            "labels": list(branch_labels([t.name for t in targets])),
            "merge": {key: rule_reference(rule) for key, rule in rules.items()},
        }
        self._remember(plan["id"], rules)
        return plan

    def _fan_out_calls(self, outcome: ToolOutcome) -> list[_FanOutCall]:
        """The calls that fan out: the handoff taken if it is a ``Parallel``; with ``"all"``,
        every handoff of the reply once there are several (none of them ``CALLER``)."""
        names = {m.tool_call_id: m.name or "" for m in outcome.messages}
        handoffs = outcome.handoffs
        several = len(handoffs) > 1 and all(t is not CALLER for _, t, _ in handoffs)
        if self.mode == "all" and several:
            chosen = handoffs
        elif isinstance(outcome.handoff, Parallel):  # the one taken (Swarm's rule: the last)
            chosen = [h for h in handoffs if h[0] == outcome.handoff_call][:1]
        else:
            return []
        calls: list[_FanOutCall] = []
        for call_id, target, value in chosen:
            tool = names.get(call_id, "")
            if isinstance(target, Parallel):
                branches = [
                    (agent, task, value or json.dumps({"assistant": agent.name}))
                    for agent, task in zip(target.targets, target.tasks, strict=True)
                ]
                calls.append(_FanOutCall(call_id, tool, "json", branches, target))
            else:
                agent = cast("Agent", target)  # not a fan-out value: an Agent (or a member)
                seen = json.dumps({"assistant": agent.name})
                calls.append(_FanOutCall(call_id, tool, "text", [(agent, None, seen)], None))
        return calls

    def _remember(self, plan_id: str, rules: dict[str, MergeRule]) -> None:
        if not rules:
            return
        with self._lock:
            self._rules[plan_id] = rules
            self._rules.move_to_end(plan_id)
            while len(self._rules) > MAX_REMEMBERED_RULES:
                self._rules.popitem(last=False)

    def rules_for(self, plan: FanOutPlan) -> tuple[dict[str, MergeRule], list[str]]:
        """The merge rules of ``plan``: this process's own, else imported by name; and the
        keys whose rule is in neither (a lambda, and the fan-out was made by another process)."""
        rules: dict[str, MergeRule] = {}
        if self.runtime.middleware:  # a typed context's reducers (its middleware's)
            from .context_middleware import context_merge_rules

            rules.update(context_merge_rules(self.runtime.middleware))
        with self._lock:
            live = self._rules.get(plan["id"])
        if live is not None:
            rules.update(live)
            return rules, []
        missing = []
        for key, reference in plan["merge"].items():
            if reference is None:
                missing.append(key)
                continue
            rules[key] = rule_by_reference(reference)
        return rules, missing


@dataclass
class _FanOutCall:
    """One tool call that fans out, and its branches: ``(agent, task, how the call reads)``."""

    id: str
    tool: str
    kind: Literal["json", "text"]  # one JSON object of its branches' answers, or the one's text
    branches: list[tuple[Agent, str | None, str]]
    parallel: Parallel | None


_NOT_RUN = "the run stopped before the branches could run"


def _open_until_joined(turn: Turn, fan_ids: set[str]) -> list[BaseMessage]:
    """Take the fan-out calls' answers out of ``turn``'s update (the join answers them) and
    return the conversation the branches start from. A call of the same reply held for
    approval is answered now: the reply fanned out, so nothing would decide it."""
    added = turn.update.get("messages", [])
    kept = [m for m in added if not (isinstance(m, ToolMessage) and m.tool_call_id in fan_ids)]
    for message in kept:  # ids now: branches share these objects and must not stamp them
        if message.id is None:
            message.id = str(uuid.uuid4())
    base = [*turn.state["messages"], *kept]
    held = open_calls(base)
    for call in held[1] if held is not None else []:
        if call.get("id") not in fan_ids:
            kept.append(_held_answer(call))
            base.append(kept[-1])
    turn.update["messages"] = kept
    return base


def _tasks(
    runtime: GraphRuntime,
    plan: FanOutPlan,
    calls: list[_FanOutCall],
    base: list[BaseMessage],
    context: dict[str, Any],
    control: RunControl,
) -> list[BranchTask]:
    """One :class:`BranchTask` per branch, in the order the agents were given."""
    tasks: list[BranchTask] = []
    for call in calls:
        for target, task, seen in call.branches:
            view = _branch_input(base, call.id, seen, task)
            key = runtime.key_for(target, control)
            tasks.append(
                {
                    "plan": plan,
                    "index": len(tasks),
                    "label": plan["labels"][len(tasks)],
                    "agent": key,
                    "task": task,
                    "handoff": seen,
                    "messages": view,
                    "start": len(view),
                    "context_variables": copy.deepcopy(context),  # each branch its own copy
                    "active_agent": key,
                    "handoff_trail": [],
                }
            )
    return tasks


def _answer_calls(messages: list[BaseMessage], ids: set[str], content: str) -> None:
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id in ids:
            messages[index] = message.model_copy(update={"content": content})


def _held_answer(call: Any) -> ToolMessage:
    return ToolMessage(
        content=(
            f"Error: not run: {call['name']} waits for approval, and the same reply fanned "
            "out; ask for it again after the branches answered."
        ),
        tool_call_id=call.get("id") or "",
        name=call["name"],
    )


def _branch_input(
    base: list[BaseMessage], call_id: str, seen: str, task: str | None
) -> list[AnyMessage]:
    """What a branch starts from: its task alone, or the conversation so far with the fan-out
    call answered as a handoff to it (``seen``)."""
    if task is not None:
        return [HumanMessage(task)]
    name = _tool_name(base, call_id)
    answer = ToolMessage(content=seen, tool_call_id=call_id, name=name)
    return cast("list[AnyMessage]", [*base, answer])


def _tool_name(messages: Sequence[BaseMessage], call_id: str) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id") == call_id:
                    return call["name"]
    return ""


# -- branch -------------------------------------------------------------------------------
class BranchNode:
    """One branch: the nested swarm run of one :class:`BranchTask`, as a subgraph.

    Whatever the branch raises is kept for the join (the other branches finish, nothing they
    did is lost); LangGraph's own signals (an approval's ``interrupt()``) pass through.
    """

    traced = False

    def __init__(self, runtime: GraphRuntime, fan_out: FanOut) -> None:
        self.runtime = runtime
        self.fan_out = fan_out
        self.name = BRANCH_NODE

    def step(self, task: BranchTask, config: RunnableConfig) -> Command:
        return drive(self._step(task, config, SYNC))

    async def astep(self, task: BranchTask, config: RunnableConfig) -> Command:
        return await self._step(task, config, ASYNC)

    async def _step(self, task: BranchTask, config: RunnableConfig, io: Driver) -> Command:
        """The branch, for ``step`` and ``astep`` alike (graph/core/drivers.py runs its graph)."""
        control = current_control(config)
        states: list[dict[str, Any]] = [_branch_state(task)]  # the last is where it got to
        error: BaseException | None = None
        started = time.perf_counter()
        with branch_scope(task["label"]) as path, fan_out_scope(task["plan"]["id"], path):
            if "/" not in path and control.hooks.effects is not None:  # see progress_of
                with fan_out_run(control).lock:
                    fan_out_run(control).live[path] = task
            refused = await self._refused(task, states[0], control, io)
            try:
                if refused is None:
                    app, inner = self.fan_out.branch_app(), _branch_config(config, path)
                    traced = _traced()
                    if traced is None:
                        await io.stream(app, states[0], inner, states.append)
                    else:  # a traced run (graph/features/tracing.py): the branch's span
                        agent = self.runtime.agent_for(task["agent"], control)
                        await traced.branch(
                            path, agent, lambda: io.stream(app, states[0], inner, states.append)
                        )
            except GraphBubbleUp:
                raise
            except Exception as exc:
                error = exc
            return self._finish(task, states[-1], error, started, path, control, refused)

    async def _refused(
        self, task: BranchTask, state: dict[str, Any], control: RunControl, io: Driver
    ) -> str | None:
        """Why the branch's agent will not take the conversation, or ``None``: a branch is a
        way into an agent like a handoff, so the agent's ``before_handoff`` hooks are asked
        (``way="branch"``: a guarded agent's precondition and input guardrails,
        graph/features/guardrail_middleware.py), or ``GraphRuntime.entry_check`` where one is
        set. Only a branch that starts fresh is checked (a resumed one was checked when it
        started). A refused branch never runs; its answer in the join is the refusal, and the
        others go on."""
        if len(task["messages"]) > task["start"]:
            return None
        agent = self.runtime.agent_for(task["agent"], control)
        check = self.runtime.entry_check
        if check is not None:
            return check(agent, cast("SwarmState", state), control)
        stack = self.runtime.stack_for(agent, control)
        if stack is None or not stack.handoff:
            return None
        source = self.runtime.agent_for(task["plan"]["agent"], control)
        entering = Handoff(source, agent, state, "branch")
        verdict = await handoff_verdict(stack.handoff, entering, io, control)
        if isinstance(verdict, HandTo):  # a branch has no fallback
            return f"{agent.name} would hand the branch to {verdict.agent.name}: refused"
        return verdict

    def _finish(
        self,
        task: BranchTask,
        final: dict[str, Any],
        error: BaseException | None,
        started: float,
        path: str,
        control: RunControl,
        refused: str | None = None,
    ) -> Command:
        messages = final.get("messages") or []
        own = list(messages[task["start"] :])
        last = messages[-1] if messages else None
        agent = self.runtime.agent_for(final.get("active_agent"), control)
        status: BranchStatus
        answer: str | None = None
        if refused is not None:
            status = "refused"
        elif error is not None:
            status = "failed"
        elif (
            isinstance(last, AIMessage) and own and not (last.tool_calls or last.invalid_tool_calls)
        ):
            status, answer = "answered", last.text
        elif _waiting_under(control, path):  # it (or a fan-out inside it) waits for a human
            status = "waiting"
        else:
            status = "stopped"
        start_agent = self.runtime.agent_for(task["agent"], control)
        described = refused if error is None else f"{type(error).__name__}: {error}"
        result: BranchResult = {
            "index": task["index"],
            "label": task["label"],
            "agent": start_agent.name,
            "status": status,
            "answer": answer,
            "error": described,
            "messages": own,
            "context_variables": final.get("context_variables") or {},
            "active_agent": agent.name,
        }
        unjoined = _unjoined(final)
        if unjoined:
            result["unjoined"] = unjoined
        _book_branch(control, path, start_agent.name, started, time.perf_counter(), status)
        record: BranchRecord = {
            **_outcome(result, path),
            "messages": result["messages"],
            "plan": task["plan"],
            "index": task["index"],
            "task": task["task"],
            "handoff": task["handoff"],
            "start_key": task["agent"],
            "active_key": final.get("active_agent") or task["active_agent"],
            "handoff_trail": list(final.get("handoff_trail") or []),
        }
        with fan_out_run(control).lock:
            fan_out_run(control).branches.append(record)
            if error is not None:
                fan_out_run(control).branch_errors[(task["plan"]["id"], task["index"])] = error
        return Command(update={"parallel_results": [result]}, goto=JOIN_NODE)


def _outcome(result: BranchResult, path: str) -> BranchOutcome:
    return {
        "branch": path,
        "agent": result["agent"],
        "status": result["status"],
        "answer": result["answer"],
        "error": result["error"],
        "context_variables": result["context_variables"],
        "active_agent": result["active_agent"],
    }


def _book_branch(
    control: RunControl, label: str, agent: str, started: float, ended: float, status: str
) -> None:
    """Put branch ``label`` (started at ``agent``) on the run's trajectory: it ran from
    ``started`` to ``ended`` (``time.perf_counter()`` values, stored as seconds since the run
    began)."""
    books = control.ledger
    entry = {
        "agent": agent,
        "kind": "branch",
        "name": label,
        "branch": label,
        "status": status,
        "start": round(started - books.started, 6),
        "end": round(ended - books.started, 6),
    }
    books.book(agent, entry, {}, labelled=False)  # its own label, already in the entry


#: The state keys a join carries back, or that are the swarm's or the step's own bookkeeping.
_JOINED = frozenset({*ParallelState.__annotations__, ENTERED_KEY, AFTER_MODEL_KEY})


def _unjoined(final: Mapping[str, Any]) -> list[str]:
    """The keys of a branch's final state that its join does not carry back: a middleware's
    ``state_schema`` keys its hooks wrote in the branch (none was in the branch's input)."""
    return sorted(k for k, v in final.items() if k not in _JOINED and v is not None)


def _branch_state(task: BranchTask) -> dict[str, Any]:
    return {
        "messages": list(task["messages"]),
        "context_variables": task["context_variables"],
        "active_agent": task["active_agent"],
        "handoff_trail": list(task["handoff_trail"]),
    }


def _branch_config(config: RunnableConfig, path: str) -> RunnableConfig:
    """The branch's config: the run's, plus its label in the metadata (Swarm's stream reads it
    from each token to say which branch speaks)."""
    return merge_configs(config, {"metadata": {"swarmgraph_branch": path}})


# -- join ---------------------------------------------------------------------------------
class JoinNode:
    """The join: answers the fan-out calls, merges the context, hands the turn back."""

    traced = False

    def __init__(self, runtime: GraphRuntime, fan_out: FanOut) -> None:
        self.runtime = runtime
        self.fan_out = fan_out
        self.name = JOIN_NODE

    def step(self, state: ParallelState, config: RunnableConfig) -> StateUpdate | Command:
        return drive(self._join(state, current_control(config), SYNC))

    async def astep(self, state: ParallelState, config: RunnableConfig) -> StateUpdate | Command:
        return await self._join(state, current_control(config), ASYNC)

    async def _join(
        self, state: ParallelState, control: RunControl, io: Driver
    ) -> StateUpdate | Command:
        plan = state.get("parallel_fan_out")
        earlier: list[BranchResult] = []
        if plan is None and fan_out_run(control).resumed is not None:  # a paused fan-out, resumed
            (plan, earlier), fan_out_run(control).resumed = fan_out_run(control).resumed, None
        if plan is None:
            return {}
        results = {r["index"]: r for r in [*earlier, *(state.get("parallel_results") or [])]}
        ordered = [results[i] for i in sorted(results)]
        failed = next((r for r in ordered if r["status"] == "failed"), None)
        waiting = any(r["status"] == "waiting" for r in ordered)
        if failed is None and waiting and control.exceeded is None:
            return {}  # Swarm.run stops for a human: the fan-out resumes from Response.branches
        base = state.get("context_variables") or {}
        rules, missing = self.fan_out.rules_for(plan)
        merged = merge_contexts(
            base, [(r["label"], r["context_variables"]) for r in ordered], rules
        )
        conflicts = dict(merged.conflicts)
        for key in missing:
            if key in conflicts:
                conflicts[key]["rule error"] = (
                    "its merge rule is a lambda this process does not have; name it "
                    "(a module-level function) to join a fan-out another process made"
                )
        unjoined = {r["label"]: r["unjoined"] for r in ordered if r.get("unjoined")}
        if unjoined:  # dropped: said, not silently
            said = "; ".join(f"{label}: {', '.join(keys)}" for label, keys in unjoined.items())
            warnings.warn(
                f"parallel branches wrote state keys their join does not carry back ({said}); "
                "the run keeps their values from before the fan-out",
                BranchStateWarning,
                stacklevel=1,  # (the join node runs it: no caller of the user's to point at)
            )
        answers = self._answers(plan, results, control, state["messages"])
        update: dict[str, Any] = {
            "messages": answers,
            "context_variables": Overwrite(merged.context),
            "parallel_fan_out": None,
            "parallel_results": Overwrite([]),
            "handoff_trail": [],
            "active_agent": plan["agent"],
        }
        fanned = self.runtime.agent_for(plan["agent"], control)
        # on the trajectory: the branches joined; the agent that fanned out speaks next
        joined: dict[str, Any] = {"agent": fanned.name, "kind": "join"}
        joined["branches"] = list(plan["labels"])
        if conflicts:
            joined["conflicts"] = list(conflicts)
        control.ledger.book(fanned.name, joined, {})
        control.new_messages += len(answers)
        if failed is not None:
            error = BranchFailed(failed["label"], failed["agent"], failed["error"] or "")
            error.unsaved = update
            cause = fan_out_run(control).branch_errors.get((plan["id"], failed["index"]))
            raise error from cause
        if conflicts:
            error2 = ContextConflict(conflicts)
            error2.unsaved = update
            raise error2
        if control.exceeded is not None:
            return cast("StateUpdate", update)  # the run stops; Swarm.run raises the budget
        routed = cast("StateUpdate", update)
        if plan["join"] != plan["agent"]:  # Parallel(join=): a switch, through its hooks
            join = self.runtime.agent_for(plan["join"], control)
            context = merged.context
            if not await self.runtime.hand_off(
                fanned, join, state, routed, control, context, io, way="join"
            ):
                return routed
        return self.runtime.next_node(JOIN_NODE, routed, state, control)

    @staticmethod
    def _answers(
        plan: FanOutPlan,
        results: dict[int, BranchResult],
        control: RunControl,
        messages: Sequence[BaseMessage],
    ) -> list[BaseMessage]:
        answers: list[BaseMessage] = []
        for call_id, tool, kind, indexes in plan["calls"]:
            texts = {plan["labels"][i]: _answer_text(results.get(i), control) for i in indexes}
            if kind == "json":
                content = json.dumps(texts, ensure_ascii=False)
            else:
                content = next(iter(texts.values()))
            # The branches' own messages travel with the answer (stored with it by a Session
            # or a checkpointer; what `swarmgraph history` and /history show), never to a model.
            kept = [_shown(results[i]) for i in indexes if i in results]
            answers.append(
                ToolMessage(
                    content=content,
                    tool_call_id=call_id,
                    name=tool,
                    additional_kwargs={BRANCHES_KEY: kept},
                )
            )
        return answers


def _shown(result: BranchResult) -> BranchShown:
    return {**_outcome(result, result["label"]), "messages": to_openai(result["messages"])}


def _answer_text(result: BranchResult | None, control: RunControl) -> str:
    if result is None:
        return "Error: the branch did not run."
    if result["answer"] is not None:
        return result["answer"]
    if result["status"] == "refused":
        return f"Error: {result['error']}"
    if result["error"] is not None:
        return f"Error: the branch raised {result['error']}"
    if control.exceeded is not None:
        return f"Error: {control.exceeded}"
    return "Error: the branch stopped before it answered."


# -- Response.branches and resuming a paused fan-out ------------------------------------------
def branch_records(control: RunControl) -> list[BranchEntry]:
    """``Response.branches``: every branch this run ran, fan-out by fan-out, each in the order
    its agents were given; messages as Swarm-style dicts.

    Each entry: ``branch`` (label; ``"Outer/Inner"`` inside a nested fan-out), ``agent`` (the
    agent it started with), ``status`` (``"answered"``, ``"waiting"`` for a human's approval,
    ``"stopped"`` by a budget or ``max_turns``, ``"failed"``, ``"refused"`` by its agent's entry
    check), ``answer``, ``error``,
    ``messages`` (the branch's own), ``context_variables`` (where it left them),
    ``active_agent``; and what resuming a paused fan-out needs (``plan``, ``index``...,
    ``message_ids``: the ids of ``messages``, by which effect calls are named).
    """
    with fan_out_run(control).lock:
        records = list(fan_out_run(control).branches)
        order = {fan_id: n for n, fan_id in enumerate(fan_out_run(control).fan_outs)}
    records.sort(
        key=lambda r: (order.get(r["plan"]["id"], len(order)), r["branch"].count("/"), r["index"])
    )
    return [_entry(r, r["messages"]) for r in records]


def _entry(record: ResumableBranch, messages: Sequence[BaseMessage]) -> BranchEntry:
    """``record`` as ``Response.branches`` gives it: its ``messages`` as Swarm dicts, and their
    ids beside them (``message_ids``, read back by ``_with_ids``)."""
    fields = {k: v for k, v in record.items() if k != "messages"}
    entry = cast("BranchEntry", fields)
    entry["messages"], entry["message_ids"] = to_openai(messages), [m.id for m in messages]
    return entry


def _with_ids(messages: list[BaseMessage], ids: Any) -> list[BaseMessage]:
    """``messages`` (read back from Swarm dicts) with the ids a record kept for them."""
    if isinstance(ids, list) and len(ids) == len(messages):
        for message, kept in zip(messages, ids, strict=True):
            if kept and not message.id:
                message.id = str(kept)
    return messages


def history_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Stored messages as Swarm-style dicts, each joined answer with its ``branches`` (what
    ``swarmgraph history`` and the REPL's ``/history`` show).

    Example:
        >>> answer = ToolMessage('{"A": "a"}', tool_call_id="c1", name="ask",
        ...     additional_kwargs={BRANCHES_KEY: [{"branch": "A", "messages": []}]})
        >>> history_dicts([answer])[0]["branches"]
        [{'branch': 'A', 'messages': []}]
    """
    dicts = to_openai(messages)
    for message, shown in zip(messages, dicts, strict=True):
        kept = message.additional_kwargs.get(BRANCHES_KEY) if message.type == "tool" else None
        if kept:
            shown["branches"] = kept
    return dicts


def resume_from_records(
    records: Sequence[Mapping[str, Any]], control: RunControl
) -> tuple[FanOutPlan, list[BranchTask], list[BranchResult]] | None:
    """The fan-out a run paused in (``Response.branches`` of that run): its plan, a task per
    branch still to run (continuing from its messages), the results of those that answered.
    ``None`` when no branch of it waits. Nested fan-outs resume inside their branch. An entry
    that lacks what resuming needs is a :class:`SwarmError` saying which, before anything runs.
    """
    top = [_read_entry(n, r) for n, r in enumerate(records) if _outermost(r)]
    if not top or all(r["status"] in ("answered", "failed", "refused") for r, _ in top):
        return None
    plan = top[0][0]["plan"]
    tasks: list[BranchTask] = []
    done: list[BranchResult] = []
    for record, own in top:
        if record["status"] in ("answered", "refused"):
            done.append(
                {
                    "index": record["index"],
                    "label": record["branch"],
                    "agent": record["agent"],
                    "status": record["status"],
                    "answer": record["answer"],
                    "error": record["error"],
                    "messages": own,
                    "context_variables": dict(record["context_variables"]),
                    "active_agent": record["active_agent"],
                }
            )
            with fan_out_run(control).lock:
                fan_out_run(control).branches.append({**record, "messages": own})
            continue
        tasks.append(
            {
                "plan": plan,
                "index": record["index"],
                "label": record["branch"],
                "agent": record["start_key"],
                "task": record["task"],
                "handoff": record["handoff"],
                "messages": own,  # then the input, rebuilt in front (resumed_tasks)
                "start": 0,
                "context_variables": dict(record["context_variables"]),
                "active_agent": record["active_key"],
                "handoff_trail": list(record["handoff_trail"]),
            }
        )
    return plan, tasks, done


def _outermost(entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is a branch of the top-level fan-out (a nested one's label is a path,
    ``"Outer/Inner"``: it resumes inside its branch)."""
    return "/" not in str(entry.get("branch", ""))


def _read_entry(n: int, entry: Mapping[str, Any]) -> tuple[ResumableBranch, list[AnyMessage]]:
    """Entry ``n`` of ``Swarm.run(branches=)`` (``Response.branches``, or the records a turn
    that died inside a fan-out kept), and its messages read back with their ids. What a hand-
    made entry may leave out gets the value the run would have written."""
    missing = [key for key in _RESUME_KEYS if key not in entry]
    if missing or not isinstance(entry.get("plan"), Mapping):
        raise SwarmError(
            f"branches=[{n}]: not an entry of Response.branches (missing: "
            f"{', '.join(missing) or 'a plan'}); pass back the response's branches as they are"
        )
    fields = {k: v for k, v in entry.items() if k not in ("messages", "message_ids")}
    record = cast("ResumableBranch", {
        **fields,
        "error": entry.get("error"),
        "context_variables": entry.get("context_variables") or {},
        "active_agent": entry.get("active_agent") or entry["agent"],
        "task": entry.get("task"),
        "handoff_trail": entry.get("handoff_trail") or [],
    })  # fmt: skip
    own = _with_ids(to_langchain(entry.get("messages") or []), entry.get("message_ids"))
    return record, cast("list[AnyMessage]", own)


def resumed_tasks(
    plan: FanOutPlan, tasks: list[BranchTask], history: Sequence[BaseMessage]
) -> list[BranchTask]:
    """``tasks`` with each branch's input rebuilt from the resumed run's ``history`` (which
    ends on the fan-out reply and its other answers) in front of its own messages."""
    rebuilt: list[BranchTask] = []
    by_index = {i: call[0] for call in plan["calls"] for i in call[3]}
    for task in tasks:
        view = _branch_input(list(history), by_index[task["index"]], task["handoff"], task["task"])
        own = task["messages"]
        rebuilt.append({**task, "messages": [*view, *own], "start": len(view)})
    return rebuilt


def check_resumable(history: Sequence[BaseMessage], plan: FanOutPlan) -> None:
    """A clear error when ``history`` does not end on the fan-out the branches paused in."""
    found = open_calls(history)
    waiting = {c.get("id") for c in found[1]} if found else set()
    if plan["calls"][0][0] not in waiting:
        raise SwarmError(
            "branches=: the messages do not end on the fan-out these branches paused in (its "
            f"call {plan['calls'][0][0]!r} is not waiting for an answer); pass the messages "
            "of the run that paused: history + response.messages"
        )


def resume_fan_out(
    runtime: GraphRuntime,
    history: Sequence[BaseMessage],
    records: Sequence[Mapping[str, Any]],
    control: RunControl,
    context: Mapping[str, Any] | None = None,
) -> list[PendingApproval] | None:
    """Set ``control`` up to pick up the fan-out ``records`` (``Response.branches`` of a run
    that paused inside a branch, or the records a turn that died inside one kept) where it
    stopped; the calls its branches wait on. ``context``: the run's, where the fan-out's
    branches started (kept with a call inside a branch, see :func:`progress_of`)."""
    if runtime.after_handoffs is None:
        raise SwarmError("branches=: this swarm has no agent that fans out (Parallel)")
    found = resume_from_records(records, control)
    if found is None:
        return None
    plan, tasks, done = found
    check_resumable(history, plan)
    tasks = resumed_tasks(plan, tasks, history)
    if control.hooks.effects is not None:
        top = [r for r in records if _outermost(r)]
        _track(runtime, control, plan, (list(history), dict(context or {})), tasks, top)
    fan_out_run(control).resume = [Send(BRANCH_NODE, task) for task in tasks]
    fan_out_run(control).resumed = (plan, done)
    fan_out_run(control).fan_outs.append(plan["id"])
    from .effects import run_ledger, waiting

    pending: list[PendingApproval] = []
    for task in tasks:
        agent = runtime.agent_for(task["active_agent"], control)
        held = waiting(runtime, agent, task["messages"], control, run_ledger(control))
        if held is not None:
            pending.extend(held[1].pending)
    return pending


# -- effect calls inside branches: what a retry after a crash picks up --------------------------
def _track(
    runtime: GraphRuntime,
    control: RunControl,
    plan: FanOutPlan,
    start: tuple[list[BaseMessage], dict[str, Any]],
    tasks: list[BranchTask],
    records: Sequence[Mapping[str, Any]],
) -> None:
    """Note where a top-level fan-out started (the main messages and context ``start``), and a
    resumable record of each branch: ``records`` (a resumed fan-out's, answered ones too),
    else the task as it starts."""
    kept = {int(r["index"]): cast("BranchEntry", dict(r)) for r in records}
    for task in tasks:
        if task["index"] not in kept:
            name = runtime.agent_for(task["agent"], control).name
            own = task["messages"][task["start"] :]
            kept[task["index"]] = _branch_record(
                task, own, task["context_variables"], start=name, active=name
            )
    run = fan_out_run(control)
    with run.lock:
        run.started[plan["id"]] = (start[0], copy.deepcopy(start[1]), plan["agent"])
        run.progress[plan["id"]] = kept


def _branch_record(
    task: BranchTask,
    own: Sequence[BaseMessage],
    context: dict[str, Any],
    *,
    start: str,
    active: str,
    active_key: str | None = None,
    trail: Sequence[str] | None = None,
) -> BranchEntry:
    """A branch that waits to go on from ``own`` (its messages so far), with the agent it
    started with (``start``) and the one that holds it (``active``, state key ``active_key``),
    as :func:`resume_from_records` reads it."""
    record: ResumableBranch = {
        "branch": task["label"],
        "agent": start,
        "status": "waiting",
        "answer": None,
        "error": None,
        "context_variables": copy.deepcopy(context),
        "active_agent": active,
        "plan": task["plan"],
        "index": task["index"],
        "task": task["task"],
        "handoff": task["handoff"],
        "active_key": active_key or task["active_agent"],
        "handoff_trail": list(task["handoff_trail"] if trail is None else trail),
        "start_key": task["agent"],
    }
    return _entry(record, own)


def progress_of(
    runtime: GraphRuntime, turn: Turn
) -> Callable[[list[BaseMessage], dict[str, Any]], FanOutSoFar | None] | None:
    """For an effect call in a branch of a top-level fan-out (the ledger records it before it
    runs): a function that records the branch's progress (its messages up to the reply that
    asks for the call, its context, its agent) and returns where the fan-out is
    (:class:`~swarmgraph.graph.features.effects.FanOutSoFar`: what the ledger keeps with the call,
    so a
    retry after a crash resumes every branch from its record, instead of asking the models
    again and running the effect under a new name). ``None`` elsewhere (a nested fan-out
    keeps the call's record only)."""
    from .effects import FanOutSoFar

    control, path = turn.control, current_branch()
    run = fan_out_run(control)
    with run.lock:
        task = run.live.get(path) if path is not None and "/" not in path else None
        started = run.started.get(task["plan"]["id"]) if task is not None else None
    if task is None or started is None:
        return None
    plan_id, base, context, fanned = task["plan"]["id"], *started
    start_name = runtime.agent_for(task["agent"], control).name
    active_key = runtime.key_for(turn.agent, control)
    trail = list(turn.state.get("handoff_trail") or [])

    def branches() -> list[BranchEntry]:
        with run.lock:
            return [run.progress[plan_id][i] for i in sorted(run.progress[plan_id])]

    def record(messages: list[BaseMessage], now: dict[str, Any]) -> FanOutSoFar | None:
        own = messages[task["start"] :]
        active = turn.agent.name
        entry = _branch_record(
            task, own, now, start=start_name, active=active, active_key=active_key, trail=trail
        )
        with run.lock:
            run.progress[plan_id][task["index"]] = entry
        return FanOutSoFar(base, context, runtime.agent_for(fanned, control), branches)

    return record


def _fan_out_refused(runtime: GraphRuntime, turn: Turn, targets: list[Agent]) -> str | None:
    """Why the fan-out of ``turn.agent`` to ``targets`` may not happen, or None: a fan-out to n
    agents is n handoffs, admitted together or not at all, so the ``before_handoff`` hooks of
    the agent fanning out are asked once (``way="fan_out"``; a budget's ``max_handoffs``). The
    step is synchronous here: its hooks' ``before_handoff`` is called (an async-only hook is
    run to its end in place, which a running event loop refuses: give it a sync one too)."""
    agent, control = turn.agent, turn.control
    stack = runtime.stack_for(agent, control)
    if stack is None or not stack.handoff:  # a plain run: nothing to ask
        return None
    messages = [*turn.state["messages"], *turn.update.get("messages", ())]
    state = {"messages": messages, "context_variables": turn.context}
    fanning = Handoff(agent, agent, state, "fan_out", branches=tuple(targets))
    verdict = drive(handoff_verdict(stack.handoff, fanning, SYNC, control))
    if isinstance(verdict, HandTo):  # a fan-out has no fallback
        return f"{agent.name} would hand its fan-out to {verdict.agent.name}: refused"
    return verdict


def _waiting_under(control: RunControl, path: str) -> bool:
    """Whether branch ``path`` (or a branch nested in it) stopped for approval."""
    from .approvals import ApprovalsRun

    approvals = control.state_of(ApprovalsRun)
    return approvals is not None and approvals.waiting_under(path)


def _traced() -> TracedRun | None:
    """The run's spans when it is traced (graph/features/tracing.py is loaded only then)."""
    tracing = loaded("tracing")
    return None if tracing is None else tracing.traced_run()
