"""The handoff package and the handoff pseudo-tool. Taught in lessons 02 and 03."""

import copy
import json
from dataclasses import asdict, dataclass, field

from .errors import UsageError

HANDOFF_TOOL_NAME = "handoff_to_specialist"
REQUIRED_FIELDS = ("receiver", "reason", "task")


class InvalidPackage(UsageError, ValueError):
    """A handoff package or handoff input is missing fields or has the wrong types."""


@dataclass
class HandoffPackage:
    """What travels in a handoff: who, to whom, why, the task and the minimal context."""

    sender: str
    receiver: str
    reason: str
    task: str
    context: dict = field(default_factory=dict)

    def to_dict(self):
        """The package as a plain dict, ready for JSON."""
        return asdict(self)

    def to_json(self):
        """The package as JSON text with stable key order."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data):
        """Build a package from a dict, with a clear error for a missing or mistyped field."""
        if not isinstance(data, dict):
            raise InvalidPackage(f"a handoff package must be a JSON object, got {type(data).__name__}")
        problems = [f"{name}: missing" for name in ("sender", *REQUIRED_FIELDS) if name not in data]
        problems += [f"{name}: must be a non-empty string" for name in ("sender", *REQUIRED_FIELDS)
                     if name in data and not (isinstance(data[name], str) and data[name].strip())]
        if not isinstance(data.get("context", {}), dict):
            problems.append("context: must be an object")
        unknown = sorted(set(data) - {"sender", "context", *REQUIRED_FIELDS})
        problems += [f"{name}: unknown field" for name in unknown]
        if problems:
            raise InvalidPackage("invalid handoff package: " + "; ".join(problems))
        return cls(**{**data, "context": dict(data.get("context", {}))})

    @classmethod
    def from_json(cls, text):
        """Parse a package from JSON text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidPackage(f"handoff package is not valid JSON: {error}") from None
        return cls.from_dict(data)


def make_handoff_tool(receivers):
    """The schema of the handoff pseudo-tool, with ``receivers`` as the allowed targets."""
    return {
        "name": HANDOFF_TOOL_NAME,
        "description": (
            "Hand the rest of the current task to another Reservo specialist when part of the "
            "request falls outside your own expertise. Use it only mid-task, never for the initial "
            "routing, and pass the MINIMAL context the receiver needs, never your whole history."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "receiver": {"type": "string", "enum": list(receivers)},
                "reason": {"type": "string"},
                "task": {"type": "string"},
                "context": {"type": "object"},
            },
            "required": list(REQUIRED_FIELDS),
        },
    }


def handoff_problems(tool_input, receivers, sender=None):
    """What is wrong with a handoff tool call's input, as a list of readable strings."""
    problems = [f"missing required field {name!r}" for name in REQUIRED_FIELDS if name not in tool_input]
    problems += [f"field {name!r} must be a non-empty string" for name in REQUIRED_FIELDS
                 if name in tool_input and not (isinstance(tool_input[name], str) and tool_input[name].strip())]
    if "context" in tool_input and not isinstance(tool_input["context"], dict):
        problems.append("field 'context' must be an object")
    receiver = tool_input.get("receiver")
    if isinstance(receiver, str) and receiver.strip():
        if receiver == sender:
            problems.append(f"an agent cannot hand off to itself ({sender!r})")
        elif receiver not in receivers:
            problems.append(f"unknown receiver {receiver!r}; receivers are {sorted(receivers)}")
    return problems


def package_from_tool_input(sender, tool_input):
    """The HandoffPackage that a handoff tool call describes (context defaults to {})."""
    return HandoffPackage(sender=sender, receiver=tool_input["receiver"], reason=tool_input["reason"],
                          task=tool_input["task"], context=copy.deepcopy(tool_input.get("context", {})))
