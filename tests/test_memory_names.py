"""``swarmgraph.memory``'s public names come from one list (``_EXPORTS``): ``__all__`` is
derived from it, every name resolves to what its module defines, the type checkers' imports
match it, and what left the namespace is still importable from its own module."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import swarmgraph.memory as memory

INIT = Path(__file__).resolve().parents[1] / "memory" / "__init__.py"


def test_all_is_the_export_list_and_every_name_resolves_to_its_module():
    assert memory.__all__ == list(memory._EXPORTS)
    # issue 23 added 3; issue 28 the two retrieving memory models (RetrievalMemory, HybridMemory);
    # issue 29/31: close_stores (open_store's pair) and UnknownAgentError (its siblings were);
    # issue 39: OpenFactExtractor (FactExtractor's open sibling)
    assert len(memory.__all__) == len(set(memory.__all__)) <= 25
    for name, module in memory._EXPORTS.items():
        # The lazy name first: importing long_term_hooks' module sets the package attribute
        # of the same name to the module (Python's import system does), hiding the function.
        exported = getattr(memory, name)
        defined = getattr(importlib.import_module(module, "swarmgraph.memory"), name)
        assert exported is defined, name
    assert set(memory.__all__) <= set(dir(memory))


def test_the_type_checkers_imports_are_the_same_list():
    tree = ast.parse(INIT.read_text())
    block = next(
        n
        for n in tree.body
        if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    imported = {
        alias.asname or alias.name: "." + (node.module or "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == memory._EXPORTS


def test_names_that_left_the_namespace_stay_importable_from_their_modules():
    from swarmgraph.memory.chat_history import StoredChatHistory
    from swarmgraph.memory.context_json import DEFAULT_SIZE_LIMIT, decode_context, encode_context
    from swarmgraph.memory.context_store import ContextStore
    from swarmgraph.memory.errors import (
        ContextDepthWarning,
        ContextSizeWarning,
        RecordExists,
        TurnInterrupted,
        UnknownAgentWarning,
    )
    from swarmgraph.memory.ids import check_conversation_id
    from swarmgraph.memory.policies import drop_orphan_tool_messages
    from swarmgraph.memory.session import as_messages, rebase_context
    from swarmgraph.memory.store import Record, Snapshot, TurnWrite, Window

    assert rebase_context({"a": 1}, {}, {"b": 2}) == {"a": 1, "b": 2}
    assert check_conversation_id("c") == "c" and DEFAULT_SIZE_LIMIT > 0
    assert all([StoredChatHistory, decode_context, encode_context, ContextStore, RecordExists])
    assert all([ContextDepthWarning, ContextSizeWarning, TurnInterrupted, UnknownAgentWarning])
    assert all([drop_orphan_tool_messages, as_messages, Record, Snapshot, TurnWrite, Window])
    assert not hasattr(memory, "merge_context")  # the engine's reducer keeps that name
