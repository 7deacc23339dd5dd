import pytest

import reservo_tools


@pytest.fixture(autouse=True)
def fresh_reservo():
    """Every test starts with no bookings."""
    reservo_tools.reset()
    yield
    reservo_tools.reset()
