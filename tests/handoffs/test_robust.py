"""The robust runner: mixed turns, failing tools, bad handoffs - one documented policy each."""

import reservo_tools
from handoffs import HANDOFF_TOOL_NAME, run_agent_robust, text_block, tool_use_block, turn, unanswered_tool_uses
from handoffs.examples import HANDOFF_INPUT
from handoffs.examples.reservo import SPECIALISTS

TOOLS = SPECIALISTS["booking_agent"]["tools"]
QUOTE = tool_use_block("q", "get_quote", {"room": "Focus", "tier": "pro", "hours": 3})
HANDOFF = tool_use_block("h", HANDOFF_TOOL_NAME, HANDOFF_INPUT)
DONE = turn(text_block("listo"))


def results(messages, index):
    return {b["tool_use_id"]: b for b in messages[index]["content"]}


def test_mixed_turn_runs_the_domain_tool_then_stops_at_the_handoff():
    final, messages, package = run_agent_robust("?", [turn(QUOTE, HANDOFF)], TOOLS, "booking_agent", SPECIALISTS)
    assert final is None and package.receiver == "policy_agent"
    answered = results(messages, 2)
    assert answered["q"]["content"] == "{'price_cents': 6000}"
    assert answered["h"]["content"] == "Handoff aceptado: policy_agent es ahora dueño de la tarea."
    assert unanswered_tool_uses(messages) == []


def test_handoff_first_then_domain_tool_is_the_same_policy():
    _, messages, package = run_agent_robust("?", [turn(HANDOFF, QUOTE)], TOOLS, "booking_agent", SPECIALISTS)
    assert package is not None
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["h", "q"]


def test_second_handoff_in_a_turn_is_refused():
    other = tool_use_block("h2", HANDOFF_TOOL_NAME, {**HANDOFF_INPUT, "receiver": "pricing_agent"})
    _, messages, package = run_agent_robust("?", [turn(HANDOFF, other)], TOOLS, "booking_agent", SPECIALISTS)
    assert package.receiver == "policy_agent"
    refused = results(messages, 2)["h2"]
    assert refused["is_error"] is True
    assert "ya hizo handoff a policy_agent" in refused["content"]


def test_failing_tool_reaches_the_model_as_an_error_and_the_loop_goes_on():
    bad = turn(tool_use_block("x", "get_quote", {"room": "Attic", "tier": "pro", "hours": 1}))
    final, messages, package = run_agent_robust("?", [bad, DONE], TOOLS, "booking_agent", SPECIALISTS)
    assert final == DONE and package is None
    error = results(messages, 2)["x"]
    assert error["is_error"] is True
    assert error["content"].startswith("ReservoError: sala desconocida 'Attic'")


def test_unknown_tool_is_an_error_result():
    final, messages, _ = run_agent_robust("?", [turn(tool_use_block("x", "book_flight", {})), DONE],
                                          TOOLS, "booking_agent", SPECIALISTS)
    assert final == DONE
    assert "Tool desconocida 'book_flight'" in results(messages, 2)["x"]["content"]


def test_bad_handoff_goes_back_to_the_model_which_corrects_it():
    wrong = tool_use_block("h1", HANDOFF_TOOL_NAME, {"receiver": "legal_agent", "task": "t"})
    final, messages, package = run_agent_robust("?", [turn(wrong), turn(HANDOFF)], TOOLS, "booking_agent", SPECIALISTS)
    refused = results(messages, 2)["h1"]
    assert refused["is_error"] is True
    assert "falta el campo obligatorio 'reason'" in refused["content"]
    assert "receptor desconocido 'legal_agent'" in refused["content"]
    assert final is None and package.receiver == "policy_agent"


def test_handoff_to_self_is_refused():
    selfish = tool_use_block("h", HANDOFF_TOOL_NAME, {**HANDOFF_INPUT, "receiver": "booking_agent"})
    final, messages, package = run_agent_robust("?", [turn(selfish), DONE], TOOLS, "booking_agent", SPECIALISTS)
    assert package is None and "no puede hacerse handoff a sí mismo" in results(messages, 2)["h"]["content"]


def test_handoff_in_the_tool_registry_is_still_intercepted():
    tools = {**TOOLS, HANDOFF_TOOL_NAME: lambda **kw: "should never run"}
    _, messages, package = run_agent_robust("?", [turn(HANDOFF)], tools, "booking_agent", SPECIALISTS)
    assert package is not None
    assert "should never run" not in str(messages)


def test_domain_side_effects_of_a_mixed_turn_happen_once():
    book = tool_use_block("b", "book_room", {"room": "Focus", "tier": "pro", "hours": 3})
    run_agent_robust("?", [turn(book, HANDOFF)], TOOLS, "booking_agent", SPECIALISTS)
    assert reservo_tools.cancel_booking("BK-0001")["status"] == "cancelled"


def test_a_live_model_is_offered_the_tools_and_the_handoff():
    seen = {}

    def live(messages, tools, system):
        seen.update(tools=[t["name"] for t in tools], system=system,
                    receivers=tools[-1]["input_schema"]["properties"]["receiver"]["enum"])
        return turn(text_block("listo"))

    run_agent_robust("?", live, TOOLS, "booking_agent", SPECIALISTS, system="be brief")
    assert seen["tools"] == ["list_rooms", "get_quote", "book_room", "cancel_booking", HANDOFF_TOOL_NAME]
    assert seen["receivers"] == ["policy_agent", "pricing_agent"]
    assert seen["system"] == "be brief"
