"""Who takes part in a coordinated run, and what each turn may return. Taught in lesson 08.

A participant has a ``name``, the ``tools`` it can use and ``act(step, task, received)``,
which returns one outcome: ``Progress`` (keep the task), ``OfferHandoff`` (to another agent),
``Escalate`` (up, with urgency and the decision requested: the receiver owns the task while
it decides), ``Decision`` (a human's answer, which hands the task back down), ``Return`` (back
to the original owner) or ``Finish`` (close it). Three kinds of participant ship here: a
``ScriptedAgent``, a ``ModelAgent`` driven by a model, and a ``Human`` who takes escalations
and decides them. The loop that runs them is ``handoffs.coordinator``.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from .contract import HandoffContract, InvalidContract, parse_contract
from .errors import HandoffsError, ModelBehaviorError, UsageError
from .messages import final_text
from .runner import run_agent_robust
from .validation import run_receiver


class CoordinationError(HandoffsError):
    """The run cannot go on: an unknown participant, a script that ran out, too many steps."""


class OutOfScript(CoordinationError, ModelBehaviorError):
    """A scripted participant was asked for a turn its script does not have."""


class InvalidOutcome(CoordinationError, UsageError, ValueError):
    """An outcome the coordinator cannot use: not an outcome, or an escalation without its block."""


@dataclass(frozen=True)
class Task:
    """A task, its request, its original owner (who closes it) and its current state version."""

    task_id: str
    request: str
    owner: str
    state_version: int | None = None


@dataclass(frozen=True)
class Progress:
    """The owner worked on the task and keeps it."""

    note: str


@dataclass(frozen=True)
class OfferHandoff:
    """Offer the task to another agent; it moves only if the receiver accepts. Taught in lesson 08.

    Not the Agents SDK's ``agents.Handoff`` (lesson 12), which describes a handoff tool.

    Attributes:
        contract: The handoff contract: a HandoffContract, a dict or JSON text.
    """

    contract: object


@dataclass(frozen=True)
class Escalate:
    """Hand the task up, to a human or an agent with more authority, with a contract whose ``escalation`` is set.

    An escalation is a handoff: the receiver owns the task while it decides, and the task comes back
    only through another transfer (a ``Decision`` or a ``Return``). Asking and keeping the task is a
    consultation (an agent as a tool), not an escalation.
    """

    contract: object

    def __post_init__(self) -> None:
        try:
            contract = parse_contract(self.contract)
        except (InvalidContract, ValidationError):
            return  # unreadable: the receiver's validation says why
        if contract.escalation is None:
            raise InvalidOutcome(f"Escalate necesita un contrato con el bloque escalation; {contract!r} no lo tiene")


@dataclass(frozen=True)
class Decision:
    """A human's answer: a transfer that hands the task back to the participant that escalated."""

    answer: str
    to: str


@dataclass(frozen=True)
class Return:
    """Give the task back to its original owner, with the resolution."""

    resolution: str


@dataclass(frozen=True)
class Finish:
    """Close the task with the result for the user."""

    result: str


Outcome = Progress | OfferHandoff | Escalate | Decision | Return | Finish
Step = Outcome | Callable[[Task, Any], Outcome]


class Participant(Protocol):
    """Anything with a name and tools that returns an outcome for each of its turns."""

    name: str
    tools: tuple[str, ...]

    def act(self, step: int, task: Task, received: Any) -> Outcome:
        """The outcome of one of this participant's turns.

        Args:
            step: How many turns this participant has had in the run, from 0.
            task: The task being run.
            received: What it received last: a contract, a rejection (HandoffResult), a Decision, a
                Return, or None.

        Returns:
            The turn's outcome.
        """
        ...


class ScriptedAgent:
    """A scripted participant: one outcome, or a function ``(task, received)``, per step. Taught in lesson 08.

    Args:
        name: The participant's name.
        script: Its steps, in order.
        tools: The tools it may be granted.
    """

    def __init__(self, name: str, script: Iterable[Step], tools: Iterable[str] = ()) -> None:
        self.name, self.script, self.tools = name, list(script), tuple(tools)

    def act(self, step: int, task: Task, received: Any) -> Outcome:
        """The scripted outcome of this agent's turn.

        Args:
            step: How many turns this participant has had in the run, from 0.
            task: The task being run.
            received: What it received last: a contract, a rejection (HandoffResult), a Decision, a
                Return, or None.

        Returns:
            The script's step, or what a callable step returns for ``(task, received)``.

        Raises:
            OutOfScript: The script has no step ``step``.
        """
        if step >= len(self.script):
            raise OutOfScript(f"el agente {self.name!r} no tiene resultado para el paso {step}: "
                              f"su guion tiene {len(self.script)}")
        outcome = self.script[step]
        return outcome(task, received) if callable(outcome) else outcome

    def __repr__(self) -> str:
        steps = len(self.script)
        return f"ScriptedAgent({self.name!r}, tools={list(self.tools)}, {steps} {_plural(steps, 'paso')} con guion)"


class ModelAgent:
    """An agent driven by a model through ``run_agent_robust``: a final text finishes, a package hands off.

    A scripted model replays from its first turn on every step, so give it one step's turns.

    Args:
        name: The participant's name.
        model: A script or a live model.
        tools: Its tool functions, by name; their names are the tools it may be granted.
        to_contract: Turns ``(task, package)`` into the HandoffContract it offers.
        receivers: The participants it may hand off to.
    """

    def __init__(self, name: str, model: Any, tools: Mapping[str, Callable[..., Any]],
                 to_contract: Callable[[Task, Any], object] | None = None, receivers: Sequence[str] = ()) -> None:
        self.name, self.model, self.functions, self.tools = name, model, dict(tools), tuple(tools)
        self.to_contract, self.receivers = to_contract, receivers

    def act(self, step: int, task: Task, received: Any) -> Outcome:
        """Run the model on the contract it received (with the granted tools only) or on the request.

        Args:
            step: How many turns this participant has had in the run, from 0.
            task: The task being run.
            received: What it received last: a contract, a rejection (HandoffResult), a Decision, a
                Return, or None.

        Returns:
            Finish with the model's final text, or OfferHandoff with the contract of its package.

        Raises:
            UsageError: The model handed off and there is no ``to_contract``.
        """
        if isinstance(received, HandoffContract):
            final, _, package = run_receiver(received, self.model, self.functions, self.name, receivers=self.receivers)
        else:
            brief = task.request if received is None else f"{task.request}\n\n{received!r}"
            final, _, package = run_agent_robust(brief, self.model, self.functions, self.name, self.receivers)
        if package is None:
            return Finish(final_text(final))
        if self.to_contract is None:
            raise UsageError(f"el ModelAgent {self.name!r} hizo handoff a {package.receiver!r}, "
                             "pero no tiene to_contract")
        return OfferHandoff(self.to_contract(task, package))

    def __repr__(self) -> str:
        return f"ModelAgent({self.name!r}, tools={list(self.tools)}, receivers={list(self.receivers)})"


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def escalation_prompt(contract: HandoffContract) -> str:
    """What a human on call reads, in Spanish. Taught in lesson 08.

    Args:
        contract: The escalation contract.

    Returns:
        The urgency, task, sender, decision requested, reason and verified facts, ending in a prompt.
    """
    urgency = contract.escalation.urgency if contract.escalation else "sin definir"
    decision = contract.escalation.decision_requested if contract.escalation else contract.next_objective
    facts = "; ".join(contract.facts.verified) or "ninguno"
    return (f"ESCALAMIENTO [{urgency}] tarea {contract.task_id} de {contract.sender}\n"
            f"Decisión solicitada: {decision}\nMotivo: {contract.reason}\nHechos verificados: {facts}\n"
            f"Tu respuesta: ")


class Human:
    """A person as a participant, who owns an escalated task while deciding it. Taught in lesson 08.

    Args:
        name: The participant's name.
        answers: Scripted answers, one per escalation, used when there is no ``ask``.
        ask: Asks a real person (e.g. ``input``) with the escalation prompt.
        tools: The tools it may be granted.
    """

    def __init__(self, name: str, answers: Iterable[str] = (), ask: Callable[[str], str] | None = None,
                 tools: Iterable[str] = ()) -> None:
        self.name, self.answers, self.ask, self.tools = name, list(answers), ask, tuple(tools)

    def act(self, step: int, task: Task, received: Any) -> Outcome:
        """Show the escalation, take the answer, and hand the task back to whoever escalated with it.

        Args:
            step: How many turns this participant has had in the run, from 0.
            task: The task being run.
            received: What it received last: a contract, a rejection (HandoffResult), a Decision, a
                Return, or None.

        Returns:
            A Decision with the answer, addressed to the escalation's sender.

        Raises:
            OutOfScript: No ``ask`` and no scripted answer left.
        """
        prompt = escalation_prompt(received)
        if self.ask is not None:
            answer = self.ask(prompt)
        elif step < len(self.answers):
            answer = self.answers[step]
        else:
            raise OutOfScript(f"el humano {self.name!r} no tiene respuesta para el escalamiento {step}")
        return Decision(str(answer).strip(), to=received.sender)

    def __repr__(self) -> str:
        answers = len(self.answers)
        how = "ask" if self.ask is not None else f"{answers} {_plural(answers, 'respuesta')} con guion"
        return f"Human({self.name!r}, {how})"
