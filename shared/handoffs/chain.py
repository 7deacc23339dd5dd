"""End to end: the sender's run, the package, the receiver's run, one composed answer. Taught in lesson 04."""

import json
from dataclasses import dataclass, field

from .diagram import as_markdown, mermaid_sequence, tool_call_events
from .errors import HandoffsError
from .messages import final_text
from .robust import run_agent_robust
from .specialists import NO_SHOW_PERCENT, SPECIALISTS, no_show_charge

USER = "usuario"


class ChainError(HandoffsError):
    """The chain cannot go on: a missing model, or a receiver that hands off again."""


def specialist_prompt(name, registry=SPECIALISTS):
    """The system prompt a live model gets for a specialist: who it is and what it knows."""
    return (f"You are {name}, a Reservo specialist. Your expertise: {registry[name]['expertise']}. "
            "When part of the request falls outside it, hand that part off with the minimal context.")


def receiver_brief(package):
    """The first message the receiver sees: the task, then the context that travelled."""
    context = json.dumps(package.context, ensure_ascii=False, sort_keys=True)
    return f"{package.task}\n\nContexto de {package.sender} ({package.reason}): {context}"


def compose_answer(package, receiver_final):
    """One answer for the user: the sender's quote from the context, then the receiver's answer.

    When the context carries the quoted price, the answer also states the no-show charge
    computed from that price, so the member sees what missing the booking would cost.
    """
    context, parts = package.context, []
    price = context.get("price_cents")
    if price is not None:
        what = " ".join(str(context[k]) for k in ("room", "tier") if k in context)
        hours = f" por {context['hours']} h" if "hours" in context else ""
        parts.append(f"Cotización ({package.sender}): {what}{hours} cuesta {price} centavos.")
    parts.append(f"Política ({package.receiver}): {final_text(receiver_final)}")
    if price is not None:
        parts.append(f"Cargo por no presentarse: {no_show_charge(price)} centavos "
                     f"({NO_SHOW_PERCENT} % de {price}).")
    return "\n".join(parts)


@dataclass
class ChainResult:
    """What a handoff chain did: both runs, the package that joined them and the final answer."""

    question: str
    sender: str
    sender_messages: list
    package: object = None
    receiver_messages: list = field(default_factory=list)
    answer: str = ""

    @property
    def owner(self):
        """Who owns the task at the end: the receiver after a handoff, else the sender."""
        return self.package.receiver if self.package else self.sender

    def diagram(self):
        """The chain as a Mermaid sequence diagram."""
        participants = [USER, self.sender] + ([self.package.receiver] if self.package else [])
        events = [("call", USER, self.sender, self.question)]
        events += tool_call_events(self.sender, self.sender_messages)
        if self.package:
            receiver = self.package.receiver
            events.append(("call", self.sender, receiver, f"handoff: {self.package.reason}"))
            events.append(("note", self.sender, receiver, f"ownership passes to {receiver}"))
            events += tool_call_events(receiver, self.receiver_messages)
        events.append(("reply", self.owner, USER, self.answer))
        return mermaid_sequence(participants, events)

    def _repr_markdown_(self):
        return as_markdown(self.diagram())

    def __repr__(self):
        route = f"{self.sender} -> {self.package.receiver}" if self.package else self.sender
        return f"ChainResult({route}, answer={self.answer!r})"


def run_handoff_chain(question, sender, models, registry=SPECIALISTS, max_iterations=10):
    """Run ``sender`` on the question and, if it hands off, the receiver on the package."""
    def model_for(name):
        if name not in models:
            raise ChainError(f"no model for {name!r}; models were given for {sorted(models)}")
        return models[name]

    final, sender_messages, package = run_agent_robust(
        question, model_for(sender), registry[sender]["tools"], sender, registry, max_iterations,
        system=specialist_prompt(sender, registry))
    if package is None:
        return ChainResult(question, sender, sender_messages, answer=final_text(final))
    receiver_final, receiver_messages, again = run_agent_robust(
        receiver_brief(package), model_for(package.receiver), registry[package.receiver]["tools"],
        package.receiver, registry, max_iterations, system=specialist_prompt(package.receiver, registry))
    if again is not None:
        raise ChainError(f"{package.receiver} handed off again to {again.receiver}; chains of more than "
                         "one hop need the coordinator (lesson 08)")
    return ChainResult(question, sender, sender_messages, package, receiver_messages,
                       compose_answer(package, receiver_final))
