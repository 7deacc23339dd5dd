"""The handoff policies: one schema builder, the seeds' tool names, what a call becomes."""

import pytest

from handoffs import policies
from handoffs.package import HandoffPackage
from handoffs.policies import (
    AGENT_HANDOFF_TOOL_NAME,
    HANDOFF_TOOL_NAME,
    AgentHandoff,
    SpecialistHandoff,
    Transfer,
)


def test_the_tool_names_are_the_seeds():
    assert (HANDOFF_TOOL_NAME, AGENT_HANDOFF_TOOL_NAME) == ("handoff_to_specialist", "handoff")
    assert SpecialistHandoff().name == HANDOFF_TOOL_NAME and AgentHandoff(("b",)).name == AGENT_HANDOFF_TOOL_NAME


@pytest.mark.parametrize(("policy", "field"), [(SpecialistHandoff(("a", "c", "b")), "receiver"),
                                               (AgentHandoff(("c", "b")), "name")])
def test_both_tools_come_from_the_one_builder(policy, field, monkeypatch):
    built = []
    real = policies.make_handoff_schema
    monkeypatch.setattr(policies, "make_handoff_schema", lambda *args: built.append(args[0]) or real(*args))
    schema = policy.schema("a")
    assert built == [policy.name] and schema["name"] == policy.name
    assert schema["input_schema"]["properties"][field]["enum"] == ["c", "b"]  # the sender left out, order kept
    assert field in schema["input_schema"]["required"]


def test_no_target_no_tool():
    assert SpecialistHandoff(("a",)).schema("a") is None and AgentHandoff(()).schema("a") is None


def test_what_a_call_becomes():
    package = SpecialistHandoff(("a", "b")).accept("a", {"receiver": "b", "reason": "r", "task": "t"})
    assert package == HandoffPackage("a", "b", "r", "t", {})
    assert AgentHandoff(("b",)).accept("a", {"name": "b", "reason": "r"}) == Transfer("b", "r", {"name": "b",
                                                                                                  "reason": "r"})
    assert AgentHandoff(("b",)).accept("a", {"name": "z"}) == (
        "Handoff fallido: no existe el agente 'z'. Agentes disponibles: ['b']")
    assert SpecialistHandoff(("a", "b")).accept("a", {"receiver": "b"}).startswith("Handoff rechazado: ")
