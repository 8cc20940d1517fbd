"""Security: the model cannot write context_variables, one conversation cannot read another's
rows, table names are constants, and credentials in URLs never reach errors, reprs or logs."""

from __future__ import annotations

import logging

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from scale_helpers import fresh_id
from swarmgraph.graph import Agent, Result, ScriptedChatModel, Swarm, scripted_tool_call
from swarmgraph.memory import Session, open_context_store, open_history
from swarmgraph.memory.errors import StorageUnavailable

SECRET = "Sup3r-s3cret"


def test_a_model_cannot_write_context_except_through_a_programmers_tool(tmp_path):
    seen = []

    def lookup(order_id: int, context_variables: dict) -> Result:
        """Look an order up."""
        seen.append(dict(context_variables))
        return Result(value="ok", context_variables={"last_order": order_id})

    forged = {"role": "admin", "user": "mallory"}
    model = ScriptedChatModel(
        [
            scripted_tool_call("lookup", {"order_id": 1, "context_variables": forged}),
            scripted_tool_call("context_variables", {"role": "admin"}),
            scripted_tool_call("set_context", forged),
            "done",
        ]
    )
    session = Session("c", url=f"sqlite:///{tmp_path / 's.db'}")
    agent = Agent(name="A", functions=[lookup])
    response = session.run(Swarm(chat_model=model), agent, "hi", context_variables={"user": "u"})
    assert seen == [{"user": "u"}]  # the tool got the real context, not the model's
    assert response.context_variables == {"user": "u", "last_order": 1}
    assert session.context_variables == {"user": "u", "last_order": 1}
    errors = [m["content"] for m in response.messages if m["role"] == "tool"][1:]
    assert all(e.startswith("Error:") for e in errors)


def _urls(request, tmp_path):
    yield f"sqlite:///{tmp_path / 'iso.db'}"
    yield request.getfixturevalue("postgres_url")
    yield request.getfixturevalue("redis_url")


@pytest.mark.postgres
@pytest.mark.redis
def test_ids_that_look_like_patterns_or_prefixes_never_read_each_others_rows(request, tmp_path):
    for url in _urls(request, tmp_path):
        base = fresh_id("p")
        ids = [base, base + "%", base + "_", base + ":x", base[:-1] + "_", base + "' OR '1'='1"]
        for cid in ids:
            open_history(url, cid).add_messages([HumanMessage(f"secret of {cid}")])
            open_context_store(url).save(cid, {"owner": cid})
        for cid in ids:
            assert [m.content for m in open_history(url, cid).get_messages()] == [
                f"secret of {cid}"
            ], url
            assert open_context_store(url).load(cid).context == {"owner": cid}


@pytest.mark.postgres
def test_table_names_are_constants_not_built_from_ids(postgres_url):
    def tables() -> set[str]:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            ).fetchall()
        return {r[0] for r in rows}

    open_history(postgres_url, fresh_id())  # schema exists
    open_context_store(postgres_url)
    before = tables()
    for cid in [
        'x"; DROP TABLE swarm_context; --',
        "swarm_messages",
        "t; CREATE TABLE evil(x int)",
    ]:
        Session(cid, url=postgres_url).history.add_messages([HumanMessage("hi")])
        open_context_store(postgres_url).save(cid, {"a": 1})
    assert tables() == before
    assert {"swarm_messages", "swarm_context", "swarm_conversations"} <= before


@pytest.mark.postgres
@pytest.mark.redis
def test_credentials_never_appear_in_reprs_errors_or_logs(postgres_url, redis_url, caplog):
    caplog.set_level(logging.DEBUG)
    pg = postgres_url.replace("postgres@", f"postgres:{SECRET}@", 1)
    rd = redis_url.replace("redis://", f"redis://:{SECRET}@", 1)
    shown = [repr(open_history(pg, "c")), repr(open_context_store(pg)), repr(Session("c", url=pg))]
    shown += [repr(open_context_store(rd.replace(f":{SECRET}@", "")))]
    # A server that is not there (a closed port) fails with our error, password scrubbed.
    dead_pg = f"postgresql://bob:{SECRET}@127.0.0.1:9/db?pool_timeout=1"
    dead_rd = f"redis://:{SECRET}@127.0.0.1:9/0"
    for url in (dead_pg, dead_rd):
        with pytest.raises(StorageUnavailable) as caught:
            open_history(url, "c").get_messages()
        shown += [str(caught.value), repr(caught.value), caught.value.url]
        assert "***" in caught.value.url
    with pytest.raises(ValueError) as caught:
        open_history(f"mysql://bob:{SECRET}@db/app", "c")
    shown.append(str(caught.value))
    for text in [*shown, caplog.text]:
        assert SECRET not in text


@pytest.mark.postgres
@pytest.mark.redis
def test_password_query_parameters_are_redacted_everywhere_a_url_is_shown(
    postgres_url, redis_url, caplog
):
    caplog.set_level(logging.DEBUG)
    pg = f"{postgres_url}?password={SECRET}&application_name=t"
    rd = f"{redis_url}?password={SECRET}"
    shown = [repr(open_history(pg, "c")), repr(open_context_store(pg)), repr(Session("c", url=pg))]
    for url in (pg, rd):
        shown += [repr(open_history(url, "c")), repr(open_context_store(url))]
    dead = [
        f"postgresql://bob@127.0.0.1:9/db?pool_timeout=1&password={SECRET}",
        f"redis://127.0.0.1:9/0?password={SECRET}",
    ]
    for url in dead:
        with pytest.raises(StorageUnavailable) as caught:
            open_history(url, "c").get_messages()
        shown += [str(caught.value), repr(caught.value), caught.value.url]
        assert "=***" in caught.value.url
    for text in [*shown, caplog.text]:
        assert SECRET not in text
    assert "application_name=t" in shown[0]  # only the secret is masked, not the whole URL


@pytest.mark.postgres
@pytest.mark.redis
def test_a_password_that_is_a_common_substring_does_not_garble_errors():
    for url, words in [
        ("postgresql://on:on@127.0.0.1:9/db?pool_timeout=1", "Connection refused"),
        ("redis://:on@127.0.0.1:9/0", "Connection refused"),
    ]:
        with pytest.raises(StorageUnavailable) as caught:
            open_history(url, "c").get_messages()
        assert words in str(caught.value), str(caught.value)
        assert ":on@" not in str(caught.value)


@pytest.mark.slow
def test_openai_base_url_credentials_never_reach_the_cli_output(tmp_path):
    import subprocess
    import sys

    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OPENAI_")}
    env["OPENAI_BASE_URL"] = f"http://user:{SECRET}@127.0.0.1:9/v1?api_key={SECRET}"
    env["SWARMGRAPH_DB"] = f"sqlite:///{tmp_path / 'cli.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "swarmgraph", "demo", "--model", "gpt-4o-mini", "--no-color"],
        cwd=tmp_path,
        env={**env, "OPENAI_MAX_RETRIES": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "http://user:***@127.0.0.1:9/v1" in done.stdout, done.stdout
    assert SECRET not in done.stdout + done.stderr
