"""The core names no feature: features attach through the core's registries and extensions.

graph/core/ is Swarm's loop. A feature gives meaning to what the core only carries: a tool's
mark (graph/core/marks.py ``register_mark``), an injected tool parameter
(graph/core/injected.py ``register_injected``), nodes of its own in the graph
(graph/core/graph_extension.py) and a trait of a tool the graph depends on
(graph/core/discovery.py ``Traits``). These tests read the core's code for the features' words
and show each registry working for a feature the core has never heard of.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from langchain.agents.middleware import AgentMiddleware
from swarmgraph.graph.core.injected import InjectedParam, register_injected, unregister_injected
from swarmgraph.graph.core.marks import mark, register_mark, unregister_mark
from swarmgraph.graph.core.schema import tool_spec

from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call

try:  # tests/ on sys.path (rootdir conftest) or the repo root
    from wheel_venv import run_python
except ImportError:  # pragma: no cover
    from tests.wheel_venv import run_python

CORE = Path(__file__).resolve().parent.parent / "graph" / "core"

#: The features' words (graph/features/: approvals, effects and their idempotency key, fan-out
#: and ``Parallel``, budgets, guardrails, tracing, long-term memory and its recall, the prompt
#: context), matched in any case but
#: ``Parallel`` (Swarm's own ``parallel_tool_calls`` is the core's).
FEATURE_WORDS = re.compile(
    r"(?i:approv|effect|idempot|fan_?outs?|fans_out|budget|guardrail|tracing|long_term"
    r"|prompt_context|recall)|Parallel"
)

#: What the core may still say, each for a reason (file, exact token):
ALLOWED = {
    # Agent's own fields (DESIGN.md's contract: Agent(input_guardrails=[f], ...)) and their check
    *(
        ("types.py", token)
        for token in (
            "input_guardrails",
            "output_guardrails",
            '"input_guardrails"',
            '"output_guardrails"',
            "_guardrails",
            "guardrail",
            '"guardrails are functions (context_variables, messages) -> None | reason, "',
            'f"not {guardrail!r}"',
        )
    ),
    # What a run records and a hook reads, public data: a handoff's way and a trajectory entry's
    # kind (docs/middleware.md; Response.trajectory)
    ("handoffs.py", '"fan_out"'),
    ("run_control.py", '"fan_out"'),
    # The caller's keyword for the ledger it hands a run (Swarm.run(effects=...), a Session's):
    # the core carries it untyped to the feature that reads it
    ("run_control.py", "effects"),
    # ... and the prompt context it hands a run (Swarm.run(prompt_context=...), a Session's
    # recall), carried to the feature's middleware (graph/features/prompt_context.py)
    ("run_control.py", "prompt_context"),
    # StepLimitError's advice names the public option that bounds a run
    ("errors.py", '"budget=Budget(max_tool_calls=...); .response holds what it produced."'),
    # LangChain's own function (LangSmith tracing), not our feature
    ("tool_events.py", "_tracing_v2_is_enabled"),
}


def code_tokens(source: str) -> list[tuple[int, str]]:
    """``(line, token)`` for each identifier and string of ``source``: not its comments, and
    not the docstrings of its module, classes and functions (they may explain a feature)."""
    docstrings: set[tuple[int, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.add((first.lineno, first.col_offset))
    kinds = {tokenize.NAME, tokenize.STRING}
    kinds.add(getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING))  # 3.12+: f-string text
    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type in kinds and tok.start not in docstrings
    ]


def feature_names(name: str, source: str) -> list[str]:
    """Where ``source`` (module ``name`` of the core) names a feature, past :data:`ALLOWED`."""
    return [
        f"{name}:{line}: {token}"
        for line, token in code_tokens(source)
        if FEATURE_WORDS.search(token) and (name, token) not in ALLOWED
    ]


def test_no_core_module_names_a_feature_in_its_code():
    found = [
        hit
        for path in sorted(CORE.glob("*.py"))
        for hit in feature_names(path.name, path.read_text())
    ]
    assert found == []


def test_the_check_sees_a_feature_name_in_code_but_not_in_docs():
    source = '''
"""Approvals and effects, explained: a docstring may name them."""
# a comment may too: @needs_approval
APPROVAL_MARK = "__swarmgraph_needs_approval__"
def run(tool):
    """Asks the effect ledger (a docstring)."""
    return tool.idempotency_key, f"a {tool} Parallel"
'''
    found = feature_names("node.py", source)
    assert found[:3] == [
        "node.py:4: APPROVAL_MARK",
        'node.py:4: "__swarmgraph_needs_approval__"',
        "node.py:7: idempotency_key",
    ]
    # and inside an f-string (one token before Python 3.12, its text part after)
    assert len(found) == 4 and found[3].startswith("node.py:7: ") and "Parallel" in found[3]
    # an allowed token is allowed only in its own file
    assert feature_names("types.py", "x.input_guardrails\n") == []
    assert feature_names("node.py", "x.input_guardrails\n") == ["node.py:1: input_guardrails"]


# -- the registries work for a feature the core never heard of ------------------------------
class Audit(AgentMiddleware):
    """Counts the model calls of the runs it joins."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def before_model(self, state, runtime):
        self.calls += 1


def _run(tool):
    model = ScriptedChatModel([scripted_tool_call(tool.__name__, {}, id="c1"), "done"])
    agent = Agent(name="Clerk", functions=[tool])
    return Swarm(chat_model=model).run(agent, [{"role": "user", "content": "go"}])


def test_a_registered_mark_brings_its_middleware_to_a_run_with_a_marked_tool_only():
    audit = Audit()
    register_mark("__test_audited__", lambda: (audit,))
    try:

        def plain() -> str:
            """Do a plain thing."""
            return "plain"

        def audited() -> str:
            """Do an audited thing."""
            return "audited"

        response = _run(plain)
        assert response.messages[-1]["content"] == "done" and audit.calls == 0
        _run(mark(audited, "__test_audited__"))
        assert audit.calls == 2  # both model calls of that run
    finally:
        unregister_mark("__test_audited__")


def test_a_registered_injected_parameter_is_hidden_made_per_call_and_not_forgeable():
    made: list[tuple[str, str]] = []

    def make(call_id: str, tool: str, arguments: object, records: object) -> str:
        made.append((call_id, tool))
        return f"ticket-{call_id}"

    register_injected(InjectedParam("test_ticket", "a ticket for this call", make=make))
    try:

        def file_it(summary: str, test_ticket: str) -> str:
            """File a summary."""
            return f"{summary} as {test_ticket}"

        assert "test_ticket" not in str(tool_spec(file_it).schema)
        model = ScriptedChatModel(
            [scripted_tool_call("file_it", {"summary": "s", "test_ticket": "forged"}), "ok"]
        )
        agent = Agent(name="Clerk", functions=[file_it])
        response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "go"}])
        [call_id] = [c["id"] for c in response.messages[0]["tool_calls"]]
        assert response.messages[1]["content"] == f"s as ticket-{call_id}"
        assert made == [(call_id, "file_it")]
    finally:
        unregister_injected("test_ticket")


def test_idempotency_key_is_hidden_and_made_before_the_effects_module_is_loaded(tmp_path):
    """A tool takes ``idempotency_key`` without ``@effect``, in a process that never imported
    the effects feature: the key stays hidden from the model, is made per call, and the feature
    loads because the tool asked for it (graph/__init__.py names the module that registers it,
    graph/features/decisions.py)."""
    out = run_python(
        """
        import sys
        from swarmgraph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
        from swarmgraph.graph.core.schema import tool_spec
        effects = "swarmgraph.graph.features.decisions"

        def charge(order_id: int, idempotency_key: str) -> str:
            '''Charge an order.'''
            return f"charged {order_id} with a {len(idempotency_key)}-char key"

        before = effects in sys.modules
        schema = str(tool_spec(charge).schema)
        print(before, "idempotency_key" in schema, effects in sys.modules)
        model = ScriptedChatModel([scripted_tool_call("charge", {"order_id": 7}), "ok"])
        agent = Agent(name="Billing", functions=[charge])
        response = Swarm(chat_model=model).run(agent, [{"role": "user", "content": "go"}])
        print(response.messages[1]["content"])
        """,
        tmp_path,
    ).splitlines()
    assert out == ["False False True", "charged 7 with a 32-char key"]


def test_the_apis_fan_out_trait_is_the_features_own_test():
    """graph/options.py asks discovery whether a tool can fan out without loading the feature;
    its test must say what graph/features/parallel.py's says, for every way a tool tells."""
    from swarmgraph.graph import options
    from swarmgraph.graph.features import parallel

    import swarmgraph

    def names_it():  # (as an attribute: a local import is a closure cell, not a name)
        return swarmgraph.Parallel(Agent(name="A"), Agent(name="B"))

    def plain():
        return "42"

    def declared():
        return "built elsewhere"

    declared.__swarmgraph_fans_out__ = True  # type: ignore[attr-defined]

    def denied():
        return swarmgraph.Parallel(Agent(name="A"))

    denied.__swarmgraph_fans_out__ = False  # type: ignore[attr-defined]
    tools = [names_it, plain, declared, denied]
    assert [parallel.fans_out(t) for t in tools] == [True, False, True, False]
    assert [options.fans_out(t) for t in tools] == [parallel.fans_out(t) for t in tools]
    assert options.FANS_OUT_ATTR == parallel.FANS_OUT_ATTR
    assert options.TOOL_TRAITS[options.FAN_OUT_TRAIT] is options.fans_out
