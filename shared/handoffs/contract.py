"""The handoff contract: a small, versioned, validated package. Taught in lesson 05.

``HandoffContract`` is version 1 (six required blocks, every field bounded); ``contract_data``
and ``parse_contract`` read a contract given as a model, a dict or JSON text, migrating the
legacy version 0 and refusing newer versions. See docs/library-reference.md.
"""

import hashlib
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, ValidationError, field_validator

from .errors import UsageError

CURRENT_VERSION = 1
MAX_ID_CHARS = 128
"""The longest id or participant name (handoff_id, task_id, sender, receiver, a tool name)."""
MAX_TEXT_CHARS = 2_000
"""The longest text field or list entry (reason, objective, a fact, a criterion, a reference)."""
MAX_ITEMS = 50
"""The most entries in any list of the contract."""
MAX_CONTRACT_CHARS = 200_000
"""The longest contract accepted as JSON text, checked before parsing it."""

Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS, pattern=r"\S")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS, pattern=r"\S")]
Entry = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS)]
Entries = Annotated[list[Entry], Field(max_length=MAX_ITEMS)]
ToolNames = Annotated[list[Annotated[str, StringConstraints(max_length=MAX_ID_CHARS)]], Field(max_length=MAX_ITEMS)]


class InvalidContract(UsageError, ValueError):
    """A contract that cannot even be read: not a model, a dict or JSON text of an object, or too large."""


class UnsupportedVersion(InvalidContract):
    """A contract of a version this code cannot read or migrate."""


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Facts(_Block):
    """What the sender verified, kept apart from what it only suspects."""

    verified: Entries = []
    hypotheses: Entries = []


class Work(_Block):
    """Work already done, so the receiver does not repeat it, and work that remains."""

    done: Entries = []
    remaining: Entries = []


class Evidence(_Block):
    """A checkable reference that backs the confirmed state."""

    kind: Literal["artifact", "check", "decision"]
    reference: Text


class Artifact(_Block):
    """A large artifact, referenced by URI instead of embedded."""

    kind: Id
    uri: Text


class Authority(_Block):
    """What the receiver may do with this handoff, and what stays forbidden."""

    allowed_tools: ToolNames = []
    forbidden_actions: Entries = []


class Recovery(_Block):
    """What happens when the receiver rejects the handoff."""

    on_reject: Literal["repair", "escalate", "stop"]
    resume_from: Entry | None = None


class Escalation(_Block):
    """A handoff up: how urgent it is and which decision is requested."""

    urgency: Literal["low", "medium", "high"]
    decision_requested: Text


class HandoffContract(_Block):
    """Version 1 of the handoff contract; immutable once built."""

    version: Literal[1] = 1
    handoff_id: Id
    task_id: Id
    sender: Id
    receiver: Id
    reason: Text
    next_objective: Text
    confirmed_state: Literal["ready", "blocked", "needs-review"]
    state_version: StrictInt = Field(ge=0)
    facts: Facts = Facts()
    work: Work = Work()
    constraints: Entries = []
    evidence: Annotated[list[Evidence], Field(min_length=1, max_length=MAX_ITEMS)]
    artifacts: Annotated[list[Artifact], Field(max_length=MAX_ITEMS)] = []
    authority: Authority
    acceptance: Annotated[list[Entry], Field(min_length=1, max_length=MAX_ITEMS)]
    recovery: Recovery
    escalation: Escalation | None = None
    created_at: datetime
    filters_applied: ToolNames = []

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("created_at debe llevar zona horaria (UTC)")
        return value.astimezone(UTC)

    @field_validator("acceptance")
    @classmethod
    def _criteria_not_blank(cls, value: list[str]) -> list[str]:
        if any(not criterion.strip() for criterion in value):
            raise ValueError("los criterios de aceptación no pueden estar vacíos")
        return value

    def to_json(self) -> str:
        """The contract as JSON text (snake_case names, UTC time).

        Returns:
            The compact JSON text; ``parse_contract`` reads it back.
        """
        return self.model_dump_json()

    def __repr__(self) -> str:
        return (f"HandoffContract(v{self.version} {self.handoff_id}: {self.sender} -> {self.receiver}, "
                f"task={self.task_id!r}, state={self.confirmed_state}@{self.state_version})")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the current contract, as committed in ``schemas/``. Taught in lesson 05.

    Returns:
        The schema as a dict (``python -m handoffs.contract`` prints it as JSON).
    """
    return HandoffContract.model_json_schema()


_URGENCY = {"alta": "high", "media": "medium", "baja": "low"}  # seed 001 writes urgency="alta"


def _object(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key, {})
    if not isinstance(value, dict):
        raise InvalidContract(f"el campo {key!r} de la versión 0 debe ser un objeto, no {type(value).__name__}")
    return value


def _list(payload: dict[str, Any], key: str) -> list[Any]:
    value = payload.get(key, [])
    if not isinstance(value, list):
        raise InvalidContract(f"el campo {key!r} de la versión 0 debe ser una lista, no {type(value).__name__}")
    return value


def legacy_id(payload: dict[str, Any]) -> str:
    """A version-0 payload's handoff id: its own, or one derived from its content (same content, same id).

    Args:
        payload: the legacy seed-001 payload.

    Returns:
        Its ``handoff_id`` when it has a non-empty one, else ``<task_id>-v0-<12 hex digits of its hash>``.
    """
    given = payload.get("handoff_id")
    if isinstance(given, str) and given:
        return given
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    return f"{payload.get('task_id')}-v0-{digest[:12]}"


def migrate_v0(payload: dict[str, Any]) -> dict[str, Any]:
    """Turn the legacy seed-001 payload (from_agent, goal, state{...}, handoff_at) into version 1 fields.

    The migration writes what version 0 never said: the state is "needs-review", the
    authority is no tools at all (least privilege, written here on purpose) and a
    rejection is repaired. ``urgency`` and ``decision_requested`` become the escalation.

    Args:
        payload: the legacy seed-001 payload.

    Returns:
        The version-1 fields, not validated yet (``parse_contract`` validates them).

    Raises:
        InvalidContract: ``state`` is not an object or ``artifacts`` is not a list.
    """  # noqa: DOC502
    state = _object(payload, "state")
    artifacts = _list(payload, "artifacts")
    escalation = None
    if "urgency" in payload or "decision_requested" in payload:
        urgency = payload.get("urgency")
        escalation = {"urgency": _URGENCY.get(urgency, urgency) if isinstance(urgency, str) else urgency,
                      "decision_requested": payload.get("decision_requested")}
    return {
        "version": 1,
        "handoff_id": legacy_id(payload),
        "task_id": payload.get("task_id"),
        "sender": payload.get("from_agent"),
        "receiver": payload.get("to_agent"),
        "reason": payload.get("reason"),
        "next_objective": payload.get("goal"),
        "confirmed_state": "needs-review",
        "state_version": 0,
        "facts": {"verified": state.get("verified_facts", []), "hypotheses": state.get("hypotheses", [])},
        "work": {"done": state.get("work_done", []), "remaining": state.get("work_remaining", [])},
        "constraints": state.get("constraints", []),
        "evidence": [{"kind": "artifact", "reference": a.get("uri") if isinstance(a, dict) else a}
                     for a in artifacts],
        "artifacts": artifacts,
        "authority": {"allowed_tools": [], "forbidden_actions": []},
        "acceptance": payload.get("acceptance") or [f"objetivo cumplido: {payload.get('goal')}"],
        "recovery": {"on_reject": "repair", "resume_from": None},
        "escalation": escalation,
        "created_at": payload.get("handoff_at"),
        "filters_applied": ["migrated-from-v0"],
    }


def read_object(value: object) -> dict[str, Any]:
    """The JSON object of a contract given as a model, a dict or JSON text; ``InvalidContract`` for anything else.

    Args:
        value: a ``HandoffContract``, a dict, or JSON text (str or bytes).

    Returns:
        The contract as a dict (a model is dumped to its JSON form), not validated.

    Raises:
        InvalidContract: the text is longer than ``MAX_CONTRACT_CHARS`` or is not valid JSON, or the value
            is not a JSON object.
    """
    if isinstance(value, HandoffContract):
        return value.model_dump(mode="json")
    if isinstance(value, (str, bytes, bytearray)):
        if len(value) > MAX_CONTRACT_CHARS:
            raise InvalidContract(f"un contrato tiene como máximo {MAX_CONTRACT_CHARS} caracteres de JSON; "
                                  f"este tiene {len(value)}")
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:  # malformed JSON, bad UTF-8, absurd nesting
            raise InvalidContract(f"no es JSON válido: {type(error).__name__}: {error}") from None
    if not isinstance(value, dict):
        raise InvalidContract(f"un contrato debe ser un objeto JSON, no {type(value).__name__}")
    return value


def contract_data(value: object) -> dict[str, Any]:
    """A contract given as a model, a dict or JSON text, as a version-1 dict (version 0 migrated, not validated).

    A payload without ``version`` is version 1, unless it has the legacy ``from_agent`` field.

    Args:
        value: a ``HandoffContract``, a dict, or JSON text.

    Returns:
        The version-1 fields, not validated yet.

    Raises:
        InvalidContract: the value is not a JSON object or is too large, or a version-0 payload
            has a malformed ``state`` or ``artifacts``.
        UnsupportedVersion: the version is other than 0 and 1 (a bool is not a version).
    """  # noqa: DOC503
    data = read_object(value)
    if "version" not in data:
        return migrate_v0(data) if "from_agent" in data else {**data, "version": CURRENT_VERSION}
    version = data["version"]
    if type(version) is int and version == 0:
        return migrate_v0(data)
    if type(version) is not int or version != CURRENT_VERSION:
        raise UnsupportedVersion(
            f"la versión de contrato {version!r} no está soportada: este receptor lee la versión "
            f"{CURRENT_VERSION} (y migra el paquete antiguo de la versión 0)")
    return data


def parse_contract(value: object) -> HandoffContract:
    """Validate a contract given as a model, a dict or JSON text, migrating version 0 and refusing newer versions.

    Taught in lesson 05.

    Args:
        value: a ``HandoffContract`` (returned as is), a dict, or JSON text.

    Returns:
        The validated contract. A readable payload with invalid fields raises pydantic's ``ValidationError``.

    Raises:
        InvalidContract: the value cannot be read as a contract (see ``contract_data``).
        UnsupportedVersion: the version is one this code cannot read or migrate.
    """  # noqa: DOC502
    if isinstance(value, HandoffContract):
        return value
    return HandoffContract.model_validate(contract_data(value))


def canonical_form(value: object) -> dict[str, Any]:
    """The contract's content in one canonical form: equal content, equal form, however it was given.

    A readable contract goes through the model (defaults filled in, time in UTC, version 0
    migrated); an invalid one keeps its fields, and a version this code cannot read stays
    exactly as given, for a reader that knows it.

    Args:
        value: a ``HandoffContract``, a dict, or JSON text.

    Returns:
        The canonical dict.

    Raises:
        InvalidContract: the value cannot be read as a JSON object (see ``read_object``), or is a
            version-0 payload whose ``state`` or ``artifacts`` is malformed.
    """  # noqa: DOC502
    data = read_object(value)
    try:
        data = contract_data(data)
        return HandoffContract.model_validate(data).model_dump(mode="json")
    except (UnsupportedVersion, ValidationError):
        return data


def canonical_json(value: object) -> str:
    """``canonical_form`` as compact JSON text with sorted keys. Taught in lesson 10.

    Args:
        value: a ``HandoffContract``, a dict, or JSON text.

    Returns:
        The JSON text; equal content gives equal text.

    Raises:
        InvalidContract: the value cannot be read as a contract at all (see ``canonical_form``).
    """  # noqa: DOC502
    return json.dumps(canonical_form(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":  # python -m handoffs.contract > schemas/handoff_contract.v1.json
    print(json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False))
