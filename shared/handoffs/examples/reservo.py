"""Reservo, the lessons' domain: three specialists, the no-show policy and the seed's scripts. Lessons 01-04.

The tools are ``reservo_tools``' functions; their schemas come from their signatures
(``handoffs.tools``), like every tool of the course. The scripts replay seed 000's
compound request: booking_agent quotes Focus pro 3 h, then hands the no-show question
to policy_agent with the quote as context.
"""

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

import reservo_tools as rt

from ..chain import Specialist
from ..loop import RunResult
from ..messages import Turn, final_text, text_block, tool_use_block, turn
from ..models import AnyModel, ScriptedModel
from ..package import HANDOFF_DESCRIPTION, HandoffPackage, input_model
from ..policies import HANDOFF_TOOL_NAME, make_handoff_schema
from ..runner import run_agent_with_handoff

NO_SHOW_PERCENT = 50

POLICY_DOCS = {
    "no-show-policy": (
        "Si un miembro no se presenta a una reserva confirmada y no la cancela con al menos "
        f"2 horas de anticipación, Reservo cobra el {NO_SHOW_PERCENT}% del precio cotizado "
        "como cargo por no-presentación."
    ),
}


def search_docs(query: Annotated[str, Field(description="What to look for, in a few words.")]) -> str:
    """Search Reservo's policy documents; today they hold the no-show policy."""
    q = query.lower()
    if "no" in q and ("present" in q or "show" in q):
        return f"[no-show-policy] {POLICY_DOCS['no-show-policy']}"
    return "No se encontró una política relevante para esa pregunta."


def no_show_charge(price_cents: int) -> int:
    """The no-show charge for a quoted price: half of it, in whole cents (rounded down)."""
    if isinstance(price_cents, bool) or not isinstance(price_cents, int) or price_cents < 0:
        raise ValueError(f"price_cents debe ser un número entero de centavos >= 0; se recibió {price_cents!r}")
    return price_cents * NO_SHOW_PERCENT // 100


SPECIALISTS: dict[str, Specialist] = {
    "booking_agent": {
        "tools": {
            "list_rooms": rt.list_rooms, "get_quote": rt.get_quote,
            "book_room": rt.book_room, "cancel_booking": rt.cancel_booking,
        },
        "expertise": "cotizar, reservar y cancelar salas",
    },
    "policy_agent": {
        "tools": {"search_docs": search_docs},
        "expertise": "responder preguntas de política (cancelación, no-presentación)",
    },
    "pricing_agent": {
        "tools": {"get_quote": rt.get_quote},
        "expertise": "comparar el costo de varias salas/tiers en una sola respuesta",
    },
}

HANDOFF_TOOL = make_handoff_schema(HANDOFF_TOOL_NAME, HANDOFF_DESCRIPTION, input_model(tuple(SPECIALISTS)))


def run_specialist_with_handoff(name: str, task: str, model: AnyModel,
                                registry: Mapping[str, Specialist] = SPECIALISTS) -> RunResult[HandoffPackage]:
    """Run the specialist ``name`` of Reservo's registry with run_agent_with_handoff (the seed's helper)."""
    if name not in registry:
        raise KeyError(f"especialista desconocido {name!r}; los especialistas son {sorted(registry)}")
    return run_agent_with_handoff(task, model, registry[name]["tools"], name=name)


ANSWER_LABELS = {
    "booking_agent": "Reserva",
    "policy_agent": "Política",
    "pricing_agent": "Comparación de precios",
}
"""What each specialist's answer is about: the label of its part of the composed answer."""

NO_SHOW_ANSWERED_BY = "policy_agent"
"""The specialist whose answer is the no-show policy; only then does the charge follow."""


def compose_answer(package: HandoffPackage, receiver_final: Turn) -> str:
    """One answer for the user: the sender's quote from the context, then the receiver's answer.

    Each part is labelled by what it is: the quote by the sender that made it, the receiver's
    answer by the receiver's specialty (``ANSWER_LABELS``; "Respuesta" for a receiver not listed).
    Only what was asked is added: the no-show charge, computed from the quoted price, follows
    only when the receiver is the policy specialist (``NO_SHOW_ANSWERED_BY``: the question was
    what happens if the member does not show up) and the price travelled in the context. A
    pricing comparison gets the quote and the comparison, never an unrequested charge.
    """
    context, parts = package.context, []
    price = context.get("price_cents")
    if price is not None:
        what = " ".join(str(context[k]) for k in ("room", "tier") if k in context)
        hours = f" por {context['hours']} h" if "hours" in context else ""
        parts.append(f"Cotización ({package.sender}): {what}{hours} cuesta {price} centavos.")
    label = ANSWER_LABELS.get(package.receiver, "Respuesta")
    parts.append(f"{label} ({package.receiver}): {final_text(receiver_final)}")
    if price is not None and package.receiver == NO_SHOW_ANSWERED_BY:
        parts.append(f"Cargo por no presentarse: {no_show_charge(price)} centavos "
                     f"({NO_SHOW_PERCENT} % de {price}).")
    return "\n".join(parts)


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


def booking_model() -> ScriptedModel:
    """booking_agent's script for the compound request: quote, then hand off to policy_agent."""
    return ScriptedModel(BOOKING_TURNS, name="booking_agent")


def policy_model() -> ScriptedModel:
    """policy_agent's script: look the policy up, then answer."""
    return ScriptedModel(POLICY_TURNS, name="policy_agent")
