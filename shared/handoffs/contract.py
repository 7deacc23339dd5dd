"""The handoff contract: a small, versioned, validated package. Taught in lesson 05.

Six blocks make a handoff explicit (seed 002): the next objective, the confirmed state,
evidence references, bounded authority, acceptance criteria and recovery. The seed 001
payload adds verified facts kept apart from hypotheses, work done / remaining,
constraints and artifacts by URI; escalation adds urgency and the decision requested.

``parse_contract`` reads any version: version 1 is validated as is, the legacy
version-0 payload of seed 001 is migrated, and a newer version is refused with a
reason, never read as if it were version 1.
"""

import json
from datetime import datetime, timezone
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from .errors import UsageError

CURRENT_VERSION = 1

NonEmpty = Field(min_length=1)


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Facts(_Block):
    """What the sender verified, kept apart from what it only suspects."""

    verified: list[str] = []
    hypotheses: list[str] = []


class Work(_Block):
    """Work already done, so the receiver does not repeat it, and work that remains."""

    done: list[str] = []
    remaining: list[str] = []


class Evidence(_Block):
    """A checkable reference that backs the confirmed state."""

    kind: Literal["artifact", "check", "decision"]
    reference: str = NonEmpty


class Artifact(_Block):
    """A large artifact, referenced by URI instead of embedded."""

    kind: str = NonEmpty
    uri: str = NonEmpty


class Authority(_Block):
    """What the receiver may do with this handoff, and what stays forbidden."""

    allowed_tools: list[str] = []
    forbidden_actions: list[str] = []


class Recovery(_Block):
    """What happens when the receiver rejects the handoff."""

    on_reject: Literal["repair", "escalate", "stop"]
    resume_from: Optional[str] = None


class Escalation(_Block):
    """A handoff up: how urgent it is and which decision is requested."""

    urgency: Literal["low", "medium", "high"]
    decision_requested: str = NonEmpty


class HandoffContract(_Block):
    """Version 1 of the handoff contract; immutable once built."""

    version: Literal[1] = 1
    handoff_id: str = NonEmpty
    task_id: str = NonEmpty
    sender: str = NonEmpty
    receiver: str = NonEmpty
    reason: str = NonEmpty
    next_objective: str = NonEmpty
    confirmed_state: Literal["ready", "blocked", "needs-review"]
    state_version: StrictInt = Field(ge=0)
    facts: Facts = Facts()
    work: Work = Work()
    constraints: list[str] = []
    evidence: list[Evidence] = Field(min_length=1)
    artifacts: list[Artifact] = []
    authority: Authority = Authority()
    acceptance: list[str] = Field(min_length=1)
    recovery: Recovery
    escalation: Optional[Escalation] = None
    created_at: datetime
    filters_applied: list[str] = []

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("created_at must carry a time zone (UTC)")
        return value.astimezone(timezone.utc)

    @field_validator("acceptance")
    @classmethod
    def _criteria_not_blank(cls, value):
        if any(not criterion.strip() for criterion in value):
            raise ValueError("acceptance criteria must not be blank")
        return value

    def to_json(self):
        """The contract as JSON text (snake_case names, UTC time)."""
        return self.model_dump_json()

    def __repr__(self):
        return (f"HandoffContract(v{self.version} {self.handoff_id}: {self.sender} -> {self.receiver}, "
                f"task={self.task_id!r}, state={self.confirmed_state}@{self.state_version})")


class UnsupportedVersion(UsageError, ValueError):
    """A contract of a version this code cannot read or migrate."""


def json_schema():
    """The JSON Schema of the current contract, as committed in ``schemas/``."""
    return HandoffContract.model_json_schema()


def migrate_v0(payload):
    """Turn the legacy seed-001 payload (from_agent, goal, state{...}, handoff_at) into version 1 fields."""
    state = payload.get("state", {})
    return {
        "version": 1,
        "handoff_id": payload.get("handoff_id") or f"{payload.get('task_id')}-legacy",
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
        "evidence": [{"kind": "artifact", "reference": a.get("uri")} for a in payload.get("artifacts", [])],
        "artifacts": payload.get("artifacts", []),
        "acceptance": payload.get("acceptance") or [f"objective met: {payload.get('goal')}"],
        "recovery": {"on_reject": "repair", "resume_from": None},
        "created_at": payload.get("handoff_at"),
        "filters_applied": ["migrated-from-v0"],
    }


def parse_contract(value):
    """Validate a contract given as JSON text or a dict, migrating version 0 and refusing newer versions."""
    data = json.loads(value) if isinstance(value, (str, bytes)) else value
    if not isinstance(data, dict):
        raise UnsupportedVersion(f"a contract must be a JSON object, got {type(data).__name__}")
    version = data.get("version", 0)
    if version == 0 and "from_agent" in data:
        data = migrate_v0(data)
    elif version != CURRENT_VERSION:
        raise UnsupportedVersion(
            f"contract version {version!r} is not supported: this receiver reads version "
            f"{CURRENT_VERSION} (and migrates the legacy version-0 payload)")
    return HandoffContract.model_validate(data)


if __name__ == "__main__":  # python -m handoffs.contract > schemas/handoff_contract.v1.json
    print(json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False))
