"""How long the page of ``swarmgraph ui`` takes to render a 1,000-message conversation, in
headless Chromium (Debian's, through Playwright): ``performance.now()`` around the page's own
render of the stored messages (``window.__ui.lastRenderMs``), over several page loads.

    .venv/bin/python -m benchmarks.ui_render [--messages 1000] [--loads 7]

``make bench`` runs it in its ``ui`` section (:func:`run_ui_render`); not a timed test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
from typing import Any

from swarmgraph.memory import Session

from swarmgraph import Agent, ScriptedChatModel, Swarm
from swarmgraph.app.ui.server import make_server
from swarmgraph.app.ui.service import UiService

ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def run_ui_render(messages: int = 1000, loads: int = 7) -> dict[str, Any]:
    """The page's render of a ``messages``-message conversation: median ms over ``loads``."""
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/render.db"
        swarm = Swarm(chat_model=ScriptedChatModel(["ok"]))
        said = [
            {"role": "user", "content": f"message {i}: " + "lorem ipsum " * 8}
            for i in range(messages - 1)
        ]
        Session("big", url=url).run(swarm, Agent(), said)  # one turn: n-1 given, 1 answer
        service = UiService(swarm, Agent(), url=url, thread="big")
        server = make_server(service)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        times = []
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                for _ in range(loads):
                    page.goto(server.url)
                    expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
                    count = page.locator("#messages li").count()
                    if count != messages:
                        raise RuntimeError(f"the page shows {count} messages, not {messages}")
                    times.append(float(page.evaluate("() => window.__ui.lastRenderMs")))
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
    return {
        "messages": messages,
        "loads": loads,
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=7)
    options = parser.parse_args()
    got = run_ui_render(options.messages, options.loads)
    print(
        f"{got['messages']} messages rendered in {got['median_ms']:.0f} ms "
        f"(median of {got['loads']} loads; min {got['min_ms']:.0f}, max {got['max_ms']:.0f}) "
        f"in headless Chromium, {got['cpus']} CPUs"
    )


if __name__ == "__main__":
    main()
