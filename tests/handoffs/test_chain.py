"""End to end: sender, package, receiver and the composed answer."""

import pytest

from handoffs import ChainError, HandoffPackage, ScriptedModel, run_handoff_chain, text_block, turn
from handoffs.examples import COMPOUND_REQUEST, POLICY_TURNS, booking_model, policy_model
from handoffs.examples.reservo import SPECIALISTS, compose_answer, no_show_charge

MODELS = {"booking_agent": booking_model(), "policy_agent": policy_model()}


def test_chain_composes_an_answer_that_covers_both_parts():
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", MODELS, SPECIALISTS, compose_answer)
    assert chain.owner == "policy_agent"
    assert chain.answer.splitlines() == [
        "Cotización (booking_agent): Focus pro por 3 h cuesta 6000 centavos.",
        "Política (policy_agent): " + POLICY_TURNS[1]["content"][0]["text"],
        "Cargo por no presentarse: 3000 centavos (50 % de 6000).",
    ]


def test_receiver_runs_on_the_task_and_the_context_that_travelled():
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", MODELS, SPECIALISTS, compose_answer)
    brief = chain.receiver_messages[0]["content"]
    assert brief.startswith(chain.package.task)
    assert '"price_cents": 6000' in brief
    assert "Cotiza Focus pro 3h" not in brief  # the transcript did not travel
    assert "[no-show-policy]" in chain.receiver_messages[2]["content"][0]["content"]


def test_the_charge_follows_the_quoted_price():
    studio_turns = [dict(t) for t in booking_model().turns]
    studio_turns[1]["content"][0]["input"]["context"] = {"room": "Studio", "tier": "pro", "hours": 2,
                                                         "price_cents": 6400}
    models = {"booking_agent": ScriptedModel(studio_turns), "policy_agent": policy_model()}
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", models, SPECIALISTS, compose_answer)
    assert chain.answer.endswith("Cargo por no presentarse: 3200 centavos (50 % de 6400).")
    assert no_show_charge(6400) == 3200 and no_show_charge(1) == 0


def test_a_pricing_receiver_gets_its_own_label_and_no_charge():
    package = HandoffPackage("booking_agent", "pricing_agent", "comparar salas",
                             "¿Cuánto más cuesta Studio pro 2 h?",
                             {"room": "Focus", "tier": "pro", "hours": 3, "price_cents": 6000})
    answer = compose_answer(package, turn(text_block("Studio pro 2 h cuesta 6400 centavos: 400 más.")))
    assert answer.splitlines() == [
        "Cotización (booking_agent): Focus pro por 3 h cuesta 6000 centavos.",
        "Comparación de precios (pricing_agent): Studio pro 2 h cuesta 6400 centavos: 400 más.",
    ]
    assert "Política" not in answer and "Cargo" not in answer


def test_only_the_policy_specialist_brings_the_no_show_charge():
    context = {"room": "Studio", "tier": "pro", "hours": 2, "price_cents": 6400}
    answer = turn(text_block("Listo."))
    to_policy = compose_answer(HandoffPackage("pricing_agent", "policy_agent", "r", "t", context), answer)
    to_booking = compose_answer(HandoffPackage("pricing_agent", "booking_agent", "r", "t", context), answer)
    to_someone = compose_answer(HandoffPackage("booking_agent", "billing_agent", "r", "t", context), answer)
    assert to_policy.splitlines()[1:] == ["Política (policy_agent): Listo.",
                                         "Cargo por no presentarse: 3200 centavos (50 % de 6400)."]
    assert to_booking.splitlines()[1:] == ["Reserva (booking_agent): Listo."]
    assert to_someone.splitlines()[1:] == ["Respuesta (billing_agent): Listo."]
    no_price = compose_answer(HandoffPackage("booking_agent", "policy_agent", "r", "t", {"room": "Focus"}), answer)
    assert no_price == "Política (policy_agent): Listo."


def test_no_handoff_means_the_sender_answers_alone():
    model = ScriptedModel([turn(text_block("Tenemos Focus, Studio y Loft."))])
    chain = run_handoff_chain("¿Qué salas hay?", "booking_agent", {"booking_agent": model}, SPECIALISTS, compose_answer)
    assert chain.package is None and chain.owner == "booking_agent"
    assert chain.answer == "Tenemos Focus, Studio y Loft."


def test_missing_receiver_model_is_a_clear_error():
    with pytest.raises(ChainError, match="no hay modelo para 'policy_agent'"):
        run_handoff_chain(COMPOUND_REQUEST, "booking_agent", {"booking_agent": booking_model()}, SPECIALISTS,
                          compose_answer)


def test_diagram_is_drawn_from_the_run():
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", MODELS, SPECIALISTS, compose_answer)
    diagram = chain.diagram()
    assert diagram.splitlines()[:4] == [
        "sequenceDiagram",
        "    participant usuario as usuario",
        "    participant booking_agent as booking_agent",
        "    participant policy_agent as policy_agent",
    ]
    assert "    booking_agent->>booking_agent: get_quote(room='Focus', tier='pro', hours=3)" in diagram
    assert "    Note over booking_agent,policy_agent: policy_agent pasa a ser dueño de la tarea" in diagram
    assert "    policy_agent-->>usuario: " in diagram
    assert chain._repr_markdown_().startswith("```mermaid\nsequenceDiagram")
    assert repr(chain).startswith("ChainResult(booking_agent -> policy_agent, answer='Cotización")


def test_no_show_charge_rejects_nonsense():
    with pytest.raises(ValueError, match="número entero de centavos"):
        no_show_charge(-1)
    with pytest.raises(ValueError):
        no_show_charge("6000")


def test_a_receiver_that_hands_off_again_needs_the_coordinator():
    from handoffs import HANDOFF_TOOL_NAME, tool_use_block
    bounce = turn(tool_use_block("p1", HANDOFF_TOOL_NAME, {"receiver": "pricing_agent", "reason": "r", "task": "t"}))
    models = {"booking_agent": booking_model(), "policy_agent": ScriptedModel([bounce])}
    with pytest.raises(ChainError, match="policy_agent volvió a hacer handoff, a pricing_agent"):
        run_handoff_chain(COMPOUND_REQUEST, "booking_agent", models, SPECIALISTS, compose_answer)


def test_long_diagram_texts_are_wrapped_whole_and_have_a_text_version():
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", MODELS, SPECIALISTS, compose_answer)
    diagram = chain.diagram()
    assert "…" not in diagram and "<br/>" in diagram
    reply = next(line for line in diagram.splitlines() if "-->>usuario" in line)
    assert reply.split(": ", 1)[1].replace("<br/>", " ") == " ".join(chain.answer.split())
    markdown = chain._repr_markdown_()
    assert markdown.startswith("```mermaid\n") and "<summary>El diagrama en texto</summary>" in markdown
    assert f"policy_agent responde a usuario: {' '.join(chain.answer.split())}" in diagram.fallback


def test_semicolons_and_hashes_reach_the_diagram_as_entity_codes():
    """Mermaid ends a statement at ``;`` and reads ``#`` as the start of an entity: both are written as codes."""
    from handoffs.diagram import mermaid_sequence

    diagram = mermaid_sequence(["a", "b"], [("call", "a", "b", "ticket #4812; urgente"), ("note", "a", "b", "x;y")])
    assert "a->>b: ticket #35;4812#59; urgente" in diagram and "Note over a,b: x#59;y" in diagram
    assert diagram.fallback.splitlines() == ["1. a -> b: ticket #4812; urgente", "2. (nota sobre a y b) x;y"]
