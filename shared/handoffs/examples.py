"""The Reservo scripts the lessons replay: the seed's compound request and its two specialists."""

from .messages import text_block, tool_use_block, turn
from .models import ScriptedModel
from .package import HANDOFF_TOOL_NAME

COMPOUND_REQUEST = "Cotiza Focus pro 3h. Y otra cosa, ¿qué pasa si no llego a la reserva?"

QUOTE_CONTEXT = {"room": "Focus", "tier": "pro", "hours": 3, "price_cents": 6000}

HANDOFF_INPUT = {
    "receiver": "policy_agent",
    "reason": "la segunda pregunta es sobre la política de no-presentación, fuera de mi expertise",
    "task": "¿qué pasa si un miembro no se presenta a una reserva confirmada?",
    "context": QUOTE_CONTEXT,
}

BOOKING_TURNS = [
    turn(tool_use_block("toolu_01", "get_quote", {"room": "Focus", "tier": "pro", "hours": 3})),
    turn(tool_use_block("toolu_02", HANDOFF_TOOL_NAME, HANDOFF_INPUT)),
]

POLICY_TURNS = [
    turn(tool_use_block("toolu_11", "search_docs", {"query": "no-show: miembro no se presenta"})),
    turn(text_block(
        "Si no te presentas a una reserva confirmada y no la cancelas con al menos 2 horas de "
        "anticipación, Reservo cobra el 50% del precio cotizado como cargo por no-presentación.")),
]


def booking_model():
    """booking_agent's script for the compound request: quote, then hand off to policy_agent."""
    return ScriptedModel(BOOKING_TURNS, name="booking_agent")


def policy_model():
    """policy_agent's script: look the policy up, then answer."""
    return ScriptedModel(POLICY_TURNS, name="policy_agent")
