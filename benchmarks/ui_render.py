"""How long the page of ``swarmgraph ui`` takes to render a 1,000-message conversation, in
headless Chromium (Debian's, through Playwright): ``performance.now()`` around the page's own
render of the stored messages (``window.__ui.lastRenderMs``), over several page loads.

    .venv/bin/python -m benchmarks.ui_render [--messages 1000] [--loads 7]

Not part of ``make bench`` yet and not a timed test: the figure is printed, with the
machine's CPU count, for docs/ui.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading

from swarmgraph.memory import Session

from swarmgraph import Agent, ScriptedChatModel, Swarm
from swarmgraph.app.ui.server import make_server
from swarmgraph.app.ui.service import UiService

ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=7)
    options = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/render.db"
        swarm = Swarm(chat_model=ScriptedChatModel(["ok"]))
        said = [
            {"role": "user", "content": f"message {i}: " + "lorem ipsum " * 8}
            for i in range(options.messages - 1)
        ]
        Session("big", url=url).run(swarm, Agent(), said)  # one turn: n-1 given, 1 answer
        service = UiService(swarm, Agent(), url=url, thread="big")
        server = make_server(service)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        times = []
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for _ in range(options.loads):
                page.goto(server.url)
                expect(page.locator("#status")).to_have_text("ready", timeout=120_000)
                count = page.locator("#messages li").count()
                assert count == options.messages, count
                times.append(page.evaluate("() => window.__ui.lastRenderMs"))
            browser.close()
        server.shutdown()
    print(
        f"{options.messages} messages rendered in {statistics.median(times):.0f} ms "
        f"(median of {len(times)} loads; min {min(times):.0f}, max {max(times):.0f}) "
        f"in headless Chromium, {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
