"""The handoff package and the pseudo-tool's input. Taught in lessons 02 and 03.

The pseudo-tool's input is described once, by the pydantic model ``HandoffInput``: the
schema a model is offered, the validation of what it sends back, and the error messages
it reads all come from that one model. ``HandoffPackage`` is what the runner builds from
a valid input: the seed's plain dataclass, with its JSON round trip. The policy that offers
the pseudo-tool and reads its calls is ``handoffs.policies.SpecialistHandoff``.
"""

import copy
import functools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from .errors import UsageError, pydantic_message
from .tools import with_choices

REQUIRED_FIELDS = ("receiver", "reason", "task")

def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("no puede estar vacío ni tener solo espacios")
    return text


NonEmpty = Annotated[str, StringConstraints(strict=True, min_length=1), AfterValidator(_not_blank)]

HANDOFF_DESCRIPTION = (
    "Haz handoff del resto de la tarea actual a otro especialista cuando una parte de la solicitud "
    "quede fuera de tu especialidad. Úsala solo a mitad de la tarea, nunca para el enrutamiento "
    "inicial, y pasa el contexto MÍNIMO que necesita el receptor, nunca todo tu historial."
)


class InvalidPackage(UsageError, ValueError):
    """A handoff package or handoff input is missing fields or has the wrong types."""


class HandoffInput(BaseModel):
    """What a model sends when it calls the handoff pseudo-tool."""

    model_config = ConfigDict(extra="ignore")

    receiver: NonEmpty = Field(description="El especialista que pasa a ser dueño de la tarea.")
    reason: NonEmpty = Field(description="Por qué la tarea deja de ser tuya, en una oración.")
    task: NonEmpty = Field(description="Qué debe hacer el receptor, dicho con tus palabras.")
    context: dict[str, Any] = Field(default_factory=dict,
                                    description="Solo los hechos que el receptor necesita, nunca todo el historial.")


class PackageData(HandoffInput):
    """A whole package as it travels in JSON: the handoff input plus its sender, nothing else."""

    model_config = ConfigDict(extra="forbid")

    sender: NonEmpty


@functools.lru_cache(maxsize=64)
def input_model(receivers: tuple[str, ...] | None) -> type[HandoffInput]:
    """``HandoffInput`` with ``receiver`` restricted to ``receivers``.

    Args:
        receivers: The allowed receivers, in the order the schema lists them; None or () allows any name.

    Returns:
        The pydantic model a handoff call is offered and validated with.
    """
    if not receivers:
        return HandoffInput
    return with_choices(HandoffInput, "receiver", receivers,
                        f"El especialista que pasa a ser dueño de la tarea. Uno de: {list(receivers)}")


def _problem(error: Any, tool_input: Any, receivers: Sequence[str]) -> tuple[int, str]:
    """One pydantic error as the sentence a model reads, with its place in the list."""
    name = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "missing":
        return 0, f"falta el campo obligatorio {name!r}"
    if name == "context":
        return 2, "el campo 'context' debe ser un objeto"
    if error["type"] == "literal_error":
        return 3, f"receptor desconocido {tool_input.get('receiver')!r}; los receptores son {sorted(receivers)}"
    return 1, f"el campo {name!r} debe ser un texto no vacío"


def parse_handoff_input(tool_input: Any, receivers: Sequence[str],
                        sender: str | None = None) -> tuple[HandoffInput | None, list[str]]:
    """Validate the input of a handoff call. Taught in lesson 03.

    Args:
        tool_input: The call's arguments, as the model wrote them.
        receivers: The allowed receivers; empty: no receiver is allowed.
        sender: The agent that called; naming itself as receiver is refused. None: not checked.

    Returns:
        ``(input, [])`` when valid; ``(None, problems)`` otherwise, each problem a sentence in Spanish.
    """
    if not isinstance(tool_input, dict):
        return None, [f"la entrada del handoff debe ser un objeto, no {type(tool_input).__name__}"]
    receiver = tool_input.get("receiver")
    if sender is not None and receiver == sender:
        return None, [f"un agente no puede hacerse handoff a sí mismo ({sender!r})"]
    problems = []
    if not receivers and isinstance(receiver, str) and receiver.strip():
        problems.append((3, f"receptor desconocido {receiver!r}; los receptores son []"))
    try:
        valid = input_model(tuple(sorted(receivers)) if receivers else None).model_validate(tool_input)
    except ValidationError as error:
        problems += [_problem(e, tool_input, receivers) for e in error.errors()]
    if problems:
        return None, list(dict.fromkeys(text for _, text in sorted(problems)))
    return valid, []


def handoff_problems(tool_input: Any, receivers: Sequence[str], sender: str | None = None) -> list[str]:
    """What is wrong with a handoff tool call's input. Taught in lesson 03.

    Args:
        tool_input: The call's arguments, as the model wrote them.
        receivers: The allowed receivers.
        sender: The agent that called, or None not to check for a handoff to itself.

    Returns:
        One sentence in Spanish per problem; [] when the input is valid.
    """
    return parse_handoff_input(tool_input, receivers, sender)[1]


@dataclass
class HandoffPackage:
    """What travels in a handoff: who, to whom, why, the task and the minimal context. Taught in lesson 02.

    Attributes:
        sender: The agent that hands the task off.
        receiver: The specialist that takes it.
        reason: Why the task stops being the sender's.
        task: What the receiver must do, in the sender's words.
        context: Only the facts the receiver needs.
    """

    sender: str
    receiver: str
    reason: str
    task: str
    context: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The package as a plain dict, ready for JSON.

        Returns:
            The five fields by name.
        """
        return asdict(self)

    def to_json(self) -> str:
        """The package as JSON text with stable key order.

        Returns:
            The JSON text, keys sorted, non-ASCII kept.
        """
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any) -> "HandoffPackage":
        """Build a package from a dict.

        Args:
            data: The package's fields; nothing else is accepted.

        Returns:
            The HandoffPackage.

        Raises:
            InvalidPackage: ``data`` is not a dict, or a field is missing, extra or of the wrong type.
        """
        if not isinstance(data, dict):
            raise InvalidPackage(f"un paquete de handoff debe ser un objeto JSON, no {type(data).__name__}")
        try:
            valid = PackageData.model_validate(data)
        except ValidationError as error:
            raise InvalidPackage("paquete de handoff inválido: " + "; ".join(
                _field_problem(e) for e in error.errors())) from None
        return cls(**valid.model_dump())

    @classmethod
    def from_json(cls, text: str | bytes) -> "HandoffPackage":
        """Parse a package from JSON text.

        Args:
            text: The package as JSON.

        Returns:
            The HandoffPackage.

        Raises:
            InvalidPackage: The text is not JSON (a bad package raises it from ``from_dict`` too).
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidPackage(f"el paquete de handoff no es JSON válido: {error}") from None
        return cls.from_dict(data)


def _field_problem(error: Any) -> str:
    name = str(error["loc"][0]) if error["loc"] else "package"
    if error["type"] in ("missing", "extra_forbidden"):
        return f"{name}: {pydantic_message(error)}"
    if name == "context":
        return "context: debe ser un objeto"
    return f"{name}: debe ser un texto no vacío"


def package_from_tool_input(sender: str, tool_input: dict[str, Any]) -> HandoffPackage:
    """The HandoffPackage that a handoff tool call describes. Taught in lesson 03.

    Args:
        sender: The agent that called the tool.
        tool_input: The call's arguments, already valid (``receiver``, ``reason``, ``task``, maybe ``context``).

    Returns:
        The package; ``context`` deep-copied, ``{}`` when missing.
    """
    return HandoffPackage(sender=sender, receiver=tool_input["receiver"], reason=tool_input["reason"],
                          task=tool_input["task"], context=copy.deepcopy(tool_input.get("context", {})))
