"""Every example program runs offline from the command line, as its README says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Multi-process, subprocess or timing runs: `make check` leaves them to `make test`.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# example -> lines its offline run must print
EXPECTED = {
    "triage_desk": ["Triage ⚙ transfer_to_sales({})", "Refunds ⚙ process_refund("],
    "airline": [
        "Flight Modification ⚙ transfer_to_flight_cancel({})",
        "Flight Cancel ⚙ initiate_refund({})",
        "Lost Baggage ⚙ initiate_baggage_search(",
    ],
    "weather": ['Weather ⚙ get_weather({"location": "Chicago"})', "Weather ⚙ send_email("],
    "personal_shopper": [
        'Refunds ⚙ refund_item({"purchase_id": 2})',
        'Sales ⚙ order_item({"product_id": 104})',
        "Notified by phone",
    ],
    "langgraph_member": ["catalogue ⚙ search_catalogue(", "Triage › We are open"],
}


def run_example(cwd: Path, *args: str, input: str | None = None, **env: str):
    """``python -m examples.ARGS`` as a user runs it: no OPENAI_* from this shell, ``env`` added."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    clean.update(PYTHONPATH=str(ROOT), **env)
    done = subprocess.run(
        [sys.executable, "-m", *args],
        input=input, cwd=cwd, env=clean, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def examples() -> list[str]:
    return sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "__main__.py").exists())


def test_every_example_is_checked_here_and_has_evals():
    assert examples() == sorted(EXPECTED)
    for name in examples():
        assert (ROOT / "examples" / name / "evals.py").exists(), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name, tmp_path):
    done = run_example(tmp_path, f"examples.{name}", "--offline")
    for line in EXPECTED[name]:
        assert line in done.stdout, (line, done.stdout)


def test_an_example_in_chat_mode_is_run_demo_loop(tmp_path):
    done = run_example(
        tmp_path, "examples.weather", "--offline", "--chat", input="Weather in Oslo?\n/agent\n"
    )
    assert "Starting swarmgraph REPL with Weather" in done.stdout
    assert "Weather › Oslo: -3°C and snow." in done.stdout
    assert "active agent: Weather" in done.stdout


def test_an_example_runs_on_a_real_model_endpoint(tmp_path):
    from openai_stub import OpenAIStub, stub_text, stub_tool_call

    replies = [
        stub_tool_call("get_weather", {"location": "Chicago"}),
        stub_text("Take an umbrella."),
        stub_tool_call("get_weather", {"location": "Lisbon", "time": "tomorrow"}),
        stub_tool_call("send_email", {"recipient": "ana@example.com", "subject": "Weather",
                                      "body": "16C, sun"}),
        stub_text("Sent."),
    ]  # fmt: skip
    with OpenAIStub(replies) as stub:
        done = run_example(
            tmp_path, "examples.weather", "--model", "local-model",
            OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="test",
        )  # fmt: skip
    assert "model: local-model" in done.stdout
    assert "Weather › Take an umbrella." in done.stdout and "Weather › Sent." in done.stdout
    assert {r["model"] for r in stub.requests} == {"local-model"}
    assert [t["function"]["name"] for t in stub.requests[0]["tools"]] == ["get_weather",
                                                                          "send_email"]  # fmt: skip


def test_chat_mode_runs_on_the_model_named_by_model_too(tmp_path):
    from openai_stub import OpenAIStub, stub_text

    with OpenAIStub([stub_text("Sunny in Oslo.")]) as stub:
        done = run_example(
            tmp_path, "examples.weather", "--model", "local-model", "--chat",
            input="Weather in Oslo?\n",
            OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="test",
        )  # fmt: skip
    assert "Weather › Sunny in Oslo." in done.stdout
    assert [r["model"] for r in stub.requests] == ["local-model"]
