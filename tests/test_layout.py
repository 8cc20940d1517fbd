"""The installed layout: one import name per module, no import cycles, the engine alone.

The sources sit in ``graph/``, ``memory/`` and ``swarmgraph/`` (the folders the user fixed) and
install as ``swarmgraph.graph``, ``swarmgraph.memory`` and ``swarmgraph``, so a user's own
``graph.py`` or ``memory/`` never shadows the library.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

try:  # tests/ on sys.path (rootdir conftest) or the repo root
    from import_names import imported_by_name
    from wheel_venv import run_python
except ImportError:  # pragma: no cover
    from tests.import_names import imported_by_name
    from tests.wheel_venv import run_python

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"graph": "swarmgraph.graph", "memory": "swarmgraph.memory", "swarmgraph": "swarmgraph"}


def source_modules() -> dict[str, Path]:
    """Installed module name -> source file, for every module of the library."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Library modules ``name`` imports, at module level or inside functions (not under
    ``TYPE_CHECKING``): ``from .x import y`` names module ``.x.y`` when that is a module."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for child in node.body for n in ast.walk(child))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    found |= imported_by_name(tree, package)  # loaded by name later: still an import
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_no_import_cycles():
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            strongconnect(v)
    assert cycles == [], f"import cycles: {cycles}"


def test_cycle_finder_sees_function_level_and_registry_imports():
    graph = import_graph()
    # function-level: the CLI imports Session inside a command
    assert "swarmgraph.memory" in graph["swarmgraph.app.cli"] or any(
        m.startswith("swarmgraph.memory") for m in graph["swarmgraph.app.cli"]
    )
    # import_paused(".sqlite", __name__) in the registry
    assert "swarmgraph.memory.backends.sqlite" in graph["swarmgraph.memory.backends"]
    # by a name built from the package's own: the module that registers an injected parameter
    assert "swarmgraph.graph.features.decisions" in graph["swarmgraph.graph"]
    assert "swarmgraph.graph.features.native" in graph["swarmgraph.graph.options"]


def test_cycle_finder_sees_a_feature_importing_its_importer_by_name():
    """A feature that loads, by a relative name, a module that imports it back is a circle."""
    modules = source_modules()
    name = "swarmgraph.graph.features.approvals"
    tree = ast.parse(
        "import importlib\n"
        "def brings():\n"
        '    return importlib.import_module(".decisions", __package__).marked_middleware()\n'
    )
    found = imported_by_name(tree, name.rpartition(".")[0])
    assert found & set(modules) == {"swarmgraph.graph.features.decisions"}
    assert name in import_graph()["swarmgraph.graph.features.decisions"]


def test_engine_never_imports_memory_or_the_app():
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("swarmgraph.graph"):
            bad = {t for t in targets if t.startswith(("swarmgraph.memory", "swarmgraph.app"))}
            assert not bad, f"{name} imports {bad}"


def test_backends_do_not_import_the_factories_or_each_other():
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("swarmgraph.memory.backends."):
            own = ".".join(name.split(".")[:4])
            for t in targets:
                ok = t.startswith(own) or not t.startswith("swarmgraph.memory.backends")
                assert ok, (name, t)
                assert t not in ("swarmgraph.memory", "swarmgraph.memory.session"), (name, t)


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {name for name, path in source_modules().items() if path.name == "__init__.py"}
    assert set(config["packages"]) == packages
    assert config["package-dir"] == {"swarmgraph.graph": "graph", "swarmgraph.memory": "memory"}


def test_version_matches_pyproject():
    import swarmgraph

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert swarmgraph.__version__ == config["version"]


def test_facade_exports_resolve_and_are_the_submodules_objects():
    from swarmgraph.graph import Agent
    from swarmgraph.memory import Session

    import swarmgraph

    assert swarmgraph.__all__
    for name in swarmgraph.__all__:
        assert getattr(swarmgraph, name) is not None, name
    assert swarmgraph.Agent is Agent and swarmgraph.Session is Session
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        swarmgraph.nope  # noqa: B018


def _type_checking_imports(init: Path) -> dict[str, str]:
    """name -> module (relative, as ``_EXPORTS`` writes it) of the ``if TYPE_CHECKING:`` block."""
    found: dict[str, str] = {}
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.dump(stmt)
                for alias in stmt.names:
                    found[alias.asname or alias.name] = "." * stmt.level + (stmt.module or "")
    return found


@pytest.mark.parametrize(
    ("package", "init"),
    [("swarmgraph", "swarmgraph/__init__.py"), ("swarmgraph.graph", "graph/__init__.py")],
)
def test_public_names_come_from_one_list(package: str, init: str):
    import importlib

    module = importlib.import_module(package)
    exports = module._EXPORTS
    # __all__ is derived from _EXPORTS, and the block type checkers read names the same
    # modules: a name added to one list and not the other fails here.
    assert module.__all__ == list(exports) and exports
    assert _type_checking_imports(ROOT / init) == exports
    for name in module.__all__:
        assert getattr(module, name) is getattr(
            importlib.import_module(exports[name], package), name
        )


def _run(code: str, cwd: Path, python: str = sys.executable) -> str:
    return run_python(code, cwd, python)


USER_PROGRAM = """
    import sys
    import graph, memory                       # the user's own modules
    from swarmgraph import Agent, ScriptedChatModel, Swarm
    from swarmgraph.memory import Session

    assert graph.MINE and memory.MINE, "the user's graph.py / memory/ must win"
    swarm = Swarm(chat_model=ScriptedChatModel(["Hello from swarmgraph!"]))
    session = Session("user-app", url="memory://user-app")
    response = session.run(swarm, Agent(), "hi")
    print(response.messages[-1]["content"])
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("graph", "memory")))
    print(graph.__file__, __import__("swarmgraph").__file__)
"""


def _user_project(tmp_path: Path) -> Path:
    app = tmp_path / "user_app"
    (app / "memory").mkdir(parents=True)
    (app / "graph.py").write_text("MINE = True\n")
    (app / "memory" / "__init__.py").write_text("MINE = True\n")
    return app


@pytest.mark.slow
def test_a_users_graph_py_and_memory_package_do_not_shadow_the_library(tmp_path):
    out = _run(USER_PROGRAM, _user_project(tmp_path)).splitlines()
    assert out[0] == "Hello from swarmgraph!"
    assert out[1] == "['graph', 'memory']"


@pytest.mark.slow
def test_importing_the_engine_loads_neither_memory_nor_the_app(tmp_path):
    out = _run(
        """
        import sys
        from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
        Swarm(chat_model=ScriptedChatModel(["ok"])).run(Agent(), [{"role": "user", "content": "x"}])
        loaded = {m for m in sys.modules if m.startswith(("swarmgraph.memory", "swarmgraph.app"))}
        print(sorted(loaded))
        print(sorted({m.split(".")[0] for m in sys.modules} & {"graph", "memory"}))
        """,
        tmp_path,
    ).splitlines()
    assert out == ["[]", "[]"]


@pytest.mark.slow
def test_non_editable_install_in_a_fresh_venv_next_to_a_users_graph_py(tmp_path, wheel_venv):
    app = _user_project(tmp_path)
    out = wheel_venv.run(USER_PROGRAM, app).splitlines()
    assert out[0] == "Hello from swarmgraph!"
    assert out[1] == "['graph', 'memory']"
    assert out[2].split()[1].startswith(wheel_venv.site), out[2]  # the installed copy
    cli = subprocess.run(
        [str(wheel_venv.bin / "swarmgraph"), "--version"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 0 and "swarmgraph" in cli.stdout


@pytest.mark.slow
def test_the_wheel_ships_the_pages_files_and_setuptools_warns_of_nothing(wheel_venv):
    # the page's files are package data: listed as such, setuptools says nothing of them (it
    # warned on every install that the folder 'static' "would be ignored" as a package)
    static = Path(wheel_venv.site, "swarmgraph", "app", "ui", "static")
    assert {"index.html", "app.js", "app.css"} <= {p.name for p in static.iterdir()}
    assert "would be ignored" not in wheel_venv.build_log, wheel_venv.build_log


# -- the engine's layers: graph/core/ <- graph/features/ <- the API -------------------------
GRAPH = ROOT / "graph"
#: The API layer's modules, beside the two layer folders and the two subpackages.
API = {
    "__init__",
    "swarm",
    "swarm_graph",
    "prepared_run",
    "observed_graph",
    "options",
    "process_exit",
    "models",  # which chat model answers for a name: Swarm(client=, chat_model=)
    "lazy",  # the packages' names loaded on first use
}
SUBPACKAGES = {"core", "features", "chat_models", "onetoone"}


def test_every_engine_module_is_in_a_layer():
    """graph/ holds the API's modules and four folders: the core, the features, the model
    adapters and OneToOne; a new module must say which layer it is by where it lives."""
    top = {path.stem for path in GRAPH.glob("*.py")}
    folders = {path.name for path in GRAPH.iterdir() if (path / "__init__.py").exists()}
    assert top == API, f"modules outside the layers: {sorted(top - API)}"
    assert folders == SUBPACKAGES


def _feature_imports(path: Path, module_level_only: bool) -> set[str]:
    """The graph/features/ modules ``path`` (a graph/core/ module) imports, relatively."""
    found: set[str] = set()
    nodes = ast.parse(path.read_text()).body if module_level_only else None
    for node in nodes if nodes is not None else ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
            head, _, rest = node.module.partition(".")
            if head == "features":
                found.add(rest or "features")
    return found


def test_the_core_imports_no_feature_at_module_level():
    bad = {
        path.stem: sorted(_feature_imports(path, module_level_only=True))
        for path in sorted((GRAPH / "core").glob("*.py"))
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_layout_check_sees_a_module_level_feature_import(tmp_path):
    fake = tmp_path / "fake.py"
    fake.write_text(
        "from typing import TYPE_CHECKING\nfrom ..features.budget import Budget\n"
        "if TYPE_CHECKING:\n    from ..features.effects import EffectLedger\n"
        "def f():\n    from ..features.routes import Route\n"
    )
    assert _feature_imports(fake, module_level_only=True) == {"budget"}
    assert _feature_imports(fake, module_level_only=False) == {"budget", "effects", "routes"}


PLAIN_PROGRAM = """
    import sys
    from swarmgraph import Agent, ScriptedChatModel, Swarm

    sales = Agent(name="Sales", instructions="Sell bees.")

    def transfer_to_sales():
        '''Hand the customer to sales.'''
        return sales

    triage = Agent(name="Triage", instructions="Greet.", functions=[transfer_to_sales])
    from langchain_core.messages import AIMessage, HumanMessage

    def rule(messages):
        if isinstance(messages[-1], HumanMessage):
            return AIMessage("", tool_calls=[{"name": "transfer_to_sales", "args": {}, "id": "c1"}])
        return "Bees are $5."

    swarm = Swarm(chat_model=ScriptedChatModel([], respond=rule))
    for _ in range(2):
        response = swarm.run(triage, [{"role": "user", "content": "I want bees"}])
    assert response.agent.name == "Sales" and response.usage["handoffs"] == 1, response
    prefix = "swarmgraph.graph.features."
    print(sorted(m[len(prefix):] for m in sys.modules if m.startswith(prefix)))
"""


def test_a_plain_swarm_program_loads_no_feature(tmp_path):
    """One handoff, no Budget, no marked tool, no guardrail: none of the features' modules is
    imported."""
    loaded = _run(PLAIN_PROGRAM, tmp_path).splitlines()[-1]
    assert loaded == "[]"


def test_a_feature_attaches_when_the_program_uses_it(tmp_path):
    out = _run(
        PLAIN_PROGRAM.replace(
            "response = swarm.run(triage,",
            "response = swarm.run(budget=Budget(max_handoffs=5), agent=triage, messages=",
        ).replace("from swarmgraph import Agent,", "from swarmgraph import Budget, Agent,"),
        tmp_path,
    ).splitlines()
    # the budget's module, and the module of the error it raises (graph/features/errors.py)
    assert out[-1] == "['budget', 'errors']"


def test_a_users_graph_middleware_loads_no_feature(tmp_path):
    """``Swarm(middleware=[...])`` with the user's own middleware: the typed context's module
    is not loaded to look for a schema no program declared."""
    program = PLAIN_PROGRAM.replace(
        "swarm = Swarm(chat_model=ScriptedChatModel([], respond=rule))",
        "from langchain.agents.middleware import AgentMiddleware\n"
        "    class Mine(AgentMiddleware):\n"
        "        pass\n"
        "    swarm = Swarm(chat_model=ScriptedChatModel([], respond=rule), middleware=[Mine()])",
    )
    assert "Mine()" in program
    assert _run(program, tmp_path).splitlines()[-1] == "[]"


def test_swarm_run_takes_swarms_own_parameters_and_a_few_of_ours():
    """Swarm's eight, then ``budget``, ``approvals``, ``branches`` and ``**extras`` (what a
    Session hands a run travels as one ``RunHooks``)."""
    import inspect

    from swarmgraph import Swarm

    for method in (Swarm.run, Swarm.arun):
        names = list(inspect.signature(method).parameters)[1:]
        assert names[:8] == [
            "agent",
            "messages",
            "context_variables",
            "model_override",
            "stream",
            "debug",
            "max_turns",
            "execute_tools",
        ]
        assert len(names) <= 12, names


@pytest.mark.parametrize(
    "path, owner, name",
    [
        ("graph/core/loop.py", None, "copy_context"),  # context copied at the run's start
        ("graph/core/loop.py", None, "instructions"),  # the instructions are built
        ("graph/core/loop.py", None, "inject_context"),  # context injected into a tool
        ("graph/core/loop.py", None, "switch_agent"),  # the agent switches
        ("graph/core/node.py", "AgentNode", "_step"),  # the step that calls them, top-down
        ("graph/core/node.py", "AgentNode", "_prompt"),  # ... the prompt of a model call
        ("graph/core/tool_calls.py", None, "run_tool_calls"),  # ... tools run
        ("graph/core/tool_calls.py", "_Runner", "inject"),  # ... what a tool call is given
        ("graph/core/node.py", "AgentNode", "_after_tools"),  # ... a handoff is found
        ("graph/core/runtime.py", "GraphRuntime", "switch"),  # ... and switched to
    ],
)
def test_the_places_docs_internals_names_are_where_it_says(path, owner, name):
    """Each of the four places (and the two steps around them) is a function of the file
    docs/internals.md names (how long it
    is is the reader's call, not a count pinned here)."""
    tree = ast.parse((ROOT / path).read_text())
    scope = tree.body
    if owner is not None:
        scope = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner).body
    found = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert name in [n.name for n in found], (path, owner, name)
    assert (
        f"`{'' if owner is None else owner + '.'}{name}`"
        in (ROOT / "docs/internals.md").read_text()
    )
