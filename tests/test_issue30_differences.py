"""docs/differences_from_swarm.md lists what differs from OpenAI Swarm; each entry is pinned
by tests. This names them, entry by entry: an entry added or removed without its tests, or a
named test that no longer exists, fails here (the tests themselves run in their own files,
most of them against ``openai-swarm`` 0.1.1 in tests/test_swarm_differential.py)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from swarmgraph import Agent, ScriptedChatModel, build_swarm_graph

ROOT = Path(__file__).resolve().parents[1]
DIFF = "test_swarm_differential.py"

#: The first words of each entry -> the tests that fail if it stops being true.
PINNED: dict[str, list[str]] = {
    "Bad tool calls don't crash the run.": [
        f"{DIFF}::test_malformed_arguments_are_an_error_streamed_or_not",
        f"{DIFF}::test_unknown_tool_model_override_and_history",
        f"{DIFF}::test_a_tool_that_raises_is_answered_where_swarm_raises",
        f"{DIFF}::test_empty_argument_text_is_no_arguments_where_swarm_raises",
        f"{DIFF}::test_null_arguments_are_answered_as_not_an_object_where_swarm_raises",
    ],
    "Handoff loops stop.": [
        "test_engine_behaviour.py::test_handoff_ping_pong_stops_with_a_clear_error_naming_the_agents",
    ],
    "A run that never answers stops.": [
        "test_engine_behaviour.py::test_a_run_that_never_answers_stops_with_a_step_limit_error_holding_the_run",
    ],
    "Agents compare by identity.": [
        f"{DIFF}::test_agents_with_equal_fields_are_two_agents_where_swarms_are_equal",
        "test_swarm_parity.py::test_any_agent_name_works_and_keeps_its_real_name",
        "test_swarm_parity.py::test_two_agents_with_one_name_each_run_with_their_own_instructions_and_tools",
        "test_session.py::test_a_conversation_resumes_the_right_one_of_two_agents_sharing_a_name",
    ],
    "`run_demo_loop` keeps the conversation's context.": [
        "test_cli_user_agents.py::test_run_demo_loop_keeps_swarms_arguments_and_the_conversation",
    ],
    "Approval-marked tools stop the run.": [
        "test_control.py::test_approval_stops_before_the_marked_tool_and_resumes_statelessly",
    ],
    "Budgets, routes, `CALLER`, `history=` views,": [
        f"{DIFF}::test_tool_results_are_streamed_only_when_asked_after_the_reply_that_called_them",
        f"{DIFF}::test_max_turns_and_execute_tools",
    ],
    "`build_swarm_graph(context_schema=...)` types `context_variables`": [
        "test_issue30_differences.py::test_a_dataclass_as_context_schema_is_refused_naming_runtime_schema",
        "test_engine_behaviour.py::test_runtime_schema_is_langgraphs_context_schema_passed_through",
    ],
    "Arguments that cannot fit are refused.": [
        f"{DIFF}::test_tool_arguments_reach_the_tool_as_the_model_sent_them",
        f"{DIFF}::test_arguments_that_cannot_fit_are_refused_where_swarm_passes_them_on",
    ],
    "Several handoffs in one reply": [
        f"{DIFF}::test_two_handoffs_in_one_reply_every_tool_runs_and_the_last_agent_wins",
        "test_handoffs_in_one_reply.py::test_under_first_a_later_transfer_is_refused_before_it_runs",
        "test_handoffs_in_one_reply.py::test_under_first_a_handoff_no_one_could_foresee_runs_and_says_it_was_not_taken",
    ],
    "A typed context takes `Result` updates at once.": [
        f"{DIFF}::test_result_context_is_applied_after_every_call_of_the_reply",
        "test_swarm_parity.py::test_a_later_call_of_the_reply_sees_a_result_update_only_with_a_typed_context",
    ],
    "Tool schemas go further": [
        f"{DIFF}::test_postponed_annotations_give_real_types",
        f"{DIFF}::test_untyped_parameters_gain_docstring_descriptions",
    ],
    "Tool signatures Swarm cannot call": [
        f"{DIFF}::test_a_star_args_tool_is_refused_before_any_request_where_swarm_fails_on_the_call",
        f"{DIFF}::test_kwargs_is_left_out_of_the_schema_and_extra_arguments_reach_it",
        f"{DIFF}::test_a_partial_is_a_tool_where_swarm_cannot_describe_it",
        f"{DIFF}::test_an_async_tool_is_awaited_where_swarm_sends_the_coroutine_repr",
    ],
    "Dict, list and tuple tool results are sent as JSON": [
        f"{DIFF}::test_dict_and_list_results_are_sent_as_json",
        f"{DIFF}::test_other_results_are_str_as_in_swarm",
        "test_langchain_tools.py::test_a_tool_that_returns_command_goto_an_agent_name_hands_off",
        "test_tool_commands.py::test_a_commands_update_answers_the_call_and_writes_the_state",
        "test_tool_commands.py::test_a_command_a_step_cannot_apply_is_an_error_the_model_reads",
        "test_langgraph_swarm_handoffs.py::test_a_create_handoff_tool_call_hands_off_on_the_compiled_graph",
    ],
    "`functions` may hold LangChain tools": [
        "test_langchain_tools.py::test_langchain_tools_run_on_swarm_run_with_the_live_context",
        "test_langchain_tools.py::test_the_model_is_told_the_tools_schema_without_context_variables_and_cannot_forge_it",
    ],
    "Message dicts have the fields of Swarm's time": [
        f"{DIFF}::test_sparse_history_messages_are_sent_in_full_shape",
        f"{DIFF}::test_empty_content_beside_tool_calls_is_kept_as_swarm_keeps_it",
        f"{DIFF}::test_a_bare_null_reply_comes_back_as_empty_text",
        f"{DIFF}::test_default_model_keeps_empty_content_beside_tool_calls_as_swarm_does",
        f"{DIFF}::test_extra_keys_on_input_messages_are_sent_as_swarm_sends_them",
        "test_messages.py::test_an_input_messages_own_keys_ride_along_and_go_back_out",
        "test_openai_paths.py::test_default_path_sends_openais_fields_only_and_no_tool_choice_without_tools",
        f"{DIFF}::test_an_openai_message_object_in_the_history_is_sent_as_swarm_sends_it",
    ],
    "`tool_choice` is sent as OpenAI accepts it.": [
        f"{DIFF}::test_openai_tool_choices_are_sent_as_swarm_sends_them",
        f"{DIFF}::test_a_bare_tool_name_as_tool_choice_is_sent_as_openai_accepts_it",
        f"{DIFF}::test_tool_choice_without_functions_is_sent_as_swarm_sends_it",
        "test_openai_paths.py::test_default_path_sends_openais_fields_only_and_no_tool_choice_without_tools",
        "test_client_model.py::test_tool_choice_is_sent_as_openai_accepts_it",
        "test_client_model.py::test_tool_choice_naming_no_bound_tool_is_a_clear_error",
    ],
    "A streamed run ends with the same `Response` as a non-streamed one.": [
        f"{DIFF}::test_streamed_events_match_delta_for_delta",
        f"{DIFF}::test_streamed_response_has_the_non_streamed_shape",
        f"{DIFF}::test_streamed_tool_call_reply_opens_with_null_content",
        f"{DIFF}::test_default_model_yields_a_null_opening_of_a_tool_call_reply_as_swarm_does",
    ],
    "What the default model is sent.": [
        "test_openai_paths.py::test_default_path_sends_assistant_messages_without_a_name_as_swarm_does",
        "test_client_model.py::test_langchains_provider_model_names_resolve_as_create_agent_reads_them",
    ],
    "Streamed usage.": [
        "test_client_model.py::test_streaming_with_dict_chunks",
        "test_client_model.py::test_swarm_client_path_streams_with_swarms_keys_only",
    ],
    "`debug=True`": [
        f"{DIFF}::test_debug_output",
        "test_swarm_parity.py::test_debug_prints_plain_message_dicts",
    ],
    "A stored turn is never run twice.": [
        "test_turn_ids.py::test_turn_ids_are_generated_and_a_stored_one_is_never_run_again",
        "test_turn_ids.py::test_a_lost_commit_reply_on_postgres_is_retried_exactly_once",
        "test_approval_replays.py::test_a_second_decision_under_the_same_turn_id_is_refused",
    ],
}


def _entries() -> list[str]:
    """Each entry's bold lead, whitespace folded (a lead may wrap onto the next line)."""
    page = (ROOT / "docs" / "differences_from_swarm.md").read_text()
    return [" ".join(lead.split()) for lead in re.findall(r"^- \*\*(.+?)\*\*", page, re.M | re.S)]


def _tests_in(file: str) -> set[str]:
    tree = ast.parse((ROOT / "tests" / file).read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_listed_difference_names_tests_and_no_test_names_a_gone_entry():
    entries = _entries()
    assert len(entries) == len(PINNED) >= 20, entries
    unpinned = [e for e in entries if not any(e.startswith(lead) for lead in PINNED)]
    assert unpinned == [], f"entries with no tests named here: {unpinned}"
    gone = [lead for lead in PINNED if not any(e.startswith(lead) for e in entries)]
    assert gone == [], f"tests named for entries the page no longer has: {gone}"


@pytest.mark.parametrize("lead", list(PINNED))
def test_each_named_test_exists(lead):
    for node in PINNED[lead]:
        file, name = node.split("::")
        assert name in _tests_in(file), f"{lead!r}: no {node}"


def test_a_dataclass_as_context_schema_is_refused_naming_runtime_schema():
    @dataclass
    class Ctx:
        user_id: str

    with pytest.raises(TypeError) as info:
        build_swarm_graph([Agent()], chat_model=ScriptedChatModel(["x"]), context_schema=Ctx)
    assert "pydantic model or a TypedDict" in str(info.value)
    assert "build_swarm_graph(runtime_schema=...)" in str(info.value)
