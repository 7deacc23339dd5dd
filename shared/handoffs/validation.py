"""Receiver-side validation: accept a handoff, or reject it with a reason and a next step. Taught in lesson 06.

``accept_handoff`` checks the package before the receiver chooses its first tool; a rejection
is a value (invalid, stale or unauthorized), each with its own next step. Authority is enforced
in code: ``run_receiver`` runs with the granted tools only. See docs/library-reference.md.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from .contract import HandoffContract, InvalidContract, UnsupportedVersion, parse_contract
from .errors import ModelBehaviorError, pydantic_message
from .loop import RunResult
from .package import HandoffPackage
from .runner import run_agent_robust

ROOT = "(root)"
Reason = Literal["invalid", "stale", "unauthorized"]


@dataclass(frozen=True)
class HandoffResult:
    """What the receiver decided about one handoff: accepted, or rejected with a reason and the fields at fault.

    Taught in lesson 06.

    Args:
        ok: whether the handoff is accepted.
        reason: why it was rejected: ``"invalid"``, ``"stale"`` or ``"unauthorized"``; None when accepted.
        contract: the parsed contract, when the package could be read as one.
        errors: one ``{"field": ..., "problem": ...}`` dict per fault, the problem in Spanish.
        duplicate: the handoff was already processed (accepted, next step "skip").
    """

    ok: bool
    reason: Reason | None = None
    contract: HandoffContract | None = None
    errors: tuple[dict[str, str], ...] = ()
    duplicate: bool = False

    @property
    def next_step(self) -> str:
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
    def fields(self) -> list[str]:
        """The names of the fields at fault, in the order of the errors."""
        return [error["field"] for error in self.errors]

    def exposed_tools(self, receiver_tools: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
        """The tools a receiver may use for this handoff: the granted ones when it proceeds, none otherwise.

        Args:
            receiver_tools: every tool the receiver has, by name.

        Returns:
            The ``granted_tools`` when the next step is "proceed"; an empty dict otherwise (a duplicate included).
        """
        if self.next_step != "proceed" or self.contract is None:
            return {}
        return granted_tools(self.contract, receiver_tools)

    def __repr__(self) -> str:
        if self.ok and self.contract is not None:
            return f"HandoffResult(aceptado, {self.contract.handoff_id}, next_step={self.next_step!r})"
        problems = "; ".join(f"{e['field']}: {e['problem']}" for e in self.errors)
        return f"HandoffResult(rechazado {self.reason!r}, next_step={self.next_step!r}, errors=[{problems}])"

    def _repr_markdown_(self) -> str:
        head = f"**{'aceptado' if self.ok else 'rechazado: ' + str(self.reason)}** - siguiente paso: `{self.next_step}`"
        rows = [f"| `{e['field']}` | {e['problem'].replace('|', '/')} |" for e in self.errors]
        return "\n".join([head] + (["", "| campo | problema |", "|---|---|"] + rows if rows else []))


def _error(field: str, problem: str) -> dict[str, str]:
    return {"field": field, "problem": problem}


def _reject(reason: Reason, errors: list[dict[str, str]], contract: HandoffContract | None = None) -> "HandoffResult":
    return HandoffResult(ok=False, reason=reason, contract=contract, errors=tuple(errors))


def _parse(value: object) -> tuple[HandoffContract | None, list[dict[str, str]]]:
    """The contract in ``value``, or the list of errors that stop it from being one."""
    try:
        return parse_contract(value), []
    except ValidationError as error:
        return None, [_error(".".join(str(part) for part in e["loc"]) or ROOT, pydantic_message(e))
                      for e in error.errors()]
    except UnsupportedVersion as error:
        return None, [_error("version", str(error))]
    except InvalidContract as error:  # not a JSON object, not JSON at all, too large, a broken legacy payload
        return None, [_error(ROOT, str(error))]


def _missing_evidence(contract: HandoffContract, evidence_exists: object) -> list[dict[str, str]]:
    """An error for every evidence reference the resolver does not find, or cannot reach."""
    if not callable(evidence_exists):
        return [_error("evidence", f"el resolvedor de evidencia del receptor no es invocable: {evidence_exists!r}")]
    errors = []
    for i, item in enumerate(contract.evidence):
        try:
            found = bool(evidence_exists(item.reference))
        except OSError as error:  # the store holding the evidence is unreachable: the claim is unverifiable
            errors.append(_error(f"evidence.{i}.reference",
                                 f"no se pudo comprobar {item.reference!r}: {type(error).__name__}: {error}"))
            continue
        if not found:
            errors.append(_error(f"evidence.{i}.reference",
                                 f"{item.reference!r} no existe (se borró o se reemplazó)"))
    return errors


def _names(tools: object) -> set[str]:
    """The receiver's tool names: a name, or the names in an iterable; nothing else grants a tool."""
    if isinstance(tools, str):
        return {tools}
    try:
        return {name for name in tools if isinstance(name, str)}  # type: ignore[attr-defined]
    except TypeError:
        return set()


def _seen(handoff_id: str, already_processed: object) -> bool:
    try:
        return handoff_id in already_processed  # type: ignore[operator]
    except TypeError:
        return False


def _state_problem(contract: HandoffContract, state_version: object) -> str | None:
    """Why the package's state version does not match the receiver's, or None when it does (or is unknown)."""
    if state_version is None:
        return None
    if type(state_version) is not int:
        return f"la versión del estado de este receptor, {state_version!r}, no es un número entero: recarga el estado"
    if contract.state_version < state_version:
        return (f"el paquete se armó con la versión {contract.state_version} del estado; la versión actual es "
                f"{state_version}")
    if contract.state_version > state_version:
        return (f"el paquete se armó con la versión {contract.state_version} del estado, más nueva que la "
                f"{state_version} de este receptor: recarga el estado antes de aceptarlo")
    return None


def accept_handoff(value: object, *, expected_task_id: object, allowed_tools: object, state_version: object = None,
                   evidence_exists: object = None, already_processed: object = None) -> HandoffResult:
    """Accept or reject a handoff; never raises, whatever its arguments are. Taught in lesson 06.

    The checks run in this order, and the first that fails decides:

    1. shape, version and task id -> invalid. Nothing else can be read from a package
       that is not one, or that belongs to another run.
    2. a handoff id in ``already_processed`` -> ok, but ``duplicate`` (next step "skip").
       A delivery already confirmed is skipped whatever changed since: doing the work
       moved the state on, so judging it stale would ask for the same work again.
    3. evidence -> invalid. An unverifiable claim is part of the package; its sender,
       who knows where the evidence lives, repairs it.
    4. state version -> stale, when it is older than the receiver's (the package is
       rebuilt before its authority is judged: the new one may ask for something else)
       and when it is newer (the receiver's view is behind: it reloads the state).
    5. authority -> unauthorized, last: stopping a run and escalating is worth it only
       for a package that is otherwise sound and current.

    Receiver arguments of the wrong type fail closed: tools that are not names grant
    nothing, a resolver that is not callable or a state version that is not a whole
    number rejects the package.

    Args:
        value: the package: a ``HandoffContract``, a dict or JSON text.
        expected_task_id: the task this receiver works on; a package of another task is invalid.
        allowed_tools: the tool names the receiver has (one name or an iterable of names).
        state_version: the receiver's current state version; None skips the check.
        evidence_exists: a predicate that says whether an evidence reference resolves (an ``OSError``
            it raises makes the reference unverifiable); None skips the check.
        already_processed: the handoff ids already done (anything that supports ``in``); None skips the check.

    Returns:
        The decision: accepted (perhaps as a duplicate), or rejected with a reason and the fields at fault.
    """
    contract, errors = _parse(value)
    if contract is None:
        return _reject("invalid", errors)
    if contract.task_id != expected_task_id:
        return _reject("invalid", [_error("task_id", f"el paquete es de la tarea {contract.task_id!r}; "
                                                     f"este receptor trabaja en {expected_task_id!r}")], contract)
    if already_processed is not None and _seen(contract.handoff_id, already_processed):
        return HandoffResult(ok=True, contract=contract, duplicate=True)
    if evidence_exists is not None and (errors := _missing_evidence(contract, evidence_exists)):
        return _reject("invalid", errors, contract)
    if problem := _state_problem(contract, state_version):
        return _reject("stale", [_error("state_version", problem)], contract)
    allowed = _names(allowed_tools)
    outside = [_error(f"authority.allowed_tools.{i}", f"la tool {tool!r} está fuera de la autoridad del receptor")
               for i, tool in enumerate(contract.authority.allowed_tools) if tool not in allowed]
    if outside:
        return _reject("unauthorized", outside, contract)
    return HandoffResult(ok=True, contract=contract)


def _forbidden(tool: str, forbidden_actions: list[str]) -> bool:
    """True when the tool's name appears as a whole word in any forbidden action."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(tool)}(?![\w-])")
    return any(pattern.search(action) for action in forbidden_actions)


def granted_tools(contract: HandoffContract,
                  receiver_tools: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """The receiver's tools that the contract allows, minus any named in its forbidden actions. Taught in lesson 06.

    A tool is forbidden when its name appears as a whole word in a forbidden action.

    Args:
        contract: the accepted contract, whose ``authority`` decides.
        receiver_tools: every tool the receiver has, by name.

    Returns:
        The granted tools, by name, in the receiver's order.
    """
    authority = contract.authority
    return {name: function for name, function in receiver_tools.items()
            if name in authority.allowed_tools and not _forbidden(name, authority.forbidden_actions)}


class OutsideAuthority(ModelBehaviorError, PermissionError):
    """A tool call the handoff does not grant."""


class AuthorityGate(dict[str, Callable[..., Any]]):
    """The granted tools; looking up any other name returns a tool that refuses, naming the handoff.

    The refusing tool raises ``OutsideAuthority``, which the dispatcher turns into an ``is_error`` result.

    Args:
        granted: the tools this handoff grants, by name.
        handoff_id: the handoff named in a refusal.
    """

    def __init__(self, granted: Mapping[str, Callable[..., Any]], handoff_id: str) -> None:
        super().__init__(granted)
        self.handoff_id = handoff_id

    def _refusal(self, name: str) -> Callable[..., Any]:
        message = (f"la tool {name!r} está fuera de la autoridad del handoff {self.handoff_id}: no se ejecutó "
                   f"(tools concedidas: {sorted(self)})")

        def refuse(**_input: Any) -> Any:
            raise OutsideAuthority(message)
        return refuse

    def get(self, name: str, default: object = None) -> Callable[..., Any]:
        """Every name answers: the granted tool, or a refusal (the dispatcher looks tools up with get).

        Args:
            name: the tool the model called.
            default: ignored: no name is ever missing.

        Returns:
            The granted tool, or a tool that raises ``OutsideAuthority`` when called.
        """
        return self[name]

    def __missing__(self, name: str) -> Callable[..., Any]:
        return self._refusal(name)

    def __repr__(self) -> str:
        return f"AuthorityGate({self.handoff_id}: {sorted(self)})"


def _section(title: str, items: list[str]) -> list[str]:
    return [f"{title}:"] + [f"- {item}" for item in items] if items else []


def contract_brief(contract: HandoffContract) -> str:
    """The receiver's first message: the objective and the distilled state of the contract, nothing else.

    Taught in lesson 06.

    Args:
        contract: the accepted contract.

    Returns:
        The brief, in Spanish: who handed off and why, the objective, then the verified facts, the
        hypotheses, the work done and remaining, the constraints and the acceptance criteria (empty ones left out).
    """
    lines = [f"Handoff {contract.handoff_id} de {contract.sender} ({contract.reason}).",
             f"Ahora eres dueño de la tarea {contract.task_id}.", f"Objetivo: {contract.next_objective}"]
    lines += _section("Hechos verificados (no los vuelvas a verificar)", contract.facts.verified)
    lines += _section("Hipótesis (SIN VERIFICAR: compruébalas antes de usarlas)", contract.facts.hypotheses)
    lines += _section("Trabajo hecho (no lo repitas)", contract.work.done)
    lines += _section("Trabajo pendiente", contract.work.remaining)
    lines += _section("Restricciones", contract.constraints)
    lines += _section("Criterios de aceptación", contract.acceptance)
    return "\n".join(lines)


def run_receiver(contract: HandoffContract, model: Any, receiver_tools: Mapping[str, Callable[..., Any]],
                 receiver_name: str, max_turns: int = 10,
                 receivers: Sequence[str] = ()) -> RunResult[HandoffPackage]:
    """Run the receiver on the contract's brief with only the granted tools; returns (final, messages, package).

    Run it once ``accept_handoff`` says "proceed". A call to any other tool comes back as an
    ``is_error`` result saying it is outside this handoff's authority. ``receivers`` lists whom
    the receiver may hand off to in turn (nobody by default: onward hops are the coordinator's).

    Taught in lesson 06.

    Args:
        contract: the accepted contract; its brief is the receiver's first message.
        model: the receiver's model (scripted or live).
        receiver_tools: every tool the receiver has, by name; only the granted ones run.
        receiver_name: the receiver's name, as the run records it.
        max_turns: the most model turns before the run gives up.
        receivers: the participants the receiver may hand off to.

    Returns:
        How the run ended: the final turn, or the package of an onward handoff; and the whole history.

    Raises:
        MaxTurnsExceeded: the receiver used ``max_turns`` turns without a final answer or a handoff.
        ModelBehaviorError: the model returned a turn the run cannot go on with.
    """  # noqa: DOC502
    gate = AuthorityGate(granted_tools(contract, receiver_tools), contract.handoff_id)
    return run_agent_robust(contract_brief(contract), model, gate, receiver_name, receivers, max_turns)
