"""The lab of lesson 11 (seed 001): a support desk of agents run by the coordinator, as one JSON result.

``run_lab("multiagent", seed=N)`` draws a small queue of tickets from ``N``, runs each one
through the same ``Coordinator`` (triage, infra, billing and a human on call) and returns a
plain dict: the inputs and every decision, a structured result with the chain metrics, the
``evidence`` (facts a reader can check against the printed data) and the ``limitations``.
The same seed always gives the same dict, and so byte-identical JSON; another seed, another
queue. Nothing here calls a model: every agent is scripted, the clock is logical.
"""

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..contract import HandoffContract
from ..coordinator import MAX_HOPS, Coordination, Coordinator
from ..errors import UsageError, pydantic_problems
from ..participants import Escalate, Finish, Human, OfferHandoff, Participant, Progress, Return, ScriptedAgent, Task
from .ticket import TRIAGE_TO_INFRA, infra_tools

LAB_KINDS = ("multiagent",)
CYCLE = "ciclo"  # how the coordinator's reason for cutting a cycle begins (the other cut is the hop limit)
TICKETS = 6
HUMAN = "guardia"
INFRA_TOOLS = tuple(infra_tools())
BILLING_TOOLS = ("read_invoices", "issue_refund")

SCENARIOS = {
    "pago_502": "el pago falla con error 502 desde el último deploy",
    "reembolso": "me cobraron dos veces la misma factura",
    "mal_ruteado": "no puedo descargar mis facturas y el panel da error 502",
    "receptor_inexistente": "necesito revisar el contrato de mi plan con legal",
    "rebote": "el cobro de mi plan falló y no sé si es la tarjeta o la plataforma",
}
"""The five kinds of ticket the lab draws, with the request a merchant writes for each."""


class LabError(UsageError, ValueError):
    """The lab cannot run this: an unknown kind, a seed that is not an integer, a bad extension."""


class StudentExtension(BaseModel):
    """The challenge of the lab: what the student tested, measured and concluded, and a limit of it."""

    model_config = ConfigDict(extra="forbid")

    assumption: str = Field(min_length=1, description="The assumption being tested.")
    measurement: dict[str, Any] = Field(min_length=1, description="What was measured, as named values.")
    conclusion: str = Field(min_length=1, description="What the measurement supports, and what it does not.")
    limitation: str = Field(min_length=1, description="Why the conclusion may not hold outside the lab.")


def _contract(task: Task, number: int, sender: str, receiver: str, **changes: Any) -> HandoffContract:
    """Seed 001's triage -> infra contract re-addressed to one ticket and one hop, with ``changes``."""
    data = {**TRIAGE_TO_INFRA.model_dump(), "handoff_id": f"{task.task_id}-H{number}", "task_id": task.task_id,
            "sender": sender, "receiver": receiver, **changes}
    return HandoffContract.model_validate(data)


def _to_billing(task: Task, number: int, sender: str, reason: str) -> HandoffContract:
    return _contract(task, number, sender, "billing", reason=reason,
                     next_objective="resolver lo que toca a facturación",
                     authority={"allowed_tools": ["read_invoices", "issue_refund"]},
                     acceptance=["el comercio confirma que su factura está bien"])


def _to_infra(task: Task, number: int, sender: str, reason: str) -> HandoffContract:
    return _contract(task, number, sender, "infra", reason=reason)


def _closes(_task: Task, got: Any) -> Finish:
    """Triage closes the ticket with what came back to it: a resolution, or the human's decision."""
    return Finish(f"cerrado: {getattr(got, 'resolution', None) or got.answer}")


def _participants(kind: str, task: Task, approve: bool) -> list[Participant]:
    """Triage, infra, billing and the human on call, scripted for one kind of ticket."""
    triage: list[Any] = [OfferHandoff(_to_billing(task, 1, "triage", "habla de facturas: es de facturación")), _closes]
    infra: list[Any] = [Progress("sin trabajo")]
    billing: list[Any] = [Progress("sin trabajo")]
    answer = "aprobado: rollback a v2.40" if approve else "rechazado: sin rollback"
    if kind == "pago_502":  # infra may not roll back on its own: it escalates, the human decides
        escalation = _contract(task, 2, "infra", HUMAN, reason="el rollback necesita aprobación",
                               next_objective="aprobar o rechazar el rollback", confirmed_state="blocked",
                               authority={"allowed_tools": []},
                               escalation={"urgency": "high", "decision_requested": "aprobar rollback a v2.40"})
        triage = [OfferHandoff(_to_infra(task, 1, "triage", "pagos degradado: no es error de cliente")), _closes]
        infra = [Escalate(escalation), lambda _t, got: Return("rollback a v2.40 ejecutado" if got.answer.startswith(
            "aprobado") else "sin rollback: se mitiga con reintentos")]
    elif kind == "reembolso":
        billing = [Return("reembolso emitido por el cobro duplicado")]
    elif kind == "mal_ruteado":  # billing -> infra -> billing is a cycle: the coordinator cuts it
        answer = "infra atiende el error 502; facturación, la descarga"
        billing = [OfferHandoff(_to_infra(task, 2, "billing", "el panel da error 502: es de infraestructura"))]
        infra = [OfferHandoff(_to_billing(task, 3, "infra", "la descarga de facturas es de facturación")),
                 lambda _t, got: Return(f"{HUMAN}: {got.answer}")]
    elif kind == "receptor_inexistente":  # "legal" is not at the desk: the handoff comes back to repair
        triage = [OfferHandoff(_contract(task, 1, "triage", "legal", reason="el contrato del plan lo revisa legal",
                                    next_objective="revisar el contrato del plan del comercio",
                                    acceptance=["el comercio sabe qué dice su contrato"])),
                  lambda _t, got: OfferHandoff(_to_billing(task, 2, "triage", "revisar el plan es de facturación")),
                  _closes]
        billing = [Return("plan revisado por facturación; legal no es un agente de la mesa")]
    elif kind == "rebote":  # each one gives it back and triage tries the other: the fourth hop is past the limit
        triage = [OfferHandoff(_to_billing(task, 1, "triage", "un cobro fallido es de facturación")),
                  lambda _t, got: OfferHandoff(_to_infra(task, 2, "triage", f"facturación dice: {got.resolution}")),
                  lambda _t, got: OfferHandoff(_to_billing(task, 3, "triage", f"infra dice: {got.resolution}")),
                  lambda _t, got: OfferHandoff(_to_infra(task, 4, "triage", f"facturación insiste: {got.resolution}")),
                  _closes]
        billing = [Return("la tarjeta está vigente: es la plataforma"), Return("sigue sin ser la tarjeta")]
        infra = [Return("la plataforma responde bien: es la tarjeta")]
        answer = "se llama al comercio y se revisa el cobro con el banco"
    return [ScriptedAgent("triage", triage, tools=["read_tickets"]),
            ScriptedAgent("infra", infra, tools=INFRA_TOOLS),
            ScriptedAgent("billing", billing, tools=BILLING_TOOLS), Human(HUMAN, answers=[answer])]


def _decisions(run: Coordination) -> list[dict[str, Any]]:
    """Every transfer, rejection, cut and human answer of one run, as plain data."""
    steps = []
    for event in run.trace:
        if event.kind in ("start", "work", "finish"):
            continue
        step = {"t": event.time, "kind": event.kind, "from": event.sender, "to": event.receiver,
                "reason": event.reason}
        if event.validation:
            step["validation"] = event.validation
        steps.append(step)
    return steps


def _tickets(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    kinds = list(SCENARIOS)
    drawn = kinds + [rng.choice(kinds) for _ in range(TICKETS - len(kinds))]
    rng.shuffle(drawn)
    return [{"ticket": f"TCK-{5000 + seed % 1000 * 10 + i}", "kind": kind, "request": SCENARIOS[kind],
             "human_approves": rng.random() < 0.7} for i, kind in enumerate(drawn)]


def _run_multiagent(seed: int) -> dict[str, Any]:
    tickets, runs = _tickets(seed), []
    for ticket in tickets:
        task = Task(ticket["ticket"], ticket["request"], owner="triage", state_version=TRIAGE_TO_INFRA.state_version)
        coordinator = Coordinator(_participants(ticket["kind"], task, ticket["human_approves"]), escalate_to=HUMAN)
        runs.append(coordinator.run(task))
    decisions = [{"ticket": run.task.task_id, "route": _route(run), "hops": run.hops,
                  "final_owner": run.final_owner, "result": run.result, "steps": _decisions(run)} for run in runs]
    rejections: Counter[str] = Counter()
    cuts, humans, attempts = [], [], 0
    for run in runs:
        metrics = run.trace.metrics()
        rejections.update(metrics.rejections)
        attempts += metrics.attempts
        cuts += [e.reason for e in run.trace if e.kind == "cut"]
        humans += [run.task.task_id for e in run.trace if e.kind == "escalation" and e.receiver == HUMAN][:1]
    result = {
        "tickets": len(runs),
        "closed_by_original_owner": sum(run.final_owner == "triage" for run in runs),
        "hops_per_ticket": {run.task.task_id: run.hops for run in runs},
        "max_hops_seen": max(run.hops for run in runs),
        "transfer_attempts": attempts,
        "rejections": dict(sorted(rejections.items())),
        "rejection_rate": round(sum(rejections.values()) / attempts, 3) if attempts else 0.0,
        "cycles_cut": sum(reason.startswith(CYCLE) for reason in cuts),
        "hop_limit_cuts": sum(not reason.startswith(CYCLE) for reason in cuts),
        "escalated_to_human": sorted(set(humans)),
    }
    return {
        "kind": "multiagent",
        "seed": seed,
        "inputs": {"tickets": tickets, "agents": ["triage", "infra", "billing"], "human_on_call": HUMAN,
                   "max_hops": MAX_HOPS},
        "decisions": decisions,
        "result": result,
        "evidence": _evidence(runs, result),
        "limitations": [
            "Los agentes siguen un guion: no hay modelo, así que el laboratorio prueba el protocolo "
            "(dueño, saltos, rechazos, escalamiento), no la calidad de las decisiones de un modelo.",
            "El reloj es lógico (un paso por evento): los tiempos por dueño no son latencias reales.",
            "Seis tickets de cinco tipos fijos: la tasa de rechazo describe esta muestra, no una operación real.",
            "La persona de guardia responde con un texto fijo; en producción hay que medir su demora y sus errores.",
            "Todo corre en un proceso y en memoria: no hay caídas, reintentos ni entregas duplicadas.",
        ],
    }


def _route(run: Coordination) -> list[str]:
    return [owner for i, owner in enumerate(run.owners) if i == 0 or owner != run.owners[i - 1]]


def _evidence(runs: list[Coordination], result: dict[str, Any]) -> list[str]:
    """Sentences a reader can check against ``decisions`` and ``result`` in the same JSON."""
    facts = [f"{len(runs)} tickets; {result['closed_by_original_owner']} los cerró triage, su dueño original."]
    for run in runs:
        route = " -> ".join(_route(run))
        facts.append(f"{run.task.task_id} ({run.task.request}): {route}; {run.hops} salto(s); \"{run.result}\".")
    if result["rejections"]:
        facts.append(f"Rechazos por motivo: {result['rejections']} de {result['transfer_attempts']} intentos "
                     f"de transferencia (tasa {result['rejection_rate']}).")
    facts.append(f"Ningún ticket pasó de {result['max_hops_seen']} salto(s); el límite es "
                 f"{MAX_HOPS}. Ciclos cortados: {result['cycles_cut']}; cortes por el límite de saltos: "
                 f"{result['hop_limit_cuts']}.")
    return facts


def run_lab(kind: str = "multiagent", seed: int = 0) -> dict[str, Any]:
    """Run the lab ``kind`` with ``seed``; returns a JSON-ready dict with kind, seed, evidence and limitations."""
    if kind not in LAB_KINDS:
        raise LabError(f"tipo de laboratorio desconocido {kind!r}; los tipos son {list(LAB_KINDS)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise LabError(f"la semilla debe ser un número entero; se recibió {seed!r}")
    return _run_multiagent(seed)


def add_extension(result: dict[str, Any], path: Path) -> dict[str, Any]:
    """``result`` with the ``student_extension`` read from the JSON file ``path``; no other key changes."""
    try:
        extension = StudentExtension.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except OSError as error:
        raise LabError(f"no se puede leer la extensión {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise LabError(f"la extensión {path} no es JSON: {error}") from None
    except ValidationError as error:
        problems = "; ".join(pydantic_problems(error, root="extension"))
        raise LabError(f"la extensión {path} no es una student_extension: {problems}") from None
    return {**result, "student_extension": extension.model_dump()}
