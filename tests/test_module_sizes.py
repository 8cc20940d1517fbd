"""memory/ stays in modules a reader takes in at once (issue 29: none over 500 lines); a
module that grows past it is split by what it holds, not trimmed of its comments."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 500
MODULES = sorted((ROOT / "memory").rglob("*.py"))


def test_memory_has_modules_to_check() -> None:
    assert len(MODULES) > 20


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_memory_module_is_over_the_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, f"{path.relative_to(ROOT)} has {lines} lines (limit {LIMIT}): split it"
