"""How a handoff is offered to a model and carried out: the run loop's policies. Taught in lessons 03 and 09.

A policy names the tool the model calls (``name``), offers it through ``make_handoff_schema``
(the one builder: a tool name, a description and a pydantic input model whose target field
lists the allowed targets in an ``enum``) and turns a call into an accepted handoff, or into
the reason it was refused. The tool names are the seeds':

    SpecialistHandoff  handoff_to_specialist(receiver, reason, task, context) -> HandoffPackage  (lesson 03)
    AgentHandoff       handoff(name, reason) -> Transfer                                         (lesson 09)

The OpenAI Agents SDK offers one ``transfer_to_<agent>`` tool per target instead (lesson 12).
"""

import copy
import functools
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from .package import HANDOFF_DESCRIPTION, HandoffPackage, input_model, parse_handoff_input
from .tools import ToolSchema, model_schema, with_choices

H_co = TypeVar("H_co", covariant=True)

HANDOFF_TOOL_NAME = "handoff_to_specialist"
"""The pseudo-tool of lessons 01-04 (seed 000): hands the task to a specialist with a package."""

AGENT_HANDOFF_TOOL_NAME = "handoff"
"""The tool of the Agent class of lesson 09 (seed 004): hands the whole conversation to an agent."""


class HandoffPolicy(Protocol[H_co]):
    """How the loop recognises a handoff and what a valid one becomes. Taught in lesson 03."""

    @property
    def name(self) -> str:
        """The tool name the model calls to hand off."""
        ...

    def schema(self, sender: str) -> ToolSchema | None:
        """The handoff tool offered to ``sender``'s model.

        Args:
            sender: The agent whose model is offered the tool.

        Returns:
            The tool's schema, or None when ``sender`` has no one to hand off to.
        """
        ...

    def accept(self, sender: str, tool_input: dict[str, Any]) -> H_co | str:
        """Read one call of the handoff tool.

        Args:
            sender: The agent that called the tool.
            tool_input: The call's arguments, as the model wrote them.

        Returns:
            The accepted handoff, or the reason it was refused (read by the model).
        """
        ...

    def target(self, handoff: Any) -> str:
        """Say who takes over after an accepted handoff.

        Args:
            handoff: A handoff this policy accepted.

        Returns:
            The name of the agent that takes over.
        """
        ...


def make_handoff_schema(name: str, description: str, inputs: type[BaseModel]) -> ToolSchema:
    """The schema of a handoff tool, in the Anthropic shape; every handoff tool is built here.

    Args:
        name: The tool name the model calls.
        description: What the tool is for and when to use it, as the model reads it.
        inputs: The pydantic model of the tool's arguments, its target field restricted with
            ``handoffs.tools.with_choices``.

    Returns:
        ``{"name", "description", "input_schema"}``, the input schema derived from ``inputs``.
    """
    return {"name": name, "description": description, "input_schema": model_schema(inputs)}


@dataclass(frozen=True)
class SpecialistHandoff:
    """The policy of ``handoff_to_specialist``: a valid call becomes a HandoffPackage. Taught in lesson 03.

    Attributes:
        receivers: The specialists a call may name; None accepts any name but the sender's (the seed's runner).
        name: The tool name.
    """

    receivers: tuple[str, ...] | None = None
    name: str = HANDOFF_TOOL_NAME

    def schema(self, sender: str) -> ToolSchema | None:
        """The pseudo-tool as ``sender`` is offered it.

        Args:
            sender: The agent whose model is offered the tool; it is left out of the receivers.

        Returns:
            The tool's schema, or None when there is no other receiver.
        """
        others = [r for r in (self.receivers or ()) if r != sender]
        return make_handoff_schema(self.name, HANDOFF_DESCRIPTION, input_model(tuple(others))) if others else None

    def accept(self, sender: str, tool_input: dict[str, Any]) -> HandoffPackage | str:
        """The package a call describes, or why it was refused.

        Args:
            sender: The agent that called the tool; it becomes the package's sender.
            tool_input: The call's arguments.

        Returns:
            The HandoffPackage, or ``"Handoff rechazado: ..."`` with every problem found.
        """
        receivers = self.receivers
        if receivers is None:  # the seed's runner: any non-empty receiver but the sender
            receiver = tool_input.get("receiver")
            receivers = (receiver,) if isinstance(receiver, str) else ()
        valid, problems = parse_handoff_input(tool_input, receivers, sender=sender)
        if valid is None:
            return "Handoff rechazado: " + "; ".join(problems)
        return HandoffPackage(sender, valid.receiver, valid.reason, valid.task, copy.deepcopy(valid.context))

    def target(self, handoff: HandoffPackage) -> str:
        """Say who takes over.

        Args:
            handoff: An accepted package.

        Returns:
            The package's receiver.
        """
        return handoff.receiver


class AgentHandoffInput(BaseModel):
    """What a model sends when it calls the Agent's ``handoff`` tool (seed 004)."""

    name: str = Field(description="El agente que pasa a ser dueño de la conversación.")
    reason: str = Field(description="Por qué hace falta el handoff, en pocas palabras "
                                    "(p. ej., 'requiere un cálculo matemático').")


@functools.lru_cache(maxsize=64)
def _agent_inputs(targets: tuple[str, ...]) -> type[AgentHandoffInput]:
    """``AgentHandoffInput`` with ``name`` restricted to ``targets``."""
    return with_choices(AgentHandoffInput, "name", targets, "El agente que pasa a ser dueño de la conversación. "
                                                            f"Debe ser uno de: {list(targets)}")


def _agent_description(targets: tuple[str, ...]) -> str:
    return ("Haz handoff de toda la conversación a otro agente, especialista. Úsala SOLO cuando la "
            "solicitud necesite tools o habilidades que tiene ese agente. NO hagas handoff de preguntas "
            "de cultura general (geografía, historia, datos de ciencia y similares): respóndelas tú. "
            f"Agentes disponibles: {list(targets)}")


@dataclass(frozen=True)
class Transfer:
    """An accepted ``handoff`` call. Taught in lesson 09.

    Attributes:
        target: The agent that takes over.
        reason: Why, as the model wrote it.
        args: The call's arguments.
    """

    target: str
    reason: str
    args: dict[str, Any]


@dataclass(frozen=True)
class AgentHandoff:
    """The Agent's policy: ``handoff(name, reason)`` to one of ``targets``. Taught in lesson 09.

    Attributes:
        targets: The agents a call may name.
        name: The tool name.
    """

    targets: tuple[str, ...]
    name: str = AGENT_HANDOFF_TOOL_NAME

    def schema(self, sender: str) -> ToolSchema | None:
        """The handoff tool, listing the targets.

        Args:
            sender: The agent whose model is offered the tool (its targets never include it).

        Returns:
            The tool's schema, or None without targets.
        """
        if not self.targets:
            return None
        return make_handoff_schema(self.name, _agent_description(self.targets), _agent_inputs(self.targets))

    def accept(self, sender: str, tool_input: dict[str, Any]) -> Transfer | str:
        """A Transfer to a known target, or the seed's failure message.

        Args:
            sender: The agent that called the tool.
            tool_input: The call's arguments.

        Returns:
            The Transfer, or ``"Handoff fallido: no existe el agente '<x>'. Agentes disponibles: [...]"``.
        """
        wanted = tool_input.get("name")
        if wanted in self.targets:
            return Transfer(str(wanted), str(tool_input.get("reason", "sin motivo")), dict(tool_input))
        return f"Handoff fallido: no existe el agente '{wanted}'. Agentes disponibles: {list(self.targets)}"

    def target(self, handoff: Transfer) -> str:
        """Say who takes over.

        Args:
            handoff: An accepted Transfer.

        Returns:
            The agent that takes over.
        """
        return handoff.target
