"""Receiver-side validation: accept a handoff, or reject it with a reason and a next step. Taught in lesson 06.

The receiver checks the package before it chooses its first tool (seed 002). A rejection
is an operating state, not an exception: each reason has its own next step.

============  ===============================================  ==========================
reason        what went wrong                                  next step
============  ===============================================  ==========================
invalid       bad shape or JSON, unsupported version, another  ``repair``: the sender gets
              task's id, evidence that does not resolve        the errors and resends
stale         the package was built on an older state          ``reload``: reload the state
                                                               and build a new package
unauthorized  it asks for a tool outside the receiver's        ``escalate`` or ``stop``, as
              authority                                        the contract's recovery says
============  ===============================================  ==========================

Authority is enforced in code: the receiver runs with ``granted_tools`` only, and a call
to any other tool comes back as an error result. Prose such as "you may publish" in the
objective grants nothing.
"""

import json
import re
from dataclasses import dataclass
from typing import Literal, Optional

from pydantic import ValidationError

from .contract import HandoffContract, UnsupportedVersion, parse_contract
from .runner import run_agent_robust

ROOT = "(root)"


@dataclass(frozen=True)
class HandoffResult:
    """What the receiver decided about one handoff: accepted, or rejected with a reason and the fields at fault."""

    ok: bool
    reason: Optional[Literal["invalid", "stale", "unauthorized"]] = None
    contract: Optional[HandoffContract] = None
    errors: tuple = ()
    duplicate: bool = False

    @property
    def next_step(self):
        """proceed, skip (a duplicate), repair (invalid), reload (stale), or escalate / stop (unauthorized)."""
        if self.ok:
            return "skip" if self.duplicate else "proceed"
        if self.reason == "invalid":
            return "repair"
        if self.reason == "stale":
            return "reload"
        on_reject = self.contract.recovery.on_reject if self.contract else None
        return on_reject if on_reject in ("escalate", "stop") else "escalate"

    @property
    def fields(self):
        """The names of the fields at fault, in the order of the errors."""
        return [error["field"] for error in self.errors]

    def exposed_tools(self, receiver_tools):
        """The tools a receiver may use for this handoff: the granted ones when it proceeds, none otherwise."""
        if self.next_step != "proceed":
            return {}
        return granted_tools(self.contract, receiver_tools)

    def __repr__(self):
        if self.ok:
            return f"HandoffResult(ok, {self.contract.handoff_id}, next_step={self.next_step!r})"
        problems = "; ".join(f"{e['field']}: {e['problem']}" for e in self.errors)
        return f"HandoffResult(rejected {self.reason!r}, next_step={self.next_step!r}, errors=[{problems}])"

    def _repr_markdown_(self):
        head = f"**{'accepted' if self.ok else 'rejected: ' + self.reason}** - next step: `{self.next_step}`"
        rows = [f"| `{e['field']}` | {e['problem'].replace('|', '/')} |" for e in self.errors]
        return "\n".join([head] + (["", "| field | problem |", "|---|---|"] + rows if rows else []))


def _error(field, problem):
    return {"field": field, "problem": problem}


def _reject(reason, errors, contract=None):
    return HandoffResult(ok=False, reason=reason, contract=contract, errors=tuple(errors))


def _parse(value):
    """The contract in ``value``, or the list of errors that stop it from being one."""
    if isinstance(value, (str, bytes, bytearray)):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:  # malformed JSON, bad UTF-8, absurd nesting
            return None, [_error(ROOT, f"not valid JSON: {type(error).__name__}: {error}")]
    try:
        if isinstance(value, HandoffContract):
            value = value.model_dump()
        if not isinstance(value, dict):
            return None, [_error(ROOT, f"a contract must be a JSON object, got {type(value).__name__}")]
        return parse_contract(value), []
    except ValidationError as error:
        return None, [_error(".".join(str(part) for part in e["loc"]) or ROOT, e["msg"]) for e in error.errors()]
    except UnsupportedVersion as error:
        return None, [_error("version", str(error))]
    except Exception as error:  # any other shape problem, e.g. a legacy payload that cannot migrate
        return None, [_error(ROOT, f"{type(error).__name__}: {error}")]


def _missing_evidence(contract, evidence_exists):
    """An error for every evidence reference the resolver does not find, or cannot check."""
    errors = []
    for i, item in enumerate(contract.evidence):
        try:
            found = bool(evidence_exists(item.reference))
        except Exception as error:
            errors.append(_error(f"evidence.{i}.reference",
                                 f"could not check {item.reference!r}: {type(error).__name__}: {error}"))
            continue
        if not found:
            errors.append(_error(f"evidence.{i}.reference",
                                 f"{item.reference!r} does not exist (deleted or replaced)"))
    return errors


def accept_handoff(value, *, expected_task_id, allowed_tools, state_version=None, evidence_exists=None,
                   already_processed=None):
    """Accept or reject a handoff; never raises, whatever ``value`` is.

    The checks run in this order, and the first that fails decides:

    1. shape, version and task id -> invalid. Nothing else can be read from a package
       that is not one, or that belongs to another run.
    2. a handoff id in ``already_processed`` -> ok, but ``duplicate`` (next step "skip").
       A delivery already confirmed is skipped whatever changed since: doing the work
       moved the state on, so judging it stale would ask for the same work again.
    3. evidence -> invalid. An unverifiable claim is part of the package; its sender,
       who knows where the evidence lives, repairs it.
    4. state version -> stale. A package built on an older state is rebuilt before its
       authority is judged: the new package may ask for something else.
    5. authority -> unauthorized, last: stopping a run and escalating is worth it only
       for a package that is otherwise sound and current.
    """
    contract, errors = _parse(value)
    if contract is None:
        return _reject("invalid", errors)
    if contract.task_id != expected_task_id:
        return _reject("invalid", [_error("task_id", f"the package belongs to task {contract.task_id!r}; "
                                                     f"this receiver works on {expected_task_id!r}")], contract)
    if already_processed is not None and contract.handoff_id in already_processed:
        return HandoffResult(ok=True, contract=contract, duplicate=True)
    if evidence_exists is not None and (errors := _missing_evidence(contract, evidence_exists)):
        return _reject("invalid", errors, contract)
    if state_version is not None and contract.state_version < state_version:
        return _reject("stale", [_error("state_version", f"the package was built at state version "
                                                         f"{contract.state_version}; the current state is "
                                                         f"{state_version}")], contract)
    allowed = set(allowed_tools)
    outside = [_error(f"authority.allowed_tools.{i}", f"tool {tool!r} is outside the receiver's authority")
               for i, tool in enumerate(contract.authority.allowed_tools) if tool not in allowed]
    if outside:
        return _reject("unauthorized", outside, contract)
    return HandoffResult(ok=True, contract=contract)


def _forbidden(tool, forbidden_actions):
    """True when the tool's name appears as a whole word in any forbidden action."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(tool)}(?![\w-])")
    return any(pattern.search(action) for action in forbidden_actions)


def granted_tools(contract, receiver_tools):
    """The receiver's tools that the contract allows, minus any named in its forbidden actions."""
    authority = contract.authority
    return {name: function for name, function in receiver_tools.items()
            if name in authority.allowed_tools and not _forbidden(name, authority.forbidden_actions)}


class OutsideAuthority(PermissionError):
    """A tool call the handoff does not grant."""


class AuthorityGate(dict):
    """The granted tools; looking up any other name returns a tool that refuses, naming the handoff."""

    def __init__(self, granted, handoff_id):
        super().__init__(granted)
        self.handoff_id = handoff_id

    def _refusal(self, name):
        message = (f"tool {name!r} is refused: it is outside the authority of handoff {self.handoff_id} "
                   f"(granted tools: {sorted(self)})")

        def refuse(**_input):
            raise OutsideAuthority(message)
        return refuse

    def get(self, name, default=None):
        """Every name answers: the granted tool, or a refusal (the dispatcher looks tools up with get)."""
        return self[name]

    def __missing__(self, name):
        return self._refusal(name)

    def __repr__(self):
        return f"AuthorityGate({self.handoff_id}: {sorted(self)})"


def _section(title, items):
    return [f"{title}:"] + [f"- {item}" for item in items] if items else []


def contract_brief(contract):
    """The receiver's first message: the objective and the distilled state of the contract, nothing else."""
    lines = [f"Handoff {contract.handoff_id} from {contract.sender} ({contract.reason}).",
             f"You now own task {contract.task_id}.", f"Objective: {contract.next_objective}"]
    lines += _section("Verified facts (do not verify them again)", contract.facts.verified)
    lines += _section("Hypotheses (UNVERIFIED: check before relying on them)", contract.facts.hypotheses)
    lines += _section("Work done (do not repeat it)", contract.work.done)
    lines += _section("Remaining work", contract.work.remaining)
    lines += _section("Constraints", contract.constraints)
    lines += _section("Acceptance criteria", contract.acceptance)
    return "\n".join(lines)


def run_receiver(contract, model, receiver_tools, receiver_name, max_iterations=10, receivers=()):
    """Run the receiver on the contract's brief with only the granted tools; returns (final, messages, package).

    Run it once ``accept_handoff`` says "proceed". A call to any other tool comes back as an
    ``is_error`` result saying it is outside this handoff's authority. ``receivers`` lists whom
    the receiver may hand off to in turn (nobody by default: onward hops are the coordinator's).
    """
    gate = AuthorityGate(granted_tools(contract, receiver_tools), contract.handoff_id)
    return run_agent_robust(contract_brief(contract), model, gate, receiver_name, receivers, max_iterations)
