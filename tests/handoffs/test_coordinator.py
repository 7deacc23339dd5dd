"""The coordinator: one owner at a time, hop limit, cycles, a human on call, the TCK-4812 ticket."""

import time

import pytest

from handoffs import coordinator as coordinator_module
from handoffs.contract import HandoffContract
from handoffs.coordinator import (
    MAX_HOPS,
    CoordinationError,
    Coordinator,
    Decision,
    Escalate,
    Finish,
    Human,
    InvalidOutcome,
    ModelAgent,
    OfferHandoff,
    Progress,
    Return,
    ScriptedAgent,
    Task,
    UnknownParticipant,
    escalation_prompt,
)
from handoffs.errors import UsageError
from handoffs.examples.ticket import TICKET_ID, TRIAGE_TO_INFRA, infra_tools
from handoffs.messages import text_block, tool_use_block, turn
from handoffs.models import ScriptedModel
from handoffs.policies import HANDOFF_TOOL_NAME

TICKET = Task(TICKET_ID, "el pago falla desde ayer con error 502", owner="triage",
              state_version=TRIAGE_TO_INFRA.state_version)
INFRA_TOOLS = tuple(infra_tools())  # check_status_page, search_logs, list_deploys, rollback_deploy


def contract(handoff_id, sender, receiver, **changes):
    """Seed 001's triage -> infra contract, re-addressed; ``changes`` override fields."""
    data = {**TRIAGE_TO_INFRA.model_dump(), "handoff_id": handoff_id, "sender": sender, "receiver": receiver}
    return HandoffContract.model_validate({**data, **changes})


ESCALATION = contract("TCK-4812-H2", "infra", "guardia", reason="el rollback necesita aprobación de negocio",
                      next_objective="aprobar o rechazar el rollback", confirmed_state="blocked",
                      authority={"allowed_tools": []},
                      escalation={"urgency": "high", "decision_requested": "aprobar rollback a v2.40"})


def ticket_participants(human=None):
    """Seed 001's ticket: triage verifies and hands off, infra escalates the rollback, the human decides."""
    triage = ScriptedAgent("triage", [
        Progress("servicio degradado: no es un error del usuario"),                           # t1
        OfferHandoff(TRIAGE_TO_INFRA),                                                              # t2
        Finish("pagos restaurados con rollback a v2.40; ticket TCK-4812 cerrado"),
    ], tools=["read_tickets"])
    infra = ScriptedAgent("infra", [
        Progress("regresión de v2.41 confirmada; el rollback está fuera de mi autoridad"),  # t3
        Escalate(ESCALATION),                                                                   # t4
        lambda task, got: Progress("rollback a v2.40 ejecutado") if got.answer.startswith("aprobado")
        else Return("rollback rechazado por negocio"),                                          # t5
        Return("pagos restaurados: rollback a v2.40 aprobado y ejecutado"),
    ], tools=INFRA_TOOLS)
    return [triage, infra, human or Human("guardia", answers=["aprobado: rollback a v2.40"])]


def assert_one_owner_at_a_time(run):
    """The ownership log is contiguous, one owner per span, from the start to the finish."""
    spans, events = run.ownership, run.trace.for_task(run.task.task_id)
    assert spans[0].start == events[0].time and spans[-1].end == events[-1].time
    assert all(earlier.end == later.start for earlier, later in zip(spans, spans[1:], strict=False))
    assert all(earlier.owner != later.owner for earlier, later in zip(spans, spans[1:], strict=False))
    assert spans[-1].owner == run.final_owner


def test_ticket_tck_4812_end_to_end():
    run = Coordinator(ticket_participants()).run(TICKET)
    assert run.owners == ("triage", "triage", "infra", "infra", "guardia", "infra", "infra", "triage")
    assert run.hops == 1 and run.final_owner == "triage"
    assert run.result == "pagos restaurados con rollback a v2.40; ticket TCK-4812 cerrado"
    assert [(e.kind, e.sender, e.receiver, e.time) for e in run.trace] == [
        ("start", "usuario", "triage", 0), ("work", "triage", "triage", 1), ("handoff", "triage", "infra", 2),
        ("work", "infra", "infra", 3), ("escalation", "infra", "guardia", 4), ("decision", "guardia", "infra", 5),
        ("work", "infra", "infra", 6), ("return", "infra", "triage", 7), ("finish", "triage", "usuario", 8)]
    escalation = run.trace[4]
    assert (escalation.validation, escalation.urgency, escalation.decision_requested) == (
        "ok", "high", "aprobar rollback a v2.40")
    assert [(s.owner, s.start, s.end) for s in run.ownership] == [
        ("triage", 0, 2), ("infra", 2, 4), ("guardia", 4, 5), ("infra", 5, 7), ("triage", 7, 8)]
    assert_one_owner_at_a_time(run)
    assert repr(run).startswith("Coordination(TCK-4812: triage -> infra -> guardia -> infra -> triage, hops=1")


def test_the_receiver_gets_the_contract_and_the_escalator_gets_the_decision():
    seen = []
    def remember(outcome):
        return lambda task, got: seen.append(got) or (outcome(task, got) if callable(outcome) else outcome)
    participants = ticket_participants()
    infra = participants[1]
    infra.script[0] = remember(infra.script[0])
    infra.script[2] = remember(infra.script[2])
    Coordinator(participants).run(TICKET)
    assert seen[0] == TRIAGE_TO_INFRA
    assert (seen[0].next_objective, seen[0].facts.verified, seen[0].work.done, seen[0].work.remaining,
            seen[0].constraints) == ("restaurar pagos", ["502 desde 09:31", "deploy v2.41 a las 09:28"],
                                     ["descartado error de cliente"], ["correlacionar con deploy"], ["SLA 4h"])
    assert seen[1] == Decision("aprobado: rollback a v2.40", to="infra")


def test_a_refused_rollback_goes_back_without_executing():
    run = Coordinator(ticket_participants(Human("guardia", answers=["rechazado"]))).run(TICKET)
    assert "rollback a v2.40 ejecutado" not in [e.reason for e in run.trace]
    assert run.trace[-2].reason == "rollback rechazado por negocio" and run.final_owner == "triage"


def test_same_run_twice_gives_the_same_trace_and_real_time_works():
    first = Coordinator(ticket_participants()).run(TICKET)
    again = Coordinator(ticket_participants()).run(TICKET)
    assert first.trace.to_jsonl() == again.trace.to_jsonl()
    timed = Coordinator(ticket_participants(), clock=time.monotonic).run(TICKET)
    times = [e.time for e in timed.trace]
    assert times == sorted(times)
    assert_one_owner_at_a_time(timed)


def test_human_answers_through_a_callback_and_sees_urgency_and_decision():
    prompts = []
    def on_call(prompt):
        prompts.append(prompt)
        return "  aprobado, adelante  "
    run = Coordinator(ticket_participants(Human("guardia", ask=on_call))).run(TICKET)
    assert len(prompts) == 1
    assert prompts[0].startswith("ESCALAMIENTO [high] tarea TCK-4812 de infra\n"
                                 "Decisión solicitada: aprobar rollback a v2.40\n"
                                 "Motivo: el rollback necesita aprobación de negocio\n")
    assert "\nHechos verificados: 502 desde 09:31" in prompts[0] and prompts[0].endswith("\nTu respuesta: ")
    assert run.trace[5].reason == "aprobado, adelante"
    assert prompts[0] == escalation_prompt(ESCALATION)


def test_human_can_answer_through_input(monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "aprobado")
    run = Coordinator(ticket_participants(Human("guardia", ask=input))).run(TICKET)
    assert run.trace[5].kind == "decision" and run.trace[5].reason == "aprobado"


def relay(name, to, task_id="TCK-4812"):
    """An agent that hands the task to ``to`` once, then finishes with whatever it gets back."""
    return ScriptedAgent(name, [OfferHandoff(contract(f"{task_id}-{name}-{to}", name, to)),
                        lambda task, got: Finish(f"{name} cierra: {got.answer}")], tools=INFRA_TOOLS)


def test_hop_limit_cuts_the_chain_and_escalates():
    agents = [relay("a", "b"), relay("b", "c"), relay("c", "d"), relay("d", "e"), relay("e", "a")]
    run = Coordinator(agents + [Human("guardia", answers=["cerrar y abrir incidente"])]).run(
        Task("TCK-4812", "cadena larga", owner="a"))
    assert run.hops == 3
    assert run.owners == ("a", "b", "c", "d", "guardia", "d")
    cut, escalation = run.trace[4], run.trace[5]
    assert (cut.kind, cut.sender, cut.receiver, cut.reason) == ("cut", "d", "e",
                                                                "límite de saltos alcanzado (3 saltos)")
    assert (escalation.kind, escalation.receiver, escalation.validation, escalation.urgency) == (
        "escalation", "guardia", "ok", "high")
    assert run.result == "d cierra: cerrar y abrir incidente"
    assert "e" not in [e.receiver for e in run.trace if e.moves_owner]
    assert_one_owner_at_a_time(run)


def test_a_lower_hop_limit_cuts_earlier():
    agents = [relay("a", "b"), relay("b", "c"), relay("c", "d")]
    run = Coordinator(agents + [Human("guardia", answers=["ok"])], max_hops=1).run(Task("TCK-4812", "x", owner="a"))
    assert run.hops == 1 and run.owners == ("a", "b", "guardia", "b")


def test_cycle_a_b_a_is_cut_and_escalated():
    a = ScriptedAgent("a", [OfferHandoff(contract("h-ab", "a", "b")), Finish("a cierra")], tools=INFRA_TOOLS)
    b = ScriptedAgent("b", [OfferHandoff(contract("h-ba", "b", "a")), lambda task, got: Return(got.answer)],
                      tools=INFRA_TOOLS)
    run = Coordinator([a, b, Human("guardia", answers=["b devuelve con lo averiguado"])]).run(
        Task("TCK-4812", "ciclo", owner="a"))
    assert run.owners == ("a", "b", "guardia", "b", "a")
    assert run.hops == 1 and run.final_owner == "a"
    assert [e.reason for e in run.trace if e.kind == "cut"] == ["ciclo: a -> b -> a"]
    assert [e.kind for e in run.trace] == ["start", "handoff", "cut", "escalation", "decision", "return", "finish"]
    escalation = run.trace[3]
    assert (escalation.reason, escalation.decision_requested) == (
        "ciclo: a -> b -> a", "se cortó la cadena (ciclo: a -> b -> a): ¿cómo debe seguir b?")
    assert "    Note over b,a: corte: ciclo: a -> b -> a" in run.trace.diagram().splitlines()
    assert_one_owner_at_a_time(run)


def test_without_a_human_a_cut_is_an_error():
    a = ScriptedAgent("a", [OfferHandoff(contract("h-aa", "a", "a"))], tools=INFRA_TOOLS)
    with pytest.raises(CoordinationError, match="ciclo: a -> a, y no hay ningún humano"):
        Coordinator([a]).run(Task("TCK-4812", "x", owner="a"))


REJECTED = {  # seed 002: another run's task id, an older state, a tool outside the receiver's authority
    "invalid": (contract("TCK-9999-H1", "triage", "infra", task_id="TCK-9999"), "repair"),
    "stale": (contract("TCK-4812-H1", "triage", "infra", state_version=TICKET.state_version - 1), "reload"),
    "unauthorized": (contract("TCK-4812-H1", "triage", "infra", authority={"allowed_tools": ["drop_database"]}),
                     "escalate"),
}


@pytest.mark.parametrize("reason", sorted(REJECTED))
def test_a_rejected_handoff_leaves_the_sender_as_owner(reason):
    bad, next_step = REJECTED[reason]
    got = []
    triage = ScriptedAgent("triage", [OfferHandoff(bad), lambda task, result: got.append(result) or Finish("sigo yo")])
    infra = ScriptedAgent("infra", [Finish("no debería actuar")], tools=INFRA_TOOLS)
    run = Coordinator([triage, infra]).run(TICKET)
    assert run.owners == ("triage", "triage") and run.final_owner == "triage" and run.hops == 0
    assert (got[0].ok, got[0].reason, got[0].next_step) == (False, reason, next_step)
    assert run.trace[1].validation == reason and not run.trace[1].moves_owner
    assert run.trace.metrics().rejections == {reason: 1}
    assert_one_owner_at_a_time(run)


def test_a_malformed_payload_is_rejected_as_invalid_and_repaired():
    raw = {"handoff_id": "TCK-4812-H1", "sender": "triage", "receiver": "infra", "task_id": "TCK-4812"}
    triage = ScriptedAgent("triage", [OfferHandoff(raw), lambda task, result: OfferHandoff(TRIAGE_TO_INFRA)
                              if result.next_step == "repair" else Finish("?"), Finish("cerrado")])
    infra = ScriptedAgent("infra", [Return("hecho")], tools=INFRA_TOOLS)
    run = Coordinator([triage, infra]).run(TICKET)
    assert [e.validation for e in run.trace if e.kind == "handoff"] == ["invalid", "ok"]
    assert run.owners == ("triage", "triage", "infra", "triage") and run.hops == 1


def test_a_repeated_handoff_is_skipped_not_cut():
    triage = ScriptedAgent("triage", [OfferHandoff(TRIAGE_TO_INFRA), OfferHandoff(TRIAGE_TO_INFRA.to_json()),
                              lambda task, result: Finish(result.next_step)])
    infra = ScriptedAgent("infra", [Return("hecho")], tools=INFRA_TOOLS)
    run = Coordinator([triage, infra]).run(TICKET)
    assert run.result == "skip" and run.hops == 1
    assert [e.validation for e in run.trace if e.kind == "handoff"] == ["ok", "duplicate"]
    assert not any(e.kind == "cut" for e in run.trace)
    assert "    infra-->>triage: omitido: duplicate" in run.trace.diagram().splitlines()


def test_only_the_owner_may_hand_off():
    triage = ScriptedAgent("triage", [OfferHandoff(contract("TCK-4812-H1", "infra", "triage"))])
    with pytest.raises(CoordinationError, match="el contrato dice que el emisor es 'infra'"):
        Coordinator([triage, ScriptedAgent("infra", [])]).run(TICKET)


def test_a_script_that_runs_out_and_a_run_that_never_ends_are_errors():
    with pytest.raises(CoordinationError, match="el agente 'triage' no tiene resultado para el paso 0"):
        Coordinator([ScriptedAgent("triage", [])]).run(TICKET)
    busy = ScriptedAgent("triage", [Progress("pensando")] * 10)
    with pytest.raises(CoordinationError, match="no terminó después de 5 pasos"):
        Coordinator([busy], max_steps=5).run(TICKET)
    with pytest.raises(ValueError, match="bloque escalation"):
        Escalate(contract("h", "infra", "guardia"))


def test_a_model_driven_agent_hands_off_and_a_receiver_answers_with_granted_tools():
    calls = []
    def recorded(name, tool):
        return lambda **args: calls.append(name) or tool(**args)
    tools = {name: recorded(name, tool) for name, tool in infra_tools().items()}
    handoff_input = {"receiver": "infra", "reason": "pagos degradado", "task": "restaurar pagos"}
    triage_model = ScriptedModel([turn(tool_use_block("t1", HANDOFF_TOOL_NAME, handoff_input))])
    infra_model = ScriptedModel([
        turn(tool_use_block("t2", "search_logs", {"service": "payments-api", "query": "status:502"})),
        turn(tool_use_block("t3", "rollback_deploy", {"service": "payments-api", "to_version": "v2.40"})),
        turn(text_block("regresión de v2.41 confirmada; el rollback necesita aprobación"))])
    def to_contract(task, package):
        return contract("TCK-4812-H1", package.sender, package.receiver, reason=package.reason,
                        next_objective=package.task)
    triage = ModelAgent("triage", triage_model, {}, to_contract, receivers=("infra",))
    infra = ModelAgent("infra", infra_model, tools)
    run = Coordinator([triage, infra]).run(TICKET)
    assert run.owners == ("triage", "infra") and run.hops == 1
    assert run.result == "regresión de v2.41 confirmada; el rollback necesita aprobación"
    assert calls == ["search_logs"]  # rollback_deploy is forbidden by the contract: refused, never run
    assert run.trace[1].reason == "pagos degradado"


def test_reprs_and_markdown():
    coordinator = Coordinator(ticket_participants())
    assert repr(coordinator) == "Coordinator(['triage', 'infra', 'guardia'], escalate_to='guardia', max_hops=3)"
    assert repr(ticket_participants()[0]) == "ScriptedAgent('triage', tools=['read_tickets'], 3 pasos con guion)"
    assert repr(ScriptedAgent("a", [Finish("listo")])) == "ScriptedAgent('a', tools=[], 1 paso con guion)"
    assert repr(Human("guardia", ask=input)) == "Human('guardia', ask)"
    assert repr(Human("guardia", answers=["sí"])) == "Human('guardia', 1 respuesta con guion)"
    assert repr(Human("guardia", answers=["sí", "no"])) == "Human('guardia', 2 respuestas con guion)"
    markdown = coordinator.run(TICKET)._repr_markdown_()
    assert "infra->>guardia: ESCALAMIENTO [high] aprobar rollback a v2.40" in markdown


def test_the_default_hop_limit_is_the_exported_constant():
    assert MAX_HOPS == 3 and Coordinator([]).max_hops == MAX_HOPS
    assert all(hasattr(coordinator_module, name) for name in coordinator_module.__all__)


@pytest.mark.parametrize("receiver", ["nadie", None])
def test_a_handoff_to_an_unknown_or_missing_receiver_goes_back_to_its_sender(receiver):
    bad = {**TRIAGE_TO_INFRA.model_dump(mode="json"), "receiver": receiver}
    if receiver is None:
        del bad["receiver"]
    got = []
    triage = ScriptedAgent("triage", [OfferHandoff(bad),
                                      lambda task, result: got.append(result) or OfferHandoff(TRIAGE_TO_INFRA),
                                      Finish("cerrado")])
    infra = ScriptedAgent("infra", [Return("hecho")], tools=INFRA_TOOLS)
    run = Coordinator([triage, infra]).run(TICKET)
    assert (got[0].ok, got[0].reason, got[0].next_step, got[0].fields[0]) == (False, "invalid", "repair", "receiver")
    named = "'nadie' no es un participante" if receiver else "el contrato no nombra a ningún receptor"
    assert got[0].errors[0]["problem"] == f"{named}; los participantes son ['infra', 'triage']"
    refused = run.trace[1]
    assert (refused.kind, refused.sender, refused.receiver, refused.validation) == (
        "handoff", "triage", receiver or "?", "invalid")
    assert run.owners == ("triage", "triage", "infra", "triage") and run.hops == 1
    assert run.trace.metrics().rejections == {"invalid": 1}
    assert_one_owner_at_a_time(run)


def test_an_unreadable_handoff_is_refused_without_aborting():
    triage = ScriptedAgent("triage", [OfferHandoff("{not json"), lambda task, result: Finish(result.next_step)])
    run = Coordinator([triage]).run(TICKET)
    assert run.result == "repair" and run.trace[1].receiver == "?"


def test_an_escalation_to_an_agent_is_a_hop_and_is_cycle_checked():
    up = dict(escalation={"urgency": "high", "decision_requested": "decide"})
    a = ScriptedAgent("a", [OfferHandoff(contract("h-ab", "a", "b")), Finish("a cierra")], tools=INFRA_TOOLS)
    b = ScriptedAgent("b", [Escalate(contract("h-bs", "b", "senior", **up))], tools=INFRA_TOOLS)
    senior = ScriptedAgent("senior", [Escalate(contract("h-sa", "senior", "a", **up)),
                                      lambda task, got: Return(got.answer)], tools=INFRA_TOOLS)
    guardia = Human("guardia", answers=["senior cierra con a"])
    run = Coordinator([a, b, senior, guardia]).run(Task("TCK-4812", "x", owner="a"))
    assert run.hops == 2 and run.trace.metrics().hops_per_task == {"TCK-4812": 2}
    assert [e.reason for e in run.trace if e.kind == "cut"] == ["ciclo: a -> b -> senior -> a"]
    assert run.owners == ("a", "b", "senior", "guardia", "senior", "a") and run.result == "a cierra"
    assert_one_owner_at_a_time(run)


def test_an_escalation_to_an_agent_counts_against_the_hop_limit():
    up = dict(escalation={"urgency": "high", "decision_requested": "decide"})
    a = ScriptedAgent("a", [OfferHandoff(contract("h-ab", "a", "b")), lambda task, got: Finish(got.resolution)],
                      tools=INFRA_TOOLS)
    b = ScriptedAgent("b", [Escalate(contract("h-bc", "b", "c", **up)), lambda task, got: Return(got.answer)],
                      tools=INFRA_TOOLS)
    c = ScriptedAgent("c", [Finish("nunca")], tools=INFRA_TOOLS)
    run = Coordinator([a, b, c, Human("guardia", answers=["ok"])], max_hops=1).run(Task("TCK-4812", "x", owner="a"))
    assert [e.reason for e in run.trace if e.kind == "cut"] == ["límite de saltos alcanzado (1 salto)"]
    assert "c" not in run.owners and run.result == "ok" and run.hops == 1


def test_a_handoff_after_a_return_is_not_a_false_cycle():
    a = ScriptedAgent("a", [OfferHandoff(contract("h1", "a", "b")), OfferHandoff(contract("h2", "a", "b")),
                            Finish("a cierra")], tools=INFRA_TOOLS)
    b = ScriptedAgent("b", [Return("primera parte"), Return("segunda parte")], tools=INFRA_TOOLS)
    run = Coordinator([a, b]).run(Task("TCK-4812", "dos encargos", owner="a"))
    assert run.owners == ("a", "b", "a", "b", "a") and run.hops == 2
    assert not any(e.kind == "cut" for e in run.trace)
    assert_one_owner_at_a_time(run)


def test_returns_do_not_reset_the_hop_limit():
    a = ScriptedAgent("a", [OfferHandoff(contract(f"h{i}", "a", "b")) for i in range(3)] + [
        lambda task, got: Finish(got.answer)], tools=INFRA_TOOLS)
    b = ScriptedAgent("b", [Return("hecho")] * 3, tools=INFRA_TOOLS)
    run = Coordinator([a, b, Human("guardia", answers=["basta"])], max_hops=2).run(Task("TCK-4812", "x", owner="a"))
    assert run.hops == 2
    assert [e.reason for e in run.trace if e.kind == "cut"] == ["límite de saltos alcanzado (2 saltos)"]


def test_usage_errors_are_usage_errors():
    with pytest.raises(UnknownParticipant) as caught:
        Coordinator([ScriptedAgent("a", [])], escalate_to="nadie")
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, CoordinationError)
    with pytest.raises(InvalidOutcome):
        Escalate({**TRIAGE_TO_INFRA.model_dump(mode="json"), "escalation": None})


def test_a_legacy_payload_without_an_id_is_routed_to_its_to_agent():
    legacy = {"task_id": "TCK-4812", "from_agent": "triage", "to_agent": "infra", "reason": "pagos degradado",
              "goal": "restaurar pagos", "state": {"verified_facts": ["502 desde 09:31"]},
              "artifacts": [{"kind": "logs", "uri": "logs:payments-api#502"}], "handoff_at": "2026-07-30T09:58:00Z"}
    seen = []
    triage = ScriptedAgent("triage", [OfferHandoff(legacy), Finish("cerrado")])
    infra = ScriptedAgent("infra", [lambda task, got: seen.append(got) or Return("hecho")], tools=INFRA_TOOLS)
    run = Coordinator([triage, infra]).run(Task("TCK-4812", "x", owner="triage"))
    assert run.owners == ("triage", "infra", "triage") and run.hops == 1
    assert seen[0].handoff_id.startswith("TCK-4812-v0-") and seen[0].authority.allowed_tools == []
    assert run.trace[1].handoff_id == seen[0].handoff_id and run.trace[1].version == 1
