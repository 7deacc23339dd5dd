"""The lesson runners: run_agent_parallel, run_agent_with_handoff and run_specialist_with_handoff."""

import copy

import pytest

import reservo_tools
from handoffs import (
    HANDOFF_TOOL_NAME,
    MaxTurnsExceeded,
    ScriptExhausted,
    run_agent_parallel,
    run_agent_with_handoff,
    text_block,
    tool_use_block,
    turn,
)
from handoffs.examples import BOOKING_TURNS, COMPOUND_REQUEST, booking_model
from handoffs.examples.reservo import run_specialist_with_handoff

QUOTE = turn(tool_use_block("t1", "get_quote", {"room": "Studio", "tier": "pro", "hours": 2}))
DONE = turn(text_block("Studio pro 2h cuesta 6400 centavos."))
TOOLS = {"get_quote": reservo_tools.get_quote}


def test_run_agent_parallel_returns_final_and_history():
    final, messages = run_agent_parallel("Cotiza Studio pro 2h", [QUOTE, DONE], TOOLS)
    assert final == DONE
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "{'price_cents': 6400}"}]


def test_parallel_tool_calls_keep_their_order():
    both = turn(tool_use_block("a", "get_quote", {"room": "Focus", "tier": "pro", "hours": 3}),
                tool_use_block("b", "get_quote", {"room": "Studio", "tier": "pro", "hours": 2}))
    _, messages = run_agent_parallel("Compara", [both, DONE], TOOLS)
    assert [(r["tool_use_id"], r["content"]) for r in messages[2]["content"]] == [
        ("a", "{'price_cents': 6000}"), ("b", "{'price_cents': 6400}")]


def test_handoff_in_first_block_stops_without_a_tool_result():
    final, messages, package = run_specialist_with_handoff("booking_agent", COMPOUND_REQUEST, booking_model())
    assert final is None
    assert package.receiver == "policy_agent" and package.context["price_cents"] == 6000
    assert messages[-1]["role"] == "assistant"
    assert all(b.get("tool_use_id") != "toolu_02" for m in messages[1:] for b in m["content"])


def test_handoff_without_context_gets_an_empty_dict():
    bare = turn(tool_use_block("h", HANDOFF_TOOL_NAME, {"receiver": "policy_agent", "reason": "r", "task": "t"}))
    _, _, package = run_agent_with_handoff("?", [bare], TOOLS, "booking_agent")
    assert package.context == {}


def test_runners_never_mutate_what_they_are_given():
    script = copy.deepcopy(BOOKING_TURNS)
    history = [{"role": "user", "content": COMPOUND_REQUEST}]
    before = copy.deepcopy((script, history))
    tools = {"get_quote": reservo_tools.get_quote}
    _, messages, package = run_agent_with_handoff(history, script, tools, "booking_agent")
    messages[1]["content"][0]["input"]["hours"] = 99
    package.context["price_cents"] = 0
    assert (script, history) == before


def test_unknown_tool_raises_key_error_like_the_lesson():
    with pytest.raises(KeyError, match="book_flight"):
        run_agent_parallel("?", [turn(tool_use_block("x", "book_flight", {}))], TOOLS)


def test_failing_tool_propagates_in_the_lesson_runner():
    bad = turn(tool_use_block("x", "get_quote", {"room": "Attic", "tier": "pro", "hours": 1}))
    with pytest.raises(reservo_tools.ReservoError, match="sala desconocida"):
        run_agent_with_handoff("?", [bad], TOOLS, "booking_agent")


def test_max_turns():
    loop = [QUOTE] * 5
    with pytest.raises(MaxTurnsExceeded, match=r"llegó a max_turns=3 sin una respuesta final"):
        run_agent_with_handoff("?", loop, TOOLS, "booking_agent", max_turns=3)
    with pytest.raises(MaxTurnsExceeded):
        run_agent_parallel("?", loop, TOOLS, max_turns=2)


def test_exhausted_script_names_the_step():
    with pytest.raises(ScriptExhausted, match="paso 1"):
        run_agent_with_handoff("?", [QUOTE], TOOLS, "booking_agent")


def test_unknown_specialist():
    with pytest.raises(KeyError, match="especialista desconocido 'legal_agent'"):
        run_specialist_with_handoff("legal_agent", "?", [DONE])
