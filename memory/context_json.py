"""Context variables as JSON: strict encoding with errors that name the key, and a size check.

Context is "the key fields", KB-scale by design (Swarm passes it to every instructions
function and tool). A value JSON cannot hold is refused *before* anything is written, with
the path to it, instead of being silently turned into a string.

Example:
    >>> encode_context({"name": "Ming", "order_id": 7})
    '{"name":"Ming","order_id":7}'
    >>> import datetime
    >>> try:
    ...     encode_context({"when": datetime.date(2024, 5, 1)})
    ... except ContextSerializationError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    context_variables['when'] is a date, which JSON cannot store; ... (e.g. value.isoformat())
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

from .errors import ContextSerializationError, ContextSizeWarning

#: Above this many bytes of JSON, saving context warns (configurable per store / Session).
DEFAULT_SIZE_LIMIT = 64 * 1024


def _check(value: Any, path: str) -> None:
    if value is None or isinstance(value, (bool, str, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ContextSerializationError(path, value, f"{value!r} is not valid JSON")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ContextSerializationError(
                    f"{path}[{key!r}] (the key)", key, "JSON object keys are strings"
                )
            _check(item, f"{path}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
        return
    hint = "e.g. value.isoformat()" if hasattr(value, "isoformat") else ""
    if hasattr(value, "model_dump"):
        hint = "e.g. value.model_dump(mode='json')"
    raise ContextSerializationError(path, value, hint)


def encode_context(context: dict, *, size_limit: int | None = DEFAULT_SIZE_LIMIT) -> str:
    """``context`` as compact JSON text; tuples come back as lists.

    Raises :class:`ContextSerializationError` naming the first value JSON cannot hold and
    warns :class:`ContextSizeWarning` when the text exceeds ``size_limit`` bytes.
    """
    if not isinstance(context, dict):
        raise ContextSerializationError("context_variables", context, "it must be a dict")
    _check(context, "context_variables")
    encoded = json.dumps(context, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: escape it so any database can store it
        encoded = json.dumps(context, separators=(",", ":"), allow_nan=False)
        size = len(encoded)
    if size_limit is not None and size > size_limit:
        warnings.warn(
            f"context_variables is {size} bytes of JSON, above the {size_limit}-byte limit; "
            "context is for small key fields, keep long text in messages",
            ContextSizeWarning,
            stacklevel=3,
        )
    return encoded


def decode_context(encoded: str | None) -> dict:
    """Stored JSON text back to a dict (``{}`` for nothing stored).

    Example:
        >>> decode_context('{"order_id":7}'), decode_context(None)
        ({'order_id': 7}, {})
    """
    return {} if not encoded else json.loads(encoded)
