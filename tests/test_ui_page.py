"""The page of ``swarmgraph ui`` in a real headless Chromium (Debian's ``chromium``, driven by
Playwright with ``executable_path``: no browser is downloaded). Every wait is on a DOM
condition with a generous timeout, never a sleep: the machine may be slow and loaded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from swarmgraph.memory import LongTermMemory

from swarmgraph import scripted_tool_call
from tests.ui_helpers import handoff_script, served

playwright = pytest.importorskip("playwright.sync_api", reason="the dev extra brings playwright")
expect = playwright.expect

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT = 60_000  # ms: a loaded 2-core machine may take long; every wait ends on a condition


def _chromium() -> str:
    found = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(found, os.X_OK):
        pytest.fail("no chromium: run `bash scripts/ensure_services.sh` (make test does)")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(WAIT)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []  # the page's own script never failed


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'page.db'}"


def _open(page, base: str) -> None:
    page.goto(base)
    expect(page.locator("#status")).to_have_text("ready", timeout=WAIT)


def _send(page, text: str) -> None:
    page.get_by_test_id("composer").locator("textarea").fill(text)
    page.locator("#send").click()


def _done(page) -> None:
    expect(page.locator("#status")).to_have_text("done", timeout=WAIT)


def test_a_turn_with_a_handoff_and_a_context_tool_updates_all_four_panes(
    page, url: str, tmp_path: Path
) -> None:
    LongTermMemory(url, user_id="ming").remember("gift_order", "order 7 was a gift")
    options = {"user_id": "ming", "long_term": True}
    with served(handoff_script(), url, **options) as server:
        _open(page, server.url)
        _send(page, "refund order 7")
        _done(page)
        messages = page.get_by_test_id("messages")
        expect(messages).to_contain_text("refund order 7")
        expect(messages).to_contain_text("Sales here: order 7 it is.")
        expect(messages.locator("li.tool")).to_have_count(2)
        changed = page.get_by_test_id("context").locator('li[data-key="order_id"]')
        expect(changed).to_have_class(re.compile(r"\bchanged\b"))
        expect(changed).to_contain_text("order_id: 7")
        expect(changed).to_contain_text("← set_order")
        graph = page.get_by_test_id("graph")
        expect(graph.locator("g.node.active")).to_have_text("Sales")
        expect(graph.locator("line.handoff")).to_have_count(1)
        expect(graph).to_have_attribute("data-handoff", "Triage → Sales")
        expect(page.get_by_test_id("long-term")).to_contain_text('gift_order: "order 7 was a gift"')
        shot = tmp_path / "ui.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("SWARMGRAPH_UI_SCREENSHOT"):  # docs/ui.md: how docs/ui.png is made
            shutil.copy(shot, ROOT / "docs" / "ui.png")


def test_an_approval_is_answered_in_the_page(page, url: str) -> None:
    script = [
        scripted_tool_call("transfer_to_sales"),
        scripted_tool_call("refund", {"order_id": 7}),
        "Refunded order 7.",
    ]
    with served(script, url) as server:
        _open(page, server.url)
        _send(page, "refund order 7 please")
        _done(page)
        approvals = page.get_by_test_id("approvals")
        expect(approvals).to_contain_text("Sales wants to run refund(order_id=7)")
        approvals.get_by_test_id("approve").click()
        expect(page.get_by_test_id("messages")).to_contain_text("Refunded order 7.", timeout=WAIT)
        _done(page)
        expect(page.get_by_test_id("messages")).to_contain_text("refunded 7")
        expect(approvals).to_have_text("nothing waits")


def test_an_action_once_the_server_is_gone_says_so_and_the_script_never_fails(
    page, url: str
) -> None:
    # ``page`` asserts at teardown that no error escaped the page's script: a fetch that fails
    # (the server stopped, or the page closing under a refresh) is said in the status line.
    with served(handoff_script(), url) as server:
        _open(page, server.url)
    _send(page, "anyone there?")
    expect(page.locator("#status")).to_have_text(re.compile(r"^error: "), timeout=WAIT)


def test_a_reload_mid_turn_rejoins_the_run_with_no_duplicate(page, url: str) -> None:
    release = threading.Event()
    with served(handoff_script(), url, gate=release) as server:
        _open(page, server.url)
        _send(page, "refund order 7")
        # the run waits inside set_order: its call is on the page, its result is not
        messages = page.get_by_test_id("messages")
        expect(messages).to_contain_text("set_order(")
        page.reload()
        expect(page.locator("#status")).to_contain_text("(rejoined)", timeout=WAIT)
        expect(messages).to_contain_text("set_order(")  # replayed from the run's log
        release.set()
        _done(page)
        expect(messages.get_by_text("Sales here: order 7 it is.")).to_have_count(1)
        expect(messages.get_by_text("refund order 7", exact=True)).to_have_count(1)
        ids = page.evaluate("() => window.__ui.ids")
        assert ids == list(range(1, len(ids) + 1))  # every event once, in order
        items = page.evaluate(
            "() => [...document.querySelectorAll('#messages li')].map(li => li.dataset.id)"
        )
        assert len(items) == len(set(items)) == 6


def test_script_in_a_message_and_in_a_context_value_stays_text(page, url: str) -> None:
    evil = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    script = [scripted_tool_call("note", {"text": evil}), f"You said {evil}"]
    with served(script, url) as server:
        _open(page, server.url)
        _send(page, evil)
        _done(page)
        messages, context = page.get_by_test_id("messages"), page.get_by_test_id("context")
        expect(messages.locator("li.user")).to_contain_text(evil)
        expect(messages).to_contain_text(f"You said {evil}")
        expect(context.locator('li[data-key="note"]')).to_contain_text("<script>")
        for pane in (messages, context):
            expect(pane.locator("script")).to_have_count(0)
            expect(pane.locator("img")).to_have_count(0)
        assert page.evaluate("() => window.__pwned === undefined")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("persist", "context_back"), [("messages", False), ("messages,context", True)]
)
def test_restart_brings_back_what_the_store_kept(
    page, tmp_path: Path, persist: str, context_back: bool
) -> None:
    db = f"sqlite:///{tmp_path / 'restart.db'}"
    command = [sys.executable, "-m", "swarmgraph", "ui", "--port", "0", "--offline"]
    command += ["--db", db, "--persist", persist]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )  # fmt: skip
    try:
        line = server.stdout.readline()
        base = re.search(r"http://\S+", line).group(0)
        _open(page, base)
        _send(page, "Hi, I'm Ming. Please refund order 7.")
        _done(page)
        context = page.get_by_test_id("context")
        expect(context.locator('li[data-key="refund_status"]')).to_contain_text("approved")
        count = page.get_by_test_id("messages").locator("li").count()
        page.get_by_test_id("restart").click()
        lesson = page.get_by_test_id("lesson")
        expect(lesson).to_be_visible(timeout=WAIT)
        assert "restarted" in server.stdout.readline()  # a new run process on the same store
        expect(lesson).to_contain_text(f"{count} of {count} messages came back")
        expect(page.get_by_test_id("messages").locator("li")).to_have_count(count)
        if context_back:
            expect(lesson).to_contain_text("context_variables came back")
            expect(context.locator('li[data-key="refund_status"]')).to_contain_text("approved")
            expect(page.locator("#active")).to_contain_text("active agent: Refunds")
        else:
            expect(lesson).to_contain_text("context_variables did not come back: {}")
            expect(context).to_have_text("{} (empty)")
            expect(page.locator("#active")).to_contain_text("active agent: Triage")
    finally:
        server.terminate()
        server.wait(30)
