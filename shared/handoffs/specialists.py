"""Reservo's three specialists, their tool registries and the no-show policy. Taught in lesson 03."""

import reservo_tools as rt

from .package import make_handoff_tool

NO_SHOW_PERCENT = 50

POLICY_DOCS = {
    "no-show-policy": (
        "Si un miembro no se presenta a una reserva confirmada y no la cancela con al menos "
        f"2 horas de anticipación, Reservo cobra el {NO_SHOW_PERCENT}% del precio cotizado "
        "como cargo por no-presentación."
    ),
}


def search_docs(query):
    """Search Reservo's policy documents; today they hold the no-show policy."""
    q = query.lower()
    if "no" in q and ("present" in q or "show" in q):
        return f"[no-show-policy] {POLICY_DOCS['no-show-policy']}"
    return "No se encontró una política relevante para esa pregunta."


def no_show_charge(price_cents):
    """The no-show charge for a quoted price: half of it, in whole cents (rounded down)."""
    if isinstance(price_cents, bool) or not isinstance(price_cents, int) or price_cents < 0:
        raise ValueError(f"price_cents must be a whole number of cents >= 0, got {price_cents!r}")
    return price_cents * NO_SHOW_PERCENT // 100


def _schema(name, description, properties=None, required=()):
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties or {}, "required": list(required)}}


_BOOKING = {"room": {"type": "string", "enum": sorted(rt.RATES_CENTS_PER_HOUR)},
            "tier": {"type": "string", "enum": ["basic", "pro"]},
            "hours": {"type": "integer", "minimum": 1}}

TOOL_SCHEMAS = {  # what a live model is told about each tool (Anthropic shape)
    "list_rooms": _schema("list_rooms", "List Reservo's rooms with capacity and hourly rates in cents."),
    "get_quote": _schema("get_quote", "Quote a room: returns {'price_cents': int}.", _BOOKING, _BOOKING),
    "book_room": _schema("book_room", "Book a room; returns the confirmed booking.", _BOOKING, _BOOKING),
    "cancel_booking": _schema("cancel_booking", "Cancel a confirmed booking by its id.",
                              {"booking_id": {"type": "string"}}, ["booking_id"]),
    "search_docs": _schema("search_docs", "Search Reservo's policy documents.",
                           {"query": {"type": "string"}}, ["query"]),
}


def schemas_for(tools):
    """The schemas of the tools in ``tools`` that Reservo describes, in the tools' order."""
    return [TOOL_SCHEMAS[name] for name in tools if name in TOOL_SCHEMAS]


SPECIALISTS = {
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

HANDOFF_TOOL = make_handoff_tool(SPECIALISTS)
