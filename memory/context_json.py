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
from collections.abc import Iterable
from typing import Any

from .errors import ContextDepthWarning, ContextSerializationError, ContextSizeWarning

#: Above this many bytes of JSON, saving context warns (configurable per store / Session).
DEFAULT_SIZE_LIMIT = 64 * 1024
#: The deepest nesting of lists and dicts context may hold (the context dict itself is level
#: 1). Python's recursion limit is ~1000 frames, and every run deep-copies its context
#: (several frames per level), so a value a few hundred levels deep could be saved and then
#: break every later turn; key fields never need more than a handful of levels.
MAX_DEPTH = 100


def _check(value: Any, path: str, depth: int = 1) -> None:
    if value is None or isinstance(value, (bool, str, int)):
        return
    if isinstance(value, (dict, list, tuple)) and depth > MAX_DEPTH:
        raise ContextSerializationError(
            path, value, f"it is nested deeper than {MAX_DEPTH} levels of lists/dicts"
        )
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
            _check(item, f"{path}[{key!r}]", depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]", depth + 1)
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


class PrunedContext(dict):
    """A loaded context that a stored key was left out of (:func:`decode_context`): it is not
    what is stored, so a turn that leaves it as loaded still saves it, dropping that key."""


def decode_context(encoded: str | None) -> dict:
    """Stored JSON text back to a dict (``{}`` for nothing stored).

    A stored value nested deeper than :data:`MAX_DEPTH` (saved by an earlier version, which
    had no limit) would make every later turn fail; its key is left out, with a
    :class:`ContextDepthWarning` naming it, so the conversation goes on (the next context
    save stores it without that key).

    Example:
        >>> decode_context('{"order_id":7}'), decode_context(None)
        ({'order_id': 7}, {})
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     decode_context('{"ok":1,"deep":' + "[" * 150 + "]" * 150 + "}")
        {'ok': 1}
    """
    if not encoded:
        return {}
    try:
        value = json.loads(encoded)
    except RecursionError:
        _warn_depth("the whole stored context")
        return PrunedContext()
    # A key nested MAX_DEPTH deep needs that many opening brackets inside the top-level
    # object: without them (every context a current version saved) skip the walk.
    if encoded.count("[") + encoded.count("{") <= MAX_DEPTH:
        return value
    too_deep = [k for k, item in value.items() if _depth(item) >= MAX_DEPTH]
    for key in too_deep:
        del value[key]
        _warn_depth(f"context_variables[{key!r}]")
    return PrunedContext(value) if too_deep else value


def _depth(value: Any) -> int:
    """Nesting depth of lists/dicts in ``value`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        items: Iterable[Any]
        if isinstance(item, dict):
            items = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:  # deeper than the limit is all we need to know
            stack.extend((child, depth + 1) for child in items)
    return deepest


def _warn_depth(what: str) -> None:
    warnings.warn(
        f"{what} is nested deeper than {MAX_DEPTH} levels and was left out of the loaded "
        "context (stored by an earlier version; the next context save drops it)",
        ContextDepthWarning,
        stacklevel=3,
    )
