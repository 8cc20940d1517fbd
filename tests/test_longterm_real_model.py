"""``python -m benchmarks.longterm --model NAME`` end to end against the loopback OpenAI stub:
a real ``ChatOpenAI`` extracts (open extraction: ``OpenFactExtractor``'s structured output)
and answers, and every request it sends is well formed; the facts the stub returns are
stored under normalised keys. The stub's replies are canned; no result of this run is a
model's result."""

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


def _schema(request: dict) -> dict:
    return (request.get("tools") or [{}])[0].get("function", {}).get("parameters") or (
        request["response_format"]["json_schema"]["schema"]
    )


def _reply(request: dict) -> StubReply:
    said = str(request["messages"][-1]["content"])
    if _schema_name(request) == "OpenFacts":
        # Another wording than the generator's key: stored under the normalised one.
        # Seed 0's dev data (QUICK): user u1 lives in Lille, then Brno.
        city = next((c for c in ("Brno", "Lille", "Lyon") if c in said), None)
        found = [{"key": "City of residence", "value": city}] if city else []
        if "fern" in said:  # a kind of fact the generator never had
            found.append({"key": "House plants", "value": "a fern"})
        facts = {"facts": found}
        if request.get("tools"):
            return stub_tool_call("OpenFacts", facts)
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
    extraction = [r for r in requests if _schema_name(r) == "OpenFacts"]
    answering = [r for r in requests if _schema_name(r) is None]
    assert extraction and answering
    assert not [r for r in requests if _schema_name(r) == "BenchFacts"]  # no fixed schema
    # One request per distinct message and keys offered: the row and the stage-1 replay
    # offer the same keys, so they share what it wrote.
    data = generate(0, split="dev", **QUICK)  # type: ignore[arg-type]
    said = {t.text for _, t in data.turns()}
    sent = {(r["messages"][-1]["content"], r["messages"][0]["content"]) for r in extraction}
    assert len(extraction) == len(sent) == len(said)
    assert {m.removeprefix("User: ") for m, _ in sent} == said
    for request in extraction:
        schema = _schema(request)
        assert set(schema["properties"]) == {"facts"}  # open: a list of {key, value, op}
        assert request["messages"][0]["role"] == "system"
        assert request["messages"][-1]["content"].startswith("User: ")
    # After the user's first city message the key it was stored under is offered.
    offered = [r for r in extraction if "home_city" in r["messages"][0]["content"]]
    assert offered and all("Keys already in" in r["messages"][0]["content"] for r in offered)
    first = next(i for i, r in enumerate(extraction) if "Lille" in _said(r))
    assert all("home_city" not in r["messages"][0]["content"] for r in extraction[: first + 1])
    questions = {slot.question for slot in SLOTS}
    asked = [r["messages"][-1]["content"] for r in answering]
    assert set(asked) & questions  # the questions reached the real model
    assert all(r["messages"][0]["role"] == "system" for r in answering)
    row = out["rows"]["dev"]["long-term (model)"]
    # The stub only ever "extracts" a city: what was written is what it said, under the
    # generator's key (normalised from "City of residence"), nothing else.
    assert row["leakage"]["max"] == 0
    assert out["writes"]["dev"]["model"]["wrong"]["max"] == 0
    assert out["writes"]["dev"]["model"]["right"]["max"] > 0


def _said(request: dict) -> str:
    return str(request["messages"][-1]["content"])


def test_the_open_extraction_step_stores_the_stubs_facts_under_normalised_keys(monkeypatch):
    from langchain_openai import ChatOpenAI
    from swarmgraph.graph import Agent, ScriptedChatModel, Swarm
    from swarmgraph.memory import LongTermMemory, Session

    from benchmarks.longterm import model_extractor

    with OpenAIStub(respond=_reply) as stub:
        model = ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="t", max_retries=0)
        extract = model_extractor(model)
        session = Session("open-c1", url="memory://open-extract-stub", user_id="u1",
                          long_term=True, extract=extract)  # fmt: skip
        swarm = Swarm(chat_model=ScriptedChatModel(["Noted."] * 3))
        for text in ("I live in Lyon.", "I keep a fern by the window.", "Thanks!"):
            session.run(swarm, Agent(name="Helper"), text)
        requests = list(stub.requests)
    memory = LongTermMemory("memory://open-extract-stub", user_id="u1")
    assert [(f.key, f.value) for f in memory.facts()] == [
        ("home_city", "Lyon"), ("house_plant", "a fern")]  # fmt: skip
    assert "house_plant" not in {slot.key for slot in SLOTS}  # a kind the generator never had
    assert [_said(r) for r in requests] == [
        "User: I live in Lyon.", "User: I keep a fern by the window.", "User: Thanks!"]  # fmt: skip
    assert all(set(_schema(r)["properties"]) == {"facts"} for r in requests)
    systems = [r["messages"][0]["content"] for r in requests]
    assert "home_city" not in systems[0] and "home_city" in systems[1]
    assert "home_city, house_plant" in systems[2]
