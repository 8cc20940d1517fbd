"""Per-argument descriptions from a tool's docstring (Google, reST and NumPy style).

Example:
    >>> parse_docstring_args(":param city: Where to look.")
    {'city': 'Where to look.'}
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring_args"]

_GOOGLE_HEADER = re.compile(r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*?\s+)?\*{0,2}(\w+)\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring_args(doc: str | None) -> dict[str, str]:
    """Per-argument descriptions from a Google, reST or NumPy style docstring.

    Example:
        >>> parse_docstring_args('''Find an order.
        ...
        ... Args:
        ...     order_id (int): The order number,
        ...         as printed on the receipt.
        ...     verbose: Say more.
        ...
        ... Returns:
        ...     The order.
        ... ''')
        {'order_id': 'The order number, as printed on the receipt.', 'verbose': 'Say more.'}
        >>> parse_docstring_args(":param str city: Where to look.\\n:type city: str")
        {'city': 'Where to look.'}
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        numpy = line.strip() in ("Parameters", "Other Parameters") and _is_rule(lines, i + 1)
        if _GOOGLE_HEADER.match(line) or numpy:
            i = _read_section(lines, i + (2 if numpy else 1), _indent(line), numpy, found)
            continue
        rest = _REST_PARAM.match(line.strip())
        if rest:
            parts = found.setdefault(rest.group(1), [rest.group(2).strip()])
            i += 1
            # continuation lines are indented under their ":param" line
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > _indent(line):
                parts.append(lines[i].strip())
                i += 1
            continue
        i += 1
    return {name: " ".join(p for p in parts if p) for name, parts in found.items() if any(parts)}


def _is_rule(lines: list[str], i: int) -> bool:
    return i < len(lines) and set(lines[i].strip()) == {"-"}


def _read_section(
    lines: list[str], i: int, base: int, numpy: bool, found: dict[str, list[str]]
) -> int:
    """Reads one Args/Parameters section into ``found``; returns the index after it."""
    entry_indent = base if numpy else None  # NumPy entries sit at the header's indent
    current: list[str] | None = None
    while i < len(lines):
        text = lines[i]
        stripped = text.strip()
        if not stripped:
            i += 1
            continue
        ind = _indent(text)
        if (numpy and _is_rule(lines, i + 1)) or (not numpy and ind <= base):
            break  # the next section starts
        if entry_indent is None:
            entry_indent = ind
        if ind < entry_indent:
            break
        if ind == entry_indent:
            entry = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(stripped)
            if not entry:
                break
            current = found.setdefault(entry.group(1), [])
            if not numpy:
                current.append(entry.group(2).strip())
        elif current is not None:
            current.append(stripped)
        i += 1
    return i
