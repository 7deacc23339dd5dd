"""Reservo's room-booking tools, the domain every lesson's agents work in.

Prices are integers in cents per hour (``RATES_CENTS_PER_HOUR``): Focus pro 3 h is 6000 and
Studio pro 2 h is 6400. Bookings live in memory; ``reset()`` empties them so tests and
notebooks start from the same place every time. See docs/library-reference.md.
"""

import threading
from typing import Annotated, Any, Literal

from pydantic import Field

Room = Literal["Focus", "Studio", "Loft"]
Tier = Literal["basic", "pro"]
Hours = Annotated[int, Field(ge=1, description="Whole hours, at least 1.")]

RATES_CENTS_PER_HOUR = {
    "Focus": {"basic": 1200, "pro": 2000},
    "Studio": {"basic": 2000, "pro": 3200},
    "Loft": {"basic": 3500, "pro": 5200},
}
CAPACITY = {"Focus": 4, "Studio": 10, "Loft": 24}

_lock = threading.Lock()
_bookings: dict[str, dict[str, Any]] = {}
_next_number = 1


class ReservoError(ValueError):
    """A Reservo tool was called with input it cannot serve."""


def reset() -> None:
    """Forget every booking and restart the booking numbers at BK-0001."""
    global _next_number
    with _lock:
        _bookings.clear()
        _next_number = 1


def list_rooms() -> list[dict[str, Any]]:
    """List every room with its capacity and its hourly rate per tier, in cents.

    Returns:
        One ``{"room", "capacity", "rates_cents_per_hour"}`` dict per room, the rates a copy.
    """
    return [
        {"room": room, "capacity": CAPACITY[room], "rates_cents_per_hour": dict(rates)}
        for room, rates in RATES_CENTS_PER_HOUR.items()
    ]


def _check(room: str, tier: str, hours: int) -> None:
    if room not in RATES_CENTS_PER_HOUR:
        raise ReservoError(f"sala desconocida {room!r}; las salas son {sorted(RATES_CENTS_PER_HOUR)}")
    tiers = RATES_CENTS_PER_HOUR[room]
    if tier not in tiers:
        raise ReservoError(f"tier desconocido {tier!r} para {room}; los tiers son {sorted(tiers)}")
    if isinstance(hours, bool) or not isinstance(hours, int):
        raise ReservoError(f"hours debe ser un número entero de horas; se recibió {hours!r}")
    if hours <= 0:
        raise ReservoError(f"hours debe ser mayor que 0; se recibió {hours}")


def get_quote(room: Room, tier: Tier, hours: Hours) -> dict[str, int]:
    """Quote a room: returns exactly {"price_cents": int}.

    Args:
        room: "Focus", "Studio" or "Loft".
        tier: "basic" or "pro".
        hours: whole hours, at least 1.

    Returns:
        ``{"price_cents": rate * hours}``.

    Raises:
        ReservoError: the room or tier is unknown, or ``hours`` is not a whole number of at least 1.
    """  # noqa: DOC502
    _check(room, tier, hours)
    return {"price_cents": RATES_CENTS_PER_HOUR[room][tier] * hours}


def book_room(room: Room, tier: Tier, hours: Hours) -> dict[str, Any]:
    """Book a room and return the confirmed booking with its id and price.

    Args:
        room: "Focus", "Studio" or "Loft".
        tier: "basic" or "pro".
        hours: whole hours, at least 1.

    Returns:
        A copy of the booking: ``booking_id`` (BK-0001, BK-0002, ...), room, tier, hours,
        ``price_cents`` and ``status`` "confirmed".

    Raises:
        ReservoError: the room or tier is unknown, or ``hours`` is not a whole number of at least 1.
    """  # noqa: DOC502
    global _next_number
    price = get_quote(room, tier, hours)["price_cents"]
    with _lock:
        booking_id = f"BK-{_next_number:04d}"
        _next_number += 1
        booking = {"booking_id": booking_id, "room": room, "tier": tier, "hours": hours,
                   "price_cents": price, "status": "confirmed"}
        _bookings[booking_id] = booking
    return dict(booking)


def cancel_booking(booking_id: str) -> dict[str, str]:
    """Cancel a confirmed booking; an unknown or already cancelled id is an error.

    Args:
        booking_id: the id ``book_room`` returned.

    Returns:
        ``{"booking_id": booking_id, "status": "cancelled"}``.

    Raises:
        ReservoError: no booking has this id, or it is already cancelled.
    """
    with _lock:
        booking = _bookings.get(booking_id)
        if booking is None:
            raise ReservoError(f"reserva desconocida {booking_id!r}")
        if booking["status"] == "cancelled":
            raise ReservoError(f"la reserva {booking_id} ya está cancelada")
        booking["status"] = "cancelled"
    return {"booking_id": booking_id, "status": "cancelled"}
