"""HandoffPackage: the dataclass repr, the JSON round trip and handoff input checks."""

import pytest

from handoffs import HandoffPackage, InvalidPackage, handoff_problems
from handoffs.examples import HANDOFF_INPUT
from handoffs.examples.reservo import HANDOFF_TOOL


def test_repr_is_the_plain_dataclass_repr():
    package = HandoffPackage("a", "b", "why", "do it")
    assert repr(package) == "HandoffPackage(sender='a', receiver='b', reason='why', task='do it', context={})"


def test_json_round_trip_keeps_everything():
    package = HandoffPackage("booking_agent", **HANDOFF_INPUT)
    text = package.to_json()
    assert HandoffPackage.from_json(text) == package
    assert "no-presentación" in text  # unicode kept readable


def test_context_defaults_are_not_shared():
    first, second = HandoffPackage("a", "b", "r", "t"), HandoffPackage("a", "b", "r", "t")
    first.context["x"] = 1
    assert second.context == {}


@pytest.mark.parametrize("data, message", [
    ("[1, 2]", "debe ser un objeto JSON"),
    ("{not json", "no es JSON válido"),
    ('{"sender": "a", "receiver": "b", "reason": "r"}', "task: falta este campo obligatorio"),
    ('{"sender": "a", "receiver": "", "reason": "r", "task": "t"}', "receiver: debe ser un texto no vacío"),
    ('{"sender": "a", "receiver": "b", "reason": "r", "task": "t", "context": []}', "context: debe ser un objeto"),
    ('{"sender": "a", "receiver": "b", "reason": "r", "task": "t", "extra": 1}', "extra: campo desconocido"),
])
def test_from_json_rejects_bad_packages_clearly(data, message):
    with pytest.raises(InvalidPackage, match=message):
        HandoffPackage.from_json(data)


def test_handoff_tool_schema():
    schema = HANDOFF_TOOL["input_schema"]
    assert HANDOFF_TOOL["name"] == "handoff_to_specialist"
    assert schema["required"] == ["receiver", "reason", "task"]
    assert schema["properties"]["receiver"]["enum"] == ["booking_agent", "policy_agent", "pricing_agent"]
    assert "context" not in schema["required"]


def test_handoff_problems():
    receivers = ["policy_agent", "booking_agent"]
    assert handoff_problems(HANDOFF_INPUT, receivers, sender="booking_agent") == []
    assert handoff_problems({"receiver": "policy_agent", "reason": "r"}, receivers) == [
        "falta el campo obligatorio 'task'"]
    assert handoff_problems({**HANDOFF_INPUT, "receiver": "legal_agent"}, receivers) == [
        "receptor desconocido 'legal_agent'; los receptores son ['booking_agent', 'policy_agent']"]
    assert handoff_problems(HANDOFF_INPUT, receivers, sender="policy_agent") == [
        "un agente no puede hacerse handoff a sí mismo ('policy_agent')"]
    assert handoff_problems({**HANDOFF_INPUT, "context": "6000"}, receivers) == [
        "el campo 'context' debe ser un objeto"]
