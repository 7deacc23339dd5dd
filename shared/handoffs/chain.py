"""End to end: the sender's run, the package, the receiver's run, one composed answer. Taught in lesson 04.

Everything domain-specific is passed in: the registry of specialists (their tools and
expertise), one model per specialist, and ``compose``, which turns the package and the
receiver's final turn into the answer the user reads.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from .diagram import Event, as_markdown, mermaid_sequence, tool_call_events
from .errors import HandoffsError
from .loop import RunResult
from .messages import Message, Turn, final_text
from .models import AnyModel
from .package import HandoffPackage
from .runner import run_agent_robust
from .tools import Tool

USER = "usuario"


class Specialist(TypedDict):
    """One entry of a registry of specialists: its tools and, in words, its expertise."""

    tools: dict[str, Tool]
    expertise: str


Compose = Callable[[HandoffPackage, Turn], str]


class ChainError(HandoffsError):
    """The chain cannot go on: a missing model, or a receiver that hands off again."""


def specialist_prompt(name: str, registry: Mapping[str, Specialist]) -> str:
    """The system prompt a live model gets for a specialist: who it is and what it knows.

    Args:
        name: the specialist.
        registry: every specialist, by name; ``name`` must be in it.

    Returns:
        The prompt, in English, asking it to hand off what falls outside its expertise.
    """
    return (f"You are {name}, a specialist. Your expertise: {registry[name]['expertise']}. "
            "When part of the request falls outside it, hand that part off with the minimal context.")


def receiver_brief(package: HandoffPackage) -> str:
    """The first message the receiver sees: the task, then the context that travelled. Taught in lesson 04.

    Args:
        package: the package the sender handed off.

    Returns:
        The task, a blank line, then who sent it and why with the context as sorted JSON.
    """
    context = json.dumps(package.context, ensure_ascii=False, sort_keys=True)
    return f"{package.task}\n\nContexto de {package.sender} ({package.reason}): {context}"


def receiver_answer(package: HandoffPackage, receiver_final: Turn) -> str:
    """The simplest composition: the receiver, who now owns the task, answers alone.

    Args:
        package: the package that was handed off (not used: the receiver's answer stands alone).
        receiver_final: the receiver's final turn.

    Returns:
        The text of the receiver's final turn.
    """
    return final_text(receiver_final)


@dataclass
class ChainResult:
    """What a handoff chain did: both runs, the package that joined them and the final answer."""

    question: str
    sender: str
    sender_messages: list[Message]
    package: HandoffPackage | None = None
    receiver_messages: list[Message] = field(default_factory=list)
    answer: str = ""

    @property
    def owner(self) -> str:
        """Who owns the task at the end: the receiver after a handoff, else the sender."""
        return self.package.receiver if self.package else self.sender

    def diagram(self) -> str:
        """The chain as a Mermaid sequence diagram.

        Returns:
            The diagram: the question, each run's tool calls, the handoff if any and the answer.
        """
        participants = [USER, self.sender] + ([self.package.receiver] if self.package else [])
        events: list[Event] = [("call", USER, self.sender, self.question)]
        events += tool_call_events(self.sender, self.sender_messages)
        if self.package:
            receiver = self.package.receiver
            events.append(("call", self.sender, receiver, f"handoff: {self.package.reason}"))
            events.append(("note", self.sender, receiver, f"{receiver} pasa a ser dueño de la tarea"))
            events += tool_call_events(receiver, self.receiver_messages)
        events.append(("reply", self.owner, USER, self.answer))
        return mermaid_sequence(participants, events)

    def _repr_markdown_(self) -> str:
        return as_markdown(self.diagram())

    def __repr__(self) -> str:
        route = f"{self.sender} -> {self.package.receiver}" if self.package else self.sender
        return f"ChainResult({route}, answer={self.answer!r})"


def run_handoff_chain(question: str, sender: str, models: Mapping[str, AnyModel],
                      registry: Mapping[str, Specialist], compose: Compose = receiver_answer,
                      max_turns: int = 10) -> ChainResult:
    """Run ``sender`` on the question and, if it hands off, the receiver on the package; ``compose`` the answer.

    Taught in lesson 04. The receiver may not hand off again: longer chains are the coordinator's.

    Args:
        question: the user's request.
        sender: the specialist that gets the request first.
        models: one model per specialist that runs, by name.
        registry: every specialist (its tools and expertise), by name; each may hand off to any other.
        compose: turns the package and the receiver's final turn into the user's answer.
        max_turns: the most model turns of each run.

    Returns:
        Both runs, the package that joined them (None when the sender answered alone) and the answer.

    Raises:
        ChainError: a specialist that runs has no model, or the receiver handed off again.
        MaxTurnsExceeded: a run used ``max_turns`` turns without a final answer or a handoff.
        ModelBehaviorError: a model returned a turn the run cannot go on with.
    """  # noqa: DOC503
    def model_for(name: str) -> AnyModel:
        if name not in models:
            raise ChainError(f"no hay modelo para {name!r}; se dieron modelos para {sorted(models)}")
        return models[name]

    def run(name: str, question: str) -> RunResult[HandoffPackage]:
        return run_agent_robust(question, model_for(name), registry[name]["tools"], name, list(registry),
                                max_turns, system=specialist_prompt(name, registry))

    sent = run(sender, question)
    if sent.handoff is None:
        return ChainResult(question, sender, sent.messages, answer=sent.text)
    package = sent.handoff
    received = run(package.receiver, receiver_brief(package))
    if received.handoff is not None:
        raise ChainError(f"{package.receiver} volvió a hacer handoff, a {received.handoff.receiver}; las cadenas de "
                         "más de un salto necesitan el coordinador (lección 08)")
    assert received.final is not None  # a run that did not hand off ended on a final turn
    return ChainResult(question, sender, sent.messages, package, received.messages,
                       compose(package, received.final))
