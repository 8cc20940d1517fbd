"""Local embedding models run numpy's BLAS with a bounded thread count (issue 39): one
thread unless SWARMGRAPH_EMBED_THREADS says otherwise, and a BLAS variable the user set wins.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLAS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def child(code: str, **env: str) -> str:
    clean = {
        k: v for k, v in os.environ.items() if k not in BLAS and k != "SWARMGRAPH_EMBED_THREADS"
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


WITHOUT_THREADPOOLCTL = (
    "import sys, os; sys.modules['threadpoolctl'] = None\n"
    "import swarmgraph.memory.local_embeddings\n"
    "print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('OMP_NUM_THREADS'))"
)


def test_without_threadpoolctl_the_blas_variables_are_set_before_numpy_loads():
    assert child(WITHOUT_THREADPOOLCTL) == "1 1"
    assert child(WITHOUT_THREADPOOLCTL, SWARMGRAPH_EMBED_THREADS="3") == "3 3"


def test_a_blas_variable_the_user_set_is_left_alone():
    assert child(WITHOUT_THREADPOOLCTL, OMP_NUM_THREADS="4") == "None 4"


def test_with_threadpoolctl_an_embedding_call_runs_on_the_bounded_pool():
    code = (
        "import numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "from swarmgraph.memory.embed_threads import bounded_threads\n"
        "blas = lambda: [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "with bounded_threads():\n"
        "    inside = blas()\n"
        "print(inside, len(blas()) > 0)"
    )
    assert child(code, SWARMGRAPH_EMBED_THREADS="1") == "[1] True"


def test_overlapping_bounded_blocks_put_the_pool_back_as_it_was():
    # Two threads' blocks overlap (one recall's product inside another's embedding): the
    # inner one finds the limit already set and leaves it; the pool ends as it began, not
    # stuck at one thread.
    code = (
        "import numpy\n"
        "from threadpoolctl import threadpool_info, threadpool_limits\n"
        "from swarmgraph.memory.embed_threads import bounded_threads\n"
        "blas = lambda: [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "threadpool_limits(limits=3, user_api='blas')\n"
        "outer = bounded_threads(); outer.__enter__()\n"
        "inner = bounded_threads(); inner.__enter__()\n"
        "during = blas()\n"
        "outer.__exit__(None, None, None); inner.__exit__(None, None, None)\n"
        "print(during, blas())"
    )
    assert child(code, SWARMGRAPH_EMBED_THREADS="1") == "[1] [3]"
