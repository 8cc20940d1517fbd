"""LongTermMemory on memory://, SQLite and Postgres: scopes, supersede, forget, odd ids,
idempotent re-apply after kill -9, and lexical ranking.

Every store is real (InMemoryStore, a SQLite file, the throwaway Postgres); users are fresh
per test, because the Postgres database lives for the whole run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.store.base import PutOp
from scale_helpers import fresh_id
from swarmgraph.memory import LongTermMemory, StorageUnavailable
from swarmgraph.memory.long_term import MAX_NAME_BYTES, namespace_label
from swarmgraph.memory.long_term_store import open_long_term_store

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).parent / "procs" / "long_term_worker.py"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def worker(url: str, user: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(WORKER), url, user, *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def recalled(memory: LongTermMemory, query: str, **kwargs) -> list[tuple[str, str]]:
    return [(f.key, f.value) for f in memory.recall(query, **kwargs)]


@pytest.fixture
def users():
    """Fresh user ids for one test (the Postgres database is shared by the whole run)."""
    return lambda name: fresh_id(name)


@pytest.mark.slow
@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_fact_from_conversation_a_is_recalled_later_for_that_user_only(backend_url, users):
    ming, ana = users("ming"), users("ana")
    writer = LongTermMemory(backend_url, user_id=ming)
    fact = writer.remember(
        "dog_name",
        "Rex",
        conversation_id="conv-a",
        turn_id="t-1",
        source_agent="Triage",
        text="My dog is called Rex.",
    )
    assert (fact.conversation_id, fact.turn_id, fact.source_agent) == ("conv-a", "t-1", "Triage")
    assert fact.text == "My dog is called Rex." and fact.created_at is not None

    later = LongTermMemory(backend_url, user_id=ming)  # conversation B: a new instance
    [seen] = later.recall("What is my dog called?")
    assert (seen.key, seen.value, seen.scope, seen.user_id) == ("dog_name", "Rex", "user", ming)
    assert (seen.conversation_id, seen.turn_id, seen.source_agent) == ("conv-a", "t-1", "Triage")
    assert LongTermMemory(backend_url, user_id=ana).recall("What is my dog called?") == []
    assert LongTermMemory(backend_url, user_id=ana).facts() == []
    if not backend_url.startswith("memory://"):  # a new process reads what this one wrote
        out = worker(backend_url, ming, "recall", "dog called").stdout.splitlines()[-1]
        assert json.loads(out) == [["dog_name", "Rex"]]
        out = worker(backend_url, ana, "recall", "dog called").stdout.splitlines()[-1]
        assert json.loads(out) == []


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_an_agent_note_is_visible_to_that_agent_only(backend_url, users):
    memory = LongTermMemory(backend_url, user_id=users("ming"))
    memory.remember("tone", "short answers, no emoji", "agent", agent="Writer")
    memory.remember("timezone", "Europe/Paris")
    assert recalled(memory, "answers tone", agent="Writer") == [("tone", "short answers, no emoji")]
    assert recalled(memory, "answers tone", agent="Refunds") == []
    assert recalled(memory, "answers tone") == []  # no agent: user and shared facts only
    assert [f.key for f in memory.facts(agent="Writer")] == ["tone", "timezone"]
    assert [f.key for f in memory.facts(agent="Refunds")] == ["timezone"]
    # Another user's instance cannot read the Writer's notes about this user either.
    other = memory.for_user(users("ana"))
    assert recalled(other, "answers tone", agent="Writer") == []
    with pytest.raises(ValueError, match="needs agent="):
        memory.remember("tone", "x", "agent")
    with pytest.raises(ValueError, match="for scope='agent' only"):
        memory.remember("tone", "x", "user", agent="Writer")


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_superseded_value_is_never_recalled_and_history_keeps_it(backend_url, users):
    memory = LongTermMemory(backend_url, user_id=users("ming"))
    memory.remember("city", "Lyon", text="I live in Lyon.")
    memory.remember("city", "Paris", text="I moved to Paris.")
    # "Lyon" is in the query: the old value must still not come back as current.
    assert recalled(memory, "Is my city still Lyon?", k=10) == [("city", "Paris")]
    assert recalled(memory, "I live in Lyon", k=10) == []  # the old text is not searched
    assert [f.value for f in memory.facts()] == ["Paris"]
    history = memory.history("city")
    assert [(f.value, f.version) for f in history] == [("Lyon", 1), ("Paris", 2)]
    assert history[0].text == "I live in Lyon."
    # Saying the current value again changes nothing.
    again = memory.remember("city", "Paris", text="Paris, as I said.")
    assert again.version == 2 and len(memory.history("city")) == 2


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_forget_removes_a_fact_from_recall_and_purge_erases_it(backend_url, users):
    memory = LongTermMemory(backend_url, user_id=users("ming"))
    memory.remember("address", "12 Rue Neuve", text="My address is 12 Rue Neuve")
    memory.remember("phone", "555-0142")
    assert memory.forget("address") is True
    assert recalled(memory, "What is my address?") == []
    assert [f.key for f in memory.facts()] == ["phone"]
    assert memory.forget("address") is False  # nothing current to forget
    history = memory.history("address")
    assert [(f.value, f.forgotten) for f in history] == [("12 Rue Neuve", False), ("", True)]
    # Remembered again after a forget: current again, versions go on counting.
    assert memory.remember("address", "3 Quai Sud").version == 3
    assert recalled(memory, "address") == [("address", "3 Quai Sud")]
    assert memory.forget("address", purge=True) is True
    assert memory.history("address") == [] and recalled(memory, "address") == []
    assert [f.key for f in memory.facts()] == ["phone"]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_shared_facts_need_a_trusted_writer_and_every_user_reads_them(backend_url, users):
    ming = LongTermMemory(backend_url, user_id=users("ming"))
    with pytest.raises(PermissionError, match="trusted"):
        ming.remember("returns_policy", "30 days", "shared")
    with pytest.raises(PermissionError, match="trusted"):
        ming.forget("returns_policy", "shared")
    policy = f"{fresh_id('days')} days"  # the shared namespace outlives this test
    admin = LongTermMemory(backend_url, user_id="admin", trusted=True)
    fact = admin.remember("returns_policy", policy, "shared", source_agent="seed-script")
    assert (fact.scope, fact.user_id) == ("shared", None)
    for reader in (ming, ming.for_user(users("ana"))):
        assert ("returns_policy", policy) in recalled(reader, "returns policy days", k=10)
    assert admin.forget("returns_policy", "shared") is True
    assert ("returns_policy", policy) not in recalled(ming, "returns policy", k=10)


ODD_NAMES = [
    "",
    "a\x00b",
    "x" * (MAX_NAME_BYTES + 1),
    "é" * (MAX_NAME_BYTES // 2 + 1),  # under the limit in characters, over it in bytes
    "conv-\ud800",
    None,
    42,
]


@pytest.mark.parametrize("odd", ODD_NAMES, ids=lambda v: repr(v)[:20])
def test_odd_user_ids_agent_names_and_keys_are_refused(odd):
    with pytest.raises(ValueError):
        LongTermMemory("memory://ltm-odd", user_id=odd)
    memory = LongTermMemory("memory://ltm-odd", user_id="ming")
    with pytest.raises(ValueError):
        memory.remember(odd, "v")
    with pytest.raises(ValueError):
        memory.remember("k", "v", "agent", agent=odd)
    with pytest.raises(ValueError):
        memory.recall("q", agent=odd) if odd is not None else memory.recall("q", k=-1)
    assert memory.facts() == []  # nothing was written by any refused call


def test_odd_values_scopes_and_k_are_refused():
    memory = LongTermMemory("memory://ltm-odd-values", user_id="ming")
    for value in ("", "   ", "a\x00b", "x" * (64 * 1024 + 1), 7):
        with pytest.raises(ValueError):
            memory.remember("k", value)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scope must be one of"):
        memory.remember("k", "v", "global")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="source text"):
        memory.remember("k", "v", text="a\x00b")
    with pytest.raises(ValueError, match="k must be"):
        memory.recall("q", k=True)
    assert memory.facts() == []


# Ids that would collide if namespaces were built naively: "." is the stores' separator,
# "*", "?", "%" and "_" are GLOB/LIKE wildcards, "~" is our own escape character.
CLASHING_IDS = ["bob", "bob.evil", "bob.*", "bo_", "bo%", "b?b", "bob~2eevil", "Bob", "bob "]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_user_ids_with_separators_or_wildcards_never_read_each_other(backend_url):
    suffix = fresh_id("run")
    ids = [f"{suffix}{u}" if i % 2 else f"{u}{suffix}" for i, u in enumerate(CLASHING_IDS)]
    ids += [f"{suffix}.bob", f"{suffix}"]  # "<x>.bob" would be a namespace below "<x>"
    for user in ids:
        LongTermMemory(backend_url, user_id=user).remember("secret", f"owned by {user!r}")
        LongTermMemory(backend_url, user_id=user).remember(
            "note", f"agent note of {user!r}", "agent", agent="a.b"
        )
    assert len({namespace_label(u) for u in ids}) == len(ids)
    for user in ids:
        memory = LongTermMemory(backend_url, user_id=user)
        assert [f.value for f in memory.facts()] == [f"owned by {user!r}"]
        assert [f.value for f in memory.recall("secret owned", k=50)] == [f"owned by {user!r}"]
        assert [f.value for f in memory.facts(agent="a.b")] == [
            f"agent note of {user!r}",
            f"owned by {user!r}",
        ]
        assert memory.facts(agent="a") == memory.facts()


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_a_write_with_a_turn_id_applied_again_writes_nothing(backend_url, users):
    memory = LongTermMemory(backend_url, user_id=users("ming"))
    first = memory.remember("city", "Lyon", conversation_id="c1", turn_id="t1")
    assert memory.remember("city", "Lyon", conversation_id="c1", turn_id="t1") == first
    memory.remember("city", "Paris", conversation_id="c2", turn_id="t1")  # a later turn
    # A late replay of c1/t1 (say after a crash) must not bring Lyon back.
    assert memory.remember("city", "Lyon", conversation_id="c1", turn_id="t1") == first
    assert recalled(memory, "city") == [("city", "Paris")]
    assert [f.value for f in memory.history("city")] == ["Lyon", "Paris"]
    # The same turn id in another conversation is another write.
    memory.remember("city", "Lyon", conversation_id="c3", turn_id="t1")
    assert [f.value for f in memory.history("city")] == ["Lyon", "Paris", "Lyon"]
    # A forget with a turn id is idempotent too.
    assert memory.forget("city", conversation_id="c4", turn_id="t9") is True
    memory.remember("city", "Nice", conversation_id="c5", turn_id="t1")
    assert memory.forget("city", conversation_id="c4", turn_id="t9") is False
    assert recalled(memory, "city") == [("city", "Nice")]


@pytest.mark.parametrize(
    "backend_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
@pytest.mark.slow
def test_reapplying_a_write_after_kill_9_leaves_one_history_entry(backend_url, users):
    ming = users("ming")
    killed = worker(
        backend_url, ming, "remember", "dog_name", "Rex", "c1", "t1", "kill", check=False
    )
    assert killed.returncode == -9, killed.stderr[-3000:]
    # The turn is retried by a new process after the crash, then by this one.
    worker(backend_url, ming, "remember", "dog_name", "Rex", "c1", "t1")
    memory = LongTermMemory(backend_url, user_id=ming)
    memory.remember("dog_name", "Rex", conversation_id="c1", turn_id="t1", text="Rex")
    [entry] = memory.history("dog_name")
    assert (entry.value, entry.turn_id, entry.version) == ("Rex", "t1", 1)
    assert recalled(memory, "dog") == [("dog_name", "Rex")]
    # Another conversation renames the dog; a late retry of c1/t1 must not undo it.
    worker(backend_url, ming, "remember", "dog_name", "Max", "c2", "t1")
    worker(backend_url, ming, "remember", "dog_name", "Rex", "c1", "t1")
    assert [f.value for f in memory.history("dog_name")] == ["Rex", "Max"]
    assert recalled(memory, "dog") == [("dog_name", "Max")]


def _fail_inserts_of(url: str, key: str) -> None:
    """A trigger that aborts any insert of ``key`` into the store table: a fault (disk full,
    a constraint) in the second statement of a write, after its first ran."""
    if url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(url.split(":///", 1)[1]) as conn:
            conn.execute(
                f"CREATE TRIGGER fail_{key.replace('-', '_')} BEFORE INSERT ON store "
                f"WHEN NEW.key = '{key}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        name = f"fail_{key.replace('-', '_')}"
        conn.execute(
            f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN "
            f"IF NEW.key = '{key}' THEN RAISE EXCEPTION 'injected failure'; END IF; "
            "RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        conn.execute(
            f"CREATE TRIGGER {name} BEFORE INSERT OR UPDATE ON store "
            f"FOR EACH ROW EXECUTE FUNCTION {name}()"
        )


@pytest.mark.parametrize(
    "backend_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_write_that_fails_halfway_commits_nothing(backend_url, users):
    store = open_long_term_store(backend_url)
    namespace = ("swarmgraph", "ltm-test", namespace_label(users("ming")))
    store.write([PutOp(namespace, "first", {"v": 1})])
    boom = fresh_id("boom")
    _fail_inserts_of(backend_url, boom)
    # Deletes run before inserts: the delete of "first" ran when the insert failed.
    with pytest.raises(Exception, match="injected failure"):
        store.write([PutOp(namespace, "first", None), PutOp(namespace, boom, {"v": 2})])
    assert store.store.get(namespace, "first") is not None
    assert store.store.get(namespace, boom) is None


@pytest.mark.slow
def test_processes_opening_a_new_sqlite_file_at_once_all_migrate_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    starts = [
        subprocess.Popen(
            [sys.executable, str(WORKER), url, f"u{i}", "open"],
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for process in starts:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-3000:]
    memory = LongTermMemory(url, user_id="u0")
    memory.remember("k", "v")
    assert recalled(memory, "k") == [("k", "v")]


@pytest.mark.parametrize("backend_url", STORES, indirect=True)
def test_recall_ranks_the_planted_fact_above_distractors(backend_url, users):
    memory = LongTermMemory(backend_url, user_id=users("ming"))
    memory.remember("dog_name", "Rex", text="My dog is called Rex.")
    memory.remember("dog_vet", "Dr Moreau", text="My dog's vet is Dr Moreau.")
    memory.remember("neighbour_dog", "Bruno", text="The neighbour's dog Bruno barks all night.")
    memory.remember("city", "Lyon", text="I live in Lyon.")
    memory.remember("employer", "Acme", text="I work at Acme.")
    memory.remember("phone", "555-0142", text="My phone number is 555-0142.")
    assert recalled(memory, "Who is the vet of my dog?")[0] == ("dog_vet", "Dr Moreau")
    assert recalled(memory, "What is my dog called?")[0] == ("dog_name", "Rex")
    assert recalled(memory, "Where do I live?") == [("city", "Lyon")]
    assert recalled(memory, "phone number") == [("phone", "555-0142")]
    assert len(memory.recall("dog", k=2)) == 2
    # Deterministic: equal scores break by newest first, then key.
    assert recalled(memory, "dog", k=3) == recalled(memory, "dog", k=3)
    # No searchable word in the query: the newest facts.
    assert recalled(memory, "what is it?", k=1) == [("phone", "555-0142")]
    assert memory.recall("dog", k=0) == []


def test_urls_follow_the_session_rules():
    with pytest.raises(ValueError, match="memory://, sqlite:/// or postgresql://") as error:
        LongTermMemory("redis://:hunter2@localhost:6379/0", user_id="u")
    assert "hunter2" not in str(error.value) and "***" in str(error.value)
    with pytest.raises(ValueError, match="in-memory SQLite"):
        LongTermMemory("sqlite://", user_id="u")
    memory = LongTermMemory("memory://ltm-urls", user_id="u")
    assert repr(memory) == "LongTermMemory('memory://ltm-urls', user_id='u')"


def test_the_default_url_is_the_sessions_default_store(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGRAPH_DB", f"sqlite:///{tmp_path / 'default.db'}")
    LongTermMemory(user_id="u").remember("k", "v")
    assert (tmp_path / "default.db").exists()
    assert recalled(LongTermMemory(f"sqlite:///{tmp_path / 'default.db'}", user_id="u"), "k") == [
        ("k", "v")
    ]


@pytest.mark.postgres
def test_a_wrong_postgres_database_fails_with_the_password_masked(postgres_url):
    base, _, _ = postgres_url.rpartition("/")
    url = base.replace("postgres@", "postgres:s3cret-pw@") + "/no_such_database_ltm"
    with pytest.raises(StorageUnavailable) as error:
        LongTermMemory(url, user_id="u")
    assert "s3cret-pw" not in str(error.value) and "no_such_database_ltm" in str(error.value)


def test_embeddings_use_the_stores_vector_index_on_memory_urls():
    # DeterministicFakeEmbedding: an offline stand-in (a vector per distinct text, no
    # meaning), so the only similarity it shows is exact text: enough to prove the store's
    # index, not the embedding model, does the ranking.
    from langchain_core.embeddings import DeterministicFakeEmbedding

    embeddings = DeterministicFakeEmbedding(size=16)
    url = f"memory://{fresh_id('ltm-vectors')}"
    memory = LongTermMemory(url, user_id="ming", embeddings=embeddings)
    assert memory.store.index_config["dims"] == 16
    memory.remember("dog_name", "Rex")
    memory.remember("city", "Lyon")
    memory.remember("phone", "555-0142")
    assert recalled(memory, "city: Lyon", k=1) == [("city", "Lyon")]
    assert recalled(memory, "phone: 555-0142", k=1) == [("phone", "555-0142")]
    memory.forget("city")
    assert ("city", "Lyon") not in recalled(memory, "city: Lyon", k=5)
    other = LongTermMemory(url, user_id="ana")  # the store's embeddings, another user
    assert other.recall("dog_name: Rex") == []
    # equal embeddings share the store (tests/test_long_term_vector.py: SQLite, Postgres)
    again = LongTermMemory(url, user_id="x", embeddings=DeterministicFakeEmbedding(size=16))
    assert again.store is memory.store
    with pytest.raises(ValueError, match="already open"):
        LongTermMemory(url, user_id="x", embeddings=DeterministicFakeEmbedding(size=8))
