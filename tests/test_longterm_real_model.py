"""``python -m benchmarks.longterm --model NAME`` end to end against the loopback OpenAI stub:
a real ``ChatOpenAI`` extracts (structured output) and answers, and every request it sends
is well formed. The stub's replies are canned; no result of this run is a model's result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai_stub import OpenAIStub, StubReply, stub_text, stub_tool_call

from benchmarks.longterm import QUICK, main
from benchmarks.longterm_data import SLOTS, generate


def _schema_name(request: dict) -> str | None:
    """The structured-output schema a request asks for (tools or response_format)."""
    for tool in request.get("tools") or []:
        return tool["function"]["name"]
    fmt = request.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name")


def _reply(request: dict) -> StubReply:
    said = str(request["messages"][-1]["content"])
    if _schema_name(request) == "BenchFacts":
        facts = {"home_city": "Lyon"} if "Lyon" in said else {}
        if request.get("tools"):
            return stub_tool_call("BenchFacts", facts)
        return stub_text(json.dumps(facts))
    return stub_text("I don't know.")


def test_a_real_chat_model_extracts_and_answers_with_well_formed_requests(tmp_path, monkeypatch):
    with OpenAIStub(respond=_reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        out_file = tmp_path / "out.json"
        code = main(
            ["--model", "stub-model", "--quick", "--seeds", "0", "--split", "dev",
             "--models", "long-term (model)", "--profile", "short", "--json", str(out_file)]
        )  # fmt: skip
        requests = list(stub.requests)
    assert code == 0
    out = json.loads(out_file.read_text())
    assert out["extraction_by"] == "real model" and out["answers_by"] == "real model"
    assert {r["model"] for r in requests} == {"stub-model"}
    extraction = [r for r in requests if _schema_name(r) == "BenchFacts"]
    answering = [r for r in requests if _schema_name(r) is None]
    assert extraction and answering
    # One request per distinct message: the row and the stage-1 replay share what it wrote.
    said = {t.text for _, t in generate(0, split="dev", **QUICK).turns()}  # type: ignore[arg-type]
    assert len(extraction) == len(said)
    for request in extraction:
        schema = (request.get("tools") or [{}])[0].get("function", {}).get("parameters") or (
            request["response_format"]["json_schema"]["schema"]
        )
        assert set(schema["properties"]) == {slot.key for slot in SLOTS} | {"forget"}
        assert request["messages"][0]["role"] == "system"
        assert request["messages"][-1]["content"].startswith("User: ")
    questions = {slot.question for slot in SLOTS}
    asked = [r["messages"][-1]["content"] for r in answering]
    assert set(asked) & questions  # the questions reached the real model
    assert all(r["messages"][0]["role"] == "system" for r in answering)
    row = out["rows"]["dev"]["long-term (model)"]
    # The stub only ever "extracts" a city: what was written is what it said, nothing else.
    assert row["leakage"]["max"] == 0
    assert out["writes"]["dev"]["model"]["wrong"]["max"] == 0
