"""Start-up and first answer, each in fresh processes (what a user waits for).

- **Start-up**: ``swarmgraph --version`` / ``--help`` against ``python -c pass``; importing
  the engine (``from swarmgraph import Agent, Swarm``) against importing what it truly needs
  (``langgraph.graph`` + LangChain's ``BaseChatModel``). Whole-process wall time,
  interleaved over ``repeat`` rounds; the import figures also with ``python -c pass``
  subtracted. ``-X importtime``'s top entries say where the time goes.
- **First answer**: a fresh process that imports, builds and runs one ``Swarm().run`` with the
  default ``ChatOpenAI`` against a loopback OpenAI-compatible server, against the same with
  real openai/swarm (``openai-swarm``); both the whole process and the in-process
  import + run time.

Example:
    >>> out = run_startup(repeat=1, first_answer=False, importtime_runs=1)
    >>> "import swarmgraph" in out["processes"]
    True
    >>> sorted(p for p in out["processes"] if p.startswith("import floor"))[-1]
    'import floor: langgraph.graph + langchain_core BaseChatModel'
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.loopback import LoopbackOpenAI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What the engine truly needs: LangGraph's StateGraph and LangChain's BaseChatModel
# (``import langchain_core.language_models`` alone loads its names lazily, so it would not
# load the chat model base class every engine over LangChain models needs).
FLOOR_IMPORT = (
    "from langgraph.graph import StateGraph; "
    "from langchain_core.language_models import BaseChatModel"
)
FLOOR = "import floor: langgraph.graph + langchain_core BaseChatModel"
PAUSED_FLOOR = "import floor, collector paused during it (as ours)"
ENGINE_IMPORT = "from swarmgraph import Agent, Swarm"
FIRST_FLOOR = "floor: one LangGraph node calling ChatOpenAI"

FIRST_ANSWER = r"""
import json, sys, time
t0 = time.perf_counter()
if sys.argv[1] == "floor":
    # What any engine that answers through LangGraph with the default ChatOpenAI must do:
    # import both, build a one-node graph, invoke the model once. No tools, no handoffs.
    from langgraph.graph import START, MessagesState, StateGraph
    t1 = time.perf_counter()
    from langchain_openai import ChatOpenAI

    def agent(state):
        return {"messages": [ChatOpenAI(model="gpt-4o").invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    state = builder.compile().invoke({"messages": [("user", "ping")]})
    t2 = time.perf_counter()
    assert state["messages"][-1].content == "pong", state
else:
    if sys.argv[1] == "ours":
        from swarmgraph import Agent, Swarm
    else:
        from swarm import Agent, Swarm
    t1 = time.perf_counter()
    response = Swarm().run(Agent(), [{"role": "user", "content": "ping"}])
    t2 = time.perf_counter()
    assert response.messages[-1]["content"] == "pong", response.messages
print(json.dumps({"import_s": t1 - t0, "run_s": t2 - t1}))
"""


def _cli() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "swarmgraph")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "swarmgraph"]


def _env(env: dict[str, str] | None = None) -> dict[str, str]:
    # Bytecode caches as a user has them after a first run: with PYTHONDONTWRITEBYTECODE set
    # (CI shells often set it) our modules would be compiled from source in every process,
    # while site-packages have their caches from pip. The warm-up rounds write them.
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _time(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    env = _env(env)
    start = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=True
    )
    return time.perf_counter() - start, done.stdout


def _span(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def importtime_top(
    code: list[str], n: int = 8, runs: int = 5, python: str = sys.executable, cwd: str = ROOT
) -> dict[str, list[list[Any]]]:
    """The ``-X importtime`` entries of ``python ARGS``: top ``n`` by own time and the
    top-level imports by cumulative time, in ms; each module's fastest of ``runs`` runs
    (one run's milliseconds are mostly noise)."""
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(runs):
        done = subprocess.run(
            [python, "-X", "importtime", *code],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=_env(),
        )
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            own, cumulative, name = line[len("import time:") :].split("|")
            if not own.strip().isdigit():
                continue  # the header line
            depth = (len(name) - len(name.lstrip(" "))) // 2
            key, ms = name.strip(), (int(own) / 1000, int(cumulative) / 1000)
            seen = best.get(key)
            best[key] = (min(seen[0], ms[0]), min(seen[1], ms[1]), depth) if seen else (*ms, depth)
    rows = [(name, own, cum, depth) for name, (own, cum, depth) in best.items()]
    by_self = sorted(rows, key=lambda r: -r[1])[:n]
    top_level = sorted((r for r in rows if r[3] <= 1), key=lambda r: -r[2])[:n]
    return {
        "by_self_ms": [[name, round(own, 1)] for name, own, _, _ in by_self],
        "top_level_cumulative_ms": [[name, round(cum, 1)] for name, _, cum, _ in top_level],
    }


BEFORE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "importtime_before.json")
# The last commit before the start-up work (issue 15): the engine was the top-level package
# ``graph`` and the command ``graph.cli:main``, which imported LangChain for --help.
BEFORE_COMMIT = "33341ab"
BEFORE_RUNS = {
    "swarmgraph --help": ["-m", "graph.cli", "--help"],
    "import swarmgraph": ["-c", "from graph import Agent, Swarm"],
}


def record_importtime_before(checkout: str, python: str) -> dict[str, Any]:
    """Measure the ``-X importtime`` tops of :data:`BEFORE_COMMIT` once, from ``checkout``
    (a work tree of that commit, installed editable in ``python``'s venv) and write them to
    ``importtime_before.json``; the report shows them beside today's::

        git worktree add --detach /tmp/before 33341ab
        python -m venv /tmp/before/.venv && /tmp/before/.venv/bin/pip install -e /tmp/before
        python -m benchmarks.startup --record-before /tmp/before /tmp/before/.venv/bin/python
    """
    record = {
        "commit": BEFORE_COMMIT,
        "commands": {name: " ".join(code) for name, code in BEFORE_RUNS.items()},
        "importtime": {
            name: importtime_top(code, python=python, cwd=checkout)
            for name, code in BEFORE_RUNS.items()
        },
    }
    with open(BEFORE_FILE, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    return record


def importtime_before() -> dict[str, Any] | None:
    """The recorded ``-X importtime`` tops before the start-up work, if recorded."""
    if not os.path.exists(BEFORE_FILE):
        return None
    with open(BEFORE_FILE) as f:
        return json.load(f)


def run_startup(
    *, repeat: int = 10, first_answer: bool = True, first_repeat: int = 5, importtime_runs: int = 5
) -> dict:
    """Fresh-process wall times (seconds), ratios, importtime tops and the first answer."""
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "swarmgraph --version": [*_cli(), "--version"],
        "swarmgraph --help": [*_cli(), "--help"],
        FLOOR: [py, "-c", FLOOR_IMPORT],
        # The same imports with the collector paused as ours pauses it (graph/lazy.py), so
        # the pause's share and our code's share of the difference can be told apart.
        PAUSED_FLOOR: [py, "-c", f"import gc; gc.disable(); {FLOOR_IMPORT}; gc.enable()"],
        # The import target compares imports, so ours exits as the floor does (Python's full
        # teardown); the default quick exit is timed on its own line.
        "import swarmgraph": [py, "-c", ENGINE_IMPORT],
        "import swarmgraph (default quick exit)": [py, "-c", ENGINE_IMPORT],
    }
    full_teardown = {**os.environ, "SWARMGRAPH_FREEZE_AT_EXIT": "0"}
    envs = {"import swarmgraph": full_teardown}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for name, command in commands.items():  # warm the page and bytecode caches once
        _time(command, envs.get(name))
    for _ in range(repeat):
        for name, command in commands.items():
            samples[name].append(_time(command, envs.get(name))[0])
    processes = {name: _span(values) for name, values in samples.items()}
    bare = processes["python -c pass"]["median"]
    med = {name: p["median"] for name, p in processes.items()}
    floor = FLOOR
    out: dict[str, Any] = {
        "repeat": repeat,
        "importtime_runs": importtime_runs,
        "processes": processes,
        "ratios": {
            "swarmgraph --version / python -c pass": med["swarmgraph --version"] / bare,
            "swarmgraph --help / python -c pass": med["swarmgraph --help"] / bare,
            "import swarmgraph / import floor (whole process)": med["import swarmgraph"]
            / med[floor],
            "import swarmgraph / import floor (minus python -c pass)": (
                med["import swarmgraph"] - bare
            )
            / (med[floor] - bare),
            "import swarmgraph / import floor with the collector paused too": med[
                "import swarmgraph"
            ]
            / med[PAUSED_FLOOR],
        },
        "importtime": {
            "swarmgraph --help": importtime_top(
                ["-m", "swarmgraph", "--help"], runs=importtime_runs
            ),
            "import swarmgraph": importtime_top(["-c", ENGINE_IMPORT], runs=importtime_runs),
        },
        "importtime_before": importtime_before(),
    }
    if first_answer:
        out["first_answer"] = run_first_answer(repeat=first_repeat)
    return out


def run_first_answer(*, repeat: int = 5) -> dict[str, Any]:
    """Fresh-process first ``Swarm().run`` (default model) vs real openai/swarm, one server."""
    with LoopbackOpenAI() as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "loopback",
            "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
        contenders = {
            "ours": "ours",
            "openai/swarm": "swarm",
            FIRST_FLOOR: "floor",
        }
        try:
            _time([sys.executable, "-c", "import swarm"], env)
        except subprocess.CalledProcessError:
            return {"error": "openai-swarm is not installed (pip install --no-deps openai-swarm)"}
        wall: dict[str, list[float]] = {name: [] for name in contenders}
        inner: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
        for arg in contenders.values():  # warm-up
            _time([sys.executable, "-c", FIRST_ANSWER, arg], env)
        for _ in range(repeat):
            for name, arg in contenders.items():
                seconds, stdout = _time([sys.executable, "-c", FIRST_ANSWER, arg], env)
                wall[name].append(seconds)
                inner[name].append(json.loads(stdout.strip().splitlines()[-1]))
    result: dict[str, Any] = {"repeat": repeat, "contenders": {}}
    for name in contenders:
        result["contenders"][name] = {
            "process_s": _span(wall[name]),
            "import_s": _span([r["import_s"] for r in inner[name]]),
            "run_s": _span([r["run_s"] for r in inner[name]]),
        }
    c = result["contenders"]
    result["ratios"] = {
        "ours / openai/swarm (whole process)": c["ours"]["process_s"]["median"]
        / c["openai/swarm"]["process_s"]["median"],
        "ours / openai/swarm (import + first run)": (
            c["ours"]["import_s"]["median"] + c["ours"]["run_s"]["median"]
        )
        / (c["openai/swarm"]["import_s"]["median"] + c["openai/swarm"]["run_s"]["median"]),
        # The part of the gap that is ours, and the part no LangGraph + ChatOpenAI engine avoids.
        "ours / floor (whole process)": c["ours"]["process_s"]["median"]
        / c[FIRST_FLOOR]["process_s"]["median"],
        "floor / openai/swarm (whole process)": c[FIRST_FLOOR]["process_s"]["median"]
        / c["openai/swarm"]["process_s"]["median"],
    }
    return result


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:2] == ["--record-before"]:
        print(json.dumps(record_importtime_before(sys.argv[2], sys.argv[3]), indent=1))
    else:
        repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 10
        print(json.dumps(run_startup(repeat=repeat), indent=1))
