"""A coordinator for agent chains: one owner at a time, a hop limit, cycles cut, a human on call. Taught in lesson 08.

The policy, one rule per edge case:

1. Exactly one owner at every moment. Ownership moves only when the receiver's
   ``accept_handoff`` says ok. A rejected handoff leaves the sender as owner, and the
   rejection (a ``HandoffResult`` with its next step) is the sender's next input.
2. A hop is an accepted handoff between agents. A handoff past ``max_hops`` (3 by
   default) is cut before delivery and escalated to the human on call. Escalations,
   human decisions and returns are not hops: the way up and the way back stay open.
3. A handoff to an agent that already owned the task (A -> B -> A) is a cycle: it is
   cut and escalated too. Giving the task back with ``Return`` is not a cycle, and a
   repeat of an already accepted handoff is not one either: validation skips it.
4. A human is a participant. It sees the escalation's urgency and the decision
   requested, answers, and the task goes back to whoever escalated.
5. Everything is a ``TraceEvent`` timed by the clock: a logical counter by default,
   so a run is reproducible; pass ``clock=time.monotonic`` for real time.
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

from .contract import HandoffContract, parse_contract
from .errors import HandoffsError
from .messages import final_text
from .runner import run_agent_robust
from .traces import USER, LogicalClock, Trace, TraceEvent
from .validation import accept_handoff, run_receiver


class CoordinationError(HandoffsError):
    """The run cannot go on: an unknown participant, a script that ran out, too many steps."""


@dataclass(frozen=True)
class Task:
    """A task, its request, its original owner (who closes it) and its current state version."""
    task_id: str
    request: str
    owner: str
    state_version: Optional[int] = None


# The outcomes a participant's turn can return.
@dataclass(frozen=True)
class Progress:
    """The owner worked on the task and keeps it."""
    note: str


@dataclass(frozen=True)
class Handoff:
    """Hand the task to another agent; the contract may be a model, a dict or JSON text."""
    contract: object


@dataclass(frozen=True)
class Escalate:
    """Hand the task up to a human with a contract whose ``escalation`` is set."""
    contract: object

    def __post_init__(self):
        if isinstance(self.contract, HandoffContract) and self.contract.escalation is None:
            raise ValueError(f"Escalate needs a contract with an escalation block; {self.contract!r} has none")


@dataclass(frozen=True)
class Decision:
    """A human's answer, sent back to the participant that escalated."""
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


class ScriptedAgent:
    """A scripted participant: its script holds one outcome, or a function ``(task, received)``, per step."""

    def __init__(self, name, script, tools=()):
        self.name, self.script, self.tools = name, list(script), tuple(tools)

    def act(self, step, task, received):
        """The outcome of this agent's ``step``-th turn, given what it ``received`` last."""
        if step >= len(self.script):
            raise CoordinationError(f"agent {self.name!r} has no outcome for step {step}: "
                                    f"its script has {len(self.script)}")
        outcome = self.script[step]
        return outcome(task, received) if callable(outcome) else outcome

    def __repr__(self):
        return f"ScriptedAgent({self.name!r}, tools={list(self.tools)}, {len(self.script)} scripted steps)"


class ModelAgent:
    """An agent driven by a model through ``run_agent_robust``: a final text finishes, a package hands off.

    ``to_contract(task, package)`` turns the model's HandoffPackage into a HandoffContract.
    A scripted model replays from its first turn on every step, so give it one step's turns.
    """

    def __init__(self, name, model, tools, to_contract=None, receivers=()):
        self.name, self.model, self.functions, self.tools = name, model, dict(tools), tuple(tools)
        self.to_contract, self.receivers = to_contract, receivers

    def act(self, step, task, received):
        """Run the model on the contract it received (with the granted tools only) or on the request."""
        if isinstance(received, HandoffContract):
            final, _, package = run_receiver(received, self.model, self.functions, self.name, receivers=self.receivers)
        else:
            brief = task.request if received is None else f"{task.request}\n\n{received!r}"
            final, _, package = run_agent_robust(brief, self.model, self.functions, self.name, self.receivers)
        return Finish(final_text(final)) if package is None else Handoff(self.to_contract(task, package))

    def __repr__(self):
        return f"ModelAgent({self.name!r}, tools={list(self.tools)}, receivers={list(self.receivers)})"


def escalation_prompt(contract):
    """What a human on call reads: urgency, task, decision requested, reason and verified facts."""
    urgency = contract.escalation.urgency if contract.escalation else "unset"
    decision = contract.escalation.decision_requested if contract.escalation else contract.next_objective
    facts = "; ".join(contract.facts.verified) or "none"
    return (f"ESCALATION [{urgency}] task {contract.task_id} from {contract.sender}\n"
            f"Decision requested: {decision}\nReason: {contract.reason}\nVerified facts: {facts}\nYour answer: ")


class Human:
    """A person as a participant: answers escalations from scripted ``answers`` or through ``ask`` (e.g. ``input``)."""

    def __init__(self, name, answers=(), ask=None, tools=()):
        self.name, self.answers, self.ask, self.tools = name, list(answers), ask, tuple(tools)

    def act(self, step, task, received):
        """Show the escalation, take the answer, and send it back to whoever escalated."""
        prompt = escalation_prompt(received)
        if self.ask is not None:
            answer = self.ask(prompt)
        elif step < len(self.answers):
            answer = self.answers[step]
        else:
            raise CoordinationError(f"human {self.name!r} has no answer for escalation {step}")
        return Decision(str(answer).strip(), to=received.sender)

    def __repr__(self):
        how = "ask" if self.ask is not None else f"{len(self.answers)} scripted answers"
        return f"Human({self.name!r}, {how})"


@dataclass(frozen=True)
class Coordination:
    """What a coordinated run did: its result, the owner at every step, the hops and the trace."""

    task: Task
    result: str
    owners: tuple
    hops: int
    trace: Trace

    @property
    def final_owner(self):
        """The participant that closed the task."""
        return self.owners[-1]

    @property
    def ownership(self):
        """Who owned the task from when to when, read from the trace."""
        return self.trace.ownership(self.task.task_id)

    def _repr_markdown_(self):
        return self.trace._repr_markdown_()

    def __repr__(self):
        route = [owner for i, owner in enumerate(self.owners) if i == 0 or owner != self.owners[i - 1]]
        return f"Coordination({self.task.task_id}: {' -> '.join(route)}, hops={self.hops}, result={self.result!r})"


def _fields(value):
    """A contract as a plain dict, as far as it can be read ({} when it is not even JSON)."""
    if isinstance(value, HandoffContract):
        return value.model_dump(mode="json")
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


@dataclass
class _Run:
    """The state of one run: the owner, the chain of owners, hops, processed handoffs, the trace."""

    task: Task
    clock: Callable
    owner: str = ""
    hops: int = 0
    cuts: int = 0
    chain: list = field(default_factory=list)
    processed: set = field(default_factory=set)
    steps: Counter = field(default_factory=Counter)
    last: Optional[HandoffContract] = None
    trace: Trace = field(default_factory=Trace)

    def record(self, kind, receiver, reason="", **fields):
        """Append an event sent by the current owner (the user, for ``start``)."""
        sender = USER if kind == "start" else self.owner
        return self.trace.append(TraceEvent(kind, self.task.task_id, sender, receiver, self.clock(), reason, **fields))

    def move(self, kind, receiver, reason="", **fields):
        """Record an event that hands the task to ``receiver``, and make it the owner."""
        self.record(kind, receiver, reason, **fields)
        self.owner = receiver


class Coordinator:
    """Runs a task through its participants with exactly one owner at a time."""

    def __init__(self, participants, *, escalate_to=None, max_hops=3, clock=None, max_steps=50, evidence_exists=None):
        self.participants = {p.name: p for p in participants}
        humans = [p.name for p in participants if isinstance(p, Human)]
        self.escalate_to = escalate_to or (humans[0] if humans else None)
        self.max_hops, self.clock, self.max_steps, self.evidence_exists = max_hops, clock, max_steps, evidence_exists

    def run(self, task):
        """Run ``task`` from its original owner until someone finishes it; returns a Coordination."""
        run = _Run(task, self.clock or LogicalClock(), chain=[task.owner])
        self._participant(task.owner)
        run.move("start", task.owner, task.request)
        received, result, owners = None, None, []
        while result is None and len(owners) < self.max_steps:
            owner = run.owner
            owners.append(owner)
            outcome = self._participant(owner).act(run.steps[owner], task, received)
            run.steps[owner] += 1
            match outcome:
                case Progress(note):
                    run.record("work", owner, note)
                    received = None
                case Handoff(contract):
                    received = self._offer(run, "handoff", contract)
                case Escalate(contract):
                    received = self._offer(run, "escalation", contract)
                case Decision(answer, to):
                    run.move("decision", self._participant(to).name, answer)
                    received = outcome
                case Return(resolution):
                    if owner == task.owner:
                        raise CoordinationError(f"{owner!r} already owns {task.task_id}: nothing to return")
                    run.move("return", task.owner, resolution)
                    received = outcome
                case Finish(text):
                    run.record("finish", USER, text)
                    result = text
                case _:
                    raise CoordinationError(f"{owner!r} returned {outcome!r}, which is not an outcome")
        if result is None:
            raise CoordinationError(f"task {task.task_id} is not finished after {self.max_steps} steps")
        return Coordination(task, result, tuple(owners), run.hops, run.trace)

    def _participant(self, name):
        if name not in self.participants:
            raise CoordinationError(f"unknown participant {name!r}; participants are {sorted(self.participants)}")
        return self.participants[name]

    def _offer(self, run, kind, value):
        """The owner offers a handoff or an escalation: cut it, or let its receiver validate it."""
        fields = _fields(value)
        if fields.get("sender", run.owner) != run.owner:
            raise CoordinationError(f"{run.owner!r} owns {run.task.task_id}, but the contract says it is "
                                    f"sent by {fields['sender']!r}")
        cut = self._cut_reason(run, fields) if kind == "handoff" else None
        return self._cut(run, fields, cut) if cut else self._transfer(run, kind, value, fields)

    def _transfer(self, run, kind, value, fields):
        """Give the task to the contract's receiver only if it accepts; returns what the next owner receives."""
        receiver = self._participant(fields.get("receiver"))
        check = accept_handoff(value, expected_task_id=run.task.task_id, allowed_tools=receiver.tools,
                               state_version=run.task.state_version, evidence_exists=self.evidence_exists,
                               already_processed=run.processed)
        escalation = fields.get("escalation") or {}
        event = dict(handoff_id=fields.get("handoff_id"), version=fields.get("version"),
                     urgency=escalation.get("urgency"), decision_requested=escalation.get("decision_requested"))
        reason = fields.get("reason") or ""
        if not check.ok or check.duplicate:
            skipped = "duplicate" if check.duplicate else check.reason
            run.record(kind, receiver.name, reason, validation=skipped, **event)
            return check
        run.move(kind, receiver.name, reason, validation="ok", **event)
        run.processed.add(check.contract.handoff_id)
        run.last = check.contract
        if kind == "handoff":
            run.hops += 1
            run.chain.append(receiver.name)
        return check.contract

    def _cut_reason(self, run, fields):
        """Why this handoff must be cut (a cycle, the hop limit), or None."""
        if fields.get("handoff_id") in run.processed:
            return None  # a repeat: validation skips it as a duplicate
        if fields.get("receiver") in run.chain:
            return "cycle: " + " -> ".join(run.chain + [fields["receiver"]])
        if run.hops >= self.max_hops:
            return f"hop limit reached ({self.max_hops} hops)"
        return None

    def _cut(self, run, fields, why):
        """Record the cut and escalate it to the human on call, on behalf of the owner."""
        run.record("cut", fields.get("receiver") or "?", why, handoff_id=fields.get("handoff_id"))
        if self.escalate_to is None:
            raise CoordinationError(f"{run.task.task_id}: {why}, and there is no human to escalate to")
        escalation = self._escalation(run, fields, why)
        return self._transfer(run, "escalation", escalation, _fields(escalation))

    def _escalation(self, run, fields, why):
        """The escalation contract of a cut: the cut handoff's facts and work, sent up with no tools."""
        try:
            base = parse_contract(fields)
        except Exception:
            base = run.last
        if base is None:
            raise CoordinationError(f"{run.task.task_id}: {why}, and no readable contract to escalate")
        run.cuts += 1
        state = run.task.state_version if run.task.state_version is not None else base.state_version
        return HandoffContract.model_validate({
            **base.model_dump(), "handoff_id": f"{base.handoff_id}-cut{run.cuts}", "sender": run.owner,
            "receiver": self.escalate_to, "reason": why, "confirmed_state": "blocked", "state_version": state,
            "next_objective": f"decide how {run.owner} goes on with {run.task.task_id}",
            "authority": {"allowed_tools": [], "forbidden_actions": []},
            "recovery": {"on_reject": "stop", "resume_from": None},
            "escalation": {"urgency": "high", "decision_requested": f"the chain was cut ({why}): how should "
                                                                    f"{run.owner} go on?"}})

    def __repr__(self):
        return (f"Coordinator({list(self.participants)}, escalate_to={self.escalate_to!r}, "
                f"max_hops={self.max_hops})")
