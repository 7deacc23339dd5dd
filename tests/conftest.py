import pytest
from hypothesis import settings

import reservo_tools

# Property tests explore the same examples on every run: a CI failure can always be reproduced.
settings.register_profile("course", derandomize=True, print_blob=True)
settings.load_profile("course")


@pytest.fixture(autouse=True)
def fresh_reservo():
    """Every test starts with no bookings."""
    reservo_tools.reset()
    yield
    reservo_tools.reset()
