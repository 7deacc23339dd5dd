"""reservo_tools: quotes, bookings, cancellations and their errors."""

import pytest

import reservo_tools as rt


def test_seed_prices():
    assert rt.get_quote("Focus", "pro", 3) == {"price_cents": 6000}
    assert rt.get_quote("Studio", "pro", 2) == {"price_cents": 6400}
    assert type(rt.get_quote("Loft", "basic", 1)["price_cents"]) is int


def test_list_rooms_names_every_room_and_rate():
    rooms = {r["room"]: r for r in rt.list_rooms()}
    assert set(rooms) == {"Focus", "Studio", "Loft"}
    assert rooms["Focus"]["rates_cents_per_hour"]["pro"] == 2000
    rooms["Focus"]["rates_cents_per_hour"]["pro"] = 1  # a caller's copy, not the price list
    assert rt.get_quote("Focus", "pro", 1) == {"price_cents": 2000}


@pytest.mark.parametrize("room, tier, hours, message", [
    ("Attic", "pro", 1, "sala desconocida 'Attic'"),
    ("Focus", "gold", 1, "tier desconocido 'gold' para Focus"),
    ("Focus", "pro", 0, "hours debe ser mayor que 0"),
    ("Focus", "pro", -2, "hours debe ser mayor que 0"),
    ("Focus", "pro", 1.5, "hours debe ser un número entero"),
    ("Focus", "pro", True, "hours debe ser un número entero"),
])
def test_bad_input_raises_a_clear_error(room, tier, hours, message):
    with pytest.raises(rt.ReservoError, match=message):
        rt.get_quote(room, tier, hours)
    with pytest.raises(rt.ReservoError, match=message):
        rt.book_room(room, tier, hours)


def test_book_then_cancel():
    booking = rt.book_room("Studio", "pro", 2)
    assert booking == {"booking_id": "BK-0001", "room": "Studio", "tier": "pro", "hours": 2,
                       "price_cents": 6400, "status": "confirmed"}
    assert rt.book_room("Focus", "basic", 1)["booking_id"] == "BK-0002"
    assert rt.cancel_booking("BK-0001") == {"booking_id": "BK-0001", "status": "cancelled"}
    with pytest.raises(rt.ReservoError, match="ya está cancelada"):
        rt.cancel_booking("BK-0001")


def test_unknown_booking_and_reset():
    with pytest.raises(rt.ReservoError, match="reserva desconocida 'BK-0042'"):
        rt.cancel_booking("BK-0042")
    rt.book_room("Focus", "pro", 1)
    rt.reset()
    with pytest.raises(rt.ReservoError, match="reserva desconocida"):
        rt.cancel_booking("BK-0001")
    assert rt.book_room("Focus", "pro", 1)["booking_id"] == "BK-0001"
