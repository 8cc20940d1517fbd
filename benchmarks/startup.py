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
    >>> out = run_startup(repeat=1, first_answer=False)
    >>> sorted(out["processes"])[:2]
    ['import floor: langgraph.graph + langchain_core BaseChatModel', 'import swarmgraph']
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
ENGINE_IMPORT = "from swarmgraph import Agent, Swarm"

FIRST_ANSWER = r"""
import json, sys, time
t0 = time.perf_counter()
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


def _time(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=True
    )
    return time.perf_counter() - start, done.stdout


def _span(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def importtime_top(code: list[str], n: int = 8) -> dict[str, list[list[Any]]]:
    """The ``-X importtime`` entries of ``python ARGS``: top ``n`` by own time and the
    top-level imports by cumulative time, in ms."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *code], capture_output=True, text=True, cwd=ROOT
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, cumulative, name = line[len("import time:") :].split("|")
        if not own.strip().isdigit():
            continue  # the header line
        depth = (len(name) - len(name.lstrip(" "))) // 2
        rows.append((name.strip(), int(own) / 1000, int(cumulative) / 1000, depth))
    by_self = sorted(rows, key=lambda r: -r[1])[:n]
    top_level = sorted((r for r in rows if r[3] <= 1), key=lambda r: -r[2])[:n]
    return {
        "by_self_ms": [[name, round(own, 1)] for name, own, _, _ in by_self],
        "top_level_cumulative_ms": [[name, round(cum, 1)] for name, _, cum, _ in top_level],
    }


def run_startup(*, repeat: int = 10, first_answer: bool = True, first_repeat: int = 5) -> dict:
    """Fresh-process wall times (seconds), ratios, importtime tops and the first answer."""
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "swarmgraph --version": [*_cli(), "--version"],
        "swarmgraph --help": [*_cli(), "--help"],
        FLOOR: [py, "-c", FLOOR_IMPORT],
        "import swarmgraph": [py, "-c", ENGINE_IMPORT],
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():  # warm the page cache once
        _time(command)
    for _ in range(repeat):
        for name, command in commands.items():
            samples[name].append(_time(command)[0])
    processes = {name: _span(values) for name, values in samples.items()}
    bare = processes["python -c pass"]["median"]
    med = {name: p["median"] for name, p in processes.items()}
    floor = FLOOR
    out: dict[str, Any] = {
        "repeat": repeat,
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
        },
        "importtime": {
            "swarmgraph --version": importtime_top(["-m", "swarmgraph", "--version"]),
            "import swarmgraph": importtime_top(["-c", ENGINE_IMPORT]),
        },
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
        contenders = {"ours": "ours", "openai/swarm": "swarm"}
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
    }
    return result


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run_startup(repeat=int(sys.argv[1]) if len(sys.argv) > 1 else 10), indent=1))
