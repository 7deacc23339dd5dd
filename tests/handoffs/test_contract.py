"""The handoff contract: round trip, required fields, enums, time zones, versions and the committed schema."""

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from handoffs.contract import (
    CURRENT_VERSION,
    MAX_CONTRACT_CHARS,
    MAX_ID_CHARS,
    MAX_ITEMS,
    MAX_TEXT_CHARS,
    HandoffContract,
    InvalidContract,
    UnsupportedVersion,
    canonical_json,
    contract_data,
    json_schema,
    parse_contract,
)
from handoffs.errors import UsageError

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "handoff_contract.v1.json"

VALID = {
    "version": 1,
    "handoff_id": "H-1",
    "task_id": "TCK-4812",
    "sender": "triage",
    "receiver": "infra",
    "reason": "pagos degradado: no es error de cliente",
    "next_objective": "restaurar pagos",
    "confirmed_state": "ready",
    "state_version": 3,
    "facts": {"verified": ["502 desde 09:31"], "hypotheses": ["regresión en v2.41"]},
    "work": {"done": ["descartado error de cliente"], "remaining": ["correlacionar con deploy"]},
    "constraints": ["SLA 4h"],
    "evidence": [{"kind": "artifact", "reference": "logs:payments-api#502"}],
    "artifacts": [{"kind": "transcript", "uri": "tickets/TCK-4812/triage.json"}],
    "authority": {"allowed_tools": ["search_logs"], "forbidden_actions": ["rollback_deploy"]},
    "acceptance": ["cobros sin 502 durante 15 min"],
    "recovery": {"on_reject": "escalate", "resume_from": None},
    "escalation": None,
    "created_at": "2026-07-30T09:58:00Z",
    "filters_applied": ["redact_secrets"],
}

REQUIRED = ["handoff_id", "task_id", "sender", "receiver", "reason", "next_objective", "confirmed_state",
            "state_version", "evidence", "authority", "acceptance", "recovery", "created_at"]
SIX_BLOCKS = ["next_objective", "confirmed_state", "evidence", "authority", "acceptance", "recovery"]  # seed 002

LEGACY = {  # the version-0 payload of seed 001: no version, from_agent/to_agent, goal, state{...}, handoff_at
    "task_id": "TCK-4790",  # the class's xz ticket (TCK-4812 is the 502 incident)
    "from_agent": "triage",
    "to_agent": "security",
    "reason": "hallazgo fuera de mi ámbito: posible CVE en dependencia",
    "goal": "evaluar impacto del CVE-2024-3094 en el servicio de pagos",
    "state": {
        "verified_facts": ["xz 5.6.0 presente en la imagen base", "servicio expuesto solo en red interna"],
        "work_done": ["inventario de dependencias", "ticket clasificado"],
        "work_remaining": ["confirmar explotabilidad", "proponer mitigación"],
        "constraints": ["no desplegar cambios hasta aprobación", "SLA: 4h"],
    },
    "artifacts": [{"kind": "sbom", "uri": "reports/sbom-pagos.json"}],
    "handoff_at": "2026-07-30T14:12:00Z",
}


def with_(**changes):
    data = copy.deepcopy(VALID)
    data.update(changes)
    return data


def error_locations(data):
    with pytest.raises(ValidationError) as caught:
        HandoffContract.model_validate(data)
    return {".".join(map(str, e["loc"])) for e in caught.value.errors()}


def test_json_round_trip_keeps_everything():
    contract = parse_contract(VALID)
    again = parse_contract(contract.to_json())
    assert again == contract
    assert json.loads(contract.to_json())["facts"]["hypotheses"] == ["regresión en v2.41"]
    assert "regresión" in contract.to_json()  # unicode kept readable


def test_the_contract_is_immutable_and_closed():
    contract = parse_contract(VALID)
    with pytest.raises(ValidationError):
        contract.task_id = "TCK-0001"
    assert error_locations(with_(owner="triage")) == {"owner"}
    assert error_locations(with_(facts={"verified": [], "guesses": []})) == {"facts.guesses"}


def test_required_fields_are_exactly_the_documented_ones():
    required = [name for name, field in HandoffContract.model_fields.items() if field.is_required()]
    assert sorted(required) == sorted(REQUIRED)


@pytest.mark.parametrize("field", REQUIRED)
def test_every_required_field_is_refused_when_missing(field):
    data = with_()
    del data[field]
    with pytest.raises(ValidationError) as caught:
        parse_contract(data)
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [((field,), "missing")]


@pytest.mark.parametrize("field", ["handoff_id", "task_id", "sender", "receiver", "reason", "next_objective"])
def test_identity_and_objective_must_not_be_empty(field):
    assert error_locations(with_(**{field: ""})) == {field}


@pytest.mark.parametrize("changes, location", [
    ({"confirmed_state": "done"}, "confirmed_state"),
    ({"evidence": [{"kind": "rumour", "reference": "x"}]}, "evidence.0.kind"),
    ({"recovery": {"on_reject": "retry"}}, "recovery.on_reject"),
    ({"escalation": {"urgency": "alta", "decision_requested": "aprobar rollback a v2.40"}}, "escalation.urgency"),
])
def test_enums_refuse_values_outside_their_list(changes, location):
    assert error_locations(with_(**changes)) == {location}


def test_enums_accept_every_listed_value():
    for state in ("ready", "blocked", "needs-review"):
        assert parse_contract(with_(confirmed_state=state)).confirmed_state == state
    for kind in ("artifact", "check", "decision"):
        assert parse_contract(with_(evidence=[{"kind": kind, "reference": "r"}])).evidence[0].kind == kind
    for policy in ("repair", "escalate", "stop"):
        assert parse_contract(with_(recovery={"on_reject": policy})).recovery.on_reject == policy
    escalation = {"urgency": "high", "decision_requested": "aprobar rollback a v2.40"}
    assert parse_contract(with_(escalation=escalation)).escalation.urgency == "high"


@pytest.mark.parametrize("value", [-1, "3", 3.0, True, None])
def test_state_version_is_a_strict_whole_number_from_zero(value):
    assert error_locations(with_(state_version=value)) == {"state_version"}


def test_state_version_zero_is_fine():
    assert parse_contract(with_(state_version=0)).state_version == 0


@pytest.mark.parametrize("changes, location", [
    ({"evidence": []}, "evidence"),
    ({"acceptance": []}, "acceptance"),
    ({"acceptance": ["  "]}, "acceptance"),
    ({"evidence": [{"kind": "check", "reference": ""}]}, "evidence.0.reference"),
])
def test_evidence_and_acceptance_need_at_least_one_real_entry(changes, location):
    assert error_locations(with_(**changes)) == {location}


def test_created_at_without_time_zone_is_refused():
    assert error_locations(with_(created_at="2026-07-30T09:58:00")) == {"created_at"}
    with pytest.raises(ValidationError, match="zona horaria"):
        parse_contract(with_(created_at=datetime(2026, 7, 30, 9, 58)))


def test_created_at_is_normalised_to_utc():
    contract = parse_contract(with_(created_at="2026-07-30T11:58:00+02:00"))
    assert contract.created_at == datetime(2026, 7, 30, 9, 58, tzinfo=UTC)
    assert contract.created_at.utcoffset() == timedelta(0)
    assert json.loads(contract.to_json())["created_at"] == "2026-07-30T09:58:00Z"


def test_legacy_version_zero_payload_migrates():
    contract = parse_contract(json.dumps(LEGACY))
    assert contract.version == CURRENT_VERSION == 1
    assert (contract.sender, contract.receiver, contract.task_id) == ("triage", "security", "TCK-4790")
    assert contract.next_objective == LEGACY["goal"]
    assert contract.facts.verified == LEGACY["state"]["verified_facts"]
    assert contract.work.remaining == ["confirmar explotabilidad", "proponer mitigación"]
    assert contract.constraints == ["no desplegar cambios hasta aprobación", "SLA: 4h"]
    assert [e.reference for e in contract.evidence] == ["reports/sbom-pagos.json"]
    assert contract.created_at == datetime(2026, 7, 30, 14, 12, tzinfo=UTC)
    assert contract.confirmed_state == "needs-review"  # a migrated package is not taken as ready
    assert contract.filters_applied == ["migrated-from-v0"]
    assert contract.acceptance == [f"objetivo cumplido: {LEGACY['goal']}"]  # the receiver reads it in its brief


def test_a_newer_version_is_refused_with_a_clear_reason():
    with pytest.raises(UnsupportedVersion,
                       match=r"la versión de contrato 2 no está soportada: este receptor lee la versión 1"):
        parse_contract(with_(version=2))


def test_a_payload_without_version_is_version_1_as_the_schema_says():
    data = with_()
    del data["version"]
    assert parse_contract(data) == parse_contract(VALID)
    assert json_schema()["properties"]["version"]["default"] == 1


@pytest.mark.parametrize("version", [True, False, "1", 1.0, 0.5, None, [1]])
def test_a_version_that_is_not_a_whole_number_is_refused(version):
    with pytest.raises(UnsupportedVersion, match="no está soportada"):
        parse_contract(with_(version=version))


def test_every_one_of_the_six_blocks_is_required():
    assert set(SIX_BLOCKS) <= set(REQUIRED)


def test_a_missing_authority_is_not_taken_as_no_tools():
    data = with_()
    del data["authority"]
    assert error_locations(data) == {"authority"}


def test_legacy_payloads_without_an_id_get_distinct_ids_from_their_content():
    other = {**LEGACY, "to_agent": "infra", "goal": "restaurar pagos"}
    first, second = parse_contract(LEGACY), parse_contract(other)
    assert first.handoff_id != second.handoff_id
    assert first.handoff_id.startswith("TCK-4790-v0-")
    assert parse_contract(json.dumps(LEGACY, indent=4)).handoff_id == first.handoff_id  # same content, same id
    assert parse_contract({**LEGACY, "handoff_id": "H-legacy"}).handoff_id == "H-legacy"


def test_legacy_escalation_keeps_urgency_and_decision_requested():
    escalation = {**LEGACY, "urgency": "alta", "decision_requested": "aprobar rollback a v2.40"}
    contract = parse_contract(escalation)
    assert (contract.escalation.urgency, contract.escalation.decision_requested) == ("high", "aprobar rollback a v2.40")
    assert contract.authority.allowed_tools == []  # written by the migration: no tools


def test_a_legacy_payload_with_a_broken_state_is_an_invalid_contract():
    with pytest.raises(InvalidContract, match="'state' de la versión 0 debe ser un objeto, no str"):
        parse_contract({"from_agent": "triage", "state": "roto"})


@pytest.mark.parametrize("changes, location", [
    ({"handoff_id": "h" * (MAX_ID_CHARS + 1)}, "handoff_id"),
    ({"reason": "r" * (MAX_TEXT_CHARS + 1)}, "reason"),
    ({"constraints": ["c"] * (MAX_ITEMS + 1)}, "constraints"),
    ({"facts": {"verified": ["v" * (MAX_TEXT_CHARS + 1)]}}, "facts.verified.0"),
    ({"authority": {"allowed_tools": ["t" * (MAX_ID_CHARS + 1)]}}, "authority.allowed_tools.0"),
])
def test_fields_beyond_the_documented_sizes_are_refused(changes, location):
    assert error_locations(with_(**changes)) == {location}
    assert parse_contract(with_(reason="r" * MAX_TEXT_CHARS, constraints=["c"] * MAX_ITEMS))


def test_json_text_beyond_the_size_limit_is_refused_before_parsing():
    with pytest.raises(InvalidContract, match=f"como máximo {MAX_CONTRACT_CHARS}"):
        parse_contract(" " * (MAX_CONTRACT_CHARS + 1))


@pytest.mark.parametrize("value", [42, None, [1, 2], "[1, 2]", "{not json", b"\xff", object()])
def test_anything_but_a_model_a_dict_or_json_text_is_a_usage_error(value):
    with pytest.raises(InvalidContract) as caught:
        contract_data(value)
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, ValueError)


def test_a_model_a_dict_and_reindented_json_have_one_canonical_form():
    contract = parse_contract(VALID)
    forms = [contract, VALID, json.dumps(VALID, indent=4), contract.to_json().encode(),
             {**VALID, "created_at": "2026-07-30T11:58:00+02:00"}]
    assert len({canonical_json(form) for form in forms}) == 1
    newer = {**VALID, "version": 2, "priority": "p1"}
    assert json.loads(canonical_json(json.dumps(newer, indent=2))) == newer  # unreadable: kept as given


def test_committed_schema_matches_the_model():
    command = "python -m handoffs.contract > schemas/handoff_contract.v1.json"
    assert SCHEMA_FILE.exists(), f"schemas/handoff_contract.v1.json is missing; regenerate it with: {command}"
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    expected = json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert text == expected, f"the committed schema is out of date; regenerate it with: {command}"


def test_blank_texts_are_refused_like_empty_ones():
    for field in ("reason", "next_objective", "handoff_id"):
        with pytest.raises(ValidationError):
            HandoffContract.model_validate({**VALID, field: "   "})
