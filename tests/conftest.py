import os

import pytest
from hypothesis import settings

import reservo_tools
from grader.kernels.uids import FIRST_UID, UID_SLOTS

# This test session's own range of sandbox uids, inherited by every worker, Dask worker and kernel
# it starts: the tests that count or sweep sandbox processes see only their own, and never touch
# those of a grader (or another test session) running on the same machine.
os.environ["GRADER_SANDBOX_UID"] = str(FIRST_UID + UID_SLOTS * (1 + os.getpid() % 240_000))

# Property tests explore the same examples on every run: a CI failure can always be reproduced.
settings.register_profile("course", derandomize=True, print_blob=True)
settings.load_profile("course")


@pytest.fixture(autouse=True)
def fresh_reservo():
    """Every test starts with no bookings."""
    reservo_tools.reset()
    yield
    reservo_tools.reset()
