"""A coordinator for agent chains: one owner at a time, a hop limit, cycles cut, a human on call. Taught in lesson 08.

The policy, one rule per edge case:

1. Exactly one owner at every moment. Ownership moves only when the receiver's
   ``accept_handoff`` says ok. A rejected handoff leaves the sender as owner, and the
   rejection (a ``HandoffResult`` with its next step) is the sender's next input.
2. A handoff to a receiver that is not a participant (or to none) is rejected the same
   way, as invalid: it goes back to its sender to repair, and the run goes on.
3. A hop is an accepted transfer between agents: a handoff, or an escalation to an
   agent. A hop past ``max_hops`` (``MAX_HOPS`` = 3 by default) is cut before delivery
   and escalated to the human on call. Escalations to a human, human decisions and
   returns are not hops: the way up and the way back stay open.
4. A hop to an agent already in the chain (A -> B -> A) is a cycle: it is cut and
   escalated too. ``Return`` gives the task back to its original owner and closes the
   chain, so a new handoff after it is not a cycle (the hop count still grows). A
   repeat of an already accepted handoff is not a cycle either: validation skips it.
5. A human is a participant. An escalation hands it the task: it owns the task while it
   decides, sees the urgency and the decision requested, and its ``Decision`` is another
   transfer, which hands the task back to whoever escalated. Asking and keeping the task
   is a consultation (an agent as a tool), not an escalation.
6. Everything is a ``TraceEvent`` timed by the clock: a logical counter by default,
   so a run is reproducible; pass ``clock=time.monotonic`` for real time.

The participants and their outcomes live in ``handoffs.participants``.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .contract import HandoffContract, InvalidContract, canonical_form, parse_contract
from .errors import ModelBehaviorError, UsageError
from .participants import (
    CoordinationError,
    Decision,
    Escalate,
    Finish,
    Human,
    InvalidOutcome,
    ModelAgent,
    OfferHandoff,
    Outcome,
    OutOfScript,
    Participant,
    Progress,
    Return,
    ScriptedAgent,
    Task,
    escalation_prompt,
)
from .traces import USER, LogicalClock, Trace, TraceEvent
from .validation import HandoffResult, accept_handoff

__all__ = ["MAX_HOPS", "Coordination", "CoordinationError", "Coordinator", "Decision", "Escalate", "Finish",
           "OfferHandoff", "Human", "InvalidOutcome", "ModelAgent", "NoHumanOnCall", "OutOfScript", "Outcome",
           "Participant", "Progress", "Return", "RunNotFinished", "ScriptedAgent", "Task", "UnknownParticipant",
           "escalation_prompt"]

MAX_HOPS = 3
"""The default hop limit of a chain (seed 001: "p. ej. 3 saltos"); the Agent class uses it too."""


class UnknownParticipant(CoordinationError, UsageError):
    """A task owner, a decision's addressee or the human on call that is not a participant."""


class NoHumanOnCall(CoordinationError, UsageError):
    """A chain was cut and there is nobody to escalate it to."""


class RunNotFinished(CoordinationError, ModelBehaviorError):
    """Nobody finished the task within ``max_steps``."""


@dataclass(frozen=True)
class Coordination:
    """What a coordinated run did: its result, the owner at every step, the hops and the trace."""

    task: Task
    result: str
    owners: tuple[str, ...]
    hops: int
    trace: Trace

    @property
    def final_owner(self) -> str:
        """The participant that closed the task."""
        return self.owners[-1]

    @property
    def ownership(self) -> list[Any]:
        """Who owned the task from when to when, read from the trace."""
        return self.trace.ownership(self.task.task_id)

    def _repr_markdown_(self) -> str:
        return self.trace._repr_markdown_()

    def __repr__(self) -> str:
        route = [owner for i, owner in enumerate(self.owners) if i == 0 or owner != self.owners[i - 1]]
        return f"Coordination({self.task.task_id}: {' -> '.join(route)}, hops={self.hops}, result={self.result!r})"


def _fields(value: object) -> dict[str, Any]:
    """A contract's fields as far as they can be read ({} when it is not even a JSON object)."""
    try:
        return canonical_form(value)
    except InvalidContract:
        return {}


def _text(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    return value if isinstance(value, str) else None


def _event(fields: dict[str, Any]) -> dict[str, Any]:
    """The trace fields of an offered contract, each only when it has the right type."""
    escalation = fields.get("escalation")
    escalation = escalation if isinstance(escalation, dict) else {}
    version = fields.get("version")
    return dict(handoff_id=_text(fields, "handoff_id"), version=version if type(version) is int else None,
                urgency=_text(escalation, "urgency"), decision_requested=_text(escalation, "decision_requested"))


@dataclass
class _Run:
    """The state of one run: the owner, the chain of owners, hops, processed handoffs, the trace."""

    task: Task
    clock: Callable[[], float]
    owner: str = ""
    hops: int = 0
    cuts: int = 0
    chain: list[str] = field(default_factory=list)
    processed: set[str] = field(default_factory=set)
    steps: Counter[str] = field(default_factory=Counter)
    last: HandoffContract | None = None
    trace: Trace = field(default_factory=Trace)

    def record(self, kind: str, receiver: str, reason: str = "", **fields: Any) -> TraceEvent:
        """Append an event sent by the current owner (the user, for ``start``).

        Args:
            kind: The event's kind (``start``, ``work``, ``handoff``, ...).
            receiver: Who the event is addressed to.
            reason: Why, as the trace shows it.
            **fields: More of the event's fields (validation, hop, handoff_id, ...).

        Returns:
            The event, as appended to the trace.
        """
        sender = USER if kind == "start" else self.owner
        return self.trace.append(TraceEvent(kind, self.task.task_id, sender, receiver, self.clock(), reason, **fields))

    def move(self, kind: str, receiver: str, reason: str = "", **fields: Any) -> None:
        """Record an event that hands the task to ``receiver``, and make it the owner.

        Args:
            kind: The event's kind.
            receiver: The new owner.
            reason: Why, as the trace shows it.
            **fields: More of the event's fields.
        """
        self.record(kind, receiver, reason, **fields)
        self.owner = receiver


class Coordinator:
    """Runs a task through its participants with exactly one owner at a time. Taught in lesson 08.

    Args:
        participants: The agents and humans that take part, each with a distinct name.
        escalate_to: The human on call for cut chains; None: the first Human among the participants.
        max_hops: The most accepted transfers between agents in one chain.
        clock: The trace's clock; None: a logical counter, so runs are reproducible.
        max_steps: The most turns a run may take before it fails.
        evidence_exists: Says whether a contract's evidence reference exists (validation's check).
    """

    def __init__(self, participants: Iterable[Participant], *, escalate_to: str | None = None,
                 max_hops: int = MAX_HOPS, clock: Callable[[], float] | None = None, max_steps: int = 50,
                 evidence_exists: Callable[[str], bool] | None = None) -> None:
        self.participants = {p.name: p for p in participants}
        humans = [name for name, p in self.participants.items() if isinstance(p, Human)]
        self.escalate_to = escalate_to or (humans[0] if humans else None)
        if self.escalate_to is not None:
            self._participant(self.escalate_to)
        self.max_hops, self.clock, self.max_steps, self.evidence_exists = max_hops, clock, max_steps, evidence_exists

    def run(self, task: Task) -> Coordination:
        """Run ``task`` from its original owner until someone finishes it.

        Args:
            task: The task, its request and its original owner.

        Returns:
            The Coordination: the result, the owner at every step, the hops and the trace.

        Raises:
            InvalidOutcome: A turn returned something that is not an outcome, or the owner returned
                the task to itself.
            RunNotFinished: Nobody finished within ``max_steps`` turns.
        """
        run = _Run(task, self.clock or LogicalClock(), chain=[task.owner])
        self._participant(task.owner)
        run.move("start", task.owner, task.request)
        received: Any = None
        result: str | None = None
        owners: list[str] = []
        while result is None and len(owners) < self.max_steps:
            owner = run.owner
            owners.append(owner)
            outcome = self._participant(owner).act(run.steps[owner], task, received)
            run.steps[owner] += 1
            match outcome:
                case Progress(note):
                    run.record("work", owner, note)
                    received = None
                case OfferHandoff(contract):
                    received = self._offer(run, "handoff", contract)
                case Escalate(contract):
                    received = self._offer(run, "escalation", contract)
                case Decision(answer, to):
                    run.move("decision", self._participant(to).name, answer)
                    received = outcome
                case Return(resolution):
                    if owner == task.owner:
                        raise InvalidOutcome(f"{owner!r} ya es dueño de {task.task_id}: no hay nada que devolver")
                    run.move("return", task.owner, resolution)
                    run.chain = [task.owner]  # the chain is closed: a new handoff starts a new one
                    received = outcome
                case Finish(text):
                    run.record("finish", USER, text)
                    result = text
                case _:
                    raise InvalidOutcome(f"{owner!r} devolvió {outcome!r}, que no es un resultado de turno (outcome)")
        if result is None:
            raise RunNotFinished(f"la tarea {task.task_id} no terminó después de {self.max_steps} pasos")
        return Coordination(task, result, tuple(owners), run.hops, run.trace)

    def _participant(self, name: str) -> Participant:
        if name not in self.participants:
            raise UnknownParticipant(f"participante desconocido {name!r}; "
                                     f"los participantes son {sorted(self.participants)}")
        return self.participants[name]

    def _offer(self, run: _Run, kind: str, value: object) -> HandoffResult | HandoffContract:
        """The owner offers a handoff or an escalation: refuse it, cut it, or let its receiver validate it."""
        fields = _fields(value)
        sender = fields.get("sender", run.owner)
        if sender != run.owner:
            raise InvalidOutcome(f"{run.owner!r} es dueño de {run.task.task_id}, pero el contrato dice que el "
                                 f"emisor es {sender!r}")
        receiver = fields.get("receiver")
        if not isinstance(receiver, str) or receiver not in self.participants:
            return self._refuse(run, kind, value, fields)
        hop = kind == "handoff" or not isinstance(self.participants[receiver], Human)
        cut = self._cut_reason(run, fields) if hop else None
        return self._cut(run, fields, cut) if cut else self._transfer(run, kind, value, fields)

    def _refuse(self, run: _Run, kind: str, value: object, fields: dict[str, Any]) -> HandoffResult:
        """A transfer to nobody, or to someone who is not a participant: invalid, back to its sender to repair."""
        receiver = fields.get("receiver")
        named = f"{receiver!r} no es un participante" if receiver else "el contrato no nombra a ningún receptor"
        problem = {"field": "receiver", "problem": f"{named}; los participantes son {sorted(self.participants)}"}
        check = accept_handoff(fields or value, expected_task_id=run.task.task_id, allowed_tools=())
        others = tuple(e for e in check.errors if e["field"] != "receiver") if check.reason == "invalid" else ()
        refusal = HandoffResult(ok=False, reason="invalid", contract=check.contract, errors=(problem, *others))
        shown = receiver if isinstance(receiver, str) and receiver else "?"
        run.record(kind, shown, _text(fields, "reason") or "", validation="invalid", **_event(fields))
        return refusal

    def _transfer(self, run: _Run, kind: str, value: object,
                  fields: dict[str, Any]) -> HandoffResult | HandoffContract:
        """Give the task to the contract's receiver only if it accepts; returns what the next owner receives."""
        receiver = self._participant(fields["receiver"])
        hop = kind == "handoff" or not isinstance(receiver, Human)
        check = accept_handoff(fields, expected_task_id=run.task.task_id, allowed_tools=receiver.tools,
                               state_version=run.task.state_version, evidence_exists=self.evidence_exists,
                               already_processed=run.processed)
        reason = _text(fields, "reason") or ""
        if not check.ok or check.duplicate or check.contract is None:
            skipped = "duplicate" if check.duplicate else check.reason
            run.record(kind, receiver.name, reason, validation=skipped, **_event(fields))
            return check
        run.move(kind, receiver.name, reason, validation="ok", hop=hop, **_event(fields))
        run.processed.add(check.contract.handoff_id)
        run.last = check.contract
        if hop:
            run.hops += 1
            run.chain.append(receiver.name)
        return check.contract

    def _cut_reason(self, run: _Run, fields: dict[str, Any]) -> str | None:
        """Why this hop must be cut (a cycle, the hop limit), in Spanish as the trace shows it, or None."""
        if fields.get("handoff_id") in run.processed:
            return None  # a repeat: validation skips it as a duplicate
        if fields["receiver"] in run.chain:
            return "ciclo: " + " -> ".join(run.chain + [fields["receiver"]])
        if run.hops >= self.max_hops:
            return f"límite de saltos alcanzado ({self.max_hops} {'salto' if self.max_hops == 1 else 'saltos'})"
        return None

    def _cut(self, run: _Run, fields: dict[str, Any], why: str) -> HandoffResult | HandoffContract:
        """Record the cut and escalate it to the human on call, on behalf of the owner."""
        run.record("cut", fields["receiver"], why, handoff_id=_text(fields, "handoff_id"))
        if self.escalate_to is None:
            raise NoHumanOnCall(f"{run.task.task_id}: {why}, y no hay ningún humano al que escalar")
        escalation = self._escalation(run, fields, why)
        return self._transfer(run, "escalation", escalation, _fields(escalation))

    def _escalation(self, run: _Run, fields: dict[str, Any], why: str) -> HandoffContract:
        """The escalation contract of a cut: the cut handoff's facts and work, sent up with no tools."""
        base: HandoffContract | None
        try:
            base = parse_contract(fields)
        except (InvalidContract, ValidationError):
            base = run.last
        if base is None:
            raise NoHumanOnCall(f"{run.task.task_id}: {why}, y no hay ningún contrato legible que escalar")
        run.cuts += 1
        state = run.task.state_version if run.task.state_version is not None else base.state_version
        return HandoffContract.model_validate({
            **base.model_dump(), "handoff_id": f"{base.handoff_id}-cut{run.cuts}", "sender": run.owner,
            "receiver": self.escalate_to, "reason": why, "confirmed_state": "blocked", "state_version": state,
            "next_objective": f"decidir cómo sigue {run.owner} con {run.task.task_id}",
            "authority": {"allowed_tools": [], "forbidden_actions": []},
            "recovery": {"on_reject": "stop", "resume_from": None},
            "escalation": {"urgency": "high", "decision_requested": f"se cortó la cadena ({why}): ¿cómo debe "
                                                                    f"seguir {run.owner}?"}})

    def __repr__(self) -> str:
        return (f"Coordinator({list(self.participants)}, escalate_to={self.escalate_to!r}, "
                f"max_hops={self.max_hops})")
