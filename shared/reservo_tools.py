"""Reservo's room-booking tools, the domain every lesson's agents work in.

Prices are integers in cents per hour. The two numbers the seed lessons rely on:
Focus pro costs 2000 cents/hour (3 h -> 6000) and Studio pro 3200 cents/hour
(2 h -> 6400). The other rooms and tiers are the course's own choice:

    room     capacity   basic   pro
    Focus        4       1200   2000
    Studio      10       2000   3200
    Loft        24       3500   5200

State (the bookings) lives in memory; ``reset()`` empties it so tests and
notebooks start from the same place every time.
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
    """List every room with its capacity and its hourly rate per tier, in cents."""
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
    """Quote a room: returns exactly {"price_cents": int}."""
    _check(room, tier, hours)
    return {"price_cents": RATES_CENTS_PER_HOUR[room][tier] * hours}


def book_room(room: Room, tier: Tier, hours: Hours) -> dict[str, Any]:
    """Book a room and return the confirmed booking with its id and price."""
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
    """Cancel a confirmed booking; an unknown or already cancelled id is an error."""
    with _lock:
        booking = _bookings.get(booking_id)
        if booking is None:
            raise ReservoError(f"reserva desconocida {booking_id!r}")
        if booking["status"] == "cancelled":
            raise ReservoError(f"la reserva {booking_id} ya está cancelada")
        booking["status"] = "cancelled"
    return {"booking_id": booking_id, "status": "cancelled"}
